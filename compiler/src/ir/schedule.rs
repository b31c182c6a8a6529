//! GPU-level facts on Triton-IR: what the target-aware passes decide and
//! codegen follows without deciding again. Printed with the IR
//! (`tritonc --emit ir --print-after pipeline-dot-loops`) and checked by the
//! verifier.

use super::index_poly::Poly;
use super::ValueId;
use std::collections::BTreeMap;

/// A `While` whose dot runs software-pipelined: the loads of its operands
/// become asynchronous copies (`cp.async`) global -> shared memory into
/// `stages` rotating buffers at the bottom of shared memory, and iteration
/// `i` multiplies tile `i - stages + 1` while the copies of the later tiles
/// fly; the last tiles are drained after the loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPipeline {
    /// Operand buffers (each holds one iteration's `a` and `b` tiles).
    pub stages: usize,
    /// The body's `Dot` (its result) and the `Load`s of its `a` and `b`.
    pub dot: ValueId,
    pub loads: [ValueId; 2],
    /// The `trans` of load `i` where the dot multiplies that transpose
    /// (`a @ ^b`, `^a @ b`: dot's gradients): the tile is staged as loaded,
    /// `a` M-major and `b` K-major, and the tensor cores read it transposed.
    pub transposes: [Option<ValueId>; 2],
    /// Position of the dot's accumulator among the carried values.
    pub acc: usize,
    /// Elements per `cp.async` of `a` and of `b` (16-bit elements: 2, 4 or 8).
    pub copy_widths: [usize; 2],
    pub engine: DotEngine,
    /// Bytes of shared memory the buffers take, from offset 0 (and the
    /// barriers of TMA copies, after the buffers).
    pub shared_bytes: usize,
    /// The operand tiles copied by the tensor memory accelerator instead of
    /// `cp.async` (sm_90a, wgmma): set by the `tma-loads` pass.
    pub tma: Option<Box<TmaCopies>>,
}

impl LoopPipeline {
    /// The dot's operand `i`: the load, or its transpose.
    pub fn operand(&self, i: usize) -> ValueId {
        self.transposes[i].unwrap_or(self.loads[i])
    }

    /// Which operands are transposes (`[a, b]`).
    pub fn transposed(&self) -> [bool; 2] {
        self.transposes.map(|t| t.is_some())
    }

    /// Whether lowering skips `v`'s op in the body: the dot and the
    /// transposes, which read the buffers the copies fill.
    pub fn reads_buffers(&self, v: ValueId) -> bool {
        v == self.dot || self.transposes.contains(&Some(v))
    }
}

/// A loop whose `mma.sync` dots read a `b` the loop loads and that feeds
/// them only (attention's `k^T` and `v`), where the loop is not a
/// [`LoopPipeline`] (the dot's result is used inside it): each such load
/// becomes `cp.async` copies into one of two buffers, issued a whole
/// iteration ahead (at the dot, for the next iteration, once this
/// iteration's tile has landed), so the copies fly while the rest of the
/// body runs. The next iteration's pointers and masks come from the
/// loop's own index arithmetic evaluated one step ahead
/// ([`crate::analysis::lookahead`]); copies past the loop's end are not
/// issued.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPrefetch {
    /// In the body's order (the order the copies are committed in).
    pub operands: Vec<PrefetchedOperand>,
    /// Both buffers of every operand, from the loop's buffer offset.
    pub shared_bytes: usize,
}

/// One loaded `b` of a [`LoopPrefetch`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefetchedOperand {
    /// The body's `Load` and the `Dot` it feeds (results).
    pub load: ValueId,
    pub dot: ValueId,
    /// The load runs along `K` (`k^T` read from a row-major `k`): staged
    /// `[N][K]`, else `[K][N]` (16-byte chunks swizzled by row, as
    /// `mma.sync`'s `ldmatrix` reads them).
    pub k_major: bool,
    /// 16-bit elements per `cp.async` (2, 4 or 8).
    pub copy_width: usize,
    /// Byte offset of its first buffer in the loop's; the second follows
    /// at `+ stage_bytes`.
    pub offset: usize,
    pub stage_bytes: usize,
}

impl LoopPrefetch {
    /// The operand `load` or `dot` belongs to.
    pub fn operand_of(&self, v: ValueId) -> Option<&PrefetchedOperand> {
        self.operands.iter().find(|o| o.load == v || o.dot == v)
    }
}

/// A wgmma pipeline's operand tiles by the tensor memory accelerator: each
/// stage's tiles land in the same swizzled layout the `cp.async` copies
/// write and signal the stage's mbarrier (`stages` of 8 bytes from byte
/// `barriers`). TMA's time grows with the boxes it copies, so tiles clear
/// of a tensor's edge come in a few large boxes from maps whose dimensions
/// fold the tile's layout in (their bounds are not the tensor's); tiles at
/// the edge take exact boxes: `b` one per swizzled column block, a K-major
/// `a` (its rows permuted in blocks of 8, see
/// [`crate::codegen::tensor_cores::wgmma_layout`]) by `cp.async` as
/// before, as does every tile of a K-major `a` without a folded map. An
/// M-major `a` (staged as loaded) comes as `b` does, in plain boxes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaCopies {
    /// The tensors `a` and `b` are boxes of.
    pub operands: [TensorBox; 2],
    /// `a` clear of the tensor's last rows: one box per warpgroup and
    /// 64-row block.
    pub a_folded: Option<TmaMap>,
    /// `b` at the tensor's last columns (or everywhere without a folded map).
    pub b_plain: TmaMap,
    /// `b` clear of the last columns: one box.
    pub b_folded: Option<TmaMap>,
    pub barriers: usize,
    /// `b` shared by the two programs of a cluster along grid x (TMA
    /// multicast: each issues half of the stage's `b` boxes into both):
    /// the pass proved every program runs the loop's iterations alike and
    /// reads `b` at the same rows; codegen compares the first columns at
    /// run time (programs of a pair that differ copy their own). The pair
    /// also meets at each refill; a word after the barriers holds the
    /// column for the peer to read.
    pub multicast: bool,
    /// A producer warpgroup of its own issues the copies
    /// ([`crate::passes::tma_loads`] proved it can compute every copy's
    /// origin from scalars): it waits on a second row of `stages` barriers
    /// (after the first) that the consumers arrive on when a stage is read.
    pub warp_specialized: bool,
    /// With `warp_specialized`: `a` at the tensor's last rows, one box per
    /// 8 rows (the consumers issue no `cp.async`).
    pub a_plain: Option<TmaMap>,
    /// An `a` staged as loaded (M-major, a transposed `a`, or K-major
    /// under warpgroups splitting `N`): every tile in one box per swizzled
    /// column block of its loaded tile, the tensor's own bounds reading as
    /// zeros past its edges.
    pub a_boxes: Option<TmaMap>,
}

/// One tensor map of a pipeline: its position among the kernel's
/// tensor-map parameters (passed after the IR's parameters, see
/// [`crate::ir::Function::tensor_maps`]), its dimensions (innermost first)
/// and the swizzle of its boxes' rows (128, 64 or 32 bytes; 0: unswizzled 16-byte rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TmaMap {
    pub map: usize,
    pub dims: Vec<MapDim>,
    pub swizzle: usize,
}

/// One dimension of a tensor map over a row-major `[rows, cols]` tensor
/// with `row_stride` elements between rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MapDim {
    pub extent: MapExtent,
    pub stride: MapStride,
    /// Elements of this dimension in one box.
    pub box_size: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapExtent {
    Fixed(usize),
    /// `ceil(rows / n)`.
    RowsOver(usize),
    /// `ceil(cols / n)`.
    ColsOver(usize),
}

/// Steps of a dimension (the first must be one element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapStride {
    Elements(usize),
    Rows(usize),
}

impl MapDim {
    /// `n` columns of one element, `box_size` a box.
    pub fn cols(box_size: usize) -> MapDim {
        MapDim {
            extent: MapExtent::ColsOver(1),
            stride: MapStride::Elements(1),
            box_size,
        }
    }

    /// Every row, `box_size` a box.
    pub fn rows(box_size: usize) -> MapDim {
        MapDim {
            extent: MapExtent::RowsOver(1),
            stride: MapStride::Rows(1),
            box_size,
        }
    }
}

/// One tensor-map kernel parameter (a 128-byte `CUtensorMap`, passed by
/// value after the IR's parameters, in this order): what a launcher encodes
/// it from, the tensor's parameters by their index among the kernel's.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TensorMapParam {
    pub base: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    /// Bytes of one element (the map copies bits: 1, 2, 4 or 8).
    pub elem_bytes: usize,
    /// 128, 64 or 32 (rows of the box swizzled in that span), or 0.
    pub swizzle_bytes: usize,
    pub dims: Vec<MapDim>,
}

/// A tile load that reads exactly a box of a row-major 2-D tensor, masks
/// included ([`crate::analysis::tensor_tile`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorBox {
    /// Kernel parameters: the tensor's first element, the elements between
    /// its rows, its rows and its columns.
    pub base: ValueId,
    pub row_stride: ValueId,
    pub rows: ValueId,
    pub cols: ValueId,
    /// Row and column of the tile's element `[0, 0]` in the tensor, over
    /// scalars defined before the loop and the loop's carried scalars.
    pub row: Poly,
    pub col: Poly,
}

/// The tensor-core instructions the pipelined dot runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotEngine {
    /// `mma.sync m16n8k16` with `ldmatrix`, warps split `[M, N]` like this.
    MmaSync { warps: [usize; 2] },
    /// `wgmma.mma_async` (sm_90a) on this many warpgroups, which split `M`.
    Wgmma { warpgroups: usize },
}

/// Where each op's scratch shared memory lies, and how much dynamic shared
/// memory the kernel needs: the `allocate-shared-memory` pass's plan, which
/// codegen addresses with (printed as `smem [offset, end)` on each op that
/// has a buffer and `smem N bytes` on the function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedPlan {
    /// By the op's first result (every op with scratch memory has one).
    pub buffers: BTreeMap<ValueId, SharedBuffer>,
    /// Bytes the kernel launches with (every buffer's end, aligned).
    pub total_bytes: usize,
}

/// One op's bytes of shared memory, from byte `offset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedBuffer {
    pub offset: usize,
    pub bytes: usize,
    /// Whether every thread waits (`bar.sync`) before the op writes its
    /// buffer: earlier accesses to overlapping bytes may not be done. Set
    /// by `place-barriers`; an op always waits between its writes and its
    /// reads.
    pub barrier_first: bool,
}

impl SharedBuffer {
    pub fn end(&self) -> usize {
        self.offset + self.bytes
    }
}
