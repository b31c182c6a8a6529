//! Layout conversion. When every thread already holds the elements it needs
//! (the layouts agree for this shape, or the destination keeps a subset of
//! the source's registers) the conversion only renumbers registers; otherwise
//! it goes through shared memory: barrier, every thread writes its elements,
//! barrier, every thread reads the elements of its destination registers.
//! [`stage`] takes arbitrary element strides on each side, so transposes and
//! reshapes use it too.
use super::staging::{row_major_strides, stage};
use crate::codegen::lower::tile::Tile;
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::{register_remap, Layout};
use crate::ir::ScalarType;
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
    if let Some(regs) = crate::codegen::lower::trans::convert_2d(lw, tile, scalar, shape, dst)? {
        return Ok(regs);
    }
    let strides = row_major_strides(shape);
    let elems = shape.iter().product();
    stage(
        lw, tile, scalar, shape, &strides, dst, shape, &strides, elems,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::lower::staging::row_major_strides;
    use crate::ir::layout::BlockedLayout;

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
