//! Software pipelining of a reduction loop around a tensor-core dot, as the
//! `pipeline-dot-loops` pass decided it ([`crate::ir::LoopPipeline`] on the
//! `While`: engine, copy widths, buffers; see
//! [`crate::passes::pipeline_dot_loops`] for the pattern). Nothing is decided
//! here: the loads become `cp.async` copies global -> shared memory (swizzled
//! as [`crate::codegen::tensor_cores::mma`] reads them) into `stages` buffers, and the dot is
//! delayed: iteration `i` issues the copies of tile `i` into buffer
//! `i % stages` and computes tile `i - stages + 1`, so the copies of the next
//! tiles fly while the tensor cores work. After the loop the last
//! `stages - 1` tiles are drained. The buffers are the loop's in the
//! shared-memory plan (the ops inside the loop have theirs above them). A loop on wgmma is
//! lowered by [`crate::codegen::ops::wgmma_pipeline`] (same copies, `wgmma` for the dot).
use crate::analysis::mma::{stage_bytes, swizzle_shift_mask, MmaConfig};
use crate::codegen::lower::asm::async_asm;
use crate::codegen::lower::loops::{
    carried_phis, close_carried, current_block, enter_body, phi_values, yielded,
};
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma;
use crate::codegen::tensor_cores::pipelined_loop::{
    issue_copies, loop_setup, lower_body, slot_offset, swizzled_destination, wrap_add, LoopSetup,
    PipelinePlan,
};
use crate::ir::{LoopPipeline, Op, OpKind, ValueId};
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;

/// Lowers the loop `op` as the pass's pipeline `p` (on mma.sync) says.
pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op, p: &LoopPipeline) -> Result<()> {
    let plan = PipelinePlan::of(lw, op, p)?;
    let OpKind::While {
        inits, body_region, ..
    } = &op.kind
    else {
        return lw.unsupported("this op as a loop", op.span);
    };
    pipelined(lw, op, &plan, inits, body_region)
}

fn pipelined<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    plan: &PipelinePlan,
    inits: &[ValueId],
    body_region: &crate::ir::Region,
) -> Result<()> {
    let cfg = plan.cfg;
    let (b_offset, stage_bytes) = stage_bytes(&cfg);
    let stages = plan.stages;
    let LoopSetup {
        input,
        acc_layout,
        layouts,
        init_vals,
    } = loop_setup(lw, op, plan, inits, body_region, stage_bytes)?;
    let pre = current_block(lw)?;
    let (header, body, exit) = (
        lw.new_block("pipe_while"),
        lw.new_block("pipe_body"),
        lw.new_block("pipe_endwhile"),
    );
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let i32t = lw.ctx.i32_type();
    let counter = lw.builder.build_phi(i32t, "tile")?;
    counter.add_incoming(&[(&lw.i32_const(0), pre)]);
    // `counter % stages`, carried to avoid a division.
    let slot_phi = lw.builder.build_phi(i32t, "slot")?;
    slot_phi.add_incoming(&[(&lw.i32_const(0), pre)]);
    let phis = carried_phis(lw, op, &init_vals, &layouts, pre)?;
    enter_body(lw, op, body, exit)?;
    let tile_index = counter.as_basic_value().into_int_value();
    let slot = slot_phi.as_basic_value().into_int_value();
    // Tile i - stages + 1 is in buffer (i + 1) % stages, the next one to fill.
    let next_slot = wrap_add(lw, slot, 1, stages)?;
    lower_body(lw, body_region, plan, &acc_layout, |lw| {
        // Readers of the buffer about to be refilled (tile i - stages) are done.
        lw.barrier()?;
        let slot_base = slot_offset(lw, slot, stage_bytes)?;
        for (which, &at) in plan.loads.iter().enumerate() {
            let OpKind::Load { ptr, mask, .. } = body_region.ops[at].kind else {
                return lw.unsupported("a pipelined operand that is not a load", op.span);
            };
            // Rows as loaded: `a` `[M][K]`, `b` `[K][N]` or, transposed, `[N][K]`.
            let (row_len, offset) = match which {
                0 => (cfg.k, 0),
                _ if plan.b_k_major => (cfg.k, b_offset),
                _ => (cfg.n, b_offset),
            };
            let (shift, mask_bits) = swizzle_shift_mask(row_len / 8);
            let dst = |lw: &Lowering<'_, 'ctx>, row: IntValue<'ctx>, col: IntValue<'ctx>| {
                swizzled_destination(lw, row, col, row_len, shift, mask_bits, slot_base, offset)
            };
            issue_copies(lw, (ptr, mask), (1, plan.widths[which]), &dst, None)?;
        }
        async_asm(lw, "cp.async.commit_group;")?;
        async_asm(lw, &format!("cp.async.wait_group {};", stages - 1))?;
        lw.barrier()?;
        let acc_regs = lw.value(body_region.args[plan.acc], &acc_layout)?;
        let ready = lw.builder.build_int_compare(
            IntPredicate::UGE,
            tile_index,
            lw.i32_const(stages as u64 - 1),
            "ready",
        )?;
        guarded_compute(
            lw,
            (&cfg, plan.b_k_major),
            input,
            ready,
            next_slot,
            stage_bytes,
            b_offset,
            acc_regs,
        )
    })?;
    let next = yielded(lw, &body_region.yields, &layouts, op)?;
    let next_index = lw
        .builder
        .build_int_add(tile_index, lw.i32_const(1), "next_tile")?;
    let latch = current_block(lw)?;
    lw.builder.build_unconditional_branch(header)?;
    counter.add_incoming(&[(&next_index, latch)]);
    slot_phi.add_incoming(&[(&next_slot, latch)]);
    close_carried(&phis, &next, latch);
    // Drain: tiles n - stages + 1 .. n are still to be multiplied.
    lw.builder.position_at_end(exit);
    let mut acc_regs = phi_values(&phis[plan.acc]);
    for d in (1..stages).rev() {
        let ready = lw.builder.build_int_compare(
            IntPredicate::UGE,
            tile_index,
            lw.i32_const(d as u64),
            "pending",
        )?;
        let t_slot = wrap_add(lw, slot, stages - d, stages)?;
        async_asm(lw, &format!("cp.async.wait_group {};", d - 1))?;
        lw.barrier()?;
        acc_regs = guarded_compute(
            lw,
            (&cfg, plan.b_k_major),
            input,
            ready,
            t_slot,
            stage_bytes,
            b_offset,
            acc_regs,
        )?;
    }
    lw.define_tile(op.results[plan.acc], acc_layout, acc_regs);
    Ok(())
}

/// `acc +` the dot of the tile in buffer `slot` when `ready`, else `acc` (a uniform branch).
#[allow(clippy::too_many_arguments)]
fn guarded_compute<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    (cfg, b_k_major): (&MmaConfig, bool),
    input: &str,
    ready: IntValue<'ctx>,
    slot: IntValue<'ctx>,
    stage_bytes: usize,
    b_offset: usize,
    acc: Vec<BasicValueEnum<'ctx>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let before = current_block(lw)?;
    let (compute_bb, join) = (lw.new_block("pipe_mma"), lw.new_block("pipe_join"));
    lw.builder
        .build_conditional_branch(ready, compute_bb, join)?;
    lw.builder.position_at_end(compute_bb);
    let base = slot_offset(lw, slot, stage_bytes)?;
    let out = mma::compute(lw, cfg, input, base, (b_offset, b_k_major), acc.clone())?;
    let end = current_block(lw)?;
    lw.builder.build_unconditional_branch(join)?;
    lw.builder.position_at_end(join);
    let mut merged = Vec::with_capacity(acc.len());
    for (old, new) in acc.iter().zip(&out) {
        let phi = lw.builder.build_phi(old.get_type(), "acc")?;
        phi.add_incoming(&[(old, before), (new, end)]);
        merged.push(phi.as_basic_value());
    }
    Ok(merged)
}
