//! Warpgroup MMA tiles on sm_90a: which `[m, k] @ [k, n]` tiles the
//! warpgroups of a program can multiply (`wgmma.mma_async m64nNk16` with both
//! operands in shared memory), and the sizes that follow from a tile. The
//! `pipeline-dot-loops` pass plans with these; `codegen::wgmma_layout` holds
//! the index math and `codegen::wgmma` the instructions.
use crate::analysis::mma::MmaConfig;
use crate::ir::{Function, Op};

/// Rows of one instruction.
pub const WG_M: usize = 64;
/// `k` of one instruction.
pub const WG_K: usize = 16;
/// 16-bit elements in one 128-byte swizzled row (the widest swizzle).
pub const ATOM: usize = 64;
/// Largest `N` of one instruction.
pub const MAX_N: usize = 256;
/// Registers a thread may spend on the accumulator (f32) plus the source
/// addresses of its 16-byte copies (64-bit): ptxas 13.0 fits 128x256x64 with
/// 8 warps (128 + 24) without spills, and spills a few bytes for 128x128x64
/// with 4 warps (128 + 32), whose threads issue twice the copies.
pub const MAX_LIVE_REGS: usize = 152;

/// A tile `[m, k] @ [k, n]` on `num_warps / 4` warpgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaConfig {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub num_warps: usize,
    /// `a` staged `[K][M]` (the transpose of a loaded `[K, M]` tile), read
    /// with the instruction's transpose immediate; else `[M][K]`.
    pub a_m_major: bool,
    /// `b` staged `[N][K]` (the transpose of a loaded `[N, K]` tile), read
    /// without the transpose immediate; else `[K][N]`.
    pub b_k_major: bool,
}

impl WgmmaConfig {
    /// The tile with `a` K-major and `b` N-major (both as `[m, k] @ [k, n]`
    /// loads them).
    pub fn new(m: usize, n: usize, k: usize, num_warps: usize) -> Self {
        WgmmaConfig {
            m,
            n,
            k,
            num_warps,
            a_m_major: false,
            b_k_major: false,
        }
    }
    /// The tile with `a` (first) and `b` (second) staged transposed as
    /// `transposed` says (a pipeline's [`crate::ir::LoopPipeline::transposed`]).
    pub fn oriented(self, [a_m_major, b_k_major]: [bool; 2]) -> Self {
        WgmmaConfig {
            a_m_major,
            b_k_major,
            ..self
        }
    }
    pub fn groups(&self) -> usize {
        self.num_warps / 4
    }
    /// Rows of the tile one warpgroup owns.
    pub fn group_rows(&self) -> usize {
        self.m / self.groups()
    }
    /// Instructions along `M` per warpgroup and `k` step.
    pub fn blocks(&self) -> usize {
        self.group_rows() / WG_M
    }
    pub fn steps_k(&self) -> usize {
        self.k / WG_K
    }
    /// Elements of one swizzled row of `a`: K-major 64 (128-byte swizzle),
    /// or all of a `K` of 32 (64-byte) or 16 (32-byte); M-major the 64 rows
    /// of one instruction.
    pub fn a_atom(&self) -> usize {
        if self.a_m_major {
            WG_M
        } else {
            self.k.min(ATOM)
        }
    }
    /// The loaded tile of `a` as a stage holds it, `[rows, cols]`: `[M, K]`,
    /// or `[K, M]` M-major.
    pub fn a_stage_shape(&self) -> [usize; 2] {
        if self.a_m_major {
            [self.k, self.m]
        } else {
            [self.m, self.k]
        }
    }
    /// Bytes of one swizzled row of `a`.
    pub fn a_row_bytes(&self) -> usize {
        2 * self.a_atom()
    }
    /// Elements of one swizzled row of `b`: N-major the widest of 64, 32
    /// and 16 (the 128-, 64- and 32-byte swizzles) that divides `N` (96:
    /// 32); K-major as `a`'s K-major rows.
    pub fn b_atom(&self) -> usize {
        if self.b_k_major {
            return self.k.min(ATOM);
        }
        [ATOM, 2 * WG_K, WG_K]
            .into_iter()
            .find(|a| self.n % a == 0)
            .unwrap_or(WG_K)
    }
    /// The loaded tile of `b` as a stage holds it, `[rows, cols]`: `[K, N]`,
    /// or `[N, K]` K-major.
    pub fn b_stage_shape(&self) -> [usize; 2] {
        if self.b_k_major {
            [self.n, self.k]
        } else {
            [self.k, self.n]
        }
    }
    /// Bytes of one swizzled row of `b`.
    pub fn b_row_bytes(&self) -> usize {
        2 * self.b_atom()
    }
    /// The accumulator as an `mma.sync` config (its layout, see the module doc).
    pub fn mma(&self) -> MmaConfig {
        MmaConfig {
            warps: [self.num_warps, 1],
            m: self.m,
            n: self.n,
            k: self.k,
        }
    }
    /// Byte offset of `b` in a stage.
    pub fn b_offset(&self) -> usize {
        self.m * self.k * 2
    }
    /// Bytes of one stage (`a` then `b`), a multiple of 1024.
    pub fn stage_bytes(&self) -> usize {
        self.b_offset() + self.k * self.n * 2
    }
}

/// The warpgroup plan for `[m, k] @ [k, n]` (16-bit inputs checked by the
/// caller): whole warpgroups, 64-row blocks per warpgroup, `k` 16, 32 or a
/// multiple of 64 and `n` a multiple of 16 (whole rows of a swizzle),
/// `n` within one instruction, and
/// the accumulator and copy addresses within [`MAX_LIVE_REGS`] registers a
/// thread.
pub fn plan(m: usize, n: usize, k: usize, num_warps: usize) -> Option<WgmmaConfig> {
    let ok = num_warps >= 4
        && num_warps % 4 == 0
        && m > 0
        && m % (WG_M * (num_warps / 4)) == 0
        && (k == WG_K || k == 2 * WG_K || (k > 0 && k % ATOM == 0))
        && n > 0
        && n % WG_K == 0
        && n <= MAX_N
        && live_registers(m, n, k, num_warps) <= MAX_LIVE_REGS;
    ok.then(|| WgmmaConfig::new(m, n, k, num_warps))
}

/// Accumulator registers plus two per 16-byte copy a thread issues for one tile.
pub fn live_registers(m: usize, n: usize, k: usize, num_warps: usize) -> usize {
    let threads = 32 * num_warps;
    m * n / threads + 2 * (m * k + k * n) / (8 * threads)
}

/// The plan for a `Dot` op of `func` when it runs on tensor cores and fits warpgroups.
pub fn plan_for_op(func: &Function, op: &Op, num_warps: usize) -> Option<WgmmaConfig> {
    let mma = crate::analysis::mma::plan_for_op(func, op, num_warps)?;
    plan(mma.m, mma.n, mma.k, num_warps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        assert!(plan(128, 256, 64, 8).is_some());
        assert!(plan(256, 128, 64, 8).is_some());
        assert!(plan(64, 128, 64, 4).is_some());
        assert_eq!(live_registers(128, 256, 64, 8), 152);
        // 256 accumulator registers a thread: too many.
        assert!(plan(128, 256, 64, 4).is_none());
        // 128 + 32 (spills a few bytes).
        assert!(plan(128, 128, 64, 4).is_none());
        // TK 32 and 16: the 64- and 32-byte swizzles; 128x128 on one
        // warpgroup fits at TK 32 (128 + 16 registers).
        assert!(plan(128, 128, 32, 8).is_some());
        assert!(plan(128, 128, 32, 4).is_some());
        assert!(plan(64, 256, 16, 4).is_some());
        assert!(plan(128, 128, 48, 8).is_none());
        // TN 32 and 16: b's rows in the 64- and 32-byte swizzles; any
        // multiple of 16 takes the widest swizzle that divides it.
        assert!(plan(128, 32, 64, 8).is_some());
        assert!(plan(64, 16, 64, 4).is_some());
        for (n, atom) in [(48, 16), (96, 32), (160, 32), (192, 64), (224, 32)] {
            let p = plan(128, n, 64, 8).unwrap_or_else(|| panic!("TN {n}"));
            assert_eq!(p.b_atom(), atom, "TN {n}");
        }
        assert!(plan(128, 40, 64, 8).is_none());
        assert!(plan(128, 8, 64, 8).is_none());
        assert!(plan(128, 128, 8, 8).is_none());
        assert!(plan(64, 128, 64, 8).is_none());
        assert!(plan(128, 128, 64, 2).is_none());
        assert!(plan(128, 512, 64, 8).is_none());
    }
}
