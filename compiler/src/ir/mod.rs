//! Triton-IR: types, functions of ops over tiles, a builder, a verifier and a printer.

pub mod builder;
pub mod function;
pub mod index_poly;
pub mod layout;
pub mod printer;
pub mod schedule;
pub mod types;
pub mod verifier;
pub mod walk;

pub use builder::FunctionBuilder;
pub use function::*;
pub use schedule::{
    DotEngine, LoopPipeline, LoopPrefetch, MapDim, MapExtent, MapStride, PrefetchedOperand,
    SharedBuffer, SharedPlan, TensorBox, TensorMapParam, TmaCopies, TmaMap,
};
pub use types::*;
