//! Analyses over Triton-IR used by code generation (axis info, layouts, shared memory).
pub mod axis_info;
pub mod liveness;
