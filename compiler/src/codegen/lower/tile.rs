//! How a lowered IR value looks: per thread, the registers of the elements the
//! thread holds in the value's layout; or a lazy tile (a splat or a range) that
//! is built directly in whatever layout its consumer asks for.
use crate::ir::layout::Layout;
use inkwell::values::BasicValueEnum;

/// A tile distributed over the CTA: `regs[r]` is the element
/// `layout.tile_map(shape).element_index(tid, r)` of the calling thread.
/// A scalar is `Layout::Scalar` with one register.
#[derive(Clone, Debug)]
pub struct Tile<'ctx> {
    pub layout: Layout,
    pub regs: Vec<BasicValueEnum<'ctx>>,
}

impl<'ctx> Tile<'ctx> {
    pub fn scalar(v: BasicValueEnum<'ctx>) -> Self {
        Tile {
            layout: Layout::Scalar,
            regs: vec![v],
        }
    }
}

#[derive(Clone, Debug)]
pub enum Slot<'ctx> {
    Tile(Tile<'ctx>),
    /// Every element is this (uniform) scalar.
    Splat(BasicValueEnum<'ctx>),
    /// `i32` elements `start + index` (a `MakeRange`).
    Range {
        start: i64,
    },
}
