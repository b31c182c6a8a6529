//! Layout conversion. When every thread already holds the elements it needs
//! (the layouts agree for this shape, or the destination keeps a subset of
//! the source's registers) the conversion only renumbers registers; otherwise
//! it goes through shared memory: barrier, every thread writes its elements,
//! barrier, every thread reads the elements of its destination registers.
//! [`stage`] takes arbitrary element strides on each side, so transposes and
//! reshapes use it too.
use super::lower::{Lowering, Result};
use super::tile::Tile;
use super::types::{llvm_memory_type, memory_bytes};
use crate::analysis::layout::Layout;
use crate::ir::{DType, ScalarType};
use inkwell::values::BasicValueEnum;

/// `tile` (of `shape`) in layout `dst`.
pub fn convert<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    tile: &Tile<'ctx>,
    scalar: ScalarType,
    shape: &[usize],
    dst: &Layout,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    if let Some(map) = register_remap(&tile.layout, dst, shape, lw.num_threads()) {
        return Ok(map.into_iter().map(|r| tile.regs[r]).collect());
    }
    // 2-D tiles: vector shared-memory writes, swizzled against bank conflicts.
    if let Some(regs) = super::trans::convert_2d(lw, tile, scalar, shape, dst)? {
        return Ok(regs);
    }
    let strides = row_major_strides(shape);
    let elems = shape.iter().product();
    stage(
        lw, tile, scalar, shape, &strides, dst, shape, &strides, elems,
    )
}

/// Strides of a row-major tile of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// For each register of `dst`, the register of `src` holding the same element
/// in the same thread, when that register number is the same in every thread.
pub fn register_remap(
    src: &Layout,
    dst: &Layout,
    shape: &[usize],
    threads: usize,
) -> Option<Vec<usize>> {
    if src.rank() != shape.len() || dst.rank() != shape.len() {
        return None;
    }
    let (sm, dm) = (src.tile_map(shape), dst.tile_map(shape));
    let mut remap = Vec::with_capacity(dm.regs());
    for r in 0..dm.regs() {
        let want = dm.element_index(0, r);
        let s = (0..sm.regs()).find(|&s| sm.element_index(0, s) == want)?;
        remap.push(s);
    }
    for tid in 1..threads {
        for (r, &s) in remap.iter().enumerate() {
            if sm.element_index(tid, s) != dm.element_index(tid, r) {
                return None;
            }
        }
    }
    Some(remap)
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
    lw.smem.reserve(buffer_elems * memory_bytes(scalar));
    lw.barrier()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::layout::BlockedLayout;

    #[test]
    fn remap_between_equivalent_layouts_and_subsets() {
        let p = BlockedLayout::for_shape(&[32, 32], 4, 4);
        let l = Layout::Blocked(p.clone());
        let id = register_remap(&l, &l, &[32, 32], 128).unwrap();
        assert_eq!(id, (0..8).collect::<Vec<_>>());
        let other = Layout::Blocked(BlockedLayout::for_shape(&[32, 32], 4, 1));
        assert!(register_remap(&l, &other, &[32, 32], 128).is_none());
        assert_eq!(row_major_strides(&[4, 8, 2]), vec![16, 2, 1]);
    }
}
