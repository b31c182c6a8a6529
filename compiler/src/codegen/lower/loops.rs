//! Building structured loops and branches in LLVM: phis of carried tiles,
//! entering a body, closing the back edge, the values a region yields. Used
//! by the plain and the pipelined loops alike.
use super::{Lowering, Result};
use crate::codegen::lower::tile::Tile;
use crate::ir::layout::Layout;
use crate::ir::{Op, OpKind, ValueId};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, PhiValue};

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
                lw.define(a, crate::codegen::lower::tile::Slot::Tile(tile.clone()));
            }
        }
        lw.define(op.results[i], crate::codegen::lower::tile::Slot::Tile(tile));
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
        .ok_or_else(|| crate::codegen::CodegenError::Llvm("builder has no block".into()))
}
