//! Differential testing of tritonc (issue 15): random well-typed Triton-C
//! kernels ([`kernel::generate`], in the spirit of Csmith/YARPGen), each
//! compiled to PTX and run by the CPU interpreter ([`case::build`]); the GPU
//! check (`scripts/gpu/difftest_check.py`) runs the PTX on the same inputs
//! and compares. A kernel the compiler or the interpreter refuses is a
//! finding already here, without a GPU.

pub mod case;
pub mod expr;
pub mod kernel;
pub mod rng;
