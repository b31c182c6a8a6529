//! `convert_layout`: the tile in the result's layout, by renumbering
//! registers or through shared memory ([`crate::codegen::lower::convert_layout`]).
//! The `insert-layout-conversions` pass placed it; every other op finds its
//! operands already in the layouts it reads them in.
use crate::codegen::lower::convert_layout::convert;
use crate::codegen::lower::{Lowering, Result};
use crate::ir::{Op, OpKind};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::ConvertLayout { src } = &op.kind else {
        return lw.unsupported("this op as a layout conversion", op.span);
    };
    let result = lw.result(op)?;
    let layout = lw.assigned_layout(result);
    let tile = lw.tile(*src)?;
    let regs = convert(lw, &tile, lw.scalar_type(*src), &lw.shape(*src), &layout)?;
    lw.define_tile(result, layout, regs);
    Ok(())
}
