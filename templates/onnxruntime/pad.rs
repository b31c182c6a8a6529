// Copied verbatim by triton-opgen: the spec's `pad` line on the GPU path.
// Where a dim it names is not a multiple of its multiple and its condition
// holds, the plan is made for the padded sizes (the aligned variants
// qualify) and each launch runs on zero-padded twins of the tensors, the
// outputs cut back (opgen_runtime::pad), all in the launch's stream order.
use crate::call::{cdiv, Call};
use crate::op_spec;
use crate::spec_types::{dtype_bytes, DimDesc, DtypeDesc, TensorDesc};
use opgen_runtime::pad::PaddedLayout;

/// Past this many 2-D copies a tensor (one per index of its axes before
/// the last two) padding costs more launches than it saves: run as is.
const MAX_ROW_BLOCKS: usize = 64;

/// A call the `pad` line applies to.
pub struct Padded {
    /// Inputs then outputs: each tensor's shape and its padded twin's.
    pub layouts: Vec<PaddedLayout>,
    /// The call the kernel sees: padded shapes and dims.
    pub call: Call,
}

/// The multiple `dim` is padded to (1: not padded).
fn multiple_of(dim: &str) -> i64 {
    match op_spec::PAD_DIMS.contains(&dim) {
        true => op_spec::PAD_MULTIPLE.max(1),
        false => 1,
    }
}

/// The padded call, or `None` where the `pad` line does not apply (no line,
/// every padded dim already a multiple, its condition false).
pub fn padded(group: usize, call: &Call) -> Option<Padded> {
    let needed = call.dims.iter().any(|&(d, v)| v % multiple_of(d) != 0);
    if !needed || !op_spec::pad_condition(call) {
        return None;
    }
    let layouts: Vec<PaddedLayout> = op_spec::INPUTS
        .iter()
        .chain(op_spec::OUTPUTS)
        .zip(&call.shapes)
        .map(|(desc, shape)| {
            let multiples: Vec<i64> = desc
                .dims
                .iter()
                .map(|d| match d {
                    DimDesc::Sym(s) => multiple_of(s),
                    DimDesc::Lit(_) => 1,
                })
                .collect();
            PaddedLayout::new(shape, &multiples, elem_bytes(group, desc))
        })
        .collect();
    if layouts.iter().any(|l| l.row_block_count() > MAX_ROW_BLOCKS) {
        return None;
    }
    Some(Padded {
        call: Call {
            shapes: layouts.iter().map(|l| l.padded_shape().to_vec()).collect(),
            dims: call
                .dims
                .iter()
                .map(|&(d, v)| (d, cdiv(v, multiple_of(d)) * multiple_of(d)))
                .collect(),
            attrs: call.attrs.clone(),
        },
        layouts,
    })
}

/// Bytes per element of `desc` in dtype group `group`.
fn elem_bytes(group: usize, desc: &TensorDesc) -> usize {
    let code = match desc.dtype {
        DtypeDesc::Var(v) => op_spec::GROUPS[group][v],
        DtypeDesc::Fixed(code) => code,
    };
    dtype_bytes(code)
}
