//! What decides whether a pass runs, read once per compile.

/// Switches that enable or skip passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassOptions {
    /// Software pipelining of dot loops, and the rewrites that prepare it.
    pub pipelining: bool,
}

impl PassOptions {
    /// Every pass on.
    pub fn all() -> Self {
        PassOptions { pipelining: true }
    }

    /// From the environment: `TRITONC_NO_PIPELINE=1` turns pipelining off.
    pub fn from_env() -> Self {
        PassOptions {
            pipelining: pipelining_enabled(),
        }
    }
}

/// Whether loops are pipelined (`TRITONC_NO_PIPELINE=1` turns it off). Read
/// by the passes that prepare the pipeliner and by the pipeliner in codegen,
/// so both always agree.
pub fn pipelining_enabled() -> bool {
    std::env::var_os("TRITONC_NO_PIPELINE").is_none_or(|v| v == "0")
}
