//! The layout of a 2-D tile's buffer in shared memory when it moves between
//! thread layouts (a transpose, or a conversion of a 2-D tile), vectorized on
//! both sides.
//!
//! The buffer keeps the source's fastest axis `a` contiguous: each line (one
//! index along the other axis `b`) holds `shape[a]` elements split into
//! chunks of `vec` (at most 16 bytes), and every thread writes its `vec`
//! contiguous source elements as one `st.shared.v*`. Readers walk axis `b`,
//! so chunk `c` of line `i` is stored at chunk `c ^ ((i / step) % chunks)`
//! (`step`: how far apart the readers' lanes are along `b`): the lanes of a
//! warp then read distinct banks instead of the same chunk of different lines.
//! Readers whose own fastest axis is `a` read vectors too. Codegen emits it
//! (`codegen::lower::trans`); the shared-memory plan sizes its buffer.
use crate::ir::layout::Layout;

/// How a transpose lays out its buffer (all sizes powers of two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// The source axis kept contiguous in the buffer.
    pub axis: usize,
    /// Elements per chunk: the writers' vector.
    pub vec: usize,
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
        let max_vec = (16 / elem_bytes.max(1)).max(1);
        let vec = run.min(max_vec).max(1);
        let result_axis = |s: usize| if transposed { 1 - s } else { s };
        let step = dmap.axes[result_axis(1 - axis)].size_per_thread.max(1);
        let read_vec = if dfast == result_axis(axis) {
            drun.min(vec)
        } else {
            1
        };
        Some(Swizzle {
            axis,
            vec,
            line: shape[axis],
            step,
            read_vec,
            transposed,
        })
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
        (self.line / self.vec).max(1)
    }

    /// Buffer element of source element (`i[axis]`, `i[1 - axis]`) — the
    /// formula the generated code computes, for tests.
    pub fn place(&self, ia: usize, ib: usize) -> usize {
        let chunk = (ia / self.vec) ^ ((ib / self.step) % self.chunks());
        ib * self.line + chunk * self.vec + ia % self.vec
    }
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
}
