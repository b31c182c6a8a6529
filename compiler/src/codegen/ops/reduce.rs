//! Reductions along one axis of a blocked tile: first over the registers a
//! thread holds along the axis, then across the lanes along the axis with
//! butterfly shuffles (`shfl.sync.bfly`), then, when several warps hold
//! distinct parts of the axis, across warps through shared memory. The result
//! is in the slice layout of the source's layout (a scalar for 1-D sources),
//! held by every thread that holds the corresponding rows.
use crate::analysis::layout_assign::reduction_source_layout;
use crate::codegen::lower::staging::{from_memory, linear, row_major_strides, to_memory};
use crate::codegen::lower::types::memory_bytes;
use crate::codegen::lower::{int_type, Lowering, Result};
use crate::ir::{DType, Op, OpKind, ReduceKind};
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::IntPredicate;

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::Reduce { src, axis, kind } = &op.kind else {
        return lw.unsupported("this op as a reduction", op.span);
    };
    let (axis, kind) = (*axis, *kind);
    let result = lw.result(op)?;
    let shape = lw.shape(*src);
    if axis >= shape.len() {
        return lw.unsupported("a reduction along an axis the tile does not have", op.span);
    }
    let scalar = lw.scalar_type(*src);
    if scalar.is_ptr() {
        return lw.unsupported("reducing pointers", op.span);
    }
    let dtype = scalar.dtype();
    let Some(src_layout) = reduction_source_layout(lw.func, &lw.layouts, *src) else {
        return lw.unsupported("reducing a scalar", op.span);
    };
    let regs = lw.value(*src, &src_layout)?;
    let map = src_layout.tile_map(&shape);
    let Some(result_layout) = src_layout.reduced(axis) else {
        return lw.unsupported("this reduction", op.span);
    };
    let result_shape = lw.shape(result);
    let rmap = result_layout.tile_map(&result_shape);

    // 1. Within the thread.
    let mut acc: Vec<Option<BasicValueEnum>> = vec![None; rmap.regs()];
    for (r, v) in regs.iter().enumerate() {
        let mut locals = map.reg_locals(r);
        locals.remove(axis);
        let slot = &mut acc[rmap.reg_of_locals(&locals)];
        *slot = Some(match slot {
            None => *v,
            Some(a) => combine(lw, kind, dtype, *a, *v, op.span)?,
        });
    }
    let mut acc: Vec<BasicValueEnum> = acc
        .into_iter()
        .map(|a| a.ok_or_else(|| crate::codegen::CodegenError::Llvm("reduction lost a row".into())))
        .collect::<Result<_>>()?;

    // 2. Across the lanes along the axis.
    let am = map.axes[axis];
    let mut offset = 1;
    while offset < am.distinct_lanes() {
        let lane_mask = (am.lane_stride * offset) as u64;
        for a in acc.iter_mut() {
            let other = shuffle_xor(lw, *a, lane_mask)?;
            *a = combine(lw, kind, dtype, *a, other, op.span)?;
        }
        offset *= 2;
    }

    // 3. Across the warps along the axis, through shared memory.
    let warps = am.distinct_warps();
    if warps > 1 {
        let elem_ty = lw.mem_type(*src);
        let numel: usize = result_shape.iter().product();
        lw.smem.claim(warps * numel * memory_bytes(scalar))?;
        let idx = lw.indices(&result_layout, &result_shape)?;
        let strides = row_major_strides(&result_shape);
        let elems: Vec<IntValue> = idx
            .iter()
            .map(|i| linear(lw, i, &strides))
            .collect::<Result<_>>()?;
        let lane_c = lw.lane_coord(&am)?;
        let warp_c = lw.warp_coord(&am)?;
        lw.barrier_before_writing()?;
        let b = &lw.builder;
        let first_lane = b.build_int_compare(IntPredicate::EQ, lane_c, lw.i32_const(0), "")?;
        let distinct =
            b.build_int_compare(IntPredicate::ULT, warp_c, lw.i32_const(warps as u64), "")?;
        let writes = b.build_and(first_lane, distinct, "")?;
        let (write_bb, cont_bb) = (lw.new_block("reduce_write"), lw.new_block("reduce_read"));
        b.build_conditional_branch(writes, write_bb, cont_bb)?;
        lw.builder.position_at_end(write_bb);
        let row = lw
            .builder
            .build_int_mul(warp_c, lw.i32_const(numel as u64), "")?;
        for (a, e) in acc.iter().zip(&elems) {
            let at = lw.builder.build_int_add(row, *e, "")?;
            let ptr = lw.smem_elem_ptr(0, elem_ty, at)?;
            let v = to_memory(lw, *a, scalar)?;
            lw.builder.build_store(ptr, v)?;
        }
        lw.builder.build_unconditional_branch(cont_bb)?;
        lw.builder.position_at_end(cont_bb);
        lw.barrier()?;
        for (a, e) in acc.iter_mut().zip(&elems) {
            let mut total = None;
            for w in 0..warps {
                let at = lw
                    .builder
                    .build_int_add(*e, lw.i32_const((w * numel) as u64), "")?;
                let ptr = lw.smem_elem_ptr(0, elem_ty, at)?;
                let v = lw.builder.build_load(elem_ty, ptr, "partial")?;
                let v = from_memory(lw, v, scalar)?;
                total = Some(match total {
                    None => v,
                    Some(t) => combine(lw, kind, dtype, t, v, op.span)?,
                });
            }
            *a = total.unwrap_or(*a);
        }
    }
    lw.define_tile(result, result_layout, acc);
    Ok(())
}

pub fn combine<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    kind: ReduceKind,
    dtype: DType,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
    span: crate::span::Span,
) -> Result<BasicValueEnum<'ctx>> {
    use crate::ir::BinOp;
    let bop = match kind {
        ReduceKind::Sum => BinOp::Add,
        ReduceKind::Max => BinOp::Max,
        ReduceKind::Min => BinOp::Min,
    };
    if dtype == DType::I1 {
        // On bools, sum/max is `or` and min is `and`.
        let op = if kind == ReduceKind::Min {
            BinOp::And
        } else {
            BinOp::Or
        };
        return crate::codegen::lower::scalar::binary(lw, op, dtype, a, b, span);
    }
    crate::codegen::lower::scalar::binary(lw, bop, dtype, a, b, span)
}

/// The value held by lane `lane ^ lane_mask` (all 32 lanes take part).
pub fn shuffle_xor<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    v: BasicValueEnum<'ctx>,
    lane_mask: u64,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &lw.builder;
    let i32t = lw.ctx.i32_type();
    let shfl_i32 = |x: IntValue<'ctx>| -> Result<IntValue<'ctx>> {
        Ok(lw
            .call_value(
                "llvm.nvvm.shfl.sync.bfly.i32",
                i32t.into(),
                &[
                    i32t.const_all_ones().into(),
                    x.into(),
                    lw.i32_const(lane_mask).into(),
                    lw.i32_const(31).into(),
                ],
            )?
            .into_int_value())
    };
    match v {
        BasicValueEnum::FloatValue(f) if f.get_type() == lw.ctx.f32_type() => {
            let bits = b.build_bit_cast(f, i32t, "")?.into_int_value();
            Ok(b.build_bit_cast(shfl_i32(bits)?, f.get_type(), "")?)
        }
        BasicValueEnum::FloatValue(f) => {
            let width = if f.get_type() == lw.ctx.f64_type() {
                64
            } else {
                16
            };
            let it = int_type(lw, width);
            let bits = b.build_bit_cast(f, it, "")?.into_int_value();
            let moved = shuffle_xor(lw, bits.into(), lane_mask)?;
            Ok(b.build_bit_cast(moved, f.get_type(), "")?)
        }
        BasicValueEnum::IntValue(x) => {
            let w = x.get_type().get_bit_width();
            if w == 32 {
                Ok(shfl_i32(x)?.into())
            } else if w < 32 {
                let wide = b.build_int_z_extend(x, i32t, "")?;
                Ok(b.build_int_truncate(shfl_i32(wide)?, x.get_type(), "")?
                    .into())
            } else {
                let lo = b.build_int_truncate(x, i32t, "")?;
                let hi = b.build_right_shift(x, x.get_type().const_int(32, false), false, "")?;
                let hi = b.build_int_truncate(hi, i32t, "")?;
                let (lo, hi) = (shfl_i32(lo)?, shfl_i32(hi)?);
                let lo = b.build_int_z_extend(lo, x.get_type(), "")?;
                let hi = b.build_int_z_extend(hi, x.get_type(), "")?;
                let hi = b.build_left_shift(hi, x.get_type().const_int(32, false), "")?;
                Ok(b.build_or(lo, hi, "")?.into())
            }
        }
        _ => Err(crate::codegen::CodegenError::Llvm(
            "cannot shuffle this value".into(),
        )),
    }
}
