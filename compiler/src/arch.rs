//! The GPU a kernel is compiled for: what the target-aware IR passes and
//! code generation both read.

/// The GPU target; its `clap` names (`sm_80`, `sm_90`, `sm_90a`) are the
/// `--arch` values of `tritonc` and `triton-opgen`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
pub enum Arch {
    #[value(name = "sm_80")]
    Sm80,
    #[value(name = "sm_90")]
    Sm90,
    /// Hopper with its arch-specific instructions (H100/H200 only): pipelined
    /// tensor-core dots run on warpgroup MMA (wgmma).
    #[value(name = "sm_90a")]
    Sm90a,
}

impl Arch {
    /// `stmatrix` (sm_90+): a warp stores 8x8 blocks of 16-bit elements
    /// from the MMA fragments, 16 bytes a lane.
    pub fn has_stmatrix(self) -> bool {
        matches!(self, Arch::Sm90 | Arch::Sm90a)
    }

    /// Thread-block clusters and their distributed shared memory (sm_90+):
    /// what split-K's sum across programs runs on.
    pub fn has_clusters(self) -> bool {
        matches!(self, Arch::Sm90 | Arch::Sm90a)
    }
}

/// Elements of one tile a thread may hold: a thread has 255 registers, so a
/// tile past a few hundred elements a thread spills already; past this it
/// cannot run usefully, and lowering it unrolls that many values a thread.
pub const MAX_TILE_ELEMENTS_PER_THREAD: usize = 1024;

/// Shared memory one block may use, bytes (after opting in above 48 KiB):
/// 163 KiB on sm_80, 227 KiB on sm_90.
pub fn max_shared_bytes(arch: Arch) -> usize {
    match arch {
        Arch::Sm80 => 163 * 1024,
        Arch::Sm90 | Arch::Sm90a => 227 * 1024,
    }
}
