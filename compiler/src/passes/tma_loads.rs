//! The `tma-loads` pass: on sm_90a, a wgmma pipeline whose two operand
//! loads each read exactly a box of a row-major tensor in memory
//! ([`crate::analysis::tensor_tile`]: pointer `P + row * ld + col`, mask
//! `row < R && col < C`, all four kernel parameters) copies its tiles with
//! the tensor memory accelerator instead of `cp.async`: one thread issues
//! a few bulk copies per stage (no per-thread addresses, no load-store
//! unit traffic, the bounds checked by the hardware), and each stage's
//! arrival is an mbarrier's phase. Marks [`TmaCopies`] on the loop's
//! [`crate::ir::LoopPipeline`] (codegen follows it) and reserves the
//! barriers after the buffers.
//!
//! The tiles land in the layout the wgmma descriptors read
//! ([`crate::codegen::tensor_cores::wgmma_layout`]), in few boxes: `b` in
//! one box whose last dimension steps its swizzled column blocks (at the
//! tensor's last columns, one exact box per block); `a`, whose rows are
//! permuted in blocks of 8, in one box of 64 rows per warpgroup and 64-row
//! block from a map whose rows are folded in that permutation (2 copies a
//! stage instead of 16 boxes of 8 rows). A folded map's bounds are not the
//! tensor's, so the tile at the tensor's last rows copies `a` by `cp.async`
//! (as does every tile when the first row is not a multiple of 32). A
//! transposed `b` (K-major, dot's gradient `a @ ^b`) is one box of its
//! loaded `[N, K]` tile a stage; an `a` staged as loaded (M-major, or any
//! `a` of warpgroups splitting `N`:
//! [`crate::codegen::tensor_cores::native_order`]) comes as `b` does, one
//! box per swizzled column block, every tile (no edge case: the tensor's
//! own bounds read as zeros), never from a producer warpgroup, and beside
//! a multicast `b` only under the split (an M-major `a`'s: not offered).
//! Needs
//! row strides of a multiple of 16 bytes (the parameter's `__multipleof`)
//! and 16-byte aligned bases. Runs where the target asks for it (`--tma`).
//!
//! With `--tma-multicast` (and no split-K), the two programs of a cluster
//! along grid x share `b` (TMA multicast: each issues half of a stage's
//! boxes into both, halving the L2 requests for `b`) where that is safe:
//! the loop is in the kernel's top region with no `return` anywhere, runs
//! as many iterations in every program and reads `b` at the same rows
//! ([`crate::analysis::uniform`]), and `b`'s first column is fixed before
//! the loop (compared between the pair at run time). Copied by thread 0,
//! the pair meets before each refill, so it pays where L2 is the limit
//! (rows not 128-byte aligned, 3000³) and costs where it is not; with a
//! producer warpgroup (`--warp-specialize` too) the pair meets only through
//! the stages' barriers (3000³ 0.72 -> 0.82x cuBLAS on the H100).
use super::{Pass, PassOptions};
use crate::analysis::producer_slice::tma_producer_slice;
use crate::analysis::tensor_tile::tensor_tile;
use crate::analysis::uniform::Uniformity;
use crate::analysis::wgmma::{self, WgmmaConfig};
use crate::arch::{max_shared_bytes, Arch};
use crate::ir::index_poly::{Atom, Poly};
use crate::ir::walk::{regions_mut, walk_ops};
use crate::ir::{
    DotEngine, Function, LoopPipeline, MapDim, MapExtent, MapStride, Op, OpKind, Region, TmaCopies,
    TmaMap, ValueId,
};

pub struct TmaLoads;

/// Bytes of one mbarrier.
pub const BARRIER_BYTES: usize = 8;

impl Pass for TmaLoads {
    fn name(&self) -> &'static str {
        "tma-loads"
    }

    fn summary(&self) -> &'static str {
        "copies a wgmma pipeline's operand tiles with TMA where each load is a box of a tensor"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        match options.target {
            None => options.without_target(),
            Some(t) if !t.tma => Some("TMA copies not asked for (--tma)"),
            Some(t) if t.arch != Arch::Sm90a => Some("TMA copies need sm_90a"),
            Some(_) => None,
        }
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        let Some(target) = options.target else {
            return false;
        };
        // Decided on the function as it is (walk order numbers the maps),
        // then written on the loops, found by their results (unique).
        let mut next_map = 0;
        let unsplit = target.split_k.unwrap_or(1) <= 1;
        let decided: Vec<Decided> = walk_ops(func)
            .iter()
            .filter_map(|v| {
                let producer = target.warp_specialize && unsplit;
                let (mut t, most_stages) =
                    plan(func, v.op, target.num_warps, &mut next_map, producer)?;
                // A K-major `b` is one box a stage: nothing to split
                // between the pair (not offered). An M-major `a`'s boxes
                // beside a shared `b`: not offered (unchecked on a GPU).
                let [m_major_a, k_major_b] =
                    pipelined(v.op).map_or([false; 2], |(_, p)| p.transposed());
                t.multicast = target.tma_multicast
                    && unsplit
                    && !k_major_b
                    && !m_major_a
                    && shares_b_safely(func, v.op, &t);
                Some((v.op.results.clone(), t, most_stages))
            })
            .collect();
        annotate(&mut func.body, &decided);
        !decided.is_empty()
    }
}

/// A loop (by its results), its copies and, for a producer warpgroup, the
/// most buffers it may keep.
type Decided = (Vec<ValueId>, TmaCopies, Option<usize>);

/// Writes each loop's copies on its pipeline, with its barriers placed
/// after the buffers.
fn annotate(region: &mut Region, decided: &[Decided]) {
    for op in &mut region.ops {
        let t = decided.iter().find(|(results, ..)| *results == op.results);
        if let (
            Some((_, t, most_stages)),
            OpKind::While {
                pipeline: Some(p), ..
            },
        ) = (t, &mut op.kind)
        {
            if let Some(most) = most_stages.filter(|&m| m < p.stages) {
                let stage_bytes = p.shared_bytes / p.stages;
                p.stages = most;
                p.shared_bytes = most * stage_bytes;
            }
            let barriers = p.shared_bytes.next_multiple_of(BARRIER_BYTES);
            // A multicast pipeline's column word for the peer after them.
            let exchange = if t.multicast { BARRIER_BYTES } else { 0 };
            // A producer waits on a second row: the stages read.
            let rows = if t.warp_specialized { 2 } else { 1 };
            p.shared_bytes = barriers + rows * p.stages * BARRIER_BYTES + exchange;
            p.tma = Some(Box::new(TmaCopies {
                barriers,
                ..t.clone()
            }));
        }
        for nested in regions_mut(&mut op.kind) {
            annotate(nested, decided);
        }
    }
}

/// The TMA copies of `op`'s pipeline (barriers not placed yet), if both
/// operands are tensor boxes; numbers its maps from `next_map`. With
/// `producer`, issued by a producer warpgroup where [`can_specialize`],
/// then with the most buffers it may keep ([`producer_stages`]).
fn plan(
    func: &Function,
    op: &Op,
    num_warps: usize,
    next_map: &mut usize,
    producer: bool,
) -> Option<(TmaCopies, Option<usize>)> {
    let (body_region, p) = pipelined(op)?;
    // A transposed `b` (K-major) is one box of its `[N, K]` tile; a
    // transposed `a` (M-major) one per 64 of its columns.
    let LoopPipeline {
        engine: DotEngine::Wgmma { .. },
        tma: None,
        ..
    } = *p
    else {
        return None;
    };
    let defined = |v: ValueId| body_region.defining_op(v);
    let w = wgmma::plan_for_op(func, defined(p.dot)?, num_warps, true)?.oriented(p.transposed());
    let [a, b] = p
        .loads
        .map(|v| defined(v).and_then(|load| tensor_tile(func, op, load)));
    let (a, b) = (a?, b?);
    for o in [&a, &b] {
        if !copyable(func, o.base, o.row_stride) {
            return None;
        }
    }
    // Whether a tile is at the edge is decided where it is copied and where
    // it is waited for: the same only for a first row (column) the loop
    // does not change.
    let invariant = |p: &Poly| loop_invariant(body_region, p);
    let mut number = |dims: Vec<MapDim>, row_bytes: usize| {
        *next_map += 1;
        TmaMap {
            map: *next_map - 1,
            dims,
            swizzle: wgmma::swizzle_span(row_bytes),
        }
    };
    // A box of the loaded tile's rows (`K`'s, or `N`'s for a K-major `b`)
    // per swizzled block of its columns.
    let [b_rows, _] = w.b_stage_shape();
    let b_plain = number(
        vec![MapDim::cols(w.b_atom()), MapDim::rows(b_rows)],
        w.b_row_bytes(),
    );
    let a_folded =
        (!w.native_order() && invariant(&a.row) && a.row.exact_div(FOLD_STEP as i64).is_some())
            .then(|| number(folded_a_dims(&w), w.a_row_bytes()));
    let b_folded = (!w.b_k_major
        && w.n > w.b_atom()
        && invariant(&b.col)
        && b.col.exact_div(w.b_atom() as i64).is_some())
    .then(|| number(folded_b_dims(&w), w.b_row_bytes()));
    let a_boxes = w.native_order().then(|| {
        let [a_rows, _] = w.a_stage_shape();
        number(
            vec![MapDim::cols(w.a_atom()), MapDim::rows(a_rows)],
            w.a_row_bytes(),
        )
    });
    let mut t = TmaCopies {
        operands: [a, b],
        a_folded,
        b_plain,
        b_folded,
        barriers: 0,
        multicast: false,
        warp_specialized: false,
        a_plain: None,
        a_boxes,
    };
    if !(producer && can_specialize(func, op, &t)) {
        return Some((t, None));
    }
    t.warp_specialized = true;
    t.a_plain = Some(number(
        vec![MapDim::cols(w.a_atom()), MapDim::rows(8)],
        w.a_row_bytes(),
    ));
    let most_stages = producer_stages(&w, func.dtype(p.loads[0]).size_bytes());
    Some((t, most_stages))
}

/// Most buffers a producer warpgroup's pipeline keeps: its buffers stay
/// while the rest of the kernel runs (every other op's scratch goes above
/// them), so they leave room for the epilogue to stage the accumulator
/// tile in the operands' element type (a 128x256 f16 tile: 3 buffers of
/// 48 KiB, 4 of 40 KiB for 128x192), operands of `elem_bytes`. `None`:
/// not even 2 fit.
fn producer_stages(w: &WgmmaConfig, elem_bytes: usize) -> Option<usize> {
    let epilogue = w.m * w.n * elem_bytes;
    let per_stage = w.stage_bytes() + 2 * BARRIER_BYTES;
    let room = max_shared_bytes(Arch::Sm90a).checked_sub(epilogue + BARRIER_BYTES)?;
    Some(room / per_stage).filter(|&s| s >= 2)
}

/// A pipelined loop's body and pipeline.
fn pipelined(op: &Op) -> Option<(&Region, &LoopPipeline)> {
    match &op.kind {
        OpKind::While {
            body_region,
            pipeline: Some(p),
            ..
        } => Some((body_region, p)),
        _ => None,
    }
}

/// Whether a producer warpgroup can issue `t`'s copies for `op`'s loop: it
/// branches off at the kernel's start and never comes back, so the loop
/// is in the top region and nothing returns early (every consumer frees
/// every stage); it computes where each stage's boxes start and when the
/// loop ends from scalars alone ([`producer_slice`]); `a` comes through its
/// folded map clear of the last rows (and 8-row boxes at them, no
/// `cp.async` left to the consumers). A native-order loop (an `a` in
/// boxes) takes none: its consumers would reorder their accumulator beside
/// the producer's live buffers, which leaves the 192x192 tile 3 buffers
/// and made it no faster than one thread's copies (H100, 3000^3: 102.5 vs
/// 97.9 us, bench/results/2026-11-28-h100-split-n).
fn can_specialize(func: &Function, op: &Op, t: &TmaCopies) -> bool {
    let returns = walk_ops(func)
        .iter()
        .any(|v| matches!(v.op.kind, OpKind::Return));
    t.a_folded.is_some() && !returns && tma_producer_slice(func, op, t).is_some()
}

/// Whether the two programs of a cluster can share `t`'s `b` in `op`'s
/// loop: both reach the loop (it is in the top region, and the kernel has
/// no `return`), run its iterations alike (they meet at each one), read `b`
/// at the same rows, and fix `b`'s first column before the loop (compared
/// at run time).
fn shares_b_safely(func: &Function, op: &Op, t: &TmaCopies) -> bool {
    let top = func.body.ops.iter().any(|o| o.results == op.results);
    let returns = walk_ops(func)
        .iter()
        .any(|v| matches!(v.op.kind, OpKind::Return));
    let OpKind::While { body_region, .. } = &op.kind else {
        return false;
    };
    let b = &t.operands[1];
    let before_loop = loop_invariant(body_region, &b.col);
    let uniform = Uniformity::new(func);
    top && !returns && before_loop && uniform.trip_count(op) && uniform.poly(op, &b.row)
}

/// Whether `p` (over values of the loop `body`) reads none of the loop's
/// carried values: the same at every iteration, known before the loop.
fn loop_invariant(body: &Region, p: &Poly) -> bool {
    !p.atoms()
        .any(|x| matches!(x, Atom::Value(v) if body.args.contains(&v)))
}

/// `a`'s map with its rows folded: logical row `r + 8 ww + 8 num_warps h`
/// (+ `32 g + 16 num_warps b` for warpgroup `g`, block `b`) lands at
/// physical row `r + 8 h + 16 ww` of the block
/// ([`crate::codegen::tensor_cores::wgmma_layout::physical_row`]): digits
/// `r` (8 of 1 row), `h` (2 of `8 num_warps`) and `ww` (4 of 8), then steps
/// of 32 rows (the tile's first row must be a multiple of 32).
fn folded_a_dims(w: &WgmmaConfig) -> Vec<MapDim> {
    let digit = |n: usize, rows: usize| MapDim {
        extent: MapExtent::Fixed(n),
        stride: MapStride::Rows(rows),
        box_size: n,
    };
    vec![
        MapDim::cols(w.a_atom()),
        digit(8, 1),
        digit(2, 8 * w.num_warps),
        digit(4, 8),
        MapDim {
            extent: MapExtent::RowsOver(FOLD_STEP),
            stride: MapStride::Rows(FOLD_STEP),
            box_size: 1,
        },
    ]
}

/// `b`'s map with its columns in blocks of one swizzled row: the box is
/// the stage's `[N / B][K][B]` layout at once.
fn folded_b_dims(w: &WgmmaConfig) -> Vec<MapDim> {
    let atom = w.b_atom();
    vec![
        MapDim {
            extent: MapExtent::Fixed(atom),
            stride: MapStride::Elements(1),
            box_size: atom,
        },
        MapDim::rows(w.k),
        MapDim {
            extent: MapExtent::ColsOver(atom),
            stride: MapStride::Elements(atom),
            box_size: w.n / atom,
        },
    ]
}

/// Rows between boxes of `a`'s folded map (a warpgroup's first rows are 32
/// logical rows apart).
pub const FOLD_STEP: usize = 32;

/// TMA's demands on the tensor the compiled code can promise: a base
/// aligned to 16 bytes and a row stride of a multiple of 16 bytes.
fn copyable(func: &Function, base: ValueId, row_stride: ValueId) -> bool {
    let param = |v: ValueId| func.params.iter().find(|p| p.value == v);
    let (Some(b), Some(s)) = (param(base), param(row_stride)) else {
        return false;
    };
    let elem = func.dtype(base).size_bytes() as u64;
    let base_align = b
        .attrs
        .aligned
        .unwrap_or(crate::ir::DEFAULT_POINTER_ALIGNMENT)
        .max(b.attrs.multiple_of.unwrap_or(1) * elem);
    let stride_bytes = s.attrs.multiple_of.unwrap_or(1) * elem;
    base_align % 16 == 0 && stride_bytes % 16 == 0
}
