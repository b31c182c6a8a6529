//! `tritonc`: the Triton-C compiler.
//!
//! Pipeline, one direction: `front` (lex, preprocess with `-D` and list macros,
//! parse) → `sema` (types, shapes, broadcasting; lowers the AST to Triton-IR) →
//! `ir` (SSA over tiles, GPU-level facts like a loop's pipeline, verifier,
//! printer) → `analysis` (alignment/contiguity, layouts, tensor-core tile
//! plans, shared memory) → `passes` (IR → IR rewrites run by a pass manager in
//! a fixed order; target-aware ones decide GPU-level facts for `arch`) →
//! `codegen` (LLVM IR through inkwell, PTX through NVPTX, following those
//! facts). `interp` runs Triton-IR on the CPU so semantics can be tested
//! without a GPU. `driver` glues the stages for the CLI and for `triton-opgen`.

pub mod analysis;
pub mod arch;
pub mod codegen;
pub mod diagnostics;
pub mod driver;
pub mod front;
pub mod interp;
pub mod ir;
pub mod passes;
pub mod sema;
pub mod span;
pub mod timings;

pub use diagnostics::Diagnostic;
pub use span::{SourceMap, Span};
