//! What decides whether a pass runs, and the target the target-aware passes
//! plan for; read once per compile.
use crate::arch::Arch;

/// Switches that enable or skip passes, and the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassOptions {
    /// Software pipelining of dot loops, and the rewrites that prepare it.
    pub pipelining: bool,
    /// The GPU and launch shape the kernel is compiled for: passes that
    /// decide GPU-level facts (`pipeline-dot-loops`) are skipped without it.
    pub target: Option<Target>,
}

/// What a target-aware pass plans for (the codegen options of the compile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub arch: Arch,
    pub num_warps: usize,
    /// Most pipeline buffers asked for (`--num-stages`); `None`: the pass's choice.
    pub num_stages: Option<usize>,
    /// Programs that share each dot loop's iterations (`--split-k`); `None`
    /// or 1: no split.
    pub split_k: Option<u32>,
    /// TMA copies for wgmma pipelines (`--tma`), see [`crate::passes::tma_loads`].
    pub tma: bool,
    /// With `tma`: `b` shared by the two programs of a cluster
    /// (`--tma-multicast`), where the pass proves it safe.
    pub tma_multicast: bool,
    /// With `tma`: a producer warpgroup issues the copies
    /// (`--warp-specialize`), where the pass can compute their origins.
    pub warp_specialize: bool,
    /// Layouts hold whole runs of misaligned loads (`--misaligned-runs`),
    /// see [`crate::analysis::axis_info::AxisInfoMap::run_width_along`].
    pub misaligned_runs: bool,
}

impl Target {
    /// `arch` with `num_warps` and every other choice left to the passes.
    pub fn plain(arch: Arch, num_warps: usize) -> Self {
        Target {
            arch,
            num_warps,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        }
    }
}

impl PassOptions {
    /// Every pass on, no target.
    pub fn all() -> Self {
        PassOptions {
            pipelining: true,
            target: None,
        }
    }

    /// From the environment (`TRITONC_NO_PIPELINE=1` turns pipelining off), no target.
    pub fn from_env() -> Self {
        PassOptions {
            pipelining: pipelining_enabled(),
            target: None,
        }
    }

    /// Why a target-aware pass cannot run under these options (`None` when
    /// they name a target).
    pub fn without_target(&self) -> Option<&'static str> {
        self.target
            .is_none()
            .then_some("no target given (arch and warps)")
    }

    /// Why a pipelining pass cannot run: pipelining off, or no target.
    pub fn without_pipelining_target(&self) -> Option<&'static str> {
        self.without_pipelining().or_else(|| self.without_target())
    }

    /// Why a pass that prepares wgmma pipelines cannot run: pipelining off,
    /// no target, or one other than sm_90a (`not_sm90a` says it then).
    pub fn without_wgmma_pipelining_target(&self, not_sm90a: &'static str) -> Option<&'static str> {
        self.without_pipelining_target().or_else(|| {
            (self.target.map(|t| t.arch) != Some(crate::arch::Arch::Sm90a)).then_some(not_sm90a)
        })
    }

    /// Why a pass that prepares pipelining cannot run (`TRITONC_NO_PIPELINE=1`).
    pub fn without_pipelining(&self) -> Option<&'static str> {
        (!self.pipelining).then_some("TRITONC_NO_PIPELINE=1 is set")
    }

    /// These options planning for `target`.
    pub fn with_target(self, target: Target) -> Self {
        PassOptions {
            target: Some(target),
            ..self
        }
    }
}

/// Whether loops are pipelined (`TRITONC_NO_PIPELINE=1` turns it off).
pub fn pipelining_enabled() -> bool {
    std::env::var_os("TRITONC_NO_PIPELINE").is_none_or(|v| v == "0")
}
