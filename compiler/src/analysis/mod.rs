//! Analyses over Triton-IR used by code generation (axis info, layouts, shared memory).
pub mod axis_info;
pub mod layout;
pub mod layout_assign;
pub mod liveness;
pub mod mma;
pub mod smem;
pub mod wgmma;
