//! Warpgroup MMA on sm_90a: `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}`
//! with both operands in shared memory, read through matrix descriptors.
//!
//! # Warpgroups and the accumulator
//! `num_warps / 4` warpgroups split the `[M, N]` tile along `M`: warpgroup `g`
//! owns rows `g * M / G ..` in blocks of 64 (one instruction each, all `N`
//! columns). Within one instruction warp `w` of the warpgroup holds rows
//! `16 w + {0..16}` as the `m16n8` C fragment repeated over the `N / 8` column
//! groups: register `4 j + 2 h + c` is row `16 w + 8 h + lane / 4`, column
//! `8 j + 2 (lane % 4) + c`.
//!
//! The accumulator keeps the `mma.sync` layout with warps `[num_warps, 1]`
//! ([`WgmmaConfig::mma`]): there, register `(i, 2 j + c)` of warp `w` is
//! logical row `8 w + lane / 4 + 8 num_warps i`. So `a`'s rows are permuted
//! when they are copied to shared memory ([`physical_row`]): logical row
//! `8 w + r + 8 num_warps (2 b + h)` goes to physical row
//! `g M / G + 64 b + 16 (w % 4) + 8 h + r` (`g = w / 4`), the row the
//! instruction for block `b` delivers to exactly that register. The epilogue
//! and every other user of the accumulator layout are unchanged.
//!
//! # Shared memory (one stage)
//! `b` uses the 128-byte swizzle (16-byte chunk `c` of a 128-byte row `r`
//! lands at chunk `c ^ (r % 8)`, i.e. `Swizzle<3,4,3>` on addresses, which
//! needs 1024-byte aligned atoms); `a` the widest of the 128-, 64- and
//! 32-byte swizzles its `K` fills (`TK` 64 and up, 32, 16: `Swizzle<3|2|1,4,3>`,
//! see [`swizzle`]):
//! - `a` (K-major): `[K / A][M][A]` with `A = min(K, 64)` elements a row,
//!   physical rows; descriptor stride between 8-row groups (SBO) `8 * 2A`
//!   bytes, the leading offset unused.
//! - `b` (row-major `[K][N]`, N-major, read with the transpose immediate):
//!   `[N / B][K][B]` with `B = min(N, 64)` elements a row (an `N` of 32 or 16
//!   in the 64- or 32-byte swizzle); SBO `8 * 2B` bytes between 8-row groups
//!   along `K`, LBO `K * 2B` bytes between `B`-column blocks along `N`.
//!
//! A `k16` step advances `a`'s descriptor by 32 bytes inside the swizzled row
//! (the hardware swizzles the computed address) and `b`'s by 16 rows.
//!
//! A transposed operand (the pipeline's `transposes`: `a @ ^b`, `^a @ b`) is
//! staged as it was loaded and read with the other transpose immediate
//! ([`StagedOperand`]): `b` K-major, `[K / B][N][B]` as `a` above with `N`'s
//! rows; `a` M-major, `[M / 64][K][64]` as `b` above with `M`'s columns,
//! in their loaded order: its rows cannot be permuted as they are copied,
//! so the loop carries the accumulator's rows permuted instead
//! ([`crate::codegen::tensor_cores::native_order`]).
//!
//! This file holds the pure index math (tested here); [`crate::codegen::tensor_cores::wgmma`] emits
//! the instructions.
use crate::analysis::mma::accumulator_layout;
use crate::analysis::wgmma::{swizzle_span, WgmmaConfig, WG_K, WG_M};
use crate::ir::layout::Layout;

/// Physical row of `a` in shared memory for logical row `row` (module doc).
pub fn physical_row(cfg: &WgmmaConfig, row: usize) -> usize {
    let (r, block8) = (row % 8, row / 8);
    let (w, i) = (block8 % cfg.num_warps, block8 / cfg.num_warps);
    let (g, ww) = (w / 4, w % 4);
    let (b, h) = (i / 2, i % 2);
    g * cfg.group_rows() + WG_M * b + 16 * ww + 8 * h + r
}

/// The swizzle of rows of `row_bytes` (128, 64 or 32: `Swizzle<3|2|1,4,3>`)
/// on a byte offset from an aligned base: the 16-byte chunk bits take an XOR
/// of the address bits from 7 up, as many as a row has chunk bits.
pub fn swizzle(offset: usize, row_bytes: usize) -> usize {
    offset ^ (((offset >> 7) & (row_bytes / 16 - 1)) << 4)
}

/// How one operand sits in a stage: its loaded `[rows, cols]` tile as
/// `[cols / atom][rows][atom]` in swizzled rows of `atom` elements.
/// K-major (`a`, a transposed `b`): rows are `M`'s or `N`'s, `K` runs along
/// them; MN-major (`b`, a transposed `a`): rows are `K`'s.
#[derive(Clone, Copy, Debug)]
pub struct StagedOperand {
    pub rows: usize,
    pub cols: usize,
    pub atom: usize,
    pub k_major: bool,
}

impl StagedOperand {
    pub fn a(cfg: &WgmmaConfig) -> Self {
        let [rows, cols] = cfg.a_stage_shape();
        Self {
            rows,
            cols,
            atom: cfg.a_atom(),
            k_major: !cfg.a_m_major,
        }
    }

    pub fn b(cfg: &WgmmaConfig) -> Self {
        let [rows, cols] = cfg.b_stage_shape();
        Self {
            rows,
            cols,
            atom: cfg.b_atom(),
            k_major: cfg.b_k_major,
        }
    }

    pub fn row_bytes(&self) -> usize {
        2 * self.atom
    }

    /// The unswizzled byte offset of element (`mn`, `k`) (`mn` a row of
    /// `a` or a column of `b`): where a descriptor starts when it is the
    /// first of an instruction's operand (the hardware swizzles).
    pub fn origin(&self, mn: usize, k: usize) -> usize {
        let (row, col) = if self.k_major { (mn, k) } else { (k, mn) };
        self.loaded_origin(row, col)
    }

    /// The unswizzled byte offset of element (`row`, `col`) of the loaded tile.
    pub fn loaded_origin(&self, row: usize, col: usize) -> usize {
        ((col / self.atom) * self.rows + row) * self.row_bytes() + (col % self.atom) * 2
    }

    /// The byte offset of element (`mn`, `k`).
    pub fn byte_offset(&self, mn: usize, k: usize) -> usize {
        swizzle(self.origin(mn, k), self.row_bytes())
    }

    /// The byte offset of element (`row`, `col`) of the loaded tile.
    pub fn loaded_byte_offset(&self, row: usize, col: usize) -> usize {
        swizzle(self.loaded_origin(row, col), self.row_bytes())
    }

    /// Descriptor bits other than the start address. K-major: the leading
    /// offset is unused (1 by convention), 8-row groups one 8-row atom
    /// apart. MN-major: `atom`-column blocks `K` rows apart, 8-row groups
    /// along `K` one 8-row atom apart. Unswizzled (16-byte rows: core
    /// matrices of 8 rows, 128 bytes) the two offsets mean directions, not
    /// orders: the leading one steps core matrices along `K`, the stride
    /// one along `M` or `N` (the PTX ISA's interleave mode).
    pub fn descriptor_bits(&self) -> u64 {
        let row_bytes = self.row_bytes();
        let (atom_rows, blocks) = (8 * row_bytes, self.rows * row_bytes);
        let (lbo, sbo) = match (self.swizzled(), self.k_major) {
            (true, true) => (16, atom_rows),
            (true, false) => (blocks, atom_rows),
            (false, true) => (blocks, atom_rows),
            (false, false) => (atom_rows, blocks),
        };
        descriptor_bits(lbo, sbo, row_bytes)
    }

    /// Whether rows are swizzled (wider than one 16-byte chunk).
    pub fn swizzled(&self) -> bool {
        swizzle_span(self.row_bytes()) != 0
    }
}

/// Byte offset in a stage of `a`'s element at physical row `prow`, column `col`.
pub fn a_byte_offset(cfg: &WgmmaConfig, prow: usize, col: usize) -> usize {
    StagedOperand::a(cfg).byte_offset(prow, col)
}

/// Byte offset in a stage of `b`'s element at row `kr`, column `col`.
pub fn b_byte_offset(cfg: &WgmmaConfig, kr: usize, col: usize) -> usize {
    cfg.b_offset() + StagedOperand::b(cfg).byte_offset(col, kr)
}

/// Descriptor bits other than the start address: LBO, SBO (16-byte units)
/// and the swizzle mode of rows of `row_bytes` (bits 62-63: 1 for 128
/// bytes, 2 for 64, 3 for 32, 0 for unswizzled 16-byte rows).
pub fn descriptor_bits(lbo_bytes: usize, sbo_bytes: usize, row_bytes: usize) -> u64 {
    let mode: u64 = match row_bytes {
        128 => 1,
        64 => 2,
        32 => 3,
        _ => 0,
    };
    (((lbo_bytes >> 4) as u64 & 0x3fff) << 16)
        | (((sbo_bytes >> 4) as u64 & 0x3fff) << 32)
        | (mode << 62)
}

/// `a`'s descriptor bits.
pub fn a_descriptor_bits(cfg: &WgmmaConfig) -> u64 {
    StagedOperand::a(cfg).descriptor_bits()
}

/// `b`'s descriptor bits.
pub fn b_descriptor_bits(cfg: &WgmmaConfig) -> u64 {
    StagedOperand::b(cfg).descriptor_bits()
}

/// Byte offset (within the stage) of the `a` operand of instruction block
/// `b`, warpgroup `g`, `k` step `s`.
pub fn a_operand_offset(cfg: &WgmmaConfig, g: usize, b: usize, s: usize) -> usize {
    StagedOperand::a(cfg).origin(cfg.group_first_row(g) + WG_M * b, s * WG_K)
}

/// Byte offset (within the stage) of the `b` operand of warpgroup `g`,
/// `k` step `s`.
pub fn b_operand_offset(cfg: &WgmmaConfig, g: usize, s: usize) -> usize {
    cfg.b_offset() + StagedOperand::b(cfg).origin(cfg.group_first_col(g), s * WG_K)
}

/// Accumulator register (in the [`WgmmaConfig::mma`] layout) behind result
/// `d` of the instruction for block `b`: the one of the row group and
/// column pair that instruction writes in this warp (module doc), or, in
/// the native order of an `N` split, block `b`'s row group and the `h`-th
/// run of the warpgroup's column pairs ([`held_position`]).
pub fn acc_register(cfg: &WgmmaConfig, b: usize, d: usize) -> usize {
    let map = Layout::Blocked(accumulator_layout(&cfg.mma())).tile_map(&[cfg.m, cfg.n]);
    let (j, h, c) = (d / 4, (d / 2) % 2, d % 2);
    if cfg.split_n() {
        let pairs = cfg.group_cols() / 8;
        map.reg_of_locals(&[b, 2 * (h * pairs + j) + c])
    } else {
        map.reg_of_locals(&[2 * b + h, 2 * j + c])
    }
}

/// The element of the tile `[row, col]` whose value the accumulator
/// register standing for `[row, col]` holds while a native-order loop
/// ([`WgmmaConfig::native_order`]) runs. Rows split (an M-major `a`): the
/// row [`physical_row`] gives, the same column. `N` split: the layout's
/// register (local row group `i`, column pair `p`) of warp `w` holds
/// what instruction block `i` of warpgroup `w / 4` delivers to its
/// `h = p / P`-th row half and pair `p % P` (`P` a warpgroup's pairs).
pub fn held_position(cfg: &WgmmaConfig, row: usize, col: usize) -> (usize, usize) {
    if !cfg.split_n() {
        return (physical_row(cfg, row), col);
    }
    let (r, block8) = (row % 8, row / 8);
    let (w, i) = (block8 % cfg.num_warps, block8 / cfg.num_warps);
    let (pair, q) = (col / 8, col % 8);
    let pairs = cfg.group_cols() / 8;
    let (h, j) = (pair / pairs, pair % pairs);
    let prow = WG_M * i + 16 * (w % 4) + 8 * h + r;
    (prow, cfg.group_first_col(w / 4) + 8 * j + q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::wgmma::plan;

    fn configs() -> Vec<WgmmaConfig> {
        [
            (128, 256, 64, 8),
            (128, 128, 64, 8),
            (128, 128, 64, 4),
            (64, 256, 64, 4),
            (256, 128, 64, 8),
            (128, 64, 128, 4),
            (128, 256, 32, 8),
            (128, 128, 32, 4),
            (64, 128, 16, 4),
            (128, 64, 16, 8),
            (128, 32, 64, 8),
            (64, 16, 32, 4),
            (128, 32, 32, 8),
            (192, 192, 64, 8),
            (128, 24, 64, 8),
            (64, 40, 16, 4),
            (64, 8, 32, 4),
        ]
        .into_iter()
        .map(|(m, n, k, num_warps)| WgmmaConfig::new(m, n, k, num_warps))
        .collect()
    }

    #[test]
    fn rows_are_permuted_once() {
        for cfg in configs().into_iter().filter(|c| !c.split_n()) {
            let mut seen = vec![0; cfg.m];
            for r in 0..cfg.m {
                let p = physical_row(&cfg, r);
                assert_eq!(p % 8, r % 8);
                seen[p] += 1;
            }
            assert!(seen.iter().all(|&s| s == 1), "{cfg:?}");
        }
    }

    #[test]
    fn instructions_deliver_the_accumulator_layout() {
        // Register d of the instruction for block b in warp w (of warpgroup g)
        // holds physical row g M/G + 64 b + 16 (w % 4) + 8 h + lane / 4 and
        // column 8 j + 2 (lane % 4) + c: the accumulator register it lands in
        // must stand for the logical row whose physical row that is.
        for cfg in configs().into_iter().filter(|c| !c.split_n()) {
            let map = Layout::Blocked(accumulator_layout(&cfg.mma())).tile_map(&[cfg.m, cfg.n]);
            for warp in 0..cfg.num_warps {
                let (g, ww) = (warp / 4, warp % 4);
                for lane in 0..32 {
                    let tid = warp * 32 + lane;
                    for b in 0..cfg.blocks() {
                        for d in 0..cfg.n / 2 {
                            let (j, h, c) = (d / 4, (d / 2) % 2, d % 2);
                            let prow = g * cfg.group_rows() + 64 * b + 16 * ww + 8 * h + lane / 4;
                            let col = 8 * j + 2 * (lane % 4) + c;
                            let reg = acc_register(&cfg, b, d);
                            let logical = map.element_index(tid, reg);
                            assert_eq!(logical[1], col);
                            assert_eq!(physical_row(&cfg, logical[0]), prow, "{cfg:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn split_instructions_hold_every_element_once() {
        // Warpgroups splitting N: register d of block b in warp w holds
        // row 64 b + 16 (w % 4) + 8 h + lane / 4, column
        // 96 (w / 4) + 8 j + 2 (lane % 4) + c; `held_position` of the
        // register's layout element must say so, once per element.
        let cfg = WgmmaConfig::new(192, 192, 64, 8);
        let map = Layout::Blocked(accumulator_layout(&cfg.mma())).tile_map(&[cfg.m, cfg.n]);
        let mut seen = vec![0u8; cfg.m * cfg.n];
        for warp in 0..8 {
            let (g, ww) = (warp / 4, warp % 4);
            for lane in 0..32 {
                for b in 0..cfg.blocks() {
                    for d in 0..cfg.group_cols() / 2 {
                        let (j, h, c) = (d / 4, (d / 2) % 2, d % 2);
                        let prow = 64 * b + 16 * ww + 8 * h + lane / 4;
                        let pcol = 96 * g + 8 * j + 2 * (lane % 4) + c;
                        let logical = map.element_index(warp * 32 + lane, acc_register(&cfg, b, d));
                        assert_eq!(held_position(&cfg, logical[0], logical[1]), (prow, pcol));
                        seen[prow * cfg.n + pcol] += 1;
                    }
                }
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        // Each warpgroup's b starts on a whole 64-byte atom, a starts at row 0.
        assert_eq!(a_operand_offset(&cfg, 1, 0, 0), 0);
        assert_eq!(
            b_operand_offset(&cfg, 1, 0) - cfg.b_offset(),
            StagedOperand::b(&cfg).loaded_origin(0, 96)
        );
        assert_eq!(StagedOperand::b(&cfg).loaded_origin(0, 96) % (8 * 64), 0);
    }

    #[test]
    fn stage_is_a_permutation_of_swizzled_rows() {
        for cfg in configs().into_iter().flat_map(oriented) {
            let mut seen = vec![0u8; cfg.stage_bytes() / 2];
            for r in 0..cfg.m {
                for c in 0..cfg.k {
                    seen[a_byte_offset(&cfg, r, c) / 2] += 1;
                }
            }
            for r in 0..cfg.k {
                for c in 0..cfg.n {
                    seen[b_byte_offset(&cfg, r, c) / 2] += 1;
                }
            }
            let (filled, pad) = seen.split_at(cfg.operand_bytes() / 2);
            assert!(filled.iter().all(|&s| s == 1), "{cfg:?}");
            assert!(pad.len() < 512 && pad.iter().all(|&s| s == 0), "{cfg:?}");
            assert_eq!(cfg.stage_bytes() % 1024, 0);
            assert_eq!(cfg.b_offset() % 1024, 0);
        }
        // The 128-byte swizzle: chunk c of row r at chunk c ^ (r % 8).
        let cfg = WgmmaConfig::new(128, 128, 64, 4);
        assert_eq!(a_byte_offset(&cfg, 3, 8), 3 * 128 + (1 ^ 3) * 16);
        assert_eq!(
            a_byte_offset(&cfg, 9, 70),
            // second 64-column block, chunk 0 of row 9 lands at chunk 1
            (128 + 9) * 128 + 16 + 12
        );
        assert_eq!(
            b_byte_offset(&cfg, 5, 64 + 17),
            cfg.b_offset() + (64 + 5) * 128 + (2 ^ 5) * 16 + 2
        );
        // 64-byte rows (TK or TN 32): chunk c of row r at chunk
        // c ^ ((r / 2) % 4); 32-byte rows (16): at c ^ ((r / 4) % 2).
        for (size, row_bytes, phase) in [(32, 64, 1), (16, 32, 2)] {
            let cfg = WgmmaConfig::new(128, size, size, 8);
            let chunks = row_bytes / 16;
            for r in 0..16 {
                for c in 0..chunks {
                    let want = r * row_bytes + (c ^ ((r >> phase) % chunks)) * 16 + 6;
                    assert_eq!(
                        a_byte_offset(&cfg, r, 8 * c + 3),
                        want,
                        "a: size {size} row {r} chunk {c}"
                    );
                    assert_eq!(
                        b_byte_offset(&cfg, r, 8 * c + 3),
                        cfg.b_offset() + want,
                        "b: size {size} row {r} chunk {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn operand_offsets_start_whole_atoms() {
        for cfg in configs() {
            // One 8-row atom of a; k steps in one swizzled row.
            let (atom_bytes, per_row) = (8 * cfg.a_row_bytes(), cfg.a_atom() / WG_K);
            for s in 0..cfg.steps_k() {
                // k steps move 32 bytes inside one atom for a ...
                for g in 0..cfg.groups() {
                    for b in 0..cfg.blocks() {
                        let off = a_operand_offset(&cfg, g, b, s);
                        let inside = (s % per_row) * 32;
                        assert_eq!(off % atom_bytes, inside, "{cfg:?}");
                        assert_eq!(
                            off - inside,
                            a_byte_offset(
                                &cfg,
                                cfg.group_first_row(g) + 64 * b,
                                (s / per_row) * cfg.a_atom()
                            )
                        );
                    }
                }
                // ... and whole atoms (16 rows) for b.
                assert_eq!(b_operand_offset(&cfg, 0, s), b_byte_offset(&cfg, 16 * s, 0));
            }
        }
    }

    #[test]
    fn descriptor_fields() {
        let cfg = plan(128, 256, 64, 8, false).unwrap();
        let a = a_descriptor_bits(&cfg);
        assert_eq!((a >> 16) & 0x3fff, 1);
        assert_eq!((a >> 32) & 0x3fff, 64);
        assert_eq!(a >> 62, 1);
        // 64- and 32-byte rows: 8-row groups 512 and 256 bytes apart, modes 2 and 3.
        for (size, sbo, mode) in [(32, 512, 2), (16, 256, 3)] {
            let a = a_descriptor_bits(&plan(128, 256, size, 8, false).unwrap());
            assert_eq!((a >> 32) & 0x3fff, sbo / 16);
            assert_eq!(a >> 62, mode);
            let cfg = plan(128, size, 64, 8, false).unwrap();
            let b = b_descriptor_bits(&cfg);
            assert_eq!((b >> 16) & 0x3fff, (64 * 2 * size / 16) as u64);
            assert_eq!((b >> 32) & 0x3fff, sbo / 16);
            assert_eq!(b >> 62, mode);
        }
        let b = b_descriptor_bits(&cfg);
        assert_eq!((b >> 16) & 0x3fff, 64 * 128 / 16);
        assert_eq!((b >> 32) & 0x3fff, 64);
        assert_eq!(b & 0x3fff, 0);
    }

    #[test]
    fn unswizzled_b_is_core_matrices() {
        // TN 24: `b` as `[N / 8][K][8]`, core matrices of 8 rows of 16
        // bytes; interleave mode, LBO 128 bytes along K, SBO K rows along N.
        let cfg = plan(128, 24, 64, 8, false).unwrap();
        let b = StagedOperand::b(&cfg);
        assert!(!b.swizzled());
        assert_eq!(
            b_byte_offset(&cfg, 13, 17),
            cfg.b_offset() + (2 * 64 + 13) * 16 + 2
        );
        let bits = b_descriptor_bits(&cfg);
        assert_eq!((bits >> 16) & 0x3fff, 128 / 16);
        assert_eq!((bits >> 32) & 0x3fff, 64 * 16 / 16);
        assert_eq!(bits >> 62, 0);
        // A k16 step is two core matrices down.
        assert_eq!(b_operand_offset(&cfg, 0, 1), cfg.b_offset() + 256);
        // K-major and unswizzled (not planned today): LBO steps along K.
        let k_major = StagedOperand { k_major: true, ..b };
        let bits = k_major.descriptor_bits();
        assert_eq!((bits >> 16) & 0x3fff, b.rows as u64);
        assert_eq!((bits >> 32) & 0x3fff, 8);
    }

    /// The four orientations (`a` K- or M-major, `b` N- or K-major) of
    /// each config.
    fn oriented(cfg: WgmmaConfig) -> impl Iterator<Item = WgmmaConfig> {
        [(false, false), (false, true), (true, false), (true, true)]
            .into_iter()
            .map(move |(a_m_major, b_k_major)| WgmmaConfig {
                a_m_major,
                b_k_major,
                ..cfg
            })
    }

    #[test]
    fn instructions_start_on_their_operands_in_every_orientation() {
        for cfg in configs().into_iter().flat_map(oriented) {
            let (a, b) = (StagedOperand::a(&cfg), StagedOperand::b(&cfg));
            for s in 0..cfg.steps_k() {
                // An instruction's first element is where its descriptor
                // starts (the hardware swizzles from there).
                for g in 0..cfg.groups() {
                    for blk in 0..cfg.blocks() {
                        let row = cfg.group_first_row(g) + WG_M * blk;
                        let origin = a_operand_offset(&cfg, g, blk, s);
                        assert_eq!(
                            swizzle(origin, a.row_bytes()),
                            a_byte_offset(&cfg, row, s * WG_K)
                        );
                    }
                }
                let origin = b_operand_offset(&cfg, 0, s) - cfg.b_offset();
                assert_eq!(
                    cfg.b_offset() + swizzle(origin, b.row_bytes()),
                    b_byte_offset(&cfg, s * WG_K, 0),
                    "{cfg:?}"
                );
            }
        }
    }

    #[test]
    fn transposed_operands_describe_their_majors() {
        let cfg = WgmmaConfig {
            a_m_major: true,
            b_k_major: true,
            ..WgmmaConfig::new(128, 256, 64, 8)
        };
        // `a` M-major: 64-row atoms (128-byte swizzle), blocks K rows apart
        // (LBO), 8-row groups along K one atom apart (SBO); M-major rows are K's.
        let a = a_descriptor_bits(&cfg);
        assert_eq!((a >> 16) & 0x3fff, (64 * 128 / 16) as u64);
        assert_eq!((a >> 32) & 0x3fff, 1024 / 16);
        assert_eq!(a >> 62, 1);
        // Element 65 of K row 3: second atom, chunk 0 at chunk 0 ^ 3.
        assert_eq!(a_byte_offset(&cfg, 65, 3), (64 + 3) * 128 + 3 * 16 + 2);
        // `b` K-major: as `a` K-major with N's rows.
        let b = b_descriptor_bits(&cfg);
        assert_eq!(b, a_descriptor_bits(&WgmmaConfig::new(128, 256, 64, 8)));
        assert_eq!(
            b_byte_offset(&cfg, 17, 5),
            cfg.b_offset() + 5 * 128 + ((17 / 8) ^ 5) * 16 + 2
        );
        // Warpgroup 1's rows of `a` start a 64-row block later: K rows of 128 bytes.
        assert_eq!(a_operand_offset(&cfg, 1, 0, 0), 64 * 128);
        assert_eq!(a_operand_offset(&cfg, 0, 0, 1), 16 * 128);
        assert_eq!(b_operand_offset(&cfg, 0, 1), cfg.b_offset() + 32);
    }
}
