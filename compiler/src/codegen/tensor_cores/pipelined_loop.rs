//! What the two pipelined dot loops (`ops::pipeline` on mma.sync,
//! `ops::wgmma_pipeline` on wgmma) share: the pass's decision in lowering's
//! terms ([`PipelinePlan`]), the `cp.async` copies of an operand tile into a
//! rotating buffer, the loop's setup and its body without the operand loads.
use crate::analysis::mma::{accumulator_layout, engine_config, MmaConfig};
use crate::analysis::wgmma::loop_config;
use crate::codegen::lower::loops::yielded;
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma::{self, add, elem_ptr, mul, phase};
use crate::codegen::tensor_cores::wgmma::WgmmaConfig;
use crate::ir::layout::Layout;
use crate::ir::{LoopPipeline, Op, OpKind, Region, ValueId};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};
use inkwell::IntPredicate;

/// A pipelined loop as lowering uses it ([`PipelinePlan::of`]).
#[derive(Clone, Debug)]
pub struct PipelinePlan {
    /// Indices in the body's ops.
    pub dot: usize,
    pub loads: [usize; 2],
    /// The `trans` ops between loads and the dot (read from the buffers).
    pub transposes: Vec<usize>,
    /// `b` is the transpose of its load: staged `[N][K]`.
    pub b_k_major: bool,
    /// Position of the accumulator among the carried values.
    pub acc: usize,
    pub cfg: MmaConfig,
    pub stages: usize,
    /// Elements per `cp.async` of `a` and of `b`.
    pub widths: [usize; 2],
    /// On sm_90a, the warpgroup plan when the dot fits one (then `cfg` is its
    /// accumulator, see [`crate::codegen::tensor_cores::wgmma`]).
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
        let at = |v: ValueId| body_region.position_of(v);
        let (Some(dot), Some(a), Some(b)) = (at(p.dot), at(p.loads[0]), at(p.loads[1])) else {
            return lw.unsupported("a pipeline naming values outside its loop", op.span);
        };
        let Some(transposes) = p.transposes.iter().flatten().map(|&t| at(t)).collect() else {
            return lw.unsupported("a pipeline naming values outside its loop", op.span);
        };
        let Some(cfg) = engine_config(lw.func, &body_region.ops[dot], p.engine) else {
            return lw.unsupported("a pipelined dot that is not [M, K] @ [K, N]", op.span);
        };
        let wgmma = loop_config(lw.func, body_region, p);
        Ok(PipelinePlan {
            dot,
            loads: [a, b],
            transposes,
            b_k_major: p.transposes[1].is_some(),
            acc: p.acc,
            cfg,
            stages: p.stages,
            widths: p.copy_widths,
            wgmma,
        })
    }
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

/// Pointer to buffer `slot` of the current op's buffer (bytes `slot *
/// stage_bytes` from its offset).
pub(crate) fn slot_offset<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    slot: IntValue<'ctx>,
    stage_bytes: usize,
) -> Result<inkwell::values::PointerValue<'ctx>> {
    slot_at(lw, slot, stage_bytes, lw.smem.current.offset)
}

/// Pointer to byte `first + slot * stage_bytes` of the shared memory.
pub(crate) fn slot_at<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    slot: IntValue<'ctx>,
    stage_bytes: usize,
    first: usize,
) -> Result<inkwell::values::PointerValue<'ctx>> {
    let mut off = mul(lw, slot, stage_bytes as u64)?;
    if first != 0 {
        off = add(lw, off, lw.i32_const(first as u64))?;
    }
    Ok(unsafe {
        lw.builder
            .build_in_bounds_gep(lw.ctx.i8_type(), lw.smem.base(), &[off], "slot")?
    })
}

/// Where a `cp.async` of the element at `(row, col)` of a tile goes: a
/// 32-bit shared-memory address.
pub(crate) type CopyDestination<'a, 'ctx> =
    dyn Fn(&Lowering<'_, 'ctx>, IntValue<'ctx>, IntValue<'ctx>) -> Result<IntValue<'ctx>> + 'a;

/// One `cp.async` per `width` consecutive elements along `axis` of the
/// tile `*ptr` to `dst_of` its element's indices; masked-off elements are
/// zero-filled (source size 0), replicas skip their copies, and so do all
/// threads where `when` (an i1) is false.
pub(crate) fn issue_copies<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    (ptr, mask): (ValueId, Option<ValueId>),
    (axis, width): (usize, usize),
    dst_of: &CopyDestination<'_, 'ctx>,
    when: Option<IntValue<'ctx>>,
) -> Result<()> {
    let shape = lw.shape(ptr);
    let layout = lw.assigned_layout(ptr);
    let ptrs = lw.value(ptr, &layout)?;
    let masks = match mask {
        Some(m) => Some(lw.value(m, &layout)?),
        None => None,
    };
    let owner = match (lw.owner_pred(&layout, &shape)?, when) {
        (Some(o), Some(w)) => Some(lw.builder.build_and(o, w, "copy_when")?),
        (o, w) => o.or(w),
    };
    let map = layout.tile_map(&shape);
    let idx = lw.indices(&layout, &shape)?;
    let bytes = 2 * width;
    for (reg, i) in idx.iter().enumerate() {
        if map.reg_locals(reg)[axis] % width != 0 {
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
    /// Layouts of the loop's results (`pipeline-dot-loops` gave the
    /// accumulator's `acc_layout`).
    pub layouts: Vec<Layout>,
    pub init_vals: Vec<Vec<BasicValueEnum<'ctx>>>,
}

/// The operands' element type, the layouts and the initial carried values;
/// checks that the loop's shared-memory buffer (placed by the
/// `allocate-shared-memory` pass, below every scratch buffer of the ops
/// inside the loop) holds `stages` operand stages of `stage_bytes`.
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
    let layouts: Vec<Layout> = op.results.iter().map(|r| lw.assigned_layout(*r)).collect();
    let init_vals = yielded(lw, inits, &layouts, op)?;
    lw.smem.claim(plan.stages * stage_bytes)?;
    Ok(LoopSetup {
        input,
        acc_layout,
        layouts,
        init_vals,
    })
}

/// Lowers the body of a pipelined loop: the operand loads and their
/// transposes are skipped (the copies issued by the caller replace them),
/// every other op as usual, and the dot through `dot`, which returns the
/// new accumulator registers.
pub(crate) fn lower_body<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    body: &Region,
    plan: &PipelinePlan,
    acc_layout: &Layout,
    mut dot: impl FnMut(&mut Lowering<'_, 'ctx>) -> Result<Vec<BasicValueEnum<'ctx>>>,
) -> Result<()> {
    for (idx, body_op) in body.ops.iter().enumerate() {
        if plan.loads.contains(&idx) || plan.transposes.contains(&idx) {
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

/// The `mma.sync` staging: rows of `row_len` elements, 16-byte chunks
/// XOR-swizzled by `(row >> shift) & mask`, at `base + offset`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn swizzled_destination<'ctx>(
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
