//! Staging a tile through shared memory: every thread writes its elements at
//! element strides of its choosing, a barrier, every thread reads the
//! elements of its destination registers. Layout conversions, transposes,
//! reshapes, reductions and FMA dots all go through [`stage`] or its parts.
use super::{Lowering, Result};
use crate::codegen::lower::tile::Tile;
use crate::codegen::lower::types::{llvm_memory_type, memory_bytes};
use crate::ir::layout::Layout;
use crate::ir::{DType, ScalarType};
use inkwell::values::BasicValueEnum;

/// Strides of a row-major tile of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Moves `src` (a tile of `src_shape`) into `dst_layout` over `dst_shape`
/// through a shared buffer of `buffer_elems` elements: source element `i` is
/// written at `sum(i[d] * src_strides[d])`, destination element `j` is read
/// from `sum(j[d] * dst_strides[d])`.
#[allow(clippy::too_many_arguments)]
pub fn stage<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    src: &Tile<'ctx>,
    scalar: ScalarType,
    src_shape: &[usize],
    src_strides: &[usize],
    dst_layout: &Layout,
    dst_shape: &[usize],
    dst_strides: &[usize],
    buffer_elems: usize,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let elem_ty = llvm_memory_type(lw.ctx, scalar);
    lw.smem.claim(buffer_elems * memory_bytes(scalar))?;
    lw.barrier_before_writing()?;
    let src_idx = lw.indices(&src.layout, src_shape)?;
    for (reg, idx) in src.regs.iter().zip(&src_idx) {
        let addr = linear(lw, idx, src_strides)?;
        let ptr = lw.smem_elem_ptr(0, elem_ty, addr)?;
        let v = to_memory(lw, *reg, scalar)?;
        lw.builder.build_store(ptr, v)?;
    }
    lw.barrier()?;
    let dst_idx = lw.indices(dst_layout, dst_shape)?;
    let mut out = Vec::with_capacity(dst_idx.len());
    for idx in &dst_idx {
        let addr = linear(lw, idx, dst_strides)?;
        let ptr = lw.smem_elem_ptr(0, elem_ty, addr)?;
        let v = lw.builder.build_load(elem_ty, ptr, "staged")?;
        out.push(from_memory(lw, v, scalar)?);
    }
    Ok(out)
}

/// `sum(idx[d] * strides[d])` as `i32`.
pub fn linear<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    idx: &[inkwell::values::IntValue<'ctx>],
    strides: &[usize],
) -> Result<inkwell::values::IntValue<'ctx>> {
    let mut acc = lw.i32_const(0);
    for (i, s) in idx.iter().zip(strides) {
        let term = lw.builder.build_int_mul(*i, lw.i32_const(*s as u64), "")?;
        acc = lw.builder.build_int_add(acc, term, "addr")?;
    }
    Ok(acc)
}

/// A register value as stored in memory (`i1` as a byte).
pub fn to_memory<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    v: BasicValueEnum<'ctx>,
    scalar: ScalarType,
) -> Result<BasicValueEnum<'ctx>> {
    if scalar == ScalarType::Num(DType::I1) {
        return Ok(lw
            .builder
            .build_int_z_extend(v.into_int_value(), lw.ctx.i8_type(), "")?
            .into());
    }
    Ok(v)
}

/// A value loaded from memory as a register value (a byte as `i1`).
pub fn from_memory<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    v: BasicValueEnum<'ctx>,
    scalar: ScalarType,
) -> Result<BasicValueEnum<'ctx>> {
    if scalar == ScalarType::Num(DType::I1) {
        let zero = lw.ctx.i8_type().const_int(0, false);
        return Ok(lw
            .builder
            .build_int_compare(inkwell::IntPredicate::NE, v.into_int_value(), zero, "")?
            .into());
    }
    Ok(v)
}
