//! Tensor-core instructions, below the op lowerings that use them:
//! `mma.sync` with `ldmatrix` ([`mma`]), warpgroup MMA on sm_90a ([`wgmma`],
//! its shared-memory layouts and descriptors in [`wgmma_layout`]), and what
//! both pipelined dot loops share ([`pipelined_loop`]), and TMA copies
//! with their mbarriers ([`tma`]). They import the
//! lowering context and each other, never an op lowering.
pub mod mma;
pub mod native_order;
pub mod pipelined_loop;
pub mod tma;
pub mod warp_specialize;
pub mod wgmma;
pub mod wgmma_layout;
