//! Warpgroup MMA tiles on sm_90a: which `[m, k] @ [k, n]` tiles the
//! warpgroups of a program can multiply (`wgmma.mma_async m64nNk16` with both
//! operands in shared memory), and the sizes that follow from a tile. The
//! `pipeline-dot-loops` pass plans with these; `codegen::wgmma_layout` holds
//! the index math and `codegen::wgmma` the instructions.
use crate::analysis::mma::{engine_config, MmaConfig};
use crate::ir::{DotEngine, Function, LoopPipeline, Op, Region};

/// Rows of one instruction.
pub const WG_M: usize = 64;
/// `k` of one instruction.
pub const WG_K: usize = 16;
/// 16-bit elements in one 128-byte swizzled row (the widest swizzle).
pub const ATOM: usize = 64;
/// 16-bit elements in one row of a core matrix (16 bytes): the unswizzled
/// rows of an N-major `b` whose warpgroup `N` is a multiple of 8 but not of
/// 16 (`m64n24k16`, `m64n40k16`, ...).
pub const CORE_N: usize = 8;
/// Largest `N` of one instruction.
pub const MAX_N: usize = 256;
/// Registers a thread may spend on the accumulator (f32) plus the source
/// addresses of its 16-byte copies (64-bit): ptxas 13.0 fits 128x256x64 with
/// 8 warps (128 + 24) without spills, and spills a few bytes for 128x128x64
/// with 4 warps (128 + 32), whose threads issue twice the copies.
pub const MAX_LIVE_REGS: usize = 152;
/// Floats of padding a row of the accumulator staged to change its order
/// (a native-order loop, [`WgmmaConfig::native_order`]): rows 8 floats
/// apart in banks, so the 64-bit accesses of a half-warp (4 rows, 4 column
/// pairs) hit 32 banks.
pub const REORDER_PAD: usize = 8;

/// The swizzle span of an operand's rows of `row_bytes` (what its TMA map
/// and descriptor say): the row, or 0 for unswizzled 16-byte rows.
pub fn swizzle_span(row_bytes: usize) -> usize {
    if row_bytes > 16 {
        row_bytes
    } else {
        0
    }
}

/// A tile `[m, k] @ [k, n]` on `num_warps / 4` warpgroups: they split `M`
/// (each its `M / G` rows, all columns) where `M / G` is a whole number of
/// 64-row blocks, else, with two warpgroups, `N` ([`Self::split_n`]: each
/// all rows and half the columns; 192x192 on 8 warps, cuBLAS's tile for
/// 3000^3 on an H100).
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
    /// Whether the warpgroups split `N` (their rows cannot be split in
    /// whole 64-row blocks).
    pub fn split_n(&self) -> bool {
        self.m % (WG_M * self.groups()) != 0
    }
    /// Rows of the tile one warpgroup owns.
    pub fn group_rows(&self) -> usize {
        if self.split_n() {
            self.m
        } else {
            self.m / self.groups()
        }
    }
    /// Columns of the tile one warpgroup owns: the `N` of its instructions.
    pub fn group_cols(&self) -> usize {
        if self.split_n() {
            self.n / self.groups()
        } else {
            self.n
        }
    }
    /// The first row of `a` warpgroup `g` multiplies.
    pub fn group_first_row(&self, g: usize) -> usize {
        if self.split_n() {
            0
        } else {
            g * self.group_rows()
        }
    }
    /// The first column of `b` warpgroup `g` multiplies.
    pub fn group_first_col(&self, g: usize) -> usize {
        if self.split_n() {
            g * self.group_cols()
        } else {
            0
        }
    }
    /// Whether `a` lands in shared memory with its rows as loaded and the
    /// loop carries the accumulator in the instructions' own order, put in
    /// the layout's order after the loop
    /// ([`crate::codegen::tensor_cores::native_order`]): an M-major `a`
    /// (its rows cannot be permuted as they are copied) and an `N` split
    /// (a warpgroup's columns are not the layout's). Otherwise a K-major
    /// `a`'s rows are permuted as they land and the instructions deliver
    /// the layout's registers.
    pub fn native_order(&self) -> bool {
        self.a_m_major || self.split_n()
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
    /// Bytes that stage `columns` columns of the `f32` accumulator in
    /// padded rows.
    pub fn reorder_bytes(&self, columns: usize) -> usize {
        self.m * (columns + REORDER_PAD) * 4
    }
    /// The most columns a chunk of the reordering stages within `bytes`
    /// (`None`: not even 8 fit): the same runs of 8 from each warpgroup's
    /// columns (one run of the tile's without an `N` split), a number of
    /// runs that divides a warpgroup's. Such a chunk holds every value its
    /// registers read and no other: a register's value and the element it
    /// stands for sit at the same place of their warpgroups' columns.
    pub fn reorder_chunk(&self, bytes: usize) -> Option<usize> {
        let sets = self.n / self.group_cols();
        let runs = self.group_cols() / 8;
        (1..=runs)
            .rev()
            .filter(|r| runs % r == 0)
            .map(|r| sets * 8 * r)
            .find(|&cw| self.reorder_bytes(cw) <= bytes)
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
    /// and 16 (the 128-, 64- and 32-byte swizzles) that divides a
    /// warpgroup's `N` (96: 32, so that each warpgroup's columns start on
    /// a whole atom), else 8 (unswizzled 16-byte rows, core matrices);
    /// K-major as `a`'s K-major rows.
    pub fn b_atom(&self) -> usize {
        if self.b_k_major {
            return self.k.min(ATOM);
        }
        [ATOM, 2 * WG_K, WG_K]
            .into_iter()
            .find(|a| self.group_cols() % a == 0)
            .unwrap_or(CORE_N)
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
    /// Bytes `a` then `b` fill in one stage.
    pub fn operand_bytes(&self) -> usize {
        self.b_offset() + self.k * self.n * 2
    }
    /// Bytes of one stage: the operands rounded up to 1024 (an `N` of a
    /// multiple of 8 but not of 16 can leave them short of it), so that
    /// every stage starts on a whole 128-byte swizzle atom.
    pub fn stage_bytes(&self) -> usize {
        self.operand_bytes().next_multiple_of(1024)
    }
}

/// The warpgroup plan for `[m, k] @ [k, n]` (16-bit inputs checked by the
/// caller): whole warpgroups, 64-row blocks per warpgroup, `k` 16, 32 or a
/// multiple of 64 and `n` a multiple of 8 (whole rows of a swizzle, or of
/// unswizzled core matrices), `n` within one instruction, and
/// the accumulator and copy addresses within [`MAX_LIVE_REGS`] registers a
/// thread. An `N` split ([`WgmmaConfig::split_n`]): two warpgroups, at
/// least 3 blocks of rows (a 64-row tile on 8 warps stays on `mma.sync`),
/// each `n / 2` a multiple of 16, and the accumulator alone within the
/// registers: only TMA copies leave it room (`by_tma`; 192x192 takes 144).
pub fn plan(m: usize, n: usize, k: usize, num_warps: usize, by_tma: bool) -> Option<WgmmaConfig> {
    if num_warps < 4 || num_warps % 4 != 0 {
        return None;
    }
    let cfg = WgmmaConfig::new(m, n, k, num_warps);
    let split = cfg.split_n();
    let live = if split {
        m * n / (32 * num_warps)
    } else {
        live_registers(m, n, k, num_warps)
    };
    let ok = m > 0
        && m % WG_M == 0
        && (!split || (by_tma && cfg.groups() == 2 && m >= 3 * WG_M && n % (2 * WG_K) == 0))
        && (k == WG_K || k == 2 * WG_K || (k > 0 && k % ATOM == 0))
        && n > 0
        && n % CORE_N == 0
        && n <= MAX_N
        && live <= MAX_LIVE_REGS;
    ok.then_some(cfg)
}

/// Accumulator registers plus two per 16-byte copy a thread issues for one tile.
pub fn live_registers(m: usize, n: usize, k: usize, num_warps: usize) -> usize {
    let threads = 32 * num_warps;
    m * n / threads + 2 * (m * k + k * n) / (8 * threads)
}

/// The warpgroup tile of a loop `pipeline-dot-loops` put on wgmma (its
/// body `body`): the dot's shape on the decided warpgroups, each operand
/// staged as the pipeline says.
pub fn loop_config(func: &Function, body: &Region, p: &LoopPipeline) -> Option<WgmmaConfig> {
    let DotEngine::Wgmma { warpgroups } = p.engine else {
        return None;
    };
    let cfg = engine_config(func, body.defining_op(p.dot)?, p.engine)?;
    Some(WgmmaConfig::new(cfg.m, cfg.n, cfg.k, 4 * warpgroups).oriented(p.transposed()))
}

/// The plan for a `Dot` op of `func` when it runs on tensor cores and fits
/// warpgroups (`by_tma`: its operands come by TMA).
pub fn plan_for_op(
    func: &Function,
    op: &Op,
    num_warps: usize,
    by_tma: bool,
) -> Option<WgmmaConfig> {
    let mma = crate::analysis::mma::plan_for_op(func, op, num_warps)?;
    plan(mma.m, mma.n, mma.k, num_warps, by_tma)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans() {
        assert!(plan(128, 256, 64, 8, false).is_some());
        assert!(plan(256, 128, 64, 8, false).is_some());
        assert!(plan(64, 128, 64, 4, false).is_some());
        assert_eq!(live_registers(128, 256, 64, 8), 152);
        // 256 accumulator registers a thread: too many.
        assert!(plan(128, 256, 64, 4, false).is_none());
        // 128 + 32 (spills a few bytes).
        assert!(plan(128, 128, 64, 4, false).is_none());
        // TK 32 and 16: the 64- and 32-byte swizzles; 128x128 on one
        // warpgroup fits at TK 32 (128 + 16 registers).
        assert!(plan(128, 128, 32, 8, false).is_some());
        assert!(plan(128, 128, 32, 4, false).is_some());
        assert!(plan(64, 256, 16, 4, false).is_some());
        assert!(plan(128, 128, 48, 8, false).is_none());
        // TN 32 and 16: b's rows in the 64- and 32-byte swizzles; any
        // multiple of 16 takes the widest swizzle that divides it.
        assert!(plan(128, 32, 64, 8, false).is_some());
        assert!(plan(64, 16, 64, 4, false).is_some());
        for (n, atom) in [(48, 16), (96, 32), (160, 32), (192, 64), (224, 32)] {
            let p = plan(128, n, 64, 8, false).unwrap_or_else(|| panic!("TN {n}"));
            assert_eq!(p.b_atom(), atom, "TN {n}");
        }
        // Multiples of 8 but not of 16: unswizzled 16-byte rows.
        for n in [8, 24, 40, 56, 200, 248] {
            let p = plan(128, n, 64, 8, false).unwrap_or_else(|| panic!("TN {n}"));
            assert_eq!(p.b_atom(), CORE_N, "TN {n}");
        }
        assert!(plan(128, 12, 64, 8, false).is_none());
        assert!(plan(128, 128, 8, 8, false).is_none());
        assert!(plan(64, 128, 64, 8, false).is_none());
        assert!(plan(128, 128, 64, 2, false).is_none());
        assert!(plan(128, 512, 64, 8, false).is_none());
        // Warpgroups splitting N: 192 rows on two, each 96 columns (b in
        // 64-byte rows), by TMA only (144 accumulator registers).
        let split = plan(192, 192, 64, 8, true).expect("192x192 on 8 warps");
        assert!(split.split_n() && split.native_order());
        assert_eq!(
            (split.group_rows(), split.group_cols(), split.blocks()),
            (192, 96, 3)
        );
        assert_eq!(split.b_atom(), 32);
        assert!(plan(192, 192, 64, 8, false).is_none());
        assert!(plan(64, 128, 64, 8, true).is_none());
        assert!(plan(192, 80, 64, 8, true).is_none());
        assert!(!plan(128, 256, 64, 8, true).unwrap().split_n());
    }

    #[test]
    fn reorder_chunks_fit_the_bytes() {
        // 128x256 of f32 with padded rows: 135 168 bytes; 4 stages of
        // 128x64 + 64x256 halves hold it whole.
        let tile = |m, n| WgmmaConfig::new(m, n, 64, 8);
        assert_eq!(tile(128, 256).reorder_chunk(4 * 49152), Some(256));
        // Two stages of 64x64 + 64x64: 64 columns at a time.
        assert_eq!(tile(128, 256).reorder_chunk(2 * 16384), Some(32));
        // 48 columns: 48, 24, 16 or 8 (multiples of 8 dividing 48).
        assert_eq!(tile(128, 48).reorder_chunk(128 * 56 * 4), Some(48));
        assert_eq!(tile(128, 48).reorder_chunk(128 * 55 * 4), Some(24));
        assert_eq!(tile(128, 48).reorder_chunk(128 * 16 * 4 - 1), None);
        // Split along N (96 columns a warpgroup): the whole 192, else the
        // same runs of each warpgroup's 12: 6 (96 columns), 4 (64), ...
        let split = tile(192, 192);
        assert_eq!(split.reorder_chunk(192 * 200 * 4), Some(192));
        assert_eq!(split.reorder_chunk(192 * 104 * 4), Some(96));
        assert_eq!(split.reorder_chunk(192 * 104 * 4 - 1), Some(64));
        assert_eq!(split.reorder_chunk(192 * 24 * 4), Some(16));
    }
}
