//! The compile pipeline for one source file and every point of its tuning space.
//! Used by the `tritonc` CLI and by `triton-opgen`.

pub mod manifest;
pub mod pipeline;
pub mod space;
pub mod tuning;

pub use pipeline::{
    compile, compile_selected, compile_timed, lower, lower_for_codegen, lower_timed, pass_options,
    CompileError, CompileOptions, KernelOutput, Source,
};
pub use tuning::{ConfigPoint, Define, DefineValue};
