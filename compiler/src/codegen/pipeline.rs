//! Software pipelining of a reduction loop around a tensor-core dot, as the
//! `pipeline-dot-loops` pass decided it ([`crate::ir::LoopPipeline`] on the
//! `While`: engine, copy widths, buffers; see
//! [`crate::passes::pipeline_dot_loops`] for the pattern). Nothing is decided
//! here: the loads become `cp.async` copies global -> shared memory (swizzled
//! as [`super::mma`] reads them) into `stages` buffers, and the dot is
//! delayed: iteration `i` issues the copies of tile `i` into buffer
//! `i % stages` and computes tile `i - stages + 1`, so the copies of the next
//! tiles fly while the tensor cores work. After the loop the last
//! `stages - 1` tiles are drained. The buffers sit at the bottom of the
//! shared memory; other scratch users start above them
//! (`SharedMemory::floor`) until the drain is done. A loop on wgmma is
//! lowered by [`super::wgmma_pipeline`] (same copies, `wgmma` for the dot).
use super::control_flow::{
    carried_phis, close_carried, current_block, enter_body, phi_values, yielded,
};
use super::lower::{Lowering, Result};
use super::mma::{self, add, elem_ptr, mul, phase};
use super::wgmma::WgmmaConfig;
use crate::analysis::layout::Layout;
use crate::analysis::mma::{accumulator_layout, stage_bytes, swizzle_shift_mask, MmaConfig};
use crate::ir::{DotEngine, LoopPipeline, Op, OpKind, Region, ValueId};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};
use inkwell::IntPredicate;

/// A pipelined loop as lowering uses it ([`PipelinePlan::of`]).
#[derive(Clone, Debug)]
pub struct PipelinePlan {
    /// Indices in the body's ops.
    pub dot: usize,
    pub loads: [usize; 2],
    /// Position of the accumulator among the carried values.
    pub acc: usize,
    pub cfg: MmaConfig,
    pub stages: usize,
    /// Elements per `cp.async` of `a` and of `b`.
    pub widths: [usize; 2],
    /// On sm_90a, the warpgroup plan when the dot fits one (then `cfg` is its
    /// accumulator, see [`super::wgmma`]).
    pub wgmma: Option<WgmmaConfig>,
}

impl PipelinePlan {
    /// The decisions of the `pipeline-dot-loops` pass for `op`, in the terms
    /// lowering uses: positions in the body and the engine's config (from
    /// the dot's tile sizes and the decided warp split).
    pub fn of(lw: &Lowering<'_, '_>, op: &Op, p: &LoopPipeline) -> Result<PipelinePlan> {
        let OpKind::While { body_region, .. } = &op.kind else {
            return lw.unsupported("a pipeline on an op that is not a loop", op.span);
        };
        let at = |v: ValueId| {
            body_region
                .ops
                .iter()
                .position(|o| o.results.first() == Some(&v))
        };
        let (Some(dot), Some(a), Some(b)) = (at(p.dot), at(p.loads[0]), at(p.loads[1])) else {
            return lw.unsupported("a pipeline naming values outside its loop", op.span);
        };
        let (sa, sb) = (lw.shape(p.loads[0]), lw.shape(p.loads[1]));
        let (m, k, n) = (sa[0], sa[1], sb[1]);
        let (cfg, wgmma) = match p.engine {
            DotEngine::MmaSync { warps } => (MmaConfig { warps, m, n, k }, None),
            DotEngine::Wgmma { warpgroups } => {
                let w = WgmmaConfig {
                    m,
                    n,
                    k,
                    num_warps: 4 * warpgroups,
                };
                (w.mma(), Some(w))
            }
        };
        Ok(PipelinePlan {
            dot,
            loads: [a, b],
            acc: p.acc,
            cfg,
            stages: p.stages,
            widths: p.copy_widths,
            wgmma,
        })
    }
}

pub fn lower_while(lw: &mut Lowering<'_, '_>, op: &Op, plan: &PipelinePlan) -> Result<()> {
    let OpKind::While {
        inits, body_region, ..
    } = &op.kind
    else {
        return lw.unsupported("this op as a loop", op.span);
    };
    if let Some(w) = &plan.wgmma {
        return super::wgmma_pipeline::pipelined(lw, op, plan, w, inits, body_region);
    }
    pipelined(lw, op, plan, inits, body_region)
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
        saved_floor,
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
            let (row_len, offset) = if which == 0 {
                (cfg.k, 0)
            } else {
                (cfg.n, b_offset)
            };
            let (shift, mask_bits) = swizzle_shift_mask(row_len / 8);
            let dst = |lw: &Lowering<'_, 'ctx>, row: IntValue<'ctx>, col: IntValue<'ctx>| {
                swizzled_destination(lw, row, col, row_len, shift, mask_bits, slot_base, offset)
            };
            issue_copies(lw, ptr, mask, plan.widths[which], &dst)?;
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
            &cfg,
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
            &cfg,
            input,
            ready,
            t_slot,
            stage_bytes,
            b_offset,
            acc_regs,
        )?;
    }
    lw.smem.floor = saved_floor;
    lw.define_tile(op.results[plan.acc], acc_layout, acc_regs);
    Ok(())
}

/// `(x + by) % stages` for `x < stages`, `by < stages`.
pub(crate) fn wrap_add<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    x: IntValue<'ctx>,
    by: usize,
    stages: usize,
) -> Result<IntValue<'ctx>> {
    let sum = lw.builder.build_int_add(x, lw.i32_const(by as u64), "")?;
    let wrapped = lw
        .builder
        .build_int_sub(sum, lw.i32_const(stages as u64), "")?;
    let over =
        lw.builder
            .build_int_compare(IntPredicate::UGE, sum, lw.i32_const(stages as u64), "")?;
    Ok(lw
        .builder
        .build_select(over, wrapped, sum, "wrap")?
        .into_int_value())
}

/// `acc +` the dot of the tile in buffer `slot` when `ready`, else `acc` (a uniform branch).
#[allow(clippy::too_many_arguments)]
fn guarded_compute<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cfg: &MmaConfig,
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
    let out = mma::compute(lw, cfg, input, base, b_offset, acc.clone())?;
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

/// Pointer to buffer `slot` (bytes `slot * stage_bytes` of the shared memory).
pub(crate) fn slot_offset<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    slot: IntValue<'ctx>,
    stage_bytes: usize,
) -> Result<inkwell::values::PointerValue<'ctx>> {
    let off = mul(lw, slot, stage_bytes as u64)?;
    Ok(unsafe {
        lw.builder
            .build_in_bounds_gep(lw.ctx.i8_type(), lw.smem.base(), &[off], "slot")?
    })
}

/// One `cp.async` per `width` consecutive elements of the tile `*ptr` into its
/// swizzled place (rows of `row_len`) at `base + offset`; masked-off elements
/// are zero-filled (source size 0), replicas skip their copies.
pub(crate) fn issue_copies<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    ptr: ValueId,
    mask: Option<ValueId>,
    width: usize,
    dst_of: &CopyDestination<'_, 'ctx>,
) -> Result<()> {
    let shape = lw.shape(ptr);
    let layout = lw.assigned_layout(ptr);
    let ptrs = lw.value(ptr, &layout)?;
    let masks = match mask {
        Some(m) => Some(lw.value(m, &layout)?),
        None => None,
    };
    let owner = lw.owner_pred(&layout, &shape)?;
    let map = layout.tile_map(&shape);
    let idx = lw.indices(&layout, &shape)?;
    let bytes = 2 * width;
    for (reg, i) in idx.iter().enumerate() {
        if map.reg_locals(reg)[1] % width != 0 {
            continue;
        }
        let dst = dst_of(&*lw, i[0], i[1])?;
        let src = lw.builder.build_ptr_to_int(
            ptrs[reg].into_pointer_value(),
            lw.ctx.i64_type(),
            "gmem_src",
        )?;
        let size = match &masks {
            Some(m) => lw.builder.build_select(
                m[reg].into_int_value(),
                lw.i32_const(bytes as u64),
                lw.i32_const(0),
                "src_size",
            )?,
            None => lw.i32_const(bytes as u64).into(),
        };
        cp_async(lw, dst, src, bytes, size.into_int_value(), owner)?;
    }
    Ok(())
}

/// Where a `cp.async` of the element at `(row, col)` of a tile goes: a
/// 32-bit shared-memory address.
pub(crate) type CopyDestination<'a, 'ctx> =
    dyn Fn(&Lowering<'_, 'ctx>, IntValue<'ctx>, IntValue<'ctx>) -> Result<IntValue<'ctx>> + 'a;

/// The `mma.sync` staging: rows of `row_len` elements, 16-byte chunks
/// XOR-swizzled by `(row >> shift) & mask`, at `base + offset`.
#[allow(clippy::too_many_arguments)]
fn swizzled_destination<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    row: IntValue<'ctx>,
    col: IntValue<'ctx>,
    row_len: usize,
    shift: u32,
    mask_bits: usize,
    base: inkwell::values::PointerValue<'ctx>,
    offset: usize,
) -> Result<IntValue<'ctx>> {
    let chunk = lw
        .builder
        .build_right_shift(col, lw.i32_const(3), false, "")?;
    let within = lw.builder.build_and(col, lw.i32_const(7), "")?;
    let ph = phase(lw, row, shift, mask_bits)?;
    let chunk = lw.builder.build_xor(chunk, ph, "")?;
    let at = add(lw, mul(lw, row, row_len as u64)?, mul(lw, chunk, 8)?)?;
    let at = add(lw, at, within)?;
    let dst = elem_ptr(lw, base, offset, lw.ctx.i16_type().into(), at)?;
    Ok(lw
        .builder
        .build_ptr_to_int(dst, lw.ctx.i32_type(), "smem_dst")?)
}

/// `cp.async.{cg,ca}.shared.global [dst], [src], bytes, size`, under `pred`.
fn cp_async<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    dst: IntValue<'ctx>,
    src: IntValue<'ctx>,
    bytes: usize,
    size: IntValue<'ctx>,
    pred: Option<IntValue<'ctx>>,
) -> Result<()> {
    let cache = if bytes == 16 { "cg" } else { "ca" };
    let copy = format!("cp.async.{cache}.shared.global [$0], [$1], {bytes}, $2;");
    let (i32t, i64t) = (lw.ctx.i32_type(), lw.ctx.i64_type());
    let mut params: Vec<BasicMetadataTypeEnum> = vec![i32t.into(), i64t.into(), i32t.into()];
    let mut args: Vec<BasicMetadataValueEnum> = vec![dst.into(), src.into(), size.into()];
    let (asm, constraints) = match pred {
        None => (copy, "r,l,r"),
        Some(p) => {
            params.push(i32t.into());
            let p = lw.builder.build_int_z_extend(p, i32t, "")?;
            args.push(p.into());
            (
                format!("{{ .reg .pred p; setp.ne.b32 p, $3, 0; @p {copy} }}"),
                "r,l,r,r",
            )
        }
    };
    let fn_ty = lw.ctx.void_type().fn_type(&params, false);
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.into(), true, false, None, false);
    lw.builder.build_indirect_call(fn_ty, asm_ptr, &args, "")?;
    Ok(())
}

/// What both pipelined lowerings (mma.sync and wgmma) set up before the loop.
pub(crate) struct LoopSetup<'ctx> {
    /// `f16` or `bf16`.
    pub input: &'static str,
    pub acc_layout: Layout,
    /// Layouts of the loop's results, the accumulator's replaced by `acc_layout`.
    pub layouts: Vec<Layout>,
    pub init_vals: Vec<Vec<BasicValueEnum<'ctx>>>,
    /// The shared-memory floor to restore once the drain is done.
    pub saved_floor: usize,
}

/// The operands' element type, the layouts, the initial carried values, and
/// `stages` operand buffers of `stage_bytes` reserved at the bottom of the
/// shared memory (other scratch users start above them until the drain).
pub(crate) fn loop_setup<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    plan: &PipelinePlan,
    inits: &[ValueId],
    body_region: &Region,
    stage_bytes: usize,
) -> Result<LoopSetup<'ctx>> {
    let a_val = body_region.ops[plan.loads[0]].results[0];
    let Some(input) = mma::input_name(lw.func.dtype(a_val)) else {
        return lw.unsupported("a pipelined dot of this element type", op.span);
    };
    let acc_layout = Layout::Blocked(accumulator_layout(&plan.cfg));
    let mut layouts: Vec<Layout> = op.results.iter().map(|r| lw.assigned_layout(*r)).collect();
    layouts[plan.acc] = acc_layout.clone();
    let init_vals = yielded(lw, inits, &layouts, op)?;
    let saved_floor = lw.smem.floor;
    lw.smem.reserve(plan.stages * stage_bytes);
    lw.smem.floor = saved_floor + plan.stages * stage_bytes;
    Ok(LoopSetup {
        input,
        acc_layout,
        layouts,
        init_vals,
        saved_floor,
    })
}

/// Lowers the body of a pipelined loop: the operand loads are skipped (the
/// copies issued by the caller replace them), every other op as usual, and
/// the dot through `dot`, which returns the new accumulator registers.
pub(crate) fn lower_body<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    body: &Region,
    plan: &PipelinePlan,
    acc_layout: &Layout,
    mut dot: impl FnMut(&mut Lowering<'_, 'ctx>) -> Result<Vec<BasicValueEnum<'ctx>>>,
) -> Result<()> {
    for (idx, body_op) in body.ops.iter().enumerate() {
        if plan.loads.contains(&idx) {
            continue;
        }
        if idx != plan.dot {
            lw.op(body_op)?;
            continue;
        }
        let regs = dot(lw)?;
        lw.define_tile(body_op.results[0], acc_layout.clone(), regs);
    }
    Ok(())
}

/// An operand-less instruction with a memory clobber (cp.async commit or
/// wait, wgmma fence, commit or wait, proxy fence).
pub(crate) fn async_asm(lw: &Lowering<'_, '_>, asm: &str) -> Result<()> {
    let fn_ty = lw.ctx.void_type().fn_type(&[], false);
    let asm_ptr = lw.ctx.create_inline_asm(
        fn_ty,
        asm.to_string(),
        "~{memory}".into(),
        true,
        false,
        None,
        false,
    );
    lw.builder.build_indirect_call(fn_ty, asm_ptr, &[], "")?;
    Ok(())
}
