//! Tensor-core `Dot` (`mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}`):
//! when a dot qualifies, how its warps tile the `[M, N]` tile, and the pure
//! index math of the fragments, `ldmatrix` and the swizzled shared memory.
//!
//! # Accumulator layout
//! The accumulator is the blocked layout `size_per_thread = [1, 2]`,
//! `threads_per_warp = [8, 4]`, `warps_per_cta = [wm, wn]`, order `[1, 0]`
//! ([`accumulator_layout`]): lane `l` of warp `(w_m, w_n)` holds rows
//! `8 * w_m + l / 4 + 8 * wm * i` and columns `8 * w_n + 2 * (l % 4) + {0, 1} +
//! 8 * wn * j`. One `m16n8k16` instruction covers row groups `2 i'` and
//! `2 i' + 1` (its fragment rows `groupID` and `groupID + 8`) and column group
//! `j`: within one instruction every lane holds exactly the PTX C/D fragment
//! (`c0, c1` at row `groupID`, `c2, c3` at row `groupID + 8`, columns
//! `2 * threadID_in_group + {0, 1}`). Which rows of the CTA tile an
//! instruction's fragment rows stand for is free, as long as the A operand
//! supplies the same rows: `ldmatrix` takes one row address per lane, so it does.
//!
//! # Shared memory
//! `a` is staged as `[M][K]` and `b` as `[K][N]`, both row-major, with the
//! 16-byte chunks of every row permuted by [`swizzled_chunk`] (an XOR of the
//! chunk index with a per-row phase) so that the 8 row reads of an `ldmatrix`
//! hit 8 distinct bank groups. `a` is read with `ldmatrix.x4` (one 16x16 A
//! fragment), `b` with `ldmatrix.x4.trans` (two 16x8 B fragments; `.x2` when a
//! warp has a single 8-column group): rows of `b` are contiguous along `n`, the
//! B fragment wants pairs along `k`.
use super::smem::next_offset;
use crate::ir::layout::BlockedLayout;
use crate::ir::walk::{walk_ops, DefUse, Use};
use crate::ir::{DType, DotEngine, Function, Op, OpKind, ValueId};
use std::collections::{BTreeMap, HashMap};

/// Shape of one instruction.
pub const MMA_M: usize = 16;
pub const MMA_N: usize = 8;
pub const MMA_K: usize = 16;

/// How the warps of a CTA tile an `[M, N]` accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaConfig {
    /// Warps along `M` and along `N`.
    pub warps: [usize; 2],
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl MmaConfig {
    /// Instructions per warp along `M` (pairs of 8-row groups).
    pub fn tiles_m(&self) -> usize {
        self.m / (MMA_M * self.warps[0])
    }
    /// Instructions per warp along `N` (8-column groups).
    pub fn tiles_n(&self) -> usize {
        self.n / (MMA_N * self.warps[1])
    }
    pub fn steps_k(&self) -> usize {
        self.k / MMA_K
    }
}

/// Warps along `[M, N]`, like Triton: split the axis with more 16-element
/// tiles per warp left, as long as it has any.
pub fn choose_warps(m: usize, n: usize, num_warps: usize) -> [usize; 2] {
    let mut w = [1, 1];
    while w[0] * w[1] < num_warps {
        let (left_m, left_n) = (m / (MMA_M * w[0]), n / (MMA_N * w[1]));
        if left_m >= left_n && left_m > 1 {
            w[0] *= 2;
        } else if left_n > 1 {
            w[1] *= 2;
        } else {
            w[0] *= 2;
        }
    }
    w
}

/// The tensor-core plan for `[m, k] @ [k, n]`, or `None` (then the dot runs on
/// FMA units): f16 or bf16 inputs, f32 accumulator, and a tile every warp can
/// cover with whole instructions.
pub fn plan(
    m: usize,
    n: usize,
    k: usize,
    input: DType,
    acc: DType,
    num_warps: usize,
) -> Option<MmaConfig> {
    if !matches!(input, DType::F16 | DType::BF16) || acc != DType::F32 {
        return None;
    }
    let fits = |warps: [usize; 2]| {
        k % MMA_K == 0
            && k > 0
            && m % (MMA_M * warps[0]) == 0
            && n % (MMA_N * warps[1]) == 0
            && m > 0
            && n > 0
    };
    // An `N` of an odd number of 8-column groups past the first split
    // (128x24 on 8 warps) fits whole instructions with every warp along `M`:
    // wgmma's own split, which `pipeline-dot-loops` then takes.
    [choose_warps(m, n, num_warps), [num_warps, 1]]
        .into_iter()
        .find(|&w| fits(w))
        .map(|warps| MmaConfig { warps, m, n, k })
}

/// The `mma.sync` engine of every dot that runs on tensor cores.
pub fn dot_engines(func: &Function, num_warps: usize) -> BTreeMap<ValueId, DotEngine> {
    walk_ops(func)
        .iter()
        .filter_map(|visit| {
            let cfg = plan_for_op(func, visit.op, num_warps)?;
            Some((visit.op.results[0], DotEngine::MmaSync { warps: cfg.warps }))
        })
        .collect()
}

/// The mma tile plan of the dot `op` (`[M, K] @ [K, N]` from the types) on
/// `engine` (a wgmma plan as the warps it splits M over).
pub fn engine_config(func: &Function, op: &Op, engine: DotEngine) -> Option<MmaConfig> {
    let OpKind::Dot { a, b, .. } = &op.kind else {
        return None;
    };
    let (sa, sb) = (&func.ty(*a).shape, &func.ty(*b).shape);
    let (&[m, k], &[_, n]) = (&sa[..], &sb[..]) else {
        return None;
    };
    let warps = match engine {
        DotEngine::MmaSync { warps } => warps,
        DotEngine::Wgmma { warpgroups } => [4 * warpgroups, 1],
    };
    Some(MmaConfig { warps, m, n, k })
}

/// The mma plan of a dot as `Function::dot_engines` says (`None`: FMA units).
pub fn planned_config(func: &Function, op: &Op) -> Option<MmaConfig> {
    let engine = *func.dot_engines.get(op.results.first()?)?;
    engine_config(func, op, engine)
}

/// The plan for a `Dot` op of `func`, if it runs on tensor cores.
pub fn plan_for_op(func: &Function, op: &Op, num_warps: usize) -> Option<MmaConfig> {
    let OpKind::Dot { a, b, .. } = &op.kind else {
        return None;
    };
    let result = *op.results.first()?;
    let (sa, sb, sc) = (
        &func.ty(*a).shape,
        &func.ty(*b).shape,
        &func.ty(result).shape,
    );
    if sa.len() != 2 || sb.len() != 2 || sc.len() != 2 {
        return None;
    }
    if sa[1] != sb[0] || sa[0] != sc[0] || sb[1] != sc[1] {
        return None;
    }
    let (ta, tb) = (func.ty(*a).scalar, func.ty(*b).scalar);
    let crate::ir::ScalarType::Num(input) = ta else {
        return None;
    };
    if ta != tb {
        return None;
    }
    let cfg = plan(sa[0], sb[1], sa[1], input, func.dtype(result), num_warps)?;
    // Chained dots (FlashAttention's `p @ v` with `p` from `q @ k^T`) split
    // their warps along M only, when the rows allow it: then the first's
    // accumulator is, register for register, the second's A fragments, and
    // `p` never goes through shared memory.
    let along_m = [num_warps, 1];
    if cfg.warps != along_m && cfg.m % (MMA_M * num_warps) == 0 && in_dot_chain(func, op) {
        return Some(MmaConfig {
            warps: along_m,
            ..cfg
        });
    }
    Some(cfg)
}

/// Whether `dot`'s `a` is computed from another dot's result, or its result
/// feeds another dot's `a`, through element-wise ops on tiles of that shape.
pub fn in_dot_chain(func: &Function, dot: &Op) -> bool {
    let OpKind::Dot { a, .. } = dot.kind else {
        return false;
    };
    // One walk serves both directions: ops by pre-order number (what
    // `DefUse` names them by) and by the values they define.
    let ops: Vec<&Op> = walk_ops(func).into_iter().map(|visit| visit.op).collect();
    let defs: HashMap<ValueId, &Op> = ops
        .iter()
        .flat_map(|op| op.results.iter().map(move |r| (*r, *op)))
        .collect();
    from_dot(func, &defs, a, &func.ty(a).shape, 0)
        || dot
            .results
            .first()
            .is_some_and(|&r| feeds_dot_a(func, &DefUse::compute(func), &ops, r, 0))
}

/// How deep the element-wise chains between two dots are followed.
const CHAIN_DEPTH: usize = 16;

/// An element-wise op, and its operands of `shape` (the tiles a chain runs through).
fn chain_operands(func: &Function, op: &Op, shape: &[usize]) -> Option<Vec<ValueId>> {
    let operands = match &op.kind {
        OpKind::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        OpKind::Unary { src, .. } | OpKind::Cast { src } => vec![*src],
        OpKind::Select {
            on_true, on_false, ..
        } => vec![*on_true, *on_false],
        _ => return None,
    };
    Some(
        operands
            .into_iter()
            .filter(|v| func.ty(*v).shape == shape)
            .collect(),
    )
}

fn from_dot(
    func: &Function,
    defs: &HashMap<ValueId, &Op>,
    v: ValueId,
    shape: &[usize],
    depth: usize,
) -> bool {
    let Some(op) = defs.get(&v) else {
        return false;
    };
    if matches!(op.kind, OpKind::Dot { .. }) {
        return true;
    }
    depth < CHAIN_DEPTH
        && chain_operands(func, op, shape).is_some_and(|operands| {
            operands
                .into_iter()
                .any(|o| from_dot(func, defs, o, shape, depth + 1))
        })
}

fn feeds_dot_a(func: &Function, du: &DefUse, ops: &[&Op], v: ValueId, depth: usize) -> bool {
    let shape = &func.ty(v).shape;
    du.uses_of(v).iter().any(|u| {
        let Use::Operand { op, .. } = *u else {
            return false;
        };
        let op = ops[op];
        match &op.kind {
            OpKind::Dot { a, .. } => *a == v,
            _ => {
                depth < CHAIN_DEPTH
                    && chain_operands(func, op, shape).is_some_and(|o| o.contains(&v))
                    && op
                        .results
                        .first()
                        .is_some_and(|&r| feeds_dot_a(func, du, ops, r, depth + 1))
            }
        }
    })
}

/// Bytes of one stage of operands in shared memory: `a` at 0, `b` at the
/// returned offset, `(b_offset, stage_bytes)`.
pub fn stage_bytes(cfg: &MmaConfig) -> (usize, usize) {
    let b_offset = next_offset(0, cfg.m * cfg.k * 2);
    (b_offset, next_offset(b_offset, cfg.k * cfg.n * 2))
}

/// The accumulator's layout (see the module doc).
pub fn accumulator_layout(cfg: &MmaConfig) -> BlockedLayout {
    BlockedLayout {
        size_per_thread: vec![1, 2],
        threads_per_warp: vec![8, 4],
        warps_per_cta: cfg.warps.to_vec(),
        order: vec![1, 0],
    }
}

/// Whether a dot's `a` in `a_layout` is read from its registers (they are
/// the A fragments: the accumulator layout with warps along M only, which
/// layout assignment gives a chained dot's `a`, FlashAttention's P) rather
/// than staged in shared memory.
pub fn a_from_registers(cfg: &MmaConfig, a_layout: &crate::ir::layout::Layout) -> bool {
    cfg.warps[1] == 1 && *a_layout == crate::ir::layout::Layout::Blocked(accumulator_layout(cfg))
}

/// PTX ISA, `mma.m16n8k16` with 16-bit inputs: `(row, col)` of A element
/// `a{i}` (i in 0..8) held by `lane`.
pub fn a_fragment(lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane / 4, lane % 4);
    let row = group + 8 * ((i / 2) % 2);
    let col = 2 * tig + (i % 2) + 8 * (i / 4);
    (row, col)
}

/// `(row = k, col = n)` of B element `b{i}` (i in 0..4) held by `lane`.
pub fn b_fragment(lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane / 4, lane % 4);
    (2 * tig + (i % 2) + 8 * (i / 2), group)
}

/// `(row, col)` of accumulator element `c{i}` (i in 0..4) held by `lane`.
pub fn c_fragment(lane: usize, i: usize) -> (usize, usize) {
    let (group, tig) = (lane / 4, lane % 4);
    (group + 8 * (i / 2), 2 * tig + (i % 2))
}

/// `ldmatrix.m8n8.x4`: lane `lane` gives the address of row `.1` of matrix `.0`.
pub fn ldmatrix_address_row(lane: usize) -> (usize, usize) {
    (lane / 8, lane % 8)
}

/// `ldmatrix.m8n8` result: element `half` (0 or 1) of the 32-bit register a
/// lane receives for one matrix is the matrix's `(row, col)`, where rows are
/// the addressed rows; `.trans` delivers the transposed matrix.
pub fn ldmatrix_element(lane: usize, half: usize, trans: bool) -> (usize, usize) {
    let (r, c) = (lane / 4, 2 * (lane % 4) + half);
    if trans {
        (c, r)
    } else {
        (r, c)
    }
}

/// For the A operand (`[M][K]` in shared memory, `ldmatrix.x4`): the row
/// within the instruction's 16 rows and the first column within its 16 `k`
/// that lane `lane` addresses. Matrix `q` fills register `q`, i.e. `a{2q}`,
/// `a{2q+1}`: rows `+8` for odd `q`, columns `+8` for `q >= 2`.
pub fn a_ldmatrix_row(lane: usize) -> (usize, usize) {
    let (q, r) = ldmatrix_address_row(lane);
    (r + 8 * (q % 2), 8 * (q / 2))
}

/// For the B operand (`[K][N]` in shared memory, `ldmatrix.x4.trans`, two
/// instructions' worth): the `k` row within 16 and the first `n` within 16
/// lane `lane` addresses. Matrix `q` fills register `q`: `b0, b1` (q = 0) and
/// `b2, b3` (q = 1) of the first 8 columns, then of the next 8 (q = 2, 3).
pub fn b_ldmatrix_row(lane: usize) -> (usize, usize) {
    let (q, r) = ldmatrix_address_row(lane);
    (r + 8 * (q % 2), 8 * (q / 2))
}

/// Rows of `chunks_per_row` 16-byte chunks: where logical chunk `chunk` of row
/// `row` is stored. An XOR with a per-row phase, so that any 8 consecutive rows
/// starting at a multiple of 8 read at one logical chunk land in 8 distinct
/// 16-byte bank groups.
pub fn swizzled_chunk(row: usize, chunk: usize, chunks_per_row: usize) -> usize {
    chunk ^ swizzle_phase(row, chunks_per_row)
}

/// The XOR mask of row `row` (see [`swizzled_chunk`]).
pub fn swizzle_phase(row: usize, chunks_per_row: usize) -> usize {
    let (per_phase, max_phase) = phases(chunks_per_row);
    (row / per_phase) % max_phase
}

/// Rows sharing one phase, and the phases: the XOR ranges over the largest
/// power of two (at most 8) dividing `chunks_per_row`, so a swizzled chunk
/// stays in its row (a 192-element row of 24 chunks XORs within groups of 8).
fn phases(chunks_per_row: usize) -> (usize, usize) {
    let max_phase = (1usize << chunks_per_row.max(1).trailing_zeros()).min(8);
    (8 / max_phase, max_phase)
}

/// `swizzle_phase` as `(row >> shift) & mask` (for code generation).
pub fn swizzle_shift_mask(chunks_per_row: usize) -> (u32, usize) {
    let (per_phase, max_phase) = phases(chunks_per_row);
    (per_phase.trailing_zeros(), max_phase - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::layout::Layout;

    #[test]
    fn swizzle_phases_stay_inside_rows_of_any_chunk_count() {
        // Powers of two as before: 8 chunks, a phase per row; 4, one per 2 rows.
        assert_eq!(swizzle_shift_mask(8), (0, 7));
        assert_eq!(swizzle_shift_mask(4), (1, 3));
        assert_eq!(swizzle_shift_mask(16), (0, 7));
        // 24 chunks (192 halves) XOR within groups of 8, 6 within pairs.
        assert_eq!(swizzle_shift_mask(24), (0, 7));
        assert_eq!(swizzle_shift_mask(6), (2, 1));
        for chunks in [3, 6, 12, 24, 40] {
            for row in 0..64 {
                let mut seen = vec![false; chunks];
                for c in 0..chunks {
                    let at = swizzled_chunk(row, c, chunks);
                    assert!(at < chunks && !seen[at], "{chunks} chunks, row {row}");
                    seen[at] = true;
                }
            }
        }
    }

    #[test]
    fn documented_fragments() {
        // PTX ISA 9.7.14.5.8 (m16n8k16, .f16/.bf16): spot checks.
        assert_eq!(a_fragment(5, 0), (1, 2));
        assert_eq!(a_fragment(5, 3), (9, 3));
        assert_eq!(a_fragment(5, 4), (1, 10));
        assert_eq!(a_fragment(31, 7), (15, 15));
        assert_eq!(b_fragment(6, 0), (4, 1));
        assert_eq!(b_fragment(6, 3), (13, 1));
        assert_eq!(c_fragment(6, 2), (9, 4));
        // Every fragment covers its matrix exactly once.
        for (regs, rows, cols, f) in [
            (8, 16, 16, a_fragment as fn(usize, usize) -> (usize, usize)),
            (4, 16, 8, b_fragment),
            (4, 16, 8, c_fragment),
        ] {
            let mut seen = vec![0; rows * cols];
            for lane in 0..32 {
                for i in 0..regs {
                    let (r, c) = f(lane, i);
                    seen[r * cols + c] += 1;
                }
            }
            assert!(seen.iter().all(|&s| s == 1));
        }
    }

    #[test]
    fn ldmatrix_x4_gives_the_a_fragment() {
        // Matrix q's rows are addressed by lanes 8q..8q+8; register q of lane
        // `lane` receives elements 2q, 2q+1 of the fragment.
        for lane in 0..32 {
            for q in 0..4 {
                for half in 0..2 {
                    let (mr, mc) = ldmatrix_element(lane, half, false);
                    let (row0, col0) = a_ldmatrix_row(8 * q + mr);
                    assert_eq!((row0, col0 + mc), a_fragment(lane, 2 * q + half));
                }
            }
        }
    }

    #[test]
    fn ldmatrix_x4_trans_gives_two_b_fragments() {
        for lane in 0..32 {
            for q in 0..4 {
                for half in 0..2 {
                    // With .trans, (mr, mc) is (addressed row, column in it).
                    let (mr, mc) = ldmatrix_element(lane, half, true);
                    let (k0, n0) = b_ldmatrix_row(8 * q + mr);
                    let (k, n) = (k0, n0 + mc);
                    let (bk, bn) = b_fragment(lane, 2 * (q % 2) + half);
                    assert_eq!((k, n), (bk, bn + 8 * (q / 2)));
                }
            }
        }
    }

    #[test]
    fn accumulator_layout_holds_c_fragments() {
        for (m, n, nw) in [
            (64, 64, 4),
            (128, 128, 8),
            (32, 32, 4),
            (32, 32, 8),
            (128, 32, 8),
        ] {
            let cfg = plan(m, n, 32, DType::F16, DType::F32, nw).unwrap();
            let map = Layout::Blocked(accumulator_layout(&cfg)).tile_map(&[m, n]);
            let rows_regs = map.axes[0].regs();
            let cols_regs = map.axes[1].regs();
            assert_eq!(rows_regs, 2 * cfg.tiles_m());
            assert_eq!(cols_regs, 2 * cfg.tiles_n());
            for warp in 0..nw {
                let (wm, wn) = (warp / cfg.warps[1], warp % cfg.warps[1]);
                for lane in 0..32 {
                    let tid = warp * 32 + lane;
                    for tm in 0..cfg.tiles_m() {
                        for tn in 0..cfg.tiles_n() {
                            for i in 0..4 {
                                let reg = map.reg_of_locals(&[2 * tm + i / 2, 2 * tn + i % 2]);
                                let (fr, fc) = c_fragment(lane, i);
                                // Fragment row group h stands for row group 2 tm + h.
                                let row = (2 * tm + fr / 8) * 8 * cfg.warps[0] + 8 * wm + fr % 8;
                                let col = tn * 8 * cfg.warps[1] + 8 * wn + fc;
                                assert_eq!(map.element_index(tid, reg), vec![row, col]);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn plans() {
        assert_eq!(choose_warps(128, 128, 4), [2, 2]);
        assert_eq!(choose_warps(128, 128, 8), [2, 4]);
        assert_eq!(choose_warps(32, 32, 4), [2, 2]);
        assert_eq!(choose_warps(32, 32, 8), [2, 4]);
        for tm in [32, 64, 128] {
            for tn in [32, 64, 128] {
                for nw in [4, 8] {
                    let cfg = plan(tm, tn, 16, DType::BF16, DType::F32, nw);
                    assert!(cfg.is_some(), "{tm}x{tn}/{nw}");
                }
            }
        }
        assert!(plan(64, 64, 8, DType::F16, DType::F32, 4).is_none());
        assert!(plan(64, 64, 16, DType::F32, DType::F32, 4).is_none());
        assert!(plan(64, 64, 16, DType::F16, DType::F16, 4).is_none());
        assert!(plan(16, 16, 16, DType::F16, DType::F32, 4).is_none());
    }

    #[test]
    fn swizzle_phase_repeats_every_16_rows() {
        // Codegen relies on it: instructions' rows (and k steps) 16 apart
        // share a lane's swizzle phase, so they differ by an immediate offset.
        for cpr in [2, 4, 8, 16, 32] {
            for row in 0..16 {
                for j in 1..16 {
                    assert_eq!(swizzle_phase(row, cpr), swizzle_phase(row + 16 * j, cpr));
                }
            }
        }
    }

    #[test]
    fn swizzle_is_a_permutation_and_conflict_free() {
        for cpr in [2, 4, 8, 16] {
            let (shift, mask) = swizzle_shift_mask(cpr);
            for row in 0..64 {
                assert_eq!((row >> shift) & mask, swizzle_phase(row, cpr));
                let mut chunks: Vec<usize> =
                    (0..cpr).map(|c| swizzled_chunk(row, c, cpr)).collect();
                chunks.sort();
                assert_eq!(chunks, (0..cpr).collect::<Vec<_>>());
            }
            for start in (0..64).step_by(8) {
                for c in 0..cpr {
                    let mut groups: Vec<usize> = (start..start + 8)
                        .map(|r| (r * cpr + swizzled_chunk(r, c, cpr)) % 8)
                        .collect();
                    groups.sort();
                    assert_eq!(groups, (0..8).collect::<Vec<_>>(), "cpr {cpr} chunk {c}");
                }
            }
        }
    }
}
