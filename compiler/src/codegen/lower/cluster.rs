//! Thread-block clusters (sm_90): meeting the other programs of the
//! cluster, and reading their shared memory (split-K's partial sums, a TMA
//! multicast pair's first columns).
use super::asm::{async_asm, int_asm};
use super::{Lowering, Result};
use inkwell::values::IntValue;

/// Every thread of every program of the cluster meets here: writes before
/// it are visible to shared-memory reads after it, in any program.
pub fn barrier(lw: &Lowering<'_, '_>) -> Result<()> {
    async_asm(lw, "barrier.cluster.arrive.release.aligned;")?;
    async_asm(lw, "barrier.cluster.wait.acquire.aligned;")
}

/// [`barrier`] without its memory ordering: only that every program got
/// here (a buffer its readers are done with may be overwritten).
pub fn barrier_relaxed(lw: &Lowering<'_, '_>) -> Result<()> {
    async_asm(lw, "barrier.cluster.arrive.relaxed.aligned;")?;
    async_asm(lw, "barrier.cluster.wait.aligned;")
}

/// This program's rank in its cluster.
pub fn rank<'ctx>(lw: &Lowering<'_, 'ctx>) -> Result<IntValue<'ctx>> {
    int_asm(lw, "mov.u32 $0, %cluster_ctarank;", &[], false)
}

/// The address of the same shared-memory byte in program `rank` of the
/// cluster.
pub fn map_shared<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    local: IntValue<'ctx>,
    rank: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    int_asm(
        lw,
        "mapa.shared::cluster.u32 $0, $1, $2;",
        &[local, rank],
        false,
    )
}

/// The 32-bit word at a `shared::cluster` address.
pub fn load_u32<'ctx>(lw: &Lowering<'_, 'ctx>, at: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
    int_asm(lw, "ld.shared::cluster.u32 $0, [$1];", &[at], true)
}
