//! One file per family of Triton-IR ops, each lowering its ops to LLVM through
//! the context ([`super::lower`]) and the tensor-core instructions
//! ([`super::tensor_cores`]); no op file imports another. [`lower`] is the
//! table from op to file, which the context calls for every op of a region.
use super::lower::trans;
use super::lower::{Lowering, Result};
use crate::ir::{DotEngine, Op, OpKind};

pub mod atomics;
pub mod cluster_sum;
pub mod control_flow;
pub mod convert_layout;
pub mod dot;
pub mod elementwise;
pub mod memory;
pub mod pipeline;
pub mod prefetch;
pub mod reduce;
pub mod wgmma_pipeline;

/// Lowers one op by the file that knows it: a loop the
/// `pipeline-dot-loops` pass marked goes to the pipeline of its engine.
pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    match &op.kind {
        OpKind::Constant { .. }
        | OpKind::ProgramId { .. }
        | OpKind::NumPrograms { .. }
        | OpKind::MakeRange { .. }
        | OpKind::Splat { .. }
        | OpKind::Broadcast { .. }
        | OpKind::Reshape { .. }
        | OpKind::Binary { .. }
        | OpKind::Cmp { .. }
        | OpKind::Unary { .. }
        | OpKind::Cast { .. }
        | OpKind::AddPtr { .. }
        | OpKind::Select { .. } => elementwise::lower(lw, op),
        OpKind::Load { .. } | OpKind::Store { .. } => memory::lower(lw, op),
        OpKind::While {
            pipeline: Some(p), ..
        } => match p.engine {
            DotEngine::MmaSync { .. } => pipeline::lower(lw, op, p),
            DotEngine::Wgmma { .. } => wgmma_pipeline::lower(lw, op, p),
        },
        OpKind::While {
            prefetch: Some(p), ..
        } => prefetch::lower(lw, op, p),
        OpKind::If { .. } | OpKind::While { .. } | OpKind::Return => control_flow::lower(lw, op),
        OpKind::Trans { .. } => trans::lower(lw, op),
        OpKind::ConvertLayout { .. } => convert_layout::lower(lw, op),
        OpKind::ClusterSum { .. } => cluster_sum::lower(lw, op),
        OpKind::Reduce { .. } => reduce::lower(lw, op),
        OpKind::Dot { .. } => dot::lower(lw, op),
        OpKind::AtomicRmw { .. } | OpKind::AtomicCas { .. } => atomics::lower(lw, op),
    }
}
