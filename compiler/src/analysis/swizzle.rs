//! The layout of a 2-D tile's buffer in shared memory when it moves between
//! thread layouts (a transpose, or a conversion of a 2-D tile), vectorized on
//! both sides.
//!
//! The buffer keeps the source's fastest axis `a` contiguous: each line (one
//! index along the other axis `b`) holds `shape[a]` elements split into
//! chunks of `chunk` elements (at most 16 bytes). Every thread writes its
//! `vec` contiguous source elements as one `st.shared.v*`, and readers whose
//! own fastest axis is `a` read up to a chunk at once. Chunk `c` of line `i`
//! is stored at chunk `c ^ ((i / step) % chunks)`, so lanes that touch the
//! same chunk of different lines hit different banks.
//!
//! The chunk and the step are chosen by simulating the warps' accesses on the
//! 32 banks ([`Swizzle::plan`]): the fewest shared-memory wavefronts plus
//! instructions. Chunks wider than the writers' vector let the readers load
//! 16 bytes at once where the writers have only a pair of elements (the
//! matmul epilogue: an MMA accumulator holds 2 adjacent columns, the store
//! layout 8). Codegen emits it (`codegen::lower::trans`); the shared-memory
//! plan sizes its buffer.
use crate::ir::layout::{Layout, TileMap, WARP_SIZE};
use std::collections::BTreeSet;

/// How a transpose lays out its buffer (sizes powers of two but the line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// The source axis kept contiguous in the buffer.
    pub axis: usize,
    /// Elements each writer stores at once (its contiguous run, at most 16 bytes).
    pub vec: usize,
    /// Elements per swizzled chunk: a multiple of `vec`, at most 16 bytes.
    pub chunk: usize,
    /// The source's size along `axis` (elements per line).
    pub line: usize,
    /// Lines that share one XOR pattern (the readers' step along the other axis).
    pub step: usize,
    /// Elements per read (1, or a vector when the readers' fastest axis is `axis`).
    pub read_vec: usize,
    /// Whether the result's axes are the source's swapped (a transpose).
    pub transposed: bool,
}

impl Swizzle {
    /// The plan for moving a 2-D tile of `shape` (source axes) from `src`
    /// to `dst` (over the swapped shape when `transposed`); `None` when a
    /// layout has no fastest axis.
    pub fn plan(
        src: &Layout,
        dst: &Layout,
        shape: &[usize],
        elem_bytes: usize,
        transposed: bool,
    ) -> Option<Self> {
        if shape.len() != 2 || src.rank() != 2 || dst.rank() != 2 {
            return None;
        }
        let dst_shape = if transposed {
            [shape[1], shape[0]]
        } else {
            [shape[0], shape[1]]
        };
        let smap = src.tile_map(shape);
        let dmap = dst.tile_map(&dst_shape);
        let (axis, run) = smap.fastest_run()?;
        let (dfast, drun) = dmap.fastest_run()?;
        let elem_bytes = elem_bytes.max(1);
        let max_vec = (16 / elem_bytes).max(1);
        let vec = run.min(max_vec).max(1);
        let result_axis = |s: usize| if transposed { 1 - s } else { s };
        let readers_step = dmap.axes[result_axis(1 - axis)].size_per_thread.max(1);
        let reads_along_axis = dfast == result_axis(axis);
        // Readers along the buffer's axis read up to a chunk; others one element.
        let read_vec = |chunk: usize| if reads_along_axis { drun.min(chunk) } else { 1 };
        let base = Swizzle {
            axis,
            vec,
            chunk: vec,
            line: shape[axis],
            step: readers_step,
            read_vec: read_vec(vec),
            transposed,
        };
        let (Some(writers), Some(readers)) = (threads_of(src), threads_of(dst)) else {
            return Some(base);
        };
        let sim = Simulation {
            writes: Side::of(&smap, writers, |i| (i[axis], i[1 - axis])),
            reads: Side::of(&dmap, readers, |i| {
                (i[result_axis(axis)], i[result_axis(1 - axis)])
            }),
            elem_bytes,
        };
        // Candidates: chunks wider than the writers' vector, up to 16 bytes
        // (within a line), each with the readers' step or a power of two;
        // only where readers walk the chunks (a transpose's read one element).
        let mut best = (sim.cost(&base), base.clone());
        let mut chunk = vec * 2;
        while reads_along_axis && chunk <= max_vec && chunk <= shape[axis] {
            let steps = std::iter::once(readers_step).chain((0..4).map(|i| 1 << i));
            for step in steps.collect::<BTreeSet<_>>() {
                let plan = Swizzle {
                    chunk,
                    step,
                    read_vec: read_vec(chunk),
                    ..base.clone()
                };
                let cost = sim.cost(&plan);
                if cost < best.0 {
                    best = (cost, plan);
                }
            }
            chunk *= 2;
        }
        Some(best.1)
    }

    /// The result axis holding source axis `s`.
    pub fn result_axis(&self, s: usize) -> usize {
        if self.transposed {
            1 - s
        } else {
            s
        }
    }

    pub fn chunks(&self) -> usize {
        (self.line / self.chunk).max(1)
    }

    /// Chunks the XOR pattern ranges over: the largest power of two dividing
    /// [`Swizzle::chunks`], so a swizzled chunk stays in its line (24 chunks of
    /// a 192-element line XOR within aligned groups of 8).
    pub fn pattern_span(&self) -> usize {
        1 << self.chunks().trailing_zeros()
    }

    /// Buffer element of source element (`i[axis]`, `i[1 - axis]`) — the
    /// formula the generated code computes, for tests.
    pub fn place(&self, ia: usize, ib: usize) -> usize {
        let chunk = (ia / self.chunk) ^ ((ib / self.step) % self.pattern_span());
        ib * self.line + chunk * self.chunk + ia % self.chunk
    }
}

/// How a conversion's writers store with `stmatrix.x4` (sm_90+): each lane
/// holds pairs of 16-bit elements in the MMA accumulator's fragment order
/// (lane `4 r + t` has row `r`, columns `2 t, 2 t + 1` of an 8x8 block), so
/// one instruction stores four blocks, 16 bytes a lane, where `st.shared`
/// stores 4 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StMatrix {
    /// First register of each group of 8 (4 blocks along the buffer's axis).
    pub groups: Vec<usize>,
    /// Elements along the buffer's axis between a group's blocks.
    pub block_stride: usize,
}

impl Swizzle {
    /// The `stmatrix` plan for writers in `src` (of `shape`), when their
    /// layout is the accumulator's fragments with whole rows of 8 in one
    /// chunk, and no thread holds replicas.
    pub fn stmatrix(&self, src: &Layout, shape: &[usize], elem_bytes: usize) -> Option<StMatrix> {
        let Layout::Blocked(b) = src else {
            return None;
        };
        let (a, o) = (self.axis, 1 - self.axis);
        let fragments = b.rank() == 2
            && b.order[0] == a
            && b.size_per_thread[a] == 2
            && b.size_per_thread[o] == 1
            && b.threads_per_warp[a] == 4
            && b.threads_per_warp[o] == 8;
        if elem_bytes != 2 || self.vec != 2 || self.chunk != 8 || !fragments {
            return None;
        }
        let map = src.tile_map(shape);
        let threads = threads_of(src)?;
        let whole = map.axes.iter().all(|x| x.size >= x.cta_tile());
        if !whole || map.has_replicas(threads) || map.axes[a].regs() % 8 != 0 {
            return None;
        }
        Some(StMatrix {
            groups: (0..map.regs()).step_by(8).collect(),
            block_stride: map.axes[a].cta_tile(),
        })
    }
}

/// Threads of a layout's CTA (`None` for scalars).
fn threads_of(layout: &Layout) -> Option<usize> {
    let warps: usize = match layout {
        Layout::Blocked(b) => b.warps_per_cta.iter().product(),
        Layout::Slice { parent, .. } => parent.warps_per_cta.iter().product(),
        Layout::Scalar => return None,
    };
    Some(warps * WARP_SIZE)
}

/// The warps' shared-memory accesses under a plan, replayed on the banks.
struct Simulation {
    writes: Side,
    reads: Side,
    elem_bytes: usize,
}

/// One side of the move: where each thread's registers sit in the source
/// tile, as (index along the buffer's axis, along the other). Worked out once
/// for all the candidate plans (their buffers differ, the elements do not).
struct Side {
    threads: usize,
    regs: usize,
    /// By `thread * regs + reg`.
    index: Vec<(usize, usize)>,
}

impl Side {
    fn of(
        map: &TileMap,
        threads: usize,
        source_index: impl Fn(&[usize]) -> (usize, usize),
    ) -> Side {
        let regs = map.regs();
        let offsets: Vec<Vec<usize>> = (0..regs).map(|reg| map.reg_offsets(reg)).collect();
        let mut index = Vec::with_capacity(threads * regs);
        let mut element = Vec::new();
        for tid in 0..threads {
            let base = map.thread_base(tid);
            for offset in &offsets {
                element.clear();
                element.extend(base.iter().zip(offset).map(|(b, o)| b + o));
                index.push(source_index(&element));
            }
        }
        Side {
            threads,
            regs,
            index,
        }
    }
}

impl Simulation {
    /// Wavefronts plus instructions, summed over warps, of the writes and
    /// the reads (each instruction also takes an issue slot).
    fn cost(&self, plan: &Swizzle) -> usize {
        self.side_cost(plan, &self.writes, plan.vec)
            + self.side_cost(plan, &self.reads, plan.read_vec)
    }

    fn side_cost(&self, plan: &Swizzle, side: &Side, vec: usize) -> usize {
        let bytes = vec * self.elem_bytes;
        let mut total = 0;
        let mut addresses = [0; WARP_SIZE];
        for warp in 0..side.threads / WARP_SIZE {
            for reg in (0..side.regs).step_by(vec) {
                for (lane, address) in addresses.iter_mut().enumerate() {
                    let (ia, ib) = side.index[(warp * WARP_SIZE + lane) * side.regs + reg];
                    *address = plan.place(ia, ib) * self.elem_bytes;
                }
                total += 1 + wavefronts(&addresses, bytes);
            }
        }
        total
    }
}

/// Shared-memory wavefronts of one warp's access of `bytes` a lane at the
/// given byte addresses: the lanes go in phases of 128 bytes (8 lanes of
/// 16-byte accesses, 16 of 8-byte, all 32 of narrower), and a phase takes as
/// many wavefronts as the most distinct words any one of the 32 banks serves.
pub fn wavefronts(addresses: &[usize], bytes: usize) -> usize {
    let per_phase = (128 / bytes.max(4)).clamp(1, WARP_SIZE);
    let mut words = Vec::with_capacity(128);
    addresses
        .chunks(per_phase)
        .map(|phase| {
            words.clear();
            for &a in phase {
                words.extend(a / 4..(a + bytes.max(1)).div_ceil(4));
            }
            words.sort_unstable();
            words.dedup();
            let mut per_bank = [0; 32];
            for &word in &words {
                per_bank[word % 32] += 1;
            }
            per_bank.into_iter().max().unwrap_or(0)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::layout::BlockedLayout;

    /// The transpose kernel's layouts: the source fast along axis 0 (its
    /// pointers' contiguous axis), the result fast along axis 0 as well.
    fn transpose_plan() -> Swizzle {
        let src = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        Swizzle::plan(&src, &dst, &[64, 64], 2, true).unwrap()
    }

    #[test]
    fn plan_vectorizes_writes_and_places_every_element_once() {
        let p = transpose_plan();
        assert_eq!(
            (p.axis, p.vec, p.line, p.step, p.read_vec),
            (0, 8, 64, 8, 1)
        );
        let mut seen = vec![false; 64 * 64];
        for ia in 0..64 {
            for ib in 0..64 {
                let at = p.place(ia, ib);
                assert!(!seen[at], "two elements at {at}");
                seen[at] = true;
            }
        }
        // A writer's vector stays contiguous and aligned.
        assert_eq!(p.place(9, 3) - p.place(8, 3), 1);
        assert_eq!(p.place(8, 3) % 8, 0);
    }

    #[test]
    fn readers_of_one_warp_hit_distinct_banks() {
        let p = transpose_plan();
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        let map = dst.tile_map(&[64, 64]);
        for reg in 0..map.regs() {
            // 4-byte banks; lanes reading the same word share it (a broadcast).
            let mut words = std::collections::BTreeMap::new();
            for lane in 0..32 {
                let j = map.element_index(lane, reg);
                let word = p.place(j[1], j[0]) * 2 / 4;
                words.insert(word, word % 32);
            }
            let banks: std::collections::BTreeSet<_> = words.values().collect();
            assert_eq!(banks.len(), words.len(), "bank conflict in register {reg}");
        }
    }

    #[test]
    fn readers_fast_along_the_buffer_axis_read_vectors() {
        let src = Layout::Blocked(BlockedLayout::for_shape(&[32, 32], 4, 4));
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[32, 32], 4, 4, &[0, 1]));
        let p = Swizzle::plan(&src, &dst, &[32, 32], 4, true).unwrap();
        assert_eq!((p.axis, p.vec, p.read_vec), (1, 4, 4));
        // Without the swap the readers are fast along the other axis: scalar reads.
        let p = Swizzle::plan(&src, &dst, &[32, 32], 4, false).unwrap();
        assert_eq!((p.axis, p.vec, p.read_vec, p.step), (1, 4, 1, 4));
        // Same fastest axis, narrower vectors: reads of the readers' run.
        let narrow = Layout::Blocked(BlockedLayout::for_shape(&[32, 32], 4, 2));
        let p = Swizzle::plan(&src, &narrow, &[32, 32], 4, false).unwrap();
        assert_eq!((p.vec, p.read_vec), (4, 2));
    }

    /// An MMA accumulator on 8 warps stacked along rows: pairs of columns.
    fn accumulator_on_8_warps() -> Layout {
        Layout::Blocked(BlockedLayout {
            size_per_thread: vec![1, 2],
            threads_per_warp: vec![8, 4],
            warps_per_cta: vec![8, 1],
            order: vec![1, 0],
        })
    }

    /// The matmul epilogue: a 2-warpgroup MMA accumulator (pairs of columns)
    /// converted to the store layout (8 contiguous halves a thread).
    #[test]
    fn accumulator_to_store_layout_reads_16_bytes_without_conflicts() {
        let acc = accumulator_on_8_warps();
        let store = Layout::Blocked(BlockedLayout::for_shape(&[128, 64], 8, 8));
        let p = Swizzle::plan(&acc, &store, &[128, 64], 2, false).unwrap();
        assert_eq!((p.axis, p.vec, p.chunk, p.read_vec), (1, 2, 8, 8));
        let mut seen = vec![false; 128 * 64];
        for ia in 0..64 {
            for ib in 0..128 {
                let at = p.place(ia, ib);
                assert!(!seen[at], "two elements at {at}");
                seen[at] = true;
            }
        }
        // One wavefront for every 128 bytes a warp moves: no bank conflicts.
        for (map, vec, shape) in [(&acc, 2, [128, 64]), (&store, 8, [128, 64])] {
            let map = map.tile_map(&shape);
            for warp in 0..8 {
                for reg in (0..map.regs()).step_by(vec) {
                    let addresses: Vec<usize> = (0..32)
                        .map(|lane| {
                            let i = map.element_index(warp * 32 + lane, reg);
                            p.place(i[1], i[0]) * 2
                        })
                        .collect();
                    assert_eq!(wavefronts(&addresses, vec * 2), vec * 2 * 32 / 128);
                }
            }
        }
    }

    /// A 192-column accumulator (wgmma n192): 24 chunks a line, so the XOR
    /// pattern ranges over groups of 8 and every element stays in its line
    /// (an XOR over all 24 would send chunk 8 of line 16 to chunk 24).
    #[test]
    fn lines_of_non_power_of_two_chunks_stay_in_their_line() {
        let acc = accumulator_on_8_warps();
        let store = Layout::Blocked(BlockedLayout::for_shape(&[128, 192], 8, 8));
        let p = Swizzle::plan(&acc, &store, &[128, 192], 2, false).unwrap();
        assert_eq!(
            (p.line, p.chunk, p.chunks(), p.pattern_span()),
            (192, 8, 24, 8)
        );
        let mut seen = vec![false; 128 * 192];
        for ib in 0..128 {
            for ia in 0..192 {
                let at = p.place(ia, ib);
                assert_eq!(at / 192, ib, "element ({ia}, {ib}) left its line");
                assert!(!seen[at], "two elements at {at}");
                seen[at] = true;
            }
        }
    }

    #[test]
    fn wavefronts_count_distinct_words_of_a_bank_per_phase() {
        // 32 lanes, 4 bytes, consecutive: one wavefront.
        let a: Vec<usize> = (0..32).map(|l| l * 4).collect();
        assert_eq!(wavefronts(&a, 4), 1);
        // The same word for every lane: a broadcast.
        assert_eq!(wavefronts(&[64; 32], 4), 1);
        // Lines of 128 bytes, one lane each: 32 words of one bank.
        let a: Vec<usize> = (0..32).map(|l| l * 128).collect();
        assert_eq!(wavefronts(&a, 4), 32);
        // 16 bytes a lane, consecutive: four phases of 8 lanes.
        let a: Vec<usize> = (0..32).map(|l| l * 16).collect();
        assert_eq!(wavefronts(&a, 16), 4);
        // 16 bytes a lane, two lanes of a phase 128 bytes apart: 2 per phase.
        let a: Vec<usize> = (0..32).map(|l| (l % 2) * 128 + (l / 2) * 16).collect();
        assert_eq!(wavefronts(&a, 16), 8);
    }

    /// `stmatrix.x4`: lane `8 k + r` gives the address of row `r` of block
    /// `k`; lane `4 r + t`'s register `k` lands at columns `2 t, 2 t + 1`.
    /// Each element must land where the plan places it.
    #[test]
    fn stmatrix_blocks_land_where_the_plan_places_them() {
        for warps in [vec![4, 1], vec![8, 1], vec![4, 2]] {
            let acc = Layout::Blocked(BlockedLayout {
                size_per_thread: vec![1, 2],
                threads_per_warp: vec![8, 4],
                warps_per_cta: warps.clone(),
                order: vec![1, 0],
            });
            let nwarps = warps[0] * warps[1];
            let shape = [128, 64];
            let store = Layout::Blocked(BlockedLayout::for_shape(&shape, nwarps, 8));
            let p = Swizzle::plan(&acc, &store, &shape, 2, false).unwrap();
            let st = p.stmatrix(&acc, &shape, 2).expect("stmatrix applies");
            let map = acc.tile_map(&shape);
            let mut stored = 0;
            for warp in 0..nwarps {
                for &g in &st.groups {
                    for lane in 0..32 {
                        let (k, r) = (lane / 8, lane % 8);
                        let i = map.element_index(warp * 32 + 4 * r, g);
                        let row_at = p.place(i[1] + k * st.block_stride, i[0]);
                        for t in 0..4 {
                            for e in 0..2 {
                                let j = map.element_index(warp * 32 + 4 * r + t, g + 2 * k + e);
                                assert_eq!(p.place(j[1], j[0]), row_at + 2 * t + e);
                                stored += 1;
                            }
                        }
                    }
                }
            }
            assert_eq!(stored, shape[0] * shape[1]);
        }
        // 32-bit elements, or a layout not in fragments: no stmatrix.
        let blocked = Layout::Blocked(BlockedLayout::for_shape(&[64, 64], 4, 2));
        let store = Layout::Blocked(BlockedLayout::for_shape(&[64, 64], 4, 8));
        let p = Swizzle::plan(&blocked, &store, &[64, 64], 2, false).unwrap();
        assert_eq!(p.stmatrix(&blocked, &[64, 64], 2), None);
    }

    /// Every element a reader loads is the one the writers stored there.
    fn check_round_trip(src: &Layout, dst: &Layout, shape: [usize; 2], bytes: usize) -> Swizzle {
        let p = Swizzle::plan(src, dst, &shape, bytes, false).unwrap();
        let mut buffer = std::collections::HashMap::new();
        let smap = src.tile_map(&shape);
        for tid in 0..threads_of(src).unwrap() {
            for g in (0..smap.regs()).step_by(p.vec) {
                for e in 0..p.vec {
                    let i = smap.element_index(tid, g + e);
                    let at = p.place(i[p.axis], i[1 - p.axis]);
                    buffer.insert(at, (i[0], i[1]));
                }
            }
        }
        let dmap = dst.tile_map(&shape);
        for tid in 0..threads_of(dst).unwrap() {
            for g in (0..dmap.regs()).step_by(p.read_vec) {
                let i = dmap.element_index(tid, g);
                let at = p.place(i[p.axis], i[1 - p.axis]);
                for e in 0..p.read_vec {
                    let want = dmap.element_index(tid, g + e);
                    assert_eq!(
                        buffer.get(&(at + e)),
                        Some(&(want[0], want[1])),
                        "{p:?} tid {tid} reg {}",
                        g + e
                    );
                }
            }
        }
        p
    }

    #[test]
    fn conversions_read_back_what_was_written() {
        let acc = |wpc: Vec<usize>| {
            Layout::Blocked(BlockedLayout {
                size_per_thread: vec![1, 2],
                threads_per_warp: vec![8, 4],
                warps_per_cta: wpc,
                order: vec![1, 0],
            })
        };
        let blocked = |spt: usize, tpw: [usize; 2], wpc: [usize; 2]| {
            Layout::Blocked(BlockedLayout {
                size_per_thread: vec![1, spt],
                threads_per_warp: tpw.to_vec(),
                warps_per_cta: wpc.to_vec(),
                order: vec![1, 0],
            })
        };
        check_round_trip(&acc(vec![2, 2]), &blocked(8, [16, 2], [4, 1]), [32, 16], 4);
        check_round_trip(&acc(vec![2, 2]), &blocked(8, [16, 2], [4, 1]), [32, 16], 2);
        for shape in [[32, 16], [64, 64], [128, 64], [16, 32], [128, 256]] {
            for wpc in [vec![4, 1], vec![2, 2], vec![8, 1], vec![4, 2]] {
                for bytes in [2, 4] {
                    let warps = wpc[0] * wpc[1];
                    for vec in [1, 2, 4, 8] {
                        let dst = Layout::Blocked(BlockedLayout::for_shape(&shape, warps, vec));
                        check_round_trip(&acc(wpc.clone()), &dst, shape, bytes);
                    }
                }
            }
        }
    }
}
