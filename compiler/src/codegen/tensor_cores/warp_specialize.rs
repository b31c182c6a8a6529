//! Warp-specialized TMA pipelines (sm_90a; [`TmaCopies::warp_specialized`],
//! decided by the `tma-loads` pass): the kernel launches a warpgroup more
//! than its layouts use ([`crate::ir::PRODUCER_WARPS`], the last threads).
//! At the kernel's start thread 0 initializes both rows of barriers and
//! every thread meets once; then the producer warpgroup gives registers
//! back (`setmaxnreg.dec`), and one of its threads runs the loop alone on
//! the scalars it needs ([`producer_slice`]): for its `u`-th stage use it
//! waits until the consumers freed buffer `u % S` (from use `S` on: they
//! read use `u - S`), arms the stage's barrier and issues the copies. The
//! consumers take the registers (`setmaxnreg.inc`) and run the kernel as
//! written, meeting among themselves only (named barrier 1), their loop
//! waiting on the stages' barriers instead of each other
//! ([`crate::codegen::ops::wgmma_pipeline`]). Both loop over the tiles of
//! the persistent grid, the stage count running on across them.
//!
//! With TMA multicast ([`TmaCopies::multicast`]) the programs run in
//! clusters of two whose tiles each round differ in bit 0 (an even grid).
//! Each producer computes the peer's tile's first column of `b` from the
//! same scalars; where the two match it copies every other column block
//! into both programs, else its own `b`. A stage is free once the consumer
//! warps of both programs read it (each arrives on both barriers), so no
//! copy overwrites a buffer the peer still reads, and the pair never meets
//! after the start: before leaving, the producer waits until its last
//! stages are read in both (the peer's last arrivals and copies have
//! landed); idle warps leave at once. (Meeting at the exit instead, every
//! idle warp waiting on the cluster barrier, made the H100 run 1.5x
//! slower.)
use crate::analysis::producer_slice::{tma_producer_slice, ProducerSlice};
use crate::analysis::wgmma::WgmmaConfig;
use crate::codegen::lower::asm::async_asm;
use crate::codegen::lower::loops::current_block;
use crate::codegen::lower::shared_alloc::buffer_of;
use crate::codegen::lower::tile::{Slot, Tile};
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::pipelined_loop::{slot_offset, PipelinePlan};
use crate::codegen::tensor_cores::tma;
use crate::codegen::CodegenError;
use crate::ir::{Op, OpKind, SharedBuffer, TmaCopies};
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;

/// Registers per thread after the split with two consumer warpgroups:
/// 128 x 40 + 256 x 232 = 64,512 of the 65,536 (the launch gives each of
/// the 384 threads 168).
const PRODUCER_REGISTERS: u32 = 40;
const CONSUMER_REGISTERS: u32 = 232;

/// Lowers the whole kernel when it has a warp-specialized loop (and says
/// whether it did): the split at the kernel's start, the producer's tile
/// loop and the consumers' (the kernel's top region once per tile).
pub fn lower_kernel(lw: &mut Lowering<'_, '_>) -> Result<bool> {
    let func = lw.func;
    let Some((op, p, t)) = func.warp_specialized_loop() else {
        return Ok(false);
    };
    let Some(slice) = tma_producer_slice(func, op, t) else {
        return lw.unsupported(
            "a producer warpgroup for a loop whose copies need more than scalars",
            op.span,
        );
    };
    let buffer = buffer_of(lw.shared, op.results.first());
    check_buffers_apart(lw, buffer, op)?;
    let plan = PipelinePlan::of(lw, op, p)?;
    let Some(w) = plan.wgmma else {
        return lw.unsupported("a producer warpgroup without a wgmma plan", op.span);
    };
    let consumers = lw.num_threads() as u64;
    let tiles = tile_count(lw)?;
    let counter = lw
        .builder
        .build_alloca(lw.ctx.i32_type(), "stage_counter")?;
    lw.builder.build_store(counter, lw.i32_const(0))?;
    let outer = lw.smem.current;
    lw.smem.current = buffer;
    tma::init_producer_barriers(lw, t, plan.stages, lw.num_warps)?;
    lw.smem.current = outer;
    let producer = lw.new_block("producer");
    let issuer = lw.new_block("producer_thread");
    let consumer = lw.new_block("consumers");
    let is_producer = lw.builder.build_int_compare(
        IntPredicate::UGE,
        lw.tid,
        lw.i32_const(consumers),
        "producer_warps",
    )?;
    lw.builder
        .build_conditional_branch(is_producer, producer, consumer)?;
    let reallocate = w.groups() > 1;

    lw.builder.position_at_end(producer);
    if reallocate {
        async_asm(
            lw,
            &format!("setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGISTERS};"),
        )?;
    }
    let elected = lw.builder.build_int_compare(
        IntPredicate::EQ,
        lw.tid,
        lw.i32_const(consumers),
        "producer_thread",
    )?;
    lw.builder
        .build_conditional_branch(elected, issuer, lw.exit_block)?;
    lw.builder.position_at_end(issuer);
    lw.apart(|lw| {
        lw.smem.current = buffer;
        each_tile(lw, tiles, |lw| {
            let peer_column = match t.multicast {
                true => Some(peer_b_column(lw, t, &slice)?),
                false => None,
            };
            lower_top_slice(lw, &slice)?;
            let paired = match peer_column {
                Some(peer) => Some(pair_shares_b(lw, t, peer)?),
                None => None,
            };
            let start = lw
                .builder
                .build_load(lw.ctx.i32_type(), counter, "stages_used")?
                .into_int_value();
            let end = produce(lw, op, t, (&w, plan.stages), (&slice, paired), start)?;
            lw.builder.build_store(counter, end)?;
            Ok(())
        })?;
        if t.multicast {
            wait_for_the_last_reads(lw, t, counter, plan.stages)?;
        }
        lw.builder.build_unconditional_branch(lw.exit_block)?;
        Ok(())
    })?;

    lw.builder.position_at_end(consumer);
    if reallocate {
        async_asm(
            lw,
            &format!("setmaxnreg.inc.sync.aligned.u32 {CONSUMER_REGISTERS};"),
        )?;
    }
    lw.barrier_threads = Some(consumers as u32);
    lw.stage_counter = Some(counter);
    each_tile(lw, tiles, |lw| lw.region(&func.body))?;
    lw.builder.build_unconditional_branch(lw.exit_block)?;
    Ok(true)
}

/// The scalars of the kernel's top region that the producer needs before
/// the loop (for this tile).
fn lower_top_slice(lw: &mut Lowering<'_, '_>, slice: &ProducerSlice) -> Result<()> {
    let func = lw.func;
    for top in &func.body.ops[..slice.loop_at] {
        if slice.has(top) {
            lw.op(top)?;
        }
    }
    Ok(())
}

/// A multicast pipeline's pair: the first column of `b` the peer (the
/// other program of the cluster, whose tile this round is this one's with
/// bit 0 flipped: the grid along x is even) copies, computed here from the
/// peer's tile by the same scalars.
fn peer_b_column<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    slice: &ProducerSlice,
) -> Result<IntValue<'ctx>> {
    let Some((tile, tiles)) = lw.persistent_tile else {
        return lw.unsupported("a producer outside its tile loop", lw.func.span);
    };
    let peer = lw.builder.build_xor(tile, lw.i32_const(1), "peer_tile")?;
    lw.persistent_tile = Some((peer, tiles));
    let column = lw.apart(|lw| {
        lower_top_slice(lw, slice)?;
        tma::b_column(lw, t)
    });
    lw.persistent_tile = Some((tile, tiles));
    column
}

/// Whether this tile's `b` starts at the peer's column (the same i1 in
/// both programs): then each copies half of it into both.
fn pair_shares_b<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    peer: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let own = tma::b_column(lw, t)?;
    Ok(lw
        .builder
        .build_int_compare(IntPredicate::EQ, own, peer, "pair_shares_b")?)
}

/// A multicast pipeline's producer, before its program leaves: the
/// consumers of both programs have read the last stages (the peer's
/// consumers arrive on this program's barriers until then, and its copies
/// into this program's buffers have landed).
fn wait_for_the_last_reads<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    counter: inkwell::values::PointerValue<'ctx>,
    stages: usize,
) -> Result<()> {
    let used = lw
        .builder
        .build_load(lw.ctx.i32_type(), counter, "stages_used")?
        .into_int_value();
    for back in 1..=stages {
        let at = lw
            .builder
            .build_int_sub(used, lw.i32_const(back as u64), "last_use")?;
        let happened =
            lw.builder
                .build_int_compare(IntPredicate::SGE, at, lw.i32_const(0), "happened")?;
        tma::branch_if(lw, happened, |lw| {
            let slot = lw
                .builder
                .build_int_unsigned_rem(at, lw.i32_const(stages as u64), "")?;
            let free = tma::free_barrier(lw, t, slot, stages)?;
            tma::wait(lw, free, at, stages)
        })?;
    }
    Ok(())
}

/// The tile count: the persistent kernel's last parameter.
fn tile_count<'ctx>(lw: &Lowering<'_, 'ctx>) -> Result<IntValue<'ctx>> {
    match lw.kernel.get_last_param() {
        Some(v) if v.is_int_value() => Ok(v.into_int_value()),
        _ => lw.unsupported("a persistent kernel without its tile count", lw.func.span),
    }
}

/// Runs `body` (which lowers the code of one tile) for tiles `program_id(0),
/// + num_programs(0), ..` below `tiles`; the builder is left after the
/// loop.
fn each_tile<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    tiles: IntValue<'ctx>,
    body: impl FnOnce(&mut Lowering<'_, 'ctx>) -> Result<()>,
) -> Result<()> {
    let i32t = lw.ctx.i32_type().into();
    let first = lw.call_value("llvm.nvvm.read.ptx.sreg.ctaid.x", i32t, &[])?;
    let step = lw
        .call_value("llvm.nvvm.read.ptx.sreg.nctaid.x", i32t, &[])?
        .into_int_value();
    let entry = current_block(lw)?;
    let header = lw.new_block("tile_loop");
    let work = lw.new_block("tile");
    let done = lw.new_block("tiles_done");
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let tile = lw.builder.build_phi(lw.ctx.i32_type(), "tile")?;
    tile.add_incoming(&[(&first, entry)]);
    let index = tile.as_basic_value().into_int_value();
    let more = lw
        .builder
        .build_int_compare(IntPredicate::SLT, index, tiles, "more_tiles")?;
    lw.builder.build_conditional_branch(more, work, done)?;
    lw.builder.position_at_end(work);
    let outer = lw.persistent_tile.replace((index, tiles));
    let lowered = body(lw);
    lw.persistent_tile = outer;
    lowered?;
    let next = lw.builder.build_int_add(index, step, "next_tile")?;
    let latch = current_block(lw)?;
    tile.add_incoming(&[(&next, latch)]);
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(done);
    Ok(())
}

/// The loop's buffers (and barriers) are filled while the consumers run the
/// rest of the kernel: `allocate-shared-memory` put every other buffer
/// above them (anything else is a compiler bug).
fn check_buffers_apart(lw: &Lowering<'_, '_>, buffer: SharedBuffer, op: &Op) -> Result<()> {
    let clash = lw
        .shared
        .buffers
        .iter()
        .filter(|(v, _)| op.results.first() != Some(v))
        .any(|(_, b)| b.bytes > 0 && b.offset < buffer.end() && buffer.offset < b.end());
    if clash {
        return Err(CodegenError::Llvm(
            "a warp-specialized pipeline's buffers overlap another op's scratch \
             (allocate-shared-memory and codegen disagree)"
                .into(),
        ));
    }
    Ok(())
}

/// The producer thread's loop: the loop's condition and the scalars of its
/// body (the rest stays with the consumers), and per tile the wait for a
/// free buffer and the copies.
fn produce<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    t: &TmaCopies,
    (w, stages): (&WgmmaConfig, usize),
    (slice, paired): (&ProducerSlice, Option<IntValue<'ctx>>),
    start: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &op.kind
    else {
        return lw.unsupported("a producer for an op that is not a loop", op.span);
    };
    let entry = current_block(lw)?;
    let header = lw.new_block("producer_while");
    let body = lw.new_block("producer_body");
    let done = lw.new_block("producer_done");
    let mut starts: Vec<BasicValueEnum> = Vec::with_capacity(slice.carried.len());
    for &j in &slice.carried {
        starts.push(lw.scalar(inits[j])?);
    }
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(header);
    let tile_phi = lw.builder.build_phi(lw.ctx.i32_type(), "producer_tile")?;
    tile_phi.add_incoming(&[(&start, entry)]);
    let mut phis = Vec::with_capacity(starts.len());
    for (&j, start) in slice.carried.iter().zip(&starts) {
        let phi = lw.builder.build_phi(start.get_type(), "producer_carried")?;
        phi.add_incoming(&[(start, entry)]);
        for args in [&cond_region.args, &body_region.args] {
            lw.define(args[j], Slot::Tile(Tile::scalar(phi.as_basic_value())));
        }
        phis.push(phi);
    }
    for o in cond_region.ops.iter().filter(|o| slice.has(o)) {
        lw.op(o)?;
    }
    let Some(&more) = cond_region.yields.first() else {
        return lw.unsupported("a loop condition region without a condition", op.span);
    };
    let more = lw.scalar(more)?.into_int_value();
    lw.builder.build_conditional_branch(more, body, done)?;

    lw.builder.position_at_end(body);
    let tile = tile_phi.as_basic_value().into_int_value();
    let slot =
        lw.builder
            .build_int_unsigned_rem(tile, lw.i32_const(stages as u64), "producer_slot")?;
    // From the second round on, the consumers must have read the stage
    // `S` earlier (the buffers are free at the start: nothing else uses them).
    let reused = lw.builder.build_int_compare(
        IntPredicate::UGE,
        tile,
        lw.i32_const(stages as u64),
        "reused",
    )?;
    tma::branch_if(lw, reused, |lw| {
        let free = tma::free_barrier(lw, t, slot, stages)?;
        let earlier = lw
            .builder
            .build_int_sub(tile, lw.i32_const(stages as u64), "")?;
        tma::wait(lw, free, earlier, stages)
    })?;
    for o in body_region.ops.iter().filter(|o| slice.has(o)) {
        lw.op(o)?;
    }
    let at = tma::origins(lw, t, w, paired)?;
    let base = slot_offset(lw, slot, w.stage_bytes())?;
    tma::issue_stage(lw, t, w, (base, slot), &at)?;
    let mut next = Vec::with_capacity(phis.len());
    for &j in &slice.carried {
        next.push(lw.scalar(body_region.yields[j])?);
    }
    let next_tile = lw
        .builder
        .build_int_add(tile, lw.i32_const(1), "producer_next")?;
    let latch = current_block(lw)?;
    tile_phi.add_incoming(&[(&next_tile, latch)]);
    for (phi, v) in phis.iter().zip(&next) {
        phi.add_incoming(&[(v, latch)]);
    }
    lw.builder.build_unconditional_branch(header)?;
    lw.builder.position_at_end(done);
    Ok(tile)
}
