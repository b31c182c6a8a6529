//! Structured control flow: `If` becomes a diamond with one phi per register
//! of every yielded tile, `While` a header (phis of the carried values, the
//! condition region), a body and an exit, `Return` a branch to the kernel's
//! exit block. Conditions are scalars, so every thread takes the same path and
//! barriers inside regions are safe.
use super::lower::{Lowering, Result};
use super::tile::Tile;
use crate::analysis::layout::Layout;
use crate::ir::{Op, OpKind, ValueId};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, PhiValue};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    match &op.kind {
        OpKind::If {
            cond,
            then_region,
            else_region,
        } => {
            let c = lw.scalar(*cond)?.into_int_value();
            let layouts: Vec<Layout> = op.results.iter().map(|r| lw.assigned_layout(*r)).collect();
            let (then_bb, else_bb, merge_bb) = (
                lw.new_block("then"),
                lw.new_block("else"),
                lw.new_block("endif"),
            );
            lw.builder.build_conditional_branch(c, then_bb, else_bb)?;
            let mut arms = Vec::new();
            for (bb, region) in [(then_bb, then_region), (else_bb, else_region)] {
                lw.builder.position_at_end(bb);
                lw.region(region)?;
                let vals = yielded(lw, &region.yields, &layouts, op)?;
                let end = current_block(lw)?;
                lw.builder.build_unconditional_branch(merge_bb)?;
                arms.push((end, vals));
            }
            lw.builder.position_at_end(merge_bb);
            for (i, &r) in op.results.iter().enumerate() {
                let ty = lw.reg_type(r);
                let mut regs = Vec::new();
                for k in 0..arms[0].1[i].len() {
                    let phi = lw.builder.build_phi(ty, "if")?;
                    for (bb, vals) in &arms {
                        phi.add_incoming(&[(&vals[i][k], *bb)]);
                    }
                    regs.push(phi.as_basic_value());
                }
                lw.define_tile(r, layouts[i].clone(), regs);
            }
            Ok(())
        }
        OpKind::While {
            pipeline: Some(p), ..
        } => {
            let plan = super::pipeline::PipelinePlan::of(lw, op, p)?;
            super::pipeline::lower_while(lw, op, &plan)
        }
        OpKind::While { .. } => plain_while(lw, op),
        OpKind::Return => {
            lw.builder.build_unconditional_branch(lw.exit_block)?;
            // Ops after a return are unreachable; they go to a block nothing enters.
            let dead = lw.new_block("after_return");
            lw.builder.position_at_end(dead);
            Ok(())
        }
        _ => lw.unsupported("this op as control flow", op.span),
    }
}

/// `While` as a header, a body and an exit (no pipelining).
fn plain_while(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::While {
        inits, body_region, ..
    } = &op.kind
    else {
        return lw.unsupported("this op as a loop", op.span);
    };
    let layouts: Vec<Layout> = op.results.iter().map(|r| lw.assigned_layout(*r)).collect();
    let init_vals = yielded(lw, inits, &layouts, op)?;
    let pre = current_block(lw)?;
    let (header, body, exit) = (
        lw.new_block("while"),
        lw.new_block("body"),
        lw.new_block("endwhile"),
    );
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let phis = carried_phis(lw, op, &init_vals, &layouts, pre)?;
    enter_body(lw, op, body, exit)?;
    lw.region(body_region)?;
    let next = yielded(lw, &body_region.yields, &layouts, op)?;
    let latch = current_block(lw)?;
    lw.builder.build_unconditional_branch(header)?;
    close_carried(&phis, &next, latch);
    lw.builder.position_at_end(exit);
    Ok(())
}

/// The values of a row of phis (a carried tile's registers at a loop header).
pub(crate) fn phi_values<'ctx>(phis: &[PhiValue<'ctx>]) -> Vec<BasicValueEnum<'ctx>> {
    phis.iter().map(|p| p.as_basic_value()).collect()
}

/// At the loop header: one phi per register of each carried value, entered
/// from `pre` with `init_vals`; the results and both regions' args are bound
/// to them (as tiles in `layouts`).
pub(crate) fn carried_phis<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    init_vals: &[Vec<BasicValueEnum<'ctx>>],
    layouts: &[Layout],
    pre: BasicBlock<'ctx>,
) -> Result<Vec<Vec<PhiValue<'ctx>>>> {
    let OpKind::While {
        cond_region,
        body_region,
        ..
    } = &op.kind
    else {
        return lw.unsupported("this op as a loop", op.span);
    };
    let mut phis: Vec<Vec<PhiValue>> = Vec::new();
    for (i, vals) in init_vals.iter().enumerate() {
        let ty = lw.reg_type(op.results[i]);
        let mut row = Vec::new();
        for v in vals {
            let phi = lw.builder.build_phi(ty, "carried")?;
            phi.add_incoming(&[(v, pre)]);
            row.push(phi);
        }
        phis.push(row);
    }
    for (i, (layout, row)) in layouts.iter().zip(&phis).enumerate() {
        let tile = Tile {
            layout: layout.clone(),
            regs: phi_values(row),
        };
        for args in [&cond_region.args, &body_region.args] {
            if let Some(&a) = args.get(i) {
                lw.define(a, super::tile::Slot::Tile(tile.clone()));
            }
        }
        lw.define(op.results[i], super::tile::Slot::Tile(tile));
    }
    Ok(phis)
}

/// Lowers the loop's condition region, branches to `body` or `exit`, and
/// continues in `body`.
pub(crate) fn enter_body<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    body: BasicBlock<'ctx>,
    exit: BasicBlock<'ctx>,
) -> Result<()> {
    let OpKind::While { cond_region, .. } = &op.kind else {
        return lw.unsupported("this op as a loop", op.span);
    };
    lw.region(cond_region)?;
    let Some(&c) = cond_region.yields.first() else {
        return lw.unsupported("a loop condition region without a condition", op.span);
    };
    let c = lw.scalar(c)?.into_int_value();
    lw.builder.build_conditional_branch(c, body, exit)?;
    lw.builder.position_at_end(body);
    Ok(())
}

/// The back edge: each carried phi takes its next value from `latch`.
pub(crate) fn close_carried<'ctx>(
    phis: &[Vec<PhiValue<'ctx>>],
    next: &[Vec<BasicValueEnum<'ctx>>],
    latch: BasicBlock<'ctx>,
) {
    for (row, vals) in phis.iter().zip(next) {
        for (phi, v) in row.iter().zip(vals) {
            phi.add_incoming(&[(v, latch)]);
        }
    }
}

/// The registers of `values` in `layouts` (one per value).
pub(crate) fn yielded<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    values: &[ValueId],
    layouts: &[Layout],
    op: &Op,
) -> Result<Vec<Vec<BasicValueEnum<'ctx>>>> {
    if values.len() != layouts.len() {
        return lw.unsupported("a region yielding a different number of values", op.span);
    }
    values
        .iter()
        .zip(layouts)
        .map(|(v, l)| lw.value(*v, l))
        .collect()
}

pub(crate) fn current_block<'ctx>(lw: &Lowering<'_, 'ctx>) -> Result<BasicBlock<'ctx>> {
    lw.builder
        .get_insert_block()
        .ok_or_else(|| super::CodegenError::Llvm("builder has no block".into()))
}
