//! triton-opgen: turns a Triton-C kernel and its `#pragma opgen` spec into a
//! framework op (PyTorch today): every variant compiled to PTX, bindings
//! rendered from `templates/`, and a shared library or a build folder.

pub mod spec;
