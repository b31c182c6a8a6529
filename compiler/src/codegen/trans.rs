//! 2-D transpose through shared memory: the source tile is written row-major
//! with padded rows (so that reading a column hits distinct banks), and read
//! back in the result's layout with the axes swapped.
use super::convert_layout::stage;
use super::lower::{Lowering, Result};
use crate::ir::{Op, OpKind};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::Trans { src } = &op.kind else {
        return lw.unsupported("this op as a transpose", op.span);
    };
    let result = lw.result(op)?;
    let shape = lw.shape(*src);
    if shape.len() != 2 {
        return lw.unsupported("a transpose of a tile that is not 2-D", op.span);
    }
    let (m, n) = (shape[0], shape[1]);
    let scalar = lw.scalar_type(*src);
    let row = n + padding(lw.mem_bytes(*src));
    let tile = lw.tile(*src)?;
    let layout = lw.assigned_layout(result);
    let regs = stage(
        lw,
        &tile,
        scalar,
        &shape,
        &[row, 1],
        &layout,
        &[n, m],
        &[1, row],
        m * row,
    )?;
    lw.define_tile(result, layout, regs);
    Ok(())
}

/// Elements added to each row: one 4-byte bank's worth.
pub fn padding(elem_bytes: usize) -> usize {
    (4 / elem_bytes.max(1)).max(1)
}
