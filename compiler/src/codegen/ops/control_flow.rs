//! Structured control flow: `If` becomes a diamond with one phi per register
//! of every yielded tile, `While` a header (phis of the carried values, the
//! condition region), a body and an exit, `Return` a branch to the kernel's
//! exit block. Conditions are scalars, so every thread takes the same path and
//! barriers inside regions are safe.
use crate::codegen::lower::loops::{
    carried_phis, close_carried, current_block, enter_body, yielded,
};
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::Layout;
use crate::ir::{Op, OpKind};

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
        // A pipelined loop never comes here (`ops::lower` sends it to its engine).
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
