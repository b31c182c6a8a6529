//! Warp-specialized TMA pipelines (sm_90a; [`TmaCopies::warp_specialized`],
//! decided by the `tma-loads` pass): the kernel launches a warpgroup more
//! than its layouts use ([`crate::ir::PRODUCER_WARPS`], the last threads).
//! At the kernel's start thread 0 initializes both rows of barriers and
//! every thread meets once; then the producer warpgroup gives registers
//! back (`setmaxnreg.dec`), and one of its threads runs the loop alone on
//! the scalars it needs ([`producer_slice`]): for tile `i` it waits until
//! the consumers freed buffer `i % S` (as they enter the loop, or after
//! reading tile `i - S`), arms the stage's
//! barrier and issues the copies, then leaves. The consumers take the
//! registers (`setmaxnreg.inc`) and run the kernel as written, meeting
//! among themselves only (named barrier 1), their loop waiting on the
//! stages' barriers instead of each other
//! ([`crate::codegen::ops::wgmma_pipeline`]).
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
use crate::ir::walk::{regions, visit_region};
use crate::ir::{Function, LoopPipeline, Op, OpKind, SharedBuffer, TmaCopies};
use crate::passes::tma_loads::BARRIER_BYTES;
use inkwell::values::BasicValueEnum;
use inkwell::IntPredicate;

/// Registers per thread after the split with two consumer warpgroups:
/// 128 x 40 + 256 x 232 = 64,512 of the 65,536 (the launch gives each of
/// the 384 threads 168).
const PRODUCER_REGISTERS: u32 = 40;
const CONSUMER_REGISTERS: u32 = 232;

/// The kernel's warp-specialized loop: the op in the top region, its
/// pipeline and copies.
fn specialized_loop(func: &Function) -> Option<(&Op, &LoopPipeline, &TmaCopies)> {
    func.body.ops.iter().find_map(|op| match &op.kind {
        OpKind::While {
            pipeline: Some(p), ..
        } => {
            let t = p.tma.as_deref()?;
            t.warp_specialized.then_some((op, &**p, t))
        }
        _ => None,
    })
}

/// At the kernel's start (the builder in the entry block): splits off the
/// producer warpgroup of the kernel's warp-specialized loop, if it has one,
/// and leaves the builder where the consumers go on.
pub fn split_warps(lw: &mut Lowering<'_, '_>) -> Result<()> {
    let func = lw.func;
    let Some((op, p, t)) = specialized_loop(func) else {
        return Ok(());
    };
    let Some(slice) = tma_producer_slice(func, op, t) else {
        return lw.unsupported(
            "a producer warpgroup for a loop whose copies need more than scalars",
            op.span,
        );
    };
    let buffer = buffer_of(lw.shared, op.results.first());
    let barriers = SharedBuffer {
        offset: buffer.offset + t.barriers,
        bytes: 2 * p.stages * BARRIER_BYTES,
        barrier_first: false,
    };
    check_barriers_free(lw, func, &slice, barriers)?;
    let plan = PipelinePlan::of(lw, op, p)?;
    let Some(w) = plan.wgmma else {
        return lw.unsupported("a producer warpgroup without a wgmma plan", op.span);
    };
    let consumers = lw.num_threads() as u64;
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
        for top in &func.body.ops[..slice.loop_at] {
            if slice.has(top) {
                lw.op(top)?;
            }
        }
        produce(lw, op, t, (&w, plan.stages), &slice)?;
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
    Ok(())
}

/// The barriers live from the kernel's start, so no op before the loop may
/// have scratch there (the buffers it may: the producer waits until the
/// consumers enter the loop).
fn check_barriers_free(
    lw: &Lowering<'_, '_>,
    func: &Function,
    slice: &ProducerSlice,
    buffer: SharedBuffer,
) -> Result<()> {
    for top in &func.body.ops[..slice.loop_at] {
        let mut clash = None;
        let mut check = |o: &Op| {
            let b = buffer_of(lw.shared, o.results.first());
            if b.bytes > 0 && b.offset < buffer.end() && buffer.offset < b.end() {
                clash.get_or_insert(o.span);
            }
        };
        check(top);
        for region in regions(&top.kind) {
            visit_region(region, 0, &mut |o, _| check(o));
        }
        if let Some(span) = clash {
            return Err(CodegenError::Declined {
                what: "a producer warpgroup whose barriers overlap the scratch memory of an \
                       op before its loop"
                    .into(),
                span,
            });
        }
    }
    Ok(())
}

/// The producer thread's loop: the loop's condition and the scalars of its
/// body (the rest stays with the consumers), and per tile the wait for a
/// free buffer and the copies.
fn produce(
    lw: &mut Lowering<'_, '_>,
    op: &Op,
    t: &TmaCopies,
    (w, stages): (&WgmmaConfig, usize),
    slice: &ProducerSlice,
) -> Result<()> {
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
    tile_phi.add_incoming(&[(&lw.i32_const(0), entry)]);
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
    let slot = lw
        .builder
        .build_int_unsigned_rem(tile, lw.i32_const(stages as u64), "producer_slot")?;
    // Round `i / S` of the buffer's free barrier: the consumers entered the
    // loop (round 0) or read tile `i - S`.
    let free = tma::read_barrier(lw, t, slot, stages)?;
    tma::wait(lw, free, tile, stages)?;
    for o in body_region.ops.iter().filter(|o| slice.has(o)) {
        lw.op(o)?;
    }
    let at = tma::origins(lw, t, w, None)?;
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
    Ok(())
}
