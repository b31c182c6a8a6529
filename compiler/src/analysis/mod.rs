//! Analyses over Triton-IR used by code generation (axis info, layout assignment, tensor-core tile plans, shared memory).
pub mod axis_info;
pub mod layout_assign;
pub mod liveness;
pub mod lookahead;
pub mod mma;
pub mod operand_layouts;
pub mod producer_slice;
pub mod scratch;
pub mod smem;
pub mod swizzle;
pub mod tensor_tile;
pub mod uniform;
pub mod wgmma;
