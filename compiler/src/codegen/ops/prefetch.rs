//! A loop whose dots' loaded `b` tiles are copied an iteration ahead, as
//! the `prefetch-dot-operands` pass decided ([`LoopPrefetch`]). Nothing is
//! decided here. Before the loop, iteration 0's tiles are copied
//! (`cp.async`, swizzled as [`mma`] reads them) into buffer 0 of each
//! operand. In the body, the loads are skipped; at each prefetched dot the
//! threads wait for this iteration's tile of its `b` (`cp.async.wait_group`
//! leaves the later groups flying) and meet, then issue the next
//! iteration's copies of that `b` into its other buffer — whose readers,
//! the previous iteration's dot, every thread has passed — and multiply
//! from this one. The next iteration's pointers and masks are the loop's
//! own index arithmetic evaluated one step ahead
//! ([`crate::analysis::lookahead`]: the carried counters advanced by the
//! body's yields, the condition evaluated on them), so no copy is issued
//! past the loop's end. Each operand commits one group an iteration, in
//! the body's order, so with `P` operands a dot waits until at most `P - 1`
//! groups are pending.
use crate::analysis::lookahead::{lookahead, Lookahead};
use crate::analysis::mma::{planned_config, swizzle_shift_mask, MmaConfig};
use crate::codegen::lower::asm::async_asm;
use crate::codegen::lower::loops::{
    carried_phis, close_carried, current_block, enter_body, yielded,
};
use crate::codegen::lower::tile::{Slot, Tile};
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma;
use crate::codegen::tensor_cores::pipelined_loop::{issue_copies, slot_at, swizzled_destination};
use crate::ir::layout::Layout;
use crate::ir::{LoopPrefetch, Op, OpKind, PrefetchedOperand, Region, SharedBuffer, ValueId};
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};

/// One prefetched operand in lowering's terms.
struct Operand<'p> {
    fact: &'p PrefetchedOperand,
    /// Indices of its load and its dot in the body.
    load: usize,
    dot: usize,
    cfg: MmaConfig,
    ptr: ValueId,
    mask: Option<ValueId>,
}

/// What the copies of one iteration need: the lookahead slice, the loop's
/// regions and the carried values' layouts.
struct Loop<'a> {
    cond: &'a Region,
    body: &'a Region,
    slice: Lookahead,
    layouts: Vec<Layout>,
    /// The loop's shared-memory buffer (both buffers of every operand).
    buffer: SharedBuffer,
}

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op, pf: &LoopPrefetch) -> Result<()> {
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &op.kind
    else {
        return lw.unsupported("a prefetch on an op that is not a loop", op.span);
    };
    let operands = pf
        .operands
        .iter()
        .map(|o| operand(lw, op, body_region, o))
        .collect::<Result<Vec<_>>>()?;
    let roots: Vec<ValueId> = operands
        .iter()
        .flat_map(|o| [Some(o.ptr), o.mask])
        .flatten()
        .chain(cond_region.yields.iter().copied())
        .collect();
    let Some(slice) = lookahead(lw.func, &lw.layouts, op, roots) else {
        return lw.unsupported(
            "a prefetched loop whose next copies cannot be computed ahead",
            op.span,
        );
    };
    lw.smem.claim(pf.shared_bytes)?;
    let lp = Loop {
        cond: cond_region,
        body: body_region,
        slice,
        layouts: op.results.iter().map(|r| lw.assigned_layout(*r)).collect(),
        buffer: lw.smem.current,
    };
    let init_vals = yielded(lw, inits, &lp.layouts, op)?;
    // Iteration 0's tiles into buffers 0, once earlier readers are done.
    if lp.buffer.barrier_first {
        lw.barrier()?;
    }
    let first = lw.i32_const(0);
    lw.apart(|lw| {
        bind(lw, &lp, &init_vals);
        let runs = evaluate_ahead(lw, &lp)?;
        for o in &operands {
            copy(lw, &lp, o, first, runs)?;
            async_asm(lw, "cp.async.commit_group;")?;
        }
        Ok(())
    })?;

    let pre = current_block(lw)?;
    let (header, body, exit) = (
        lw.new_block("prefetch_while"),
        lw.new_block("prefetch_body"),
        lw.new_block("prefetch_endwhile"),
    );
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let slot_phi = lw.builder.build_phi(lw.ctx.i32_type(), "slot")?;
    slot_phi.add_incoming(&[(&first, pre)]);
    let phis = carried_phis(lw, op, &init_vals, &lp.layouts, pre)?;
    enter_body(lw, op, body, exit)?;
    let slot = slot_phi.as_basic_value().into_int_value();
    let other = lw.builder.build_xor(slot, lw.i32_const(1), "other_slot")?;
    for (idx, body_op) in body_region.ops.iter().enumerate() {
        if operands.iter().any(|o| o.load == idx) {
            continue;
        }
        let Some(o) = operands.iter().find(|o| o.dot == idx) else {
            lw.op(body_op)?;
            continue;
        };
        // This iteration's tile has landed and every thread's copies are
        // visible; the other operands' groups may still fly.
        let pending = operands.len() - 1;
        async_asm(lw, &format!("cp.async.wait_group {pending};"))?;
        lw.barrier()?;
        lw.apart(|lw| {
            let next = next_carried(lw, &lp)?;
            bind(lw, &lp, &next);
            let runs = evaluate_ahead(lw, &lp)?;
            copy(lw, &lp, o, other, runs)
        })?;
        async_asm(lw, "cp.async.commit_group;")?;
        let staged = buffer_at(lw, &lp, o, slot)?;
        lw.in_buffer_of(body_op, |lw| {
            mma::lower_with_staged_b(lw, body_op, &o.cfg, staged, o.fact.k_major)
        })?;
    }
    let next = yielded(lw, &body_region.yields, &lp.layouts, op)?;
    let latch = current_block(lw)?;
    lw.builder.build_unconditional_branch(header)?;
    slot_phi.add_incoming(&[(&other, latch)]);
    close_carried(&phis, &next, latch);
    // The copies issued past the end were skipped; nothing may land later.
    lw.builder.position_at_end(exit);
    async_asm(lw, "cp.async.wait_all;")
}

/// The pass's operand with its positions, tile plan, pointers and mask.
fn operand<'p>(
    lw: &Lowering<'_, '_>,
    op: &Op,
    body: &Region,
    fact: &'p PrefetchedOperand,
) -> Result<Operand<'p>> {
    let at = |v: ValueId| body.position_of(v);
    let (Some(load), Some(dot)) = (at(fact.load), at(fact.dot)) else {
        return lw.unsupported("a prefetch naming values outside its loop", op.span);
    };
    let OpKind::Load { ptr, mask, .. } = body.ops[load].kind else {
        return lw.unsupported("a prefetched operand that is not a load", op.span);
    };
    let Some(cfg) = planned_config(lw.func, &body.ops[dot]) else {
        return lw.unsupported(
            "a prefetched operand of a dot off the tensor cores",
            op.span,
        );
    };
    Ok(Operand {
        fact,
        load,
        dot,
        cfg,
        ptr,
        mask,
    })
}

/// Binds the carried values the lookahead reads to `vals` (one per
/// carried value of the loop) in both regions.
fn bind<'ctx>(lw: &mut Lowering<'_, 'ctx>, lp: &Loop<'_>, vals: &[Vec<BasicValueEnum<'ctx>>]) {
    for &j in &lp.slice.carried {
        let tile = Tile {
            layout: lp.layouts[j].clone(),
            regs: vals[j].clone(),
        };
        for args in [&lp.cond.args, &lp.body.args] {
            if let Some(&a) = args.get(j) {
                lw.define(a, Slot::Tile(tile.clone()));
            }
        }
    }
}

/// The carried values of the next iteration (those the lookahead reads;
/// the others stay as they are): the body's yields, computed now.
fn next_carried<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    lp: &Loop<'_>,
) -> Result<Vec<Vec<BasicValueEnum<'ctx>>>> {
    for &i in &lp.slice.body_ops {
        lw.op(&lp.body.ops[i])?;
    }
    let mut next = vec![Vec::new(); lp.layouts.len()];
    for &j in &lp.slice.carried {
        next[j] = lw.value(lp.body.yields[j], &lp.layouts[j])?;
    }
    Ok(next)
}

/// Lowers the slice under the current bindings; the loop's condition there.
fn evaluate_ahead<'ctx>(lw: &mut Lowering<'_, 'ctx>, lp: &Loop<'_>) -> Result<IntValue<'ctx>> {
    for &i in &lp.slice.cond_ops {
        lw.op(&lp.cond.ops[i])?;
    }
    for &i in &lp.slice.body_ops {
        lw.op(&lp.body.ops[i])?;
    }
    Ok(lw.scalar(lp.cond.yields[0])?.into_int_value())
}

/// Buffer `slot` (0 or 1) of operand `o`.
fn buffer_at<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    lp: &Loop<'_>,
    o: &Operand<'_>,
    slot: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>> {
    slot_at(
        lw,
        slot,
        o.fact.stage_bytes,
        lp.buffer.offset + o.fact.offset,
    )
}

/// The copies of `o`'s tile (pointers and mask as currently bound) into
/// its buffer `slot`, where `when`.
fn copy<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    lp: &Loop<'_>,
    o: &Operand<'_>,
    slot: IntValue<'ctx>,
    when: IntValue<'ctx>,
) -> Result<()> {
    let base = buffer_at(lw, lp, o, slot)?;
    let k_major = o.fact.k_major;
    // `[N][K]` rows of K, or `[K][N]` rows of N; the tile is `[K, N]`.
    let row_len = if k_major { o.cfg.k } else { o.cfg.n };
    let (shift, mask_bits) = swizzle_shift_mask(row_len / 8);
    let dst = move |lw: &Lowering<'_, 'ctx>, k: IntValue<'ctx>, n: IntValue<'ctx>| {
        let (row, col) = if k_major { (n, k) } else { (k, n) };
        swizzled_destination(lw, row, col, row_len, shift, mask_bits, base, 0)
    };
    let axis = if k_major { 0 } else { 1 };
    issue_copies(
        lw,
        (o.ptr, o.mask),
        (axis, o.fact.copy_width),
        &dst,
        Some(when),
    )
}
