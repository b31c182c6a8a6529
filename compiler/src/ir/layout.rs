//! Distributed layouts: which thread of a CTA holds which element of a tile, and
//! in which of its registers (the legacy Triton "blocked" and "slice" layouts).
//!
//! A [`BlockedLayout`] splits every axis `d` of a tile into
//! `size_per_thread[d] * threads_per_warp[d] * warps_per_cta[d]` (the CTA tile);
//! the tile repeats the CTA tile when it is larger, and threads hold replicas of
//! the same elements when it is smaller. A [`Layout::Slice`] is a parent blocked
//! layout with one axis removed: what a reduction along that axis leaves, and
//! what broadcasting back to the parent shape needs to stay in registers.
//!
//! Per thread, element `reg` of a tile has the index
//! `thread_base(d) + reg_offset(reg, d)` on every axis `d`, where
//! `thread_base(d) = ((lane_coord(d) + threads_per_warp[d] * warp_coord(d)) *
//! size_per_thread[d]) % shape[d]` depends only on the thread and the
//! register offsets are constants. Registers are numbered with the fastest axis
//! (`order[0]`) varying fastest, so runs of `size_per_thread` registers along
//! the fastest axis are contiguous elements (what vectorized accesses use).
//! All sizes are powers of two.

use super::{Function, ValueId};
use std::collections::HashMap;

/// The layout of every tile value of a function, chosen by
/// `analysis::layout_assign` (run by the `assign-layouts` pass, which keeps
/// it in [`Function::layouts`]): the ones chosen per value, and per tile
/// shape the vector width of the canonical layout the others get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutMap {
    pub num_warps: usize,
    pub(crate) layouts: HashMap<ValueId, Layout>,
    /// Vector width (elements) per tile shape, from the loads and stores.
    pub(crate) vec_by_shape: HashMap<Vec<usize>, usize>,
}

impl LayoutMap {
    /// No layout chosen yet: every tile gets its canonical layout.
    pub fn new(num_warps: usize) -> Self {
        LayoutMap {
            num_warps,
            layouts: HashMap::new(),
            vec_by_shape: HashMap::new(),
        }
    }

    /// The canonical blocked layout of tiles of `shape`.
    pub fn canonical(&self, shape: &[usize]) -> Layout {
        if shape.is_empty() {
            return Layout::Scalar;
        }
        let vec = self.vec_by_shape.get(shape).copied().unwrap_or(1);
        Layout::Blocked(BlockedLayout::for_shape(shape, self.num_warps, vec))
    }

    /// The layout chosen for `v`.
    pub fn get(&self, func: &Function, v: ValueId) -> Layout {
        let shape = &func.ty(v).shape;
        if shape.is_empty() {
            return Layout::Scalar;
        }
        self.layouts
            .get(&v)
            .cloned()
            .unwrap_or_else(|| self.canonical(shape))
    }
}

/// Number of threads in a warp.
pub const WARP_SIZE: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockedLayout {
    pub size_per_thread: Vec<usize>,
    /// Product is [`WARP_SIZE`].
    pub threads_per_warp: Vec<usize>,
    /// Product is the number of warps.
    pub warps_per_cta: Vec<usize>,
    /// Axes from fastest to slowest varying (the last axis first for row-major tiles).
    pub order: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A scalar: every thread holds the one value.
    Scalar,
    Blocked(BlockedLayout),
    /// `parent` with axis `dim` removed: rank is `parent`'s rank minus one.
    Slice {
        parent: BlockedLayout,
        dim: usize,
    },
}

/// How one axis of a tile is spread over a thread's registers, its warp's lanes
/// and the CTA's warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisMap {
    /// The tile's size along the axis.
    pub size: usize,
    pub size_per_thread: usize,
    pub threads_per_warp: usize,
    pub warps_per_cta: usize,
    /// `lane_coord = (lane / lane_stride) % threads_per_warp`.
    pub lane_stride: usize,
    /// `warp_coord = (warp / warp_stride) % warps_per_cta`.
    pub warp_stride: usize,
}

impl AxisMap {
    pub fn cta_tile(&self) -> usize {
        self.size_per_thread * self.threads_per_warp * self.warps_per_cta
    }

    /// Elements a thread holds contiguously along the axis.
    pub fn run(&self) -> usize {
        self.size_per_thread.min(self.size)
    }

    /// How often the CTA tile repeats along the axis.
    pub fn repeats(&self) -> usize {
        (self.size / self.cta_tile()).max(1)
    }

    /// Whether the CTA tile repeats a whole number of times along the axis or
    /// holds the axis a whole number of times (replicas): what the index math
    /// assumes. Always so for power-of-two sizes; a tile dimension like 192
    /// needs a power-of-two CTA tile of at most 64 along it.
    pub fn fits(&self) -> bool {
        let cta = self.cta_tile();
        self.size % cta == 0 || cta % self.size == 0
    }

    /// Registers a thread holds along the axis.
    pub fn regs(&self) -> usize {
        self.run() * self.repeats()
    }

    /// Index offset of the thread's `local`-th element along the axis.
    pub fn offset(&self, local: usize) -> usize {
        (local / self.run()) * self.cta_tile() + local % self.run()
    }

    pub fn lane_coord(&self, lane: usize) -> usize {
        (lane / self.lane_stride) % self.threads_per_warp
    }

    pub fn warp_coord(&self, warp: usize) -> usize {
        (warp / self.warp_stride) % self.warps_per_cta
    }

    /// The thread's position along the axis in units of `size_per_thread`.
    pub fn thread_coord(&self, lane: usize, warp: usize) -> usize {
        self.lane_coord(lane) + self.threads_per_warp * self.warp_coord(warp)
    }

    pub fn thread_base(&self, lane: usize, warp: usize) -> usize {
        (self.thread_coord(lane, warp) * self.size_per_thread) % self.size
    }

    /// Whether the thread holds the first copy of its elements along this axis
    /// (threads past the tile's size hold replicas).
    pub fn owns(&self, lane: usize, warp: usize) -> bool {
        self.thread_coord(lane, warp) * self.size_per_thread < self.size
    }

    /// Lanes along the axis that hold distinct elements.
    pub fn distinct_lanes(&self) -> usize {
        self.threads_per_warp
            .min(self.size.div_ceil(self.size_per_thread))
            .max(1)
    }

    /// Warps along the axis that hold distinct elements.
    pub fn distinct_warps(&self) -> usize {
        self.warps_per_cta
            .min(
                self.size
                    .div_ceil(self.size_per_thread * self.threads_per_warp),
            )
            .max(1)
    }
}

impl BlockedLayout {
    /// The same threads and registers seen from the transposed 2-D tile:
    /// each thread holds the elements it held, its registers in the same
    /// order (a transpose in this layout moves no data). `None` off rank 2.
    pub fn transposed(&self) -> Option<BlockedLayout> {
        let swap = |v: &[usize]| -> Option<Vec<usize>> {
            match v {
                [a, b] => Some(vec![*b, *a]),
                _ => None,
            }
        };
        Some(BlockedLayout {
            size_per_thread: swap(&self.size_per_thread)?,
            threads_per_warp: swap(&self.threads_per_warp)?,
            warps_per_cta: swap(&self.warps_per_cta)?,
            order: self.order.iter().map(|d| 1 - d).collect(),
        })
    }

    pub fn rank(&self) -> usize {
        self.order.len()
    }

    /// The layout Triton would pick for `shape`: `vec` contiguous elements per
    /// thread along the last axis, lanes then warps spread fastest axis first,
    /// what is left over on the slowest axis.
    pub fn for_shape(shape: &[usize], num_warps: usize, vec: usize) -> BlockedLayout {
        let order: Vec<usize> = (0..shape.len()).rev().collect();
        Self::for_shape_ordered(shape, num_warps, vec, &order)
    }

    /// Like [`BlockedLayout::for_shape`] with the axes' order given (fastest
    /// first): `vec` contiguous elements per thread along `order[0]`, lanes
    /// and warps spread in that order. A tile contiguous in memory along
    /// axis 0 wants `order = [0, 1]`.
    pub fn for_shape_ordered(
        shape: &[usize],
        num_warps: usize,
        vec: usize,
        order: &[usize],
    ) -> BlockedLayout {
        let rank = shape.len();
        let order: Vec<usize> = order.to_vec();
        let mut size_per_thread = vec![1; rank];
        // Lanes, warps and vectors take only the power-of-two part of a
        // dimension (64 of 192), so the CTA tile divides it.
        let pow2_part = |n: usize| 1usize << n.max(1).trailing_zeros();
        if let Some(&fast) = order.first() {
            size_per_thread[fast] = vec.min(pow2_part(shape[fast])).max(1);
        }
        let mut threads_per_warp = vec![1; rank];
        let mut lanes_left = WARP_SIZE;
        for (k, &d) in order.iter().enumerate() {
            let fits = pow2_part(shape[d] / size_per_thread[d]);
            let t = if k + 1 == rank {
                lanes_left
            } else {
                lanes_left.min(fits)
            };
            threads_per_warp[d] = t;
            lanes_left /= t;
        }
        let mut warps_per_cta = vec![1; rank];
        let mut warps_left = num_warps.max(1);
        for (k, &d) in order.iter().enumerate() {
            let fits = pow2_part(shape[d] / (size_per_thread[d] * threads_per_warp[d]));
            let w = if k + 1 == rank {
                warps_left
            } else {
                warps_left.min(fits)
            };
            warps_per_cta[d] = w;
            warps_left /= w;
        }
        BlockedLayout {
            size_per_thread,
            threads_per_warp,
            warps_per_cta,
            order,
        }
    }

    /// Per-axis maps over all of the layout's axes (`shape` has its rank).
    pub fn axis_maps(&self, shape: &[usize]) -> Vec<AxisMap> {
        let rank = self.rank();
        let mut lane_stride = vec![1; rank];
        let mut warp_stride = vec![1; rank];
        let (mut ls, mut ws) = (1, 1);
        for &d in &self.order {
            lane_stride[d] = ls;
            warp_stride[d] = ws;
            ls *= self.threads_per_warp[d];
            ws *= self.warps_per_cta[d];
        }
        (0..rank)
            .map(|d| AxisMap {
                size: shape[d],
                size_per_thread: self.size_per_thread[d],
                threads_per_warp: self.threads_per_warp[d],
                warps_per_cta: self.warps_per_cta[d],
                lane_stride: lane_stride[d],
                warp_stride: warp_stride[d],
            })
            .collect()
    }

    /// The same layout with a trivial axis (one thread, one warp, one element)
    /// inserted at `dim`, slowest in `order`.
    pub fn insert_trivial_axis(&self, dim: usize) -> BlockedLayout {
        let mut l = self.clone();
        l.size_per_thread.insert(dim, 1);
        l.threads_per_warp.insert(dim, 1);
        l.warps_per_cta.insert(dim, 1);
        for a in l.order.iter_mut() {
            if *a >= dim {
                *a += 1;
            }
        }
        l.order.push(dim);
        l
    }

    /// Whether axis `dim` is spread over nothing (removable without changing
    /// which thread holds what).
    pub fn axis_is_trivial(&self, dim: usize) -> bool {
        self.size_per_thread[dim] == 1
            && self.threads_per_warp[dim] == 1
            && self.warps_per_cta[dim] == 1
    }

    pub fn remove_trivial_axis(&self, dim: usize) -> BlockedLayout {
        let mut l = self.clone();
        l.size_per_thread.remove(dim);
        l.threads_per_warp.remove(dim);
        l.warps_per_cta.remove(dim);
        l.order.retain(|&a| a != dim);
        for a in l.order.iter_mut() {
            if *a > dim {
                *a -= 1;
            }
        }
        l
    }
}

/// A tile's distribution: its per-axis maps, the axis order of its registers,
/// and (for slices) the removed parent axis, whose threads hold replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileMap {
    pub axes: Vec<AxisMap>,
    /// Tile axes fastest first.
    pub order: Vec<usize>,
    /// For a slice layout: the removed axis's map (size 1); threads whose
    /// coordinate along it is not 0 hold replicas.
    pub removed: Option<AxisMap>,
}

impl Layout {
    /// The distribution of a tile of `shape` (which has this layout's rank).
    pub fn tile_map(&self, shape: &[usize]) -> TileMap {
        match self {
            Layout::Scalar => TileMap {
                axes: Vec::new(),
                order: Vec::new(),
                removed: None,
            },
            Layout::Blocked(b) => TileMap {
                axes: b.axis_maps(shape),
                order: b.order.clone(),
                removed: None,
            },
            Layout::Slice { parent, dim } => {
                let mut parent_shape = shape.to_vec();
                parent_shape.insert(*dim, 1);
                let mut axes = parent.axis_maps(&parent_shape);
                let removed = axes.remove(*dim);
                let order = parent
                    .order
                    .iter()
                    .filter(|&&a| a != *dim)
                    .map(|&a| if a > *dim { a - 1 } else { a })
                    .collect();
                TileMap {
                    axes,
                    order,
                    removed: Some(removed),
                }
            }
        }
    }

    pub fn rank(&self) -> usize {
        match self {
            Layout::Scalar => 0,
            Layout::Blocked(b) => b.rank(),
            Layout::Slice { parent, .. } => parent.rank() - 1,
        }
    }

    /// The layout a reduction along `axis` leaves (a scalar for rank 1), or
    /// `None` when this layout is not blocked.
    pub fn reduced(&self, axis: usize) -> Option<Layout> {
        match self {
            Layout::Blocked(b) if b.rank() == 1 => Some(Layout::Scalar),
            Layout::Blocked(b) => Some(Layout::Slice {
                parent: b.clone(),
                dim: axis,
            }),
            _ => None,
        }
    }
}

/// Whether a transpose from `src` to `dst` keeps every register in place
/// (`dst` is `src` seen transposed, [`BlockedLayout::transposed`]).
pub fn transpose_in_place(src: &Layout, dst: &Layout) -> bool {
    matches!((src, dst), (Layout::Blocked(s), Layout::Blocked(d)) if s.transposed().as_ref() == Some(d))
}

/// The layout `src` of a `Reshape` from `src_shape` to `dst_shape` must have
/// so that the reshape keeps every register in place, given the result's
/// layout `dst`; `None` when no such layout exists (then the reshape goes
/// through shared memory).
pub fn reshape_src_layout(
    dst: &Layout,
    src_shape: &[usize],
    dst_shape: &[usize],
) -> Option<Layout> {
    if src_shape.len() + 1 == dst_shape.len() {
        // One size-1 axis inserted at `k`.
        let k = inserted_axis(src_shape, dst_shape)?;
        match dst {
            Layout::Blocked(p) if p.axis_is_trivial(k) => {
                Some(Layout::Blocked(p.remove_trivial_axis(k)))
            }
            Layout::Blocked(p) => Some(Layout::Slice {
                parent: p.clone(),
                dim: k,
            }),
            _ => None,
        }
    } else if src_shape.len() == dst_shape.len() + 1 {
        // One size-1 axis removed at `k`.
        let k = inserted_axis(dst_shape, src_shape)?;
        match dst {
            Layout::Slice { parent, dim } if *dim == k => Some(Layout::Blocked(parent.clone())),
            Layout::Blocked(q) => Some(Layout::Blocked(q.insert_trivial_axis(k))),
            Layout::Scalar => None,
            _ => None,
        }
    } else if src_shape == dst_shape {
        Some(dst.clone())
    } else {
        None
    }
}

/// The axis `k` such that `long` is `short` with a size-1 axis inserted at `k`.
pub fn inserted_axis(short: &[usize], long: &[usize]) -> Option<usize> {
    (0..long.len())
        .find(|&k| long[k] == 1 && long[..k] == short[..k] && long[k + 1..] == short[k..])
}

impl TileMap {
    /// Whether every axis [fits](AxisMap::fits) its CTA tile.
    pub fn fits(&self) -> bool {
        self.axes.iter().all(AxisMap::fits)
    }

    /// Registers each thread holds.
    pub fn regs(&self) -> usize {
        self.axes.iter().map(|a| a.regs()).product()
    }

    /// Per-axis local indices of register `reg` (fastest axis varies fastest).
    pub fn reg_locals(&self, mut reg: usize) -> Vec<usize> {
        let mut locals = vec![0; self.axes.len()];
        for &d in &self.order {
            let n = self.axes[d].regs();
            locals[d] = reg % n;
            reg /= n;
        }
        locals
    }

    /// The register holding the given per-axis local indices.
    pub fn reg_of_locals(&self, locals: &[usize]) -> usize {
        let mut reg = 0;
        for &d in self.order.iter().rev() {
            reg = reg * self.axes[d].regs() + locals[d];
        }
        reg
    }

    /// Constant per-axis index offsets of register `reg`.
    pub fn reg_offsets(&self, reg: usize) -> Vec<usize> {
        self.reg_locals(reg)
            .iter()
            .zip(&self.axes)
            .map(|(&l, a)| a.offset(l))
            .collect()
    }

    /// The thread's per-axis base index.
    pub fn thread_base(&self, tid: usize) -> Vec<usize> {
        let (lane, warp) = (tid % WARP_SIZE, tid / WARP_SIZE);
        self.axes
            .iter()
            .map(|a| a.thread_base(lane, warp))
            .collect()
    }

    /// Index of the element thread `tid` holds in register `reg`.
    pub fn element_index(&self, tid: usize, reg: usize) -> Vec<usize> {
        self.thread_base(tid)
            .iter()
            .zip(self.reg_offsets(reg))
            .map(|(b, o)| b + o)
            .collect()
    }

    /// Whether thread `tid` holds the first copy of its elements: exactly one
    /// owner per element, so stores from owners only write each element once.
    pub fn owns(&self, tid: usize) -> bool {
        let (lane, warp) = (tid % WARP_SIZE, tid / WARP_SIZE);
        self.axes.iter().all(|a| a.owns(lane, warp))
            && self.removed.is_none_or(|r| r.thread_coord(lane, warp) == 0)
    }

    /// Whether some threads hold replicas (stores must then be masked).
    pub fn has_replicas(&self, num_threads: usize) -> bool {
        (0..num_threads).any(|t| !self.owns(t))
    }

    /// Contiguous elements a thread holds along the last axis in consecutive
    /// registers (1 when the last axis is not the fastest).
    pub fn contiguous_run(&self) -> usize {
        match self.order.first() {
            Some(&d) if d + 1 == self.axes.len() => self.axes[d].run(),
            _ => 1,
        }
    }

    /// The fastest axis and how many contiguous elements along it a thread
    /// holds in consecutive registers (`None` for scalars).
    pub fn fastest_run(&self) -> Option<(usize, usize)> {
        self.order.first().map(|&d| (d, self.axes[d].run()))
    }
}

/// For each register of `dst`, the register of `src` holding the same element
/// in the same thread, when that register number is the same in every thread.
pub fn register_remap(
    src: &Layout,
    dst: &Layout,
    shape: &[usize],
    threads: usize,
) -> Option<Vec<usize>> {
    if src.rank() != shape.len() || dst.rank() != shape.len() {
        return None;
    }
    let (sm, dm) = (src.tile_map(shape), dst.tile_map(shape));
    let mut remap = Vec::with_capacity(dm.regs());
    for r in 0..dm.regs() {
        let want = dm.element_index(0, r);
        let s = (0..sm.regs()).find(|&s| sm.element_index(0, s) == want)?;
        remap.push(s);
    }
    for tid in 1..threads {
        for (r, &s) in remap.iter().enumerate() {
            if sm.element_index(tid, s) != dm.element_index(tid, r) {
                return None;
            }
        }
    }
    Some(remap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transposed_layout_keeps_every_thread_and_register() {
        let src = BlockedLayout {
            size_per_thread: vec![1, 8],
            threads_per_warp: vec![16, 2],
            warps_per_cta: vec![4, 2],
            order: vec![1, 0],
        };
        let t = src.transposed().unwrap();
        assert_eq!(t.size_per_thread, vec![8, 1]);
        assert_eq!(t.threads_per_warp, vec![2, 16]);
        assert_eq!(t.warps_per_cta, vec![2, 4]);
        assert_eq!(t.order, vec![0, 1]);
        // Element (i, j) of the [128, 32] tile sits in the same thread and
        // register as element (j, i) of the [32, 128] transposed tile.
        let (a, b) = (
            Layout::Blocked(src.clone()).tile_map(&[128, 32]),
            Layout::Blocked(t.clone()).tile_map(&[32, 128]),
        );
        for reg in 0..a.regs() {
            let (la, lb) = (a.reg_locals(reg), b.reg_locals(reg));
            assert_eq!((la[0], la[1]), (lb[1], lb[0]), "register {reg}");
        }
        assert!(transpose_in_place(
            &Layout::Blocked(src.clone()),
            &Layout::Blocked(t)
        ));
        assert!(!transpose_in_place(
            &Layout::Blocked(src.clone()),
            &Layout::Blocked(src)
        ));
    }

    fn check_cover(layout: &Layout, shape: &[usize], num_warps: usize) {
        let map = layout.tile_map(shape);
        let total: usize = shape.iter().product();
        let threads = num_warps * WARP_SIZE;
        let linear = |idx: &[usize]| idx.iter().zip(shape).fold(0, |acc, (i, s)| acc * s + i);
        let mut held = vec![0usize; total];
        let mut owned = vec![0usize; total];
        for tid in 0..threads {
            let mut mine = std::collections::HashSet::new();
            for reg in 0..map.regs() {
                let idx = map.element_index(tid, reg);
                for (i, s) in idx.iter().zip(shape) {
                    assert!(i < s, "{layout:?} {shape:?} tid {tid} reg {reg}: {idx:?}");
                }
                assert!(mine.insert(idx.clone()), "thread holds an element twice");
                held[linear(&idx)] += 1;
                if map.owns(tid) {
                    owned[linear(&idx)] += 1;
                }
            }
        }
        assert!(
            held.iter().all(|&h| h >= 1),
            "{layout:?} {shape:?}: uncovered"
        );
        assert!(
            owned.iter().all(|&o| o == 1),
            "{layout:?} {shape:?}: owners {owned:?}"
        );
    }

    #[test]
    fn blocked_1d_vec4_128_threads() {
        let b = BlockedLayout::for_shape(&[1024], 4, 4);
        assert_eq!(b.size_per_thread, vec![4]);
        assert_eq!(b.threads_per_warp, vec![32]);
        assert_eq!(b.warps_per_cta, vec![4]);
        let l = Layout::Blocked(b);
        let map = l.tile_map(&[1024]);
        assert_eq!(map.regs(), 8);
        // thread 1 holds 4..8 then 516..520
        assert_eq!(map.element_index(1, 0), vec![4]);
        assert_eq!(map.element_index(1, 3), vec![7]);
        assert_eq!(map.element_index(1, 4), vec![516]);
        assert_eq!(map.element_index(33, 0), vec![132]);
        assert_eq!(map.contiguous_run(), 4);
        check_cover(&l, &[1024], 4);
    }

    /// A dimension that is not a power of two (a 192-column tile): lanes,
    /// warps and vectors take its power-of-two part, so the CTA tile (64)
    /// repeats 3 times and every element has one owner.
    #[test]
    fn non_power_of_two_dimension_repeats_a_dividing_cta_tile() {
        let b = BlockedLayout::for_shape(&[64, 192], 8, 8);
        assert_eq!(b.size_per_thread, vec![1, 8]);
        assert_eq!(b.threads_per_warp, vec![4, 8]);
        assert_eq!(b.warps_per_cta, vec![8, 1]);
        let l = Layout::Blocked(b);
        let map = l.tile_map(&[64, 192]);
        assert!(map.fits());
        assert_eq!(map.axes[1].repeats(), 3);
        check_cover(&l, &[64, 192], 8);
        // 1-D: 96 elements on 4 warps, 4 a thread: 32 lanes cover 128 > 96,
        // which does not fit (codegen refuses it rather than miscompute).
        let l = Layout::Blocked(BlockedLayout::for_shape(&[96], 4, 4));
        assert!(!l.tile_map(&[96]).fits());
        let l = Layout::Blocked(BlockedLayout::for_shape(&[96, 64], 4, 4));
        assert!(l.tile_map(&[96, 64]).fits());
        check_cover(&l, &[96, 64], 4);
    }

    #[test]
    fn small_tile_is_replicated_and_owned_once() {
        let l = Layout::Blocked(BlockedLayout::for_shape(&[64], 4, 4));
        let map = l.tile_map(&[64]);
        assert_eq!(map.regs(), 4);
        assert!(map.has_replicas(128));
        assert_eq!(map.element_index(16, 0), vec![0]);
        assert!(!map.owns(16));
        check_cover(&l, &[64], 4);
        // A tile smaller than one thread's vector.
        let l2 = Layout::Blocked(BlockedLayout::for_shape(&[1024], 4, 4));
        check_cover(&l2, &[2], 4);
    }

    #[test]
    fn blocked_2d_for_32x32() {
        let b = BlockedLayout::for_shape(&[32, 32], 4, 4);
        assert_eq!(b.size_per_thread, vec![1, 4]);
        assert_eq!(b.threads_per_warp, vec![4, 8]);
        assert_eq!(b.warps_per_cta, vec![4, 1]);
        assert_eq!(b.order, vec![1, 0]);
        let l = Layout::Blocked(b);
        let map = l.tile_map(&[32, 32]);
        assert_eq!(map.regs(), 8);
        // lane 9 = row 1, column group 1; warp 1 adds 4 rows.
        assert_eq!(map.element_index(9, 0), vec![1, 4]);
        assert_eq!(map.element_index(32 + 9, 5), vec![21, 5]);
        for shape in [[32, 32], [64, 16], [8, 128], [1, 32], [32, 1], [128, 64]] {
            check_cover(&l, &shape, 4);
            check_cover(
                &Layout::Blocked(BlockedLayout::for_shape(&shape, 4, 1)),
                &shape,
                4,
            );
            check_cover(
                &Layout::Blocked(BlockedLayout::for_shape(&shape, 8, 4)),
                &shape,
                8,
            );
        }
    }

    #[test]
    fn slices_cover_and_match_size1_parent() {
        let p = BlockedLayout::for_shape(&[64, 32], 4, 4);
        for dim in 0..2 {
            let slice = Layout::Slice {
                parent: p.clone(),
                dim,
            };
            let kept = if dim == 0 { 32 } else { 64 };
            check_cover(&slice, &[kept], 4);
            // The slice enumerates like the parent over the shape with a 1 at `dim`.
            let mut pshape = vec![kept];
            pshape.insert(dim, 1);
            let smap = slice.tile_map(&[kept]);
            let pmap = Layout::Blocked(p.clone()).tile_map(&pshape);
            assert_eq!(smap.regs(), pmap.regs());
            for tid in 0..128 {
                for reg in 0..smap.regs() {
                    let mut idx = smap.element_index(tid, reg);
                    idx.insert(dim, 0);
                    assert_eq!(idx, pmap.element_index(tid, reg));
                }
            }
        }
    }

    #[test]
    fn slice_of_row_reduction_holds_the_rows_of_the_thread() {
        let p = BlockedLayout::for_shape(&[32, 32], 4, 4);
        let parent = Layout::Blocked(p.clone()).tile_map(&[32, 32]);
        let slice = Layout::Slice { parent: p, dim: 1 }.tile_map(&[32]);
        for tid in 0..128 {
            let rows: std::collections::BTreeSet<usize> = (0..parent.regs())
                .map(|r| parent.element_index(tid, r)[0])
                .collect();
            let srows: std::collections::BTreeSet<usize> = (0..slice.regs())
                .map(|r| slice.element_index(tid, r)[0])
                .collect();
            assert_eq!(rows, srows);
        }
    }

    #[test]
    fn reshape_layouts() {
        let p = BlockedLayout::for_shape(&[64, 32], 4, 4);
        let dst = Layout::Blocked(p.clone());
        assert_eq!(
            reshape_src_layout(&dst, &[64], &[64, 1]),
            Some(Layout::Slice {
                parent: p.clone(),
                dim: 1
            })
        );
        let s = Layout::Slice {
            parent: p.clone(),
            dim: 0,
        };
        assert_eq!(
            reshape_src_layout(&s, &[1, 32], &[32]),
            Some(Layout::Blocked(p.clone()))
        );
        let q = BlockedLayout::for_shape(&[64], 4, 2);
        let src = reshape_src_layout(&Layout::Blocked(q.clone()), &[64, 1], &[64]).unwrap();
        let (sm, dm) = (src.tile_map(&[64, 1]), Layout::Blocked(q).tile_map(&[64]));
        for tid in 0..128 {
            for reg in 0..dm.regs() {
                assert_eq!(sm.element_index(tid, reg)[0], dm.element_index(tid, reg)[0]);
            }
        }
        assert_eq!(inserted_axis(&[4, 5], &[4, 1, 5]), Some(1));
        assert_eq!(reshape_src_layout(&dst, &[8, 8], &[64, 1]), None);
    }

    #[test]
    fn ordered_layout_is_fast_along_axis_0() {
        let b = BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]);
        assert_eq!(b.size_per_thread, vec![8, 1]);
        assert_eq!(b.threads_per_warp, vec![8, 4]);
        assert_eq!(b.warps_per_cta, vec![1, 4]);
        let l = Layout::Blocked(b);
        let map = l.tile_map(&[64, 64]);
        assert_eq!(map.fastest_run(), Some((0, 8)));
        assert_eq!(map.contiguous_run(), 1);
        // lane 1 holds rows 8..16 of column 0; registers 0..8 are consecutive rows.
        assert_eq!(map.element_index(1, 0), vec![8, 0]);
        assert_eq!(map.element_index(1, 7), vec![15, 0]);
        assert_eq!(map.element_index(8, 0), vec![0, 1]);
        check_cover(&l, &[64, 64], 4);
        check_cover(&l, &[16, 128], 4);
    }

    #[test]
    fn reg_locals_roundtrip() {
        let l = Layout::Blocked(BlockedLayout::for_shape(&[16, 64], 4, 4));
        let map = l.tile_map(&[64, 64]);
        for reg in 0..map.regs() {
            assert_eq!(map.reg_of_locals(&map.reg_locals(reg)), reg);
        }
        // fastest axis fastest: registers 0..4 are 4 contiguous columns
        assert_eq!(map.reg_offsets(1), vec![0, 1]);
        assert_eq!(map.reg_offsets(3), vec![0, 3]);
    }

    #[test]
    fn distinct_lanes_and_warps() {
        let b = BlockedLayout::for_shape(&[8, 128], 4, 4);
        let maps = b.axis_maps(&[8, 128]);
        assert_eq!(maps[1].distinct_lanes(), 32);
        assert_eq!(maps[1].distinct_warps(), 1);
        let b2 = BlockedLayout::for_shape(&[2], 4, 1);
        let m = b2.axis_maps(&[2])[0];
        assert_eq!((m.distinct_lanes(), m.distinct_warps()), (2, 1));
    }
}

/// `blocked<spt [1, 8], tpw [4, 8], wpc [4, 1], order [1, 0]>`, `slice<dim 1 of
/// blocked<...>>`, `scalar` (how the IR printer shows layouts).
impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layout::Scalar => f.write_str("scalar"),
            Layout::Blocked(b) => write!(f, "{b}"),
            Layout::Slice { parent, dim } => write!(f, "slice<dim {dim} of {parent}>"),
        }
    }
}

impl std::fmt::Display for BlockedLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "blocked<spt {:?}, tpw {:?}, wpc {:?}, order {:?}>",
            self.size_per_thread, self.threads_per_warp, self.warps_per_cta, self.order
        )
    }
}
