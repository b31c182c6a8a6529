//! The pipelined reduction loop of [`crate::codegen::ops::pipeline`] on warpgroup MMA
//! (sm_90a, [`crate::codegen::tensor_cores::wgmma`]; the pass chose the engine and the buffers): the same pattern and the same `cp.async`
//! copies into `S` rotating buffers, laid out for the `wgmma` descriptors, with
//! one group of `wgmma`s in flight while the next tiles' copies fly.
//!
//! A prologue loop (the same body, its dot replaced by the copies) issues the
//! copies of tiles `0 .. S - 2`; then iteration `i` of the main loop (tile `i`
//! is copied into buffer `i % S`):
//! 1. `cp.async.wait_group S-2`: this thread's copies of tile `i - S + 1`
//!    landed; `fence.proxy.async.shared::cta`: they were generic-proxy writes
//!    and `wgmma` reads through the async proxy; `bar.sync`: every thread's.
//! 2. The `wgmma`s of tile `i - S + 1` (buffer `(i + 1) % S`), committed as
//!    one group, then `wgmma.wait_group 1`: the group of tile `i - S` (buffer
//!    `i % S`) is done in this warpgroup.
//! 3. `bar.sync`: ... in every warpgroup; only then the copies of tile `i`
//!    overwrite buffer `i % S`.
//!
//! After the loops the last `S - 1` tiles are issued and `wgmma.wait_group 0`
//! hands the accumulator to the epilogue.
//!
//! No `wgmma` is in flight where branches meet: ptxas serializes every
//! `wgmma` (C7515) when a path that skips one merges its accumulator with one
//! in flight. So when the loop ends before the prologue filled `S - 1`
//! buffers, a separate short drain multiplies the `n` loaded tiles one at a
//! time, each waited for; otherwise the drain issues the last `S - 1` tiles.
//! Either way no buffer is read that no copy filled, and only the tiles that
//! exist are multiplied (small K pays for no pipeline depth it cannot use).
use crate::codegen::lower::asm::async_asm;
use crate::codegen::lower::cluster;
use crate::codegen::lower::loops::{
    carried_phis, close_carried, current_block, phi_values, yielded,
};
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma::elem_ptr;
use crate::codegen::tensor_cores::native_order::{self, Direction};
use crate::codegen::tensor_cores::pipelined_loop::{
    issue_copies, loop_setup, lower_body, slot_offset, wrap_add, LoopSetup, PipelinePlan,
};
use crate::codegen::tensor_cores::tma::{self, ACopies};
use crate::codegen::tensor_cores::wgmma::{self, WgmmaConfig};
use crate::codegen::tensor_cores::wgmma_layout::StagedOperand;
use crate::ir::layout::Layout;
use crate::ir::{LoopPipeline, Op, OpKind, Region, TmaCopies, ValueId};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, IntValue, PhiValue, PointerValue};
use inkwell::IntPredicate;

/// Alignment of the dynamic shared memory: the 128-byte swizzle repeats every 1024 bytes.
pub const SWIZZLE_ALIGN: u32 = 1024;

/// Lowers the loop `op` as the pass's pipeline `p` (on wgmma) says.
pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op, p: &LoopPipeline) -> Result<()> {
    let plan = PipelinePlan::of(lw, op, p)?;
    let (
        OpKind::While {
            inits, body_region, ..
        },
        Some(w),
    ) = (&op.kind, plan.wgmma)
    else {
        return lw.unsupported("a wgmma pipeline without a warpgroup plan", op.span);
    };
    match p.tma.as_deref() {
        Some(t) if t.warp_specialized => consume(lw, op, &plan, &w, (inits, body_region), t),
        tma => pipelined(lw, op, &plan, &w, (inits, body_region), tma),
    }
}

/// The consumers' loop of a warp-specialized pipeline (the producer
/// warpgroup, [`crate::codegen::tensor_cores::warp_specialize`], copies
/// the `u`-th stage use of the kernel, counted across the tiles a program
/// runs, into buffer `u % S` once the consumers freed it): an iteration
/// waits until its stage is filled, issues its `wgmma`s as one group, waits
/// for the previous iteration's group (`wgmma.wait_group 1`) and frees that
/// stage; no thread waits for another. After the loop `wgmma.wait_group 0`
/// hands the accumulator to the epilogue and the last stage is freed.
fn consume<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    plan: &PipelinePlan,
    w: &WgmmaConfig,
    (inits, body_region): (&[ValueId], &Region),
    t: &TmaCopies,
) -> Result<()> {
    if w.native_order() {
        // The `tma-loads` pass offers no producer for it: its consumers
        // would reorder the accumulator beside the producer's live buffers.
        return lw.unsupported("a producer warpgroup for a native-order loop", op.span);
    }
    let stage_bytes = w.stage_bytes();
    let stages = plan.stages;
    let LoopSetup {
        input,
        acc_layout,
        layouts,
        init_vals,
    } = loop_setup(lw, op, plan, inits, body_region, stage_bytes)?;
    let Some(counter) = lw.stage_counter else {
        return lw.unsupported("a consumer loop without its stage counter", op.span);
    };
    let i32t = lw.ctx.i32_type();
    let first = lw
        .builder
        .build_load(i32t, counter, "stages_used")?
        .into_int_value();
    let first_slot =
        lw.builder
            .build_int_unsigned_rem(first, lw.i32_const(stages as u64), "first_slot")?;
    let pre = current_block(lw)?;
    let header = lw.new_block("consumer_while");
    let exit = lw.new_block("consumer_endwhile");
    lw.builder.build_unconditional_branch(header)?;
    let m = open_loop(
        lw,
        op,
        &layouts,
        header,
        exit,
        (first, first_slot, &init_vals, pre),
    )?;
    let next_slot = wrap_add(lw, m.slot, 1, stages)?;
    lower_body(lw, body_region, plan, &acc_layout, |lw| {
        let filled = tma::barrier(lw, t, m.slot)?;
        tma::wait(lw, filled, m.tile, stages)?;
        let acc_regs = lw.value(body_region.args[plan.acc], &acc_layout)?;
        let base = slot_offset(lw, m.slot, stage_bytes)?;
        let regs = wgmma::issue(lw, w, input, base, acc_regs)?;
        wgmma::wait_pending(lw, 1)?;
        tma::release_previous(lw, t, (m.tile, m.slot, first), stages)?;
        Ok(regs)
    })?;
    m.back_to(lw, (op, &body_region.yields, &layouts), header, next_slot)?;

    lw.builder.position_at_end(exit);
    let acc = wgmma::wait_all(lw, phi_values(&m.phis[plan.acc]))?;
    tma::release_previous(lw, t, (m.tile, m.slot, first), stages)?;
    lw.builder.build_store(counter, m.tile)?;
    for (i, row) in m.phis.iter().enumerate() {
        if i == plan.acc {
            lw.define_tile(op.results[i], acc_layout.clone(), acc.clone());
        } else {
            lw.define_tile(op.results[i], layouts[i].clone(), phi_values(row));
        }
    }
    Ok(())
}

fn pipelined<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    plan: &PipelinePlan,
    w: &WgmmaConfig,
    (inits, body_region): (&[ValueId], &Region),
    tma_copies: Option<&TmaCopies>,
) -> Result<()> {
    let Some(global) = lw.module.get_global("global_smem") else {
        return lw.unsupported("a kernel without its shared memory", op.span);
    };
    global.set_alignment(SWIZZLE_ALIGN);
    let stage_bytes = w.stage_bytes();
    let stages = plan.stages;
    let LoopSetup {
        input,
        acc_layout,
        layouts,
        mut init_vals,
    } = loop_setup(lw, op, plan, inits, body_region, stage_bytes)?;
    // Earlier scratch users (a layout conversion, say) may still read there.
    lw.barrier_before_writing()?;
    // A native-order loop carries the accumulator in the instructions'
    // order ([`native_order`]).
    let buffers = (
        slot_offset(lw, lw.i32_const(0), stage_bytes)?,
        stages * stage_bytes,
    );
    if w.native_order() && !native_order::uniform_constant(&init_vals[plan.acc]) {
        let init = std::mem::take(&mut init_vals[plan.acc]);
        init_vals[plan.acc] =
            native_order::reorder(lw, w, &acc_layout, init, buffers, Direction::ToLoopOrder)?;
    }
    let paired = match tma_copies {
        Some(t) => tma::init_barriers(lw, t, stages)?,
        None => None,
    };
    let pre = current_block(lw)?;
    let exit = lw.new_block("wgmma_endwhile");
    // The loop ended before the prologue filled `stages - 1` buffers.
    let short = lw.new_block("wgmma_short");
    let zero = lw.i32_const(0);

    // Prologue loop: the copies of tiles 0 .. stages - 2, no tensor work.
    let p_header = lw.new_block("wgmma_prologue");
    lw.builder.build_unconditional_branch(p_header)?;
    let p = open_loop(
        lw,
        op,
        &layouts,
        p_header,
        short,
        (zero, zero, &init_vals, pre),
    )?;
    lower_body(lw, body_region, plan, &acc_layout, |lw| {
        copy_stage(lw, (w, plan), (tma_copies, paired), body_region, p.slot)?;
        lw.value(body_region.args[plan.acc], &acc_layout)
    })?;
    let p_next = yielded(lw, &body_region.yields, &layouts, op)?;
    let p_next_index = lw
        .builder
        .build_int_add(p.tile, lw.i32_const(1), "next_tile")?;
    let p_next_slot = wrap_add(lw, p.slot, 1, stages)?;
    let p_latch = current_block(lw)?;
    let m_header = lw.new_block("wgmma_while");
    let more = lw.builder.build_int_compare(
        IntPredicate::ULT,
        p_next_index,
        lw.i32_const(stages as u64 - 1),
        "prologue",
    )?;
    lw.builder
        .build_conditional_branch(more, p_header, m_header)?;
    p.close(&p_next, p_next_index, p_next_slot, p_latch);

    // Main loop: tile i is copied while tile i - stages + 1 is multiplied.
    let m = open_loop(
        lw,
        op,
        &layouts,
        m_header,
        exit,
        (p_next_index, p_next_slot, &p_next, p_latch),
    )?;
    let next_slot = wrap_add(lw, m.slot, 1, stages)?;
    lower_body(lw, body_region, plan, &acc_layout, |lw| {
        let oldest = lw
            .builder
            .build_int_sub(m.tile, lw.i32_const(stages as u64 - 1), "oldest")?;
        operands_ready(
            lw,
            (tma_copies, w),
            stages,
            stages - 2,
            Some((next_slot, oldest)),
        )?;
        let acc_regs = lw.value(body_region.args[plan.acc], &acc_layout)?;
        let base = slot_offset(lw, next_slot, stage_bytes)?;
        let regs = wgmma::issue(lw, w, input, base, acc_regs)?;
        wgmma::wait_pending(lw, 1)?;
        // Every warpgroup is done with the buffer about to be refilled.
        // A multicast pipeline's refill writes the pair's buffer too.
        if tma_copies.is_some_and(|t| t.multicast) {
            cluster::barrier_relaxed(lw)?;
        } else {
            lw.barrier()?;
        }
        copy_stage(lw, (w, plan), (tma_copies, paired), body_region, m.slot)?;
        Ok(regs)
    })?;
    m.back_to(lw, (op, &body_region.yields, &layouts), m_header, next_slot)?;

    // Drain: tiles n - stages + 1 .. n are still to be multiplied.
    lw.builder.position_at_end(exit);
    let mut acc_regs = phi_values(&m.phis[plan.acc]);
    for d in (1..stages).rev() {
        let t_slot = wrap_add(lw, m.slot, stages - d, stages)?;
        let tile = lw
            .builder
            .build_int_sub(m.tile, lw.i32_const(d as u64), "drain_tile")?;
        operands_ready(lw, (tma_copies, w), stages, d - 1, Some((t_slot, tile)))?;
        let base = slot_offset(lw, t_slot, stage_bytes)?;
        acc_regs = wgmma::issue(lw, w, input, base, acc_regs)?;
    }
    let long_acc = wgmma::wait_all(lw, acc_regs)?;
    let long_end = current_block(lw)?;
    let done = lw.new_block("wgmma_done");
    lw.builder.build_unconditional_branch(done)?;

    lw.builder.position_at_end(short);
    let short_acc = short_drain(
        lw,
        w,
        input,
        p.tile,
        phi_values(&p.phis[plan.acc]),
        (stages, tma_copies),
    )?;
    let short_end = current_block(lw)?;
    lw.builder.build_unconditional_branch(done)?;

    lw.builder.position_at_end(done);
    let merge =
        |lw: &Lowering<'_, 'ctx>, short: BasicValueEnum<'ctx>, long: BasicValueEnum<'ctx>| {
            let phi = lw.builder.build_phi(short.get_type(), "exit")?;
            phi.add_incoming(&[(&short, short_end), (&long, long_end)]);
            Ok::<_, crate::codegen::CodegenError>(phi.as_basic_value())
        };
    // Every phi first: they lead the block.
    let mut merged = Vec::with_capacity(p.phis.len());
    for (i, (prow, mrow)) in p.phis.iter().zip(&m.phis).enumerate() {
        let (short_row, long_row) = if i == plan.acc {
            (short_acc.clone(), long_acc.clone())
        } else {
            (phi_values(prow), phi_values(mrow))
        };
        let row: Vec<BasicValueEnum> = short_row
            .into_iter()
            .zip(long_row)
            .map(|(a, b)| merge(lw, a, b))
            .collect::<std::result::Result<_, _>>()?;
        merged.push(row);
    }
    for (i, row) in merged.into_iter().enumerate() {
        if i != plan.acc {
            lw.define_tile(op.results[i], layouts[i].clone(), row);
            continue;
        }
        let row = if w.native_order() {
            let to = Direction::ToLogical;
            native_order::reorder(lw, w, &acc_layout, row, buffers, to)?
        } else {
            row
        };
        lw.define_tile(op.results[i], acc_layout.clone(), row);
    }
    if let Some(t) = tma_copies {
        tma::invalidate_barriers(lw, t, stages)?;
    }
    Ok(())
}

/// The loop ran `tiles < stages - 1` times: only the prologue's copies (tile
/// `j` in buffer `j`) flew and no `wgmma` did. Each tile is multiplied and
/// waited for before the next, so no `wgmma` is in flight where the branches
/// meet (ptxas would serialize every `wgmma` of the kernel, C7515), and
/// buffers past the last tile are never read (nothing to zero).
fn short_drain<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    w: &WgmmaConfig,
    input: &str,
    tiles: IntValue<'ctx>,
    acc: Vec<BasicValueEnum<'ctx>>,
    (stages, tma_copies): (usize, Option<&TmaCopies>),
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let stage_bytes = w.stage_bytes();
    operands_ready(lw, (tma_copies, w), stages, 0, None)?;
    let entry = current_block(lw)?;
    let header = lw.new_block("wgmma_short_tile");
    let body = lw.new_block("wgmma_short_mma");
    let end = lw.new_block("wgmma_short_end");
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let i32t = lw.ctx.i32_type();
    let tile = lw.builder.build_phi(i32t, "short_tile")?;
    tile.add_incoming(&[(&lw.i32_const(0), entry)]);
    let mut acc_phis = Vec::with_capacity(acc.len());
    for v in &acc {
        let phi = lw.builder.build_phi(v.get_type(), "short_acc")?;
        phi.add_incoming(&[(v, entry)]);
        acc_phis.push(phi);
    }
    let index = tile.as_basic_value().into_int_value();
    let more = lw
        .builder
        .build_int_compare(IntPredicate::ULT, index, tiles, "short_more")?;
    lw.builder.build_conditional_branch(more, body, end)?;
    lw.builder.position_at_end(body);
    if let Some(t) = tma_copies {
        // Tile j sits in buffer j, filled once.
        let bar = tma::barrier(lw, t, index)?;
        tma::wait(lw, bar, index, stages)?;
    }
    let base = slot_offset(lw, index, stage_bytes)?;
    let regs = wgmma::issue(lw, w, input, base, phi_values(&acc_phis))?;
    let regs = wgmma::wait_all(lw, regs)?;
    let next = lw.builder.build_int_add(index, lw.i32_const(1), "")?;
    let latch = current_block(lw)?;
    tile.add_incoming(&[(&next, latch)]);
    for (phi, v) in acc_phis.iter().zip(&regs) {
        phi.add_incoming(&[(v, latch)]);
    }
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(end);
    Ok(phi_values(&acc_phis))
}

/// One of the two loops at its header: the tile counter, the buffer index and
/// the carried values, and the block whose branch leaves for the drain.
struct OpenLoop<'ctx> {
    tile: IntValue<'ctx>,
    slot: IntValue<'ctx>,
    counter_phi: PhiValue<'ctx>,
    slot_phi: PhiValue<'ctx>,
    phis: Vec<Vec<PhiValue<'ctx>>>,
}

impl<'ctx> OpenLoop<'ctx> {
    /// Ends an iteration: the body's `yields` (in `layouts`), the next tile
    /// and `next_slot` carried back to `header`.
    fn back_to(
        &self,
        lw: &mut Lowering<'_, 'ctx>,
        (op, yields, layouts): (&Op, &[ValueId], &[Layout]),
        header: BasicBlock<'ctx>,
        next_slot: IntValue<'ctx>,
    ) -> Result<()> {
        let next = yielded(lw, yields, layouts, op)?;
        let next_index = lw
            .builder
            .build_int_add(self.tile, lw.i32_const(1), "next_tile")?;
        let latch = current_block(lw)?;
        lw.builder.build_unconditional_branch(header)?;
        self.close(&next, next_index, next_slot, latch);
        Ok(())
    }

    /// The back edge from `latch`.
    fn close(
        &self,
        next: &[Vec<BasicValueEnum<'ctx>>],
        tile: IntValue<'ctx>,
        slot: IntValue<'ctx>,
        latch: BasicBlock<'ctx>,
    ) {
        self.counter_phi.add_incoming(&[(&tile, latch)]);
        self.slot_phi.add_incoming(&[(&slot, latch)]);
        close_carried(&self.phis, next, latch);
    }
}

/// Fills `header` (already branched to from `entry.3`): phis entered with
/// `entry`, the loop condition, a branch to a new body block or to `exit`;
/// continues in the body.
#[allow(clippy::type_complexity)]
fn open_loop<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    layouts: &[Layout],
    header: BasicBlock<'ctx>,
    exit: BasicBlock<'ctx>,
    entry: (
        IntValue<'ctx>,
        IntValue<'ctx>,
        &[Vec<BasicValueEnum<'ctx>>],
        BasicBlock<'ctx>,
    ),
) -> Result<OpenLoop<'ctx>> {
    let OpKind::While { cond_region, .. } = &op.kind else {
        return lw.unsupported("this op as a loop", op.span);
    };
    let (tile, slot, vals, from) = entry;
    lw.builder.position_at_end(header);
    let i32t = lw.ctx.i32_type();
    let counter_phi = lw.builder.build_phi(i32t, "tile")?;
    counter_phi.add_incoming(&[(&tile, from)]);
    let slot_phi = lw.builder.build_phi(i32t, "slot")?;
    slot_phi.add_incoming(&[(&slot, from)]);
    let phis = carried_phis(lw, op, vals, layouts, from)?;
    lw.region(cond_region)?;
    let Some(&c) = cond_region.yields.first() else {
        return lw.unsupported("a loop condition region without a condition", op.span);
    };
    let c = lw.scalar(c)?.into_int_value();
    let body = lw.new_block("wgmma_body");
    lw.builder.build_conditional_branch(c, body, exit)?;
    lw.builder.position_at_end(body);
    Ok(OpenLoop {
        tile: counter_phi.as_basic_value().into_int_value(),
        slot: slot_phi.as_basic_value().into_int_value(),
        counter_phi,
        slot_phi,
        phis,
    })
}

/// Tile `tile` (in buffer `slot`) has landed for every thread: at most
/// `pending` `cp.async` groups of this thread fly, the landed copies are
/// made visible to the async proxy and every thread waits for the others'
/// (with TMA, only where `a` came by `cp.async`: the tile at the tensor's
/// last rows), and with TMA the stage's barrier completed the tile's phase
/// (`slot` `None`: the caller waits for each tile itself).
fn operands_ready<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    (tma_copies, w): (Option<&TmaCopies>, &WgmmaConfig),
    stages: usize,
    pending: usize,
    slot_tile: Option<(IntValue<'ctx>, IntValue<'ctx>)>,
) -> Result<()> {
    async_asm(lw, &format!("cp.async.wait_group {pending};"))?;
    async_asm(lw, "fence.proxy.async.shared::cta;")?;
    let Some(t) = tma_copies else {
        return lw.barrier();
    };
    match tma::a_copies(lw, t, w)? {
        ACopies::Tma => {}
        ACopies::TmaWhere(by_tma) => {
            let by_copies = lw.builder.build_not(by_tma, "a_by_cp_async")?;
            tma::barrier_if(lw, by_copies)?;
        }
        ACopies::CpAsync => lw.barrier()?,
    }
    match slot_tile {
        Some((slot, tile)) => {
            let bar = tma::barrier(lw, t, slot)?;
            tma::wait(lw, bar, tile, stages)
        }
        None => Ok(()),
    }
}

/// The copies of the current iteration's operand tiles into buffer `slot`,
/// as one `cp.async` group: with TMA, `b`'s by TMA and `a`'s by TMA where
/// the tile is clear of the tensor's last rows, else by `cp.async`.
fn copy_stage<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    (w, plan): (&WgmmaConfig, &PipelinePlan),
    (tma_copies, paired): (Option<&TmaCopies>, Option<IntValue<'ctx>>),
    body_region: &Region,
    slot: IntValue<'ctx>,
) -> Result<()> {
    let base = slot_offset(lw, slot, w.stage_bytes())?;
    match tma_copies {
        None => copy_operands(lw, w, plan, body_region, base, [true, true], None)?,
        Some(t) => {
            let at = tma::origins(lw, t, w, paired)?;
            let which = [true, false];
            match at.a_copies() {
                ACopies::Tma => {}
                ACopies::TmaWhere(by_tma) => {
                    let by_copies = lw.builder.build_not(by_tma, "a_by_cp_async")?;
                    copy_operands(lw, w, plan, body_region, base, which, Some(by_copies))?;
                }
                ACopies::CpAsync => copy_operands(lw, w, plan, body_region, base, which, None)?,
            }
            tma::copy_stage(lw, t, w, (base, slot), &at)?;
        }
    }
    async_asm(lw, "cp.async.commit_group;")
}

/// The `cp.async` copies of the operands `which` says of the current tile
/// into the stage at `base` (where `when`, an i1, holds): `a`'s rows
/// permuted, both in swizzled rows (see [`crate::codegen::tensor_cores::wgmma_layout`]).
fn copy_operands<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    w: &WgmmaConfig,
    plan: &PipelinePlan,
    body_region: &Region,
    base: PointerValue<'ctx>,
    which_ones: [bool; 2],
    when: Option<IntValue<'ctx>>,
) -> Result<()> {
    for (which, &at) in plan.loads.iter().enumerate() {
        if !which_ones[which] {
            continue;
        }
        let OpKind::Load { ptr, mask, .. } = body_region.ops[at].kind else {
            return lw.unsupported(
                "a pipelined operand that is not a load",
                body_region.ops[at].span,
            );
        };
        let w = *w;
        let (staged, offset) = if which == 0 {
            (StagedOperand::a(&w), 0)
        } else {
            (StagedOperand::b(&w), w.b_offset())
        };
        // The tile lands as loaded (its rows the stage's rows); a K-major
        // `a`'s rows are permuted, except in a native-order loop (an
        // M-major `a`, permuted along its rows, would have the halves of
        // each 32-byte global sector land apart: 16-byte L2 requests), which
        // carries the accumulator in the instructions' order instead
        // ([`native_order`]).
        let dst = move |lw: &Lowering<'_, 'ctx>, row: IntValue<'ctx>, col: IntValue<'ctx>| {
            let row = match (which, w.native_order()) {
                (0, false) => wgmma::physical_row_ir(lw, &w, row)?,
                _ => row,
            };
            let at = wgmma::swizzled_offset_ir(lw, row, col, staged.rows, staged.atom)?;
            let p = elem_ptr(lw, base, offset, lw.ctx.i8_type().into(), at)?;
            Ok(lw
                .builder
                .build_ptr_to_int(p, lw.ctx.i32_type(), "smem_dst")?)
        };
        issue_copies(lw, (ptr, mask), (1, plan.widths[which]), &dst, when)?;
    }
    Ok(())
}
