//! triton-opgen: turns a Triton-C kernel and its `#pragma opgen` spec into a
//! framework op (PyTorch, TensorFlow, ONNX Runtime, JAX): every variant compiled to PTX, bindings
//! rendered from `templates/`, and a shared library or a build folder.

pub mod bind;
pub mod bundled;
pub mod compile_cache;
pub mod cpp;
pub mod generate;
pub mod jax;
pub mod ort;
pub mod plan;
pub mod python_probe;
pub mod render;
pub mod spec;
pub mod tf;
pub mod torch;
pub mod variants;
pub mod wheel;

pub use generate::{generate, read_spec, GenerateError, GenerateOptions, Generated, Progress};
