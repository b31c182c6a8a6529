//! `tritonc`: the Triton-C compiler.
//!
//! Pipeline, one direction: `front` (lex, preprocess with `-D` and list macros,
//! parse) → `sema` (types, shapes, broadcasting; lowers the AST to Triton-IR) →
//! `ir` (SSA over tiles, verifier, printer) → `passes` (IR → IR rewrites run by
//! a pass manager in a fixed order) → `analysis` (alignment/contiguity,
//! layouts, shared memory) → `codegen` (LLVM IR through inkwell, PTX through NVPTX).
//! `interp` runs Triton-IR on the CPU so semantics can be tested without a GPU.
//! `driver` glues the stages for the CLI and for `triton-opgen`.

pub mod analysis;
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
