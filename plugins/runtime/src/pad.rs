//! Zero-padded copies of dense row-major tensors, for ops whose spec pads
//! odd sizes (`pad N, K to 8 if ...`) in a framework with no pad of its own
//! to call (ONNX Runtime: [`run_padded`]; TensorFlow, whose op allocates
//! the twins, through the bridge: [`copy_twin`]): the kernel runs on
//! padded twins of the tensors (the aligned variants qualify), and the
//! padded outputs are cut back, each by the runtime's `copy_fill` kernel
//! where it takes the layout.

use crate::copy_fill::{copy_fill_async, supports, Matrix};
use crate::device::Device;
use crate::error::Result;
use crate::memory::raw;
use cudarc::driver::sys;
use std::sync::Arc;

/// Twins start 256 bytes apart, as `cuMemAlloc`'s blocks do (vector loads
/// and TMA boxes need their base 16-byte aligned).
const TWIN_ALIGN: usize = 256;

/// A dense tensor's shape and its padded twin's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaddedLayout {
    shape: Vec<i64>,
    padded: Vec<i64>,
    elem_bytes: usize,
}

/// One 2-D copy between a tensor and its twin: `rows` rows of `row_bytes`,
/// at these byte offsets, rows a pitch apart in each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowBlock {
    pub dense_offset: usize,
    pub padded_offset: usize,
    pub rows: usize,
    pub row_bytes: usize,
    pub dense_pitch: usize,
    pub padded_pitch: usize,
}

impl PaddedLayout {
    /// `shape` with each axis rounded up to its entry of `multiples` (1 or
    /// a missing entry: as is).
    pub fn new(shape: &[i64], multiples: &[i64], elem_bytes: usize) -> PaddedLayout {
        let padded = shape
            .iter()
            .enumerate()
            .map(|(axis, &n)| {
                let m = multiples.get(axis).copied().unwrap_or(1).max(1);
                (n.max(0) + m - 1) / m * m
            })
            .collect();
        PaddedLayout {
            shape: shape.iter().map(|&n| n.max(0)).collect(),
            padded,
            elem_bytes,
        }
    }

    /// Whether the twin differs from the tensor (else the tensor is used as is).
    pub fn is_padded(&self) -> bool {
        self.shape != self.padded
    }

    pub fn padded_shape(&self) -> &[i64] {
        &self.padded
    }

    pub fn padded_bytes(&self) -> usize {
        self.padded.iter().product::<i64>() as usize * self.elem_bytes
    }

    /// How many 2-D copies [`PaddedLayout::row_blocks`] gives: one per index
    /// of the axes before the last two (a matrix: one).
    pub fn row_block_count(&self) -> usize {
        let leading = self.shape.len().saturating_sub(2);
        self.shape[..leading].iter().map(|&n| n as usize).product()
    }

    /// The 2-D copies that move the tensor into its twin (or back): one per
    /// index of the axes before the last two (a matrix: one).
    pub fn row_blocks(&self) -> Vec<RowBlock> {
        let rank = self.shape.len();
        let last = |s: &[i64], back: usize| -> usize {
            rank.checked_sub(back).map_or(1, |axis| s[axis] as usize)
        };
        let (cols, padded_cols) = (last(&self.shape, 1), last(&self.padded, 1));
        let (rows, padded_rows) = (last(&self.shape, 2), last(&self.padded, 2));
        let leading = rank.saturating_sub(2);
        let count = self.row_block_count();
        let mut blocks = Vec::with_capacity(count);
        for slab in 0..count {
            // The slab's index along each leading axis, then its position
            // among the twin's (padded) slabs.
            let mut rest = slab;
            let mut padded_slab = 0usize;
            let mut scale = 1usize;
            for axis in (0..leading).rev() {
                let n = self.shape[axis] as usize;
                padded_slab += rest % n * scale;
                rest /= n;
                scale *= self.padded[axis] as usize;
            }
            blocks.push(RowBlock {
                dense_offset: slab * rows * cols * self.elem_bytes,
                padded_offset: padded_slab * padded_rows * padded_cols * self.elem_bytes,
                rows,
                row_bytes: cols * self.elem_bytes,
                dense_pitch: cols * self.elem_bytes,
                padded_pitch: padded_cols * self.elem_bytes,
            });
        }
        blocks
    }
}

impl PaddedLayout {
    /// Each slab as a matrix of the tensor at `dense` and of its twin at
    /// `twin` (the twin's: its padded rows and columns), for `copy_fill`;
    /// `None` where an axis before the last two is padded (the twin's
    /// extra slabs would need zeroing of their own) or the kernel cannot
    /// take a slab (see [`crate::copy_fill::supports`]).
    pub fn slab_matrices(&self, dense: u64, twin: u64) -> Option<Vec<(Matrix, Matrix)>> {
        let leading = self.shape.len().saturating_sub(2);
        if self.shape[..leading] != self.padded[..leading] {
            return None;
        }
        let padded_rows = match self.padded.len() {
            0 | 1 => 1,
            rank => self.padded[rank - 2] as usize,
        };
        let e = self.elem_bytes.max(1);
        let pairs: Vec<(Matrix, Matrix)> = self
            .row_blocks()
            .iter()
            .map(|b| {
                let tensor = Matrix {
                    addr: dense + b.dense_offset as u64,
                    rows: b.rows,
                    cols: b.row_bytes / e,
                    ld: b.dense_pitch / e,
                };
                let twin = Matrix {
                    addr: twin + b.padded_offset as u64,
                    rows: padded_rows,
                    cols: b.padded_pitch / e,
                    ld: b.padded_pitch / e,
                };
                (tensor, twin)
            })
            .collect();
        let fits = pairs
            .iter()
            .all(|&(tensor, twin)| supports(tensor, twin, self.elem_bytes));
        fits.then_some(pairs)
    }
}

/// Twins of this many elements or more are zeroed in their pad strips only
/// (the copies write the rest); smaller ones in one memset, where the
/// strips' extra calls cost more than the bytes they save. Counted on the
/// twin; the torch op's `opgen_pad_input` switches at the same number
/// counted on the input, which differs only for inputs just under it.
const STRIPS_MIN_ELEMENTS: usize = 1 << 23;

/// Bytes of a twin no copy writes, which must be zeroed: `rows` rows of
/// `width` bytes, `pitch` apart, from `offset` (one row: contiguous).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZeroSpan {
    pub offset: usize,
    pub pitch: usize,
    pub width: usize,
    pub rows: usize,
}

impl PaddedLayout {
    /// The twin's bytes past the tensor's (right of its rows, below its
    /// last row), or `None` where the whole twin is zeroed instead: small
    /// twins, and tensors with leading axes (their slabs' spans add up).
    pub fn zero_spans(&self) -> Option<Vec<ZeroSpan>> {
        let elements = self.padded_bytes() / self.elem_bytes.max(1);
        if self.shape.len() > 2 || elements < STRIPS_MIN_ELEMENTS {
            return None;
        }
        let block = *self.row_blocks().first()?;
        let padded_rows = match self.padded.len() {
            2 => self.padded[0] as usize,
            _ => 1,
        };
        let mut spans = Vec::with_capacity(2);
        if block.padded_pitch > block.row_bytes && block.rows > 0 {
            spans.push(ZeroSpan {
                offset: block.row_bytes,
                pitch: block.padded_pitch,
                width: block.padded_pitch - block.row_bytes,
                rows: block.rows,
            });
        }
        if padded_rows > block.rows {
            let width = (padded_rows - block.rows) * block.padded_pitch;
            spans.push(ZeroSpan {
                offset: block.rows * block.padded_pitch,
                pitch: width,
                width,
                rows: 1,
            });
        }
        Some(spans)
    }
}

/// Byte offsets of the padded tensors' twins in one scratch block, and its size.
fn twin_offsets(layouts: &[PaddedLayout]) -> (Vec<Option<usize>>, usize) {
    let mut total = 0usize;
    let offsets = layouts
        .iter()
        .map(|l| {
            l.is_padded().then(|| {
                let at = total;
                total += l.padded_bytes().div_ceil(TWIN_ALIGN) * TWIN_ALIGN;
                at
            })
        })
        .collect();
    (offsets, total)
}

/// Which way a tensor moves between its dense layout and its twin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadDirection {
    /// The dense tensor into its twin, the twin's other bytes zeroed (an
    /// odd input).
    IntoTwin,
    /// The twin's corner back into the dense tensor (a padded output).
    FromTwin,
}

impl PadDirection {
    /// `(source, destination)` of a move between a tensor's `dense` side
    /// and its `twin` side, whatever either is (addresses with pitches,
    /// matrices).
    fn source_and_target<T>(self, dense: T, twin: T) -> (T, T) {
        match self {
            PadDirection::IntoTwin => (dense, twin),
            PadDirection::FromTwin => (twin, dense),
        }
    }
}

/// Moves the tensor of `layout` between `dense` and its twin at `twin` in
/// `stream`'s order: by `copy_fill` in one pass a slab
/// ([`PaddedLayout::slab_matrices`]), else by 2-D driver copies, into a
/// twin zeroed first by a memset ([`PaddedLayout::zero_spans`]).
///
/// # Safety
/// `dense` and `twin` are device memory of `device` as large as the
/// layout's tensor and twin, and `stream` a live stream of `device` or null.
pub unsafe fn copy_twin(
    device: &Arc<Device>,
    stream: sys::CUstream,
    layout: &PaddedLayout,
    direction: PadDirection,
    dense: u64,
    twin: u64,
) -> Result<()> {
    if copy_fill_slabs(device, stream, layout, direction, dense, twin)? {
        return Ok(());
    }
    if direction == PadDirection::IntoTwin {
        match layout.zero_spans() {
            Some(spans) => {
                for span in spans {
                    raw::zero_rows_async(device, twin + span.offset as u64, &span, stream)?;
                }
            }
            None => raw::zero_async(device, twin, layout.padded_bytes(), stream)?,
        }
    }
    copy_rows(device, stream, layout, direction, dense, twin)
}

/// The rows of each block of `layout`, from the dense tensor into its twin
/// or back, by the driver's 2-D copies.
unsafe fn copy_rows(
    device: &Arc<Device>,
    stream: sys::CUstream,
    layout: &PaddedLayout,
    direction: PadDirection,
    dense: u64,
    twin: u64,
) -> Result<()> {
    for b in layout.row_blocks() {
        let ((src, src_pitch), (dst, dst_pitch)) = direction.source_and_target(
            (dense + b.dense_offset as u64, b.dense_pitch),
            (twin + b.padded_offset as u64, b.padded_pitch),
        );
        let rows = raw::RowsCopy {
            dst,
            dst_pitch,
            src,
            src_pitch,
            row_bytes: b.row_bytes,
            rows: b.rows,
        };
        raw::copy_rows_async(device, &rows, stream)?;
    }
    Ok(())
}

/// The same by `copy_fill`, a launch a slab, writing a twin's zeros too:
/// false, with nothing done, where it does not take the layout.
unsafe fn copy_fill_slabs(
    device: &Arc<Device>,
    stream: sys::CUstream,
    layout: &PaddedLayout,
    direction: PadDirection,
    dense: u64,
    twin: u64,
) -> Result<bool> {
    let Some(slabs) = layout.slab_matrices(dense, twin) else {
        return Ok(false);
    };
    for (tensor, twin) in slabs {
        let (src, dst) = direction.source_and_target(tensor, twin);
        copy_fill_async(device, stream, src, dst, layout.elem_bytes)?;
    }
    Ok(true)
}

/// Runs `launch` on padded twins of the tensors whose layout pads, in
/// `stream`'s order: `layouts` and `addrs` list the inputs (the first
/// `inputs`) then the outputs. Each padded input is copied into its twin
/// ([`copy_twin`]); `launch` gets the addresses to use (a twin's where
/// padded); then each padded output's twin is cut back into its tensor.
/// The twins live in one stream-ordered allocation, freed after the copies.
///
/// # Safety
/// Each address is device memory of `device` holding its layout's dense
/// tensor, and `stream` a live stream of `device` or null.
pub unsafe fn run_padded(
    device: &Arc<Device>,
    stream: sys::CUstream,
    layouts: &[PaddedLayout],
    inputs: usize,
    addrs: &[u64],
    launch: impl FnOnce(&[u64]) -> Result<()>,
) -> Result<()> {
    let (offsets, total) = twin_offsets(layouts);
    if total == 0 {
        return launch(addrs);
    }
    let base = raw::alloc_async(device, total, stream)?;
    let twins: Vec<u64> = offsets
        .iter()
        .zip(addrs)
        .map(|(at, &addr)| at.map_or(addr, |at| base + at as u64))
        .collect();
    // The padded inputs into their twins, or the padded outputs back.
    let copy_all = |direction: PadDirection| -> Result<()> {
        let wanted = |i: usize| (i < inputs) == (direction == PadDirection::IntoTwin);
        for (i, layout) in layouts.iter().enumerate() {
            if wanted(i) && layout.is_padded() {
                copy_twin(device, stream, layout, direction, addrs[i], twins[i])?;
            }
        }
        Ok(())
    };
    let result = (|| {
        copy_all(PadDirection::IntoTwin)?;
        launch(&twins)?;
        copy_all(PadDirection::FromTwin)
    })();
    let freed = raw::free_async(device, base, stream);
    result.and(freed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_pads_its_rows_and_columns_in_one_block() {
        // a [1025, 1031] half to multiples of 8 along its columns only.
        let l = PaddedLayout::new(&[1025, 1031], &[1, 8], 2);
        assert!(l.is_padded());
        assert_eq!(l.padded_shape(), &[1025, 1032]);
        assert_eq!(l.padded_bytes(), 1025 * 1032 * 2);
        assert_eq!(
            l.row_blocks(),
            vec![RowBlock {
                dense_offset: 0,
                padded_offset: 0,
                rows: 1025,
                row_bytes: 1031 * 2,
                dense_pitch: 1031 * 2,
                padded_pitch: 1032 * 2,
            }]
        );
        // Rows padded too: the copy moves the tensor's rows, the rest stays zero.
        let l = PaddedLayout::new(&[1031, 9], &[8, 8], 4);
        assert_eq!(l.padded_shape(), &[1032, 16]);
        let b = l.row_blocks();
        assert_eq!(
            (b.len(), b[0].rows, b[0].row_bytes, b[0].padded_pitch),
            (1, 1031, 36, 64)
        );
    }

    #[test]
    fn leading_axes_map_each_slab_to_its_place_in_the_twin() {
        // [3, 5, 7] padded to [4, 8, 8]: slab i of the tensor is slab i of
        // the twin (the leading axis grows past the end only).
        let l = PaddedLayout::new(&[3, 5, 7], &[4, 8, 8], 1);
        let b = l.row_blocks();
        assert_eq!(b.len(), 3);
        for (i, block) in b.iter().enumerate() {
            assert_eq!(block.dense_offset, i * 5 * 7);
            assert_eq!(block.padded_offset, i * 8 * 8);
            assert_eq!(
                (
                    block.rows,
                    block.row_bytes,
                    block.dense_pitch,
                    block.padded_pitch
                ),
                (5, 7, 7, 8)
            );
        }
        // [2, 3, 4, 5] with axis 1 padded to 4: slab (a, b) sits at a * 4 + b
        // of the twin (a slab: 4 x 5 halves, 40 bytes, in both).
        let l = PaddedLayout::new(&[2, 3, 4, 5], &[1, 4, 1, 1], 2);
        let slabs: Vec<(usize, usize)> = l
            .row_blocks()
            .iter()
            .map(|b| (b.dense_offset / 40, b.padded_offset / 40))
            .collect();
        assert_eq!(slabs, vec![(0, 0), (1, 1), (2, 2), (3, 4), (4, 5), (5, 6)]);
    }

    #[test]
    fn vectors_scalars_and_aligned_shapes() {
        let v = PaddedLayout::new(&[13], &[8], 2);
        assert_eq!(v.padded_shape(), &[16]);
        assert_eq!(v.row_blocks()[0].rows, 1);
        assert_eq!(v.row_blocks()[0].row_bytes, 26);
        let s = PaddedLayout::new(&[], &[], 4);
        assert!(!s.is_padded());
        assert_eq!((s.padded_bytes(), s.row_blocks()[0].row_bytes), (4, 4));
        let aligned = PaddedLayout::new(&[64, 128], &[8, 8], 2);
        assert!(!aligned.is_padded());
        // Empty leading axes: nothing to copy.
        assert!(PaddedLayout::new(&[0, 3, 5], &[1, 8, 8], 2)
            .row_blocks()
            .is_empty());
    }

    /// Marks the twin's bytes the copies and the zeroing write: every byte
    /// must be written exactly once.
    fn coverage(l: &PaddedLayout) -> Vec<u8> {
        let mut hits = vec![0u8; l.padded_bytes()];
        for b in l.row_blocks() {
            for r in 0..b.rows {
                let at = b.padded_offset + r * b.padded_pitch;
                hits[at..at + b.row_bytes].iter_mut().for_each(|h| *h += 1);
            }
        }
        for z in l.zero_spans().expect("strips") {
            for r in 0..z.rows {
                let at = z.offset + r * z.pitch;
                hits[at..at + z.width].iter_mut().for_each(|h| *h += 1);
            }
        }
        hits
    }

    #[test]
    fn large_twins_zero_only_what_the_copies_leave() {
        // b of an LLM head: [4096, 50257] halves, columns padded to 50264.
        let head = PaddedLayout::new(&[4096, 50257], &[8, 8], 2);
        let spans = head.zero_spans().expect("large: strips");
        assert_eq!(
            spans,
            vec![ZeroSpan {
                offset: 50257 * 2,
                pitch: 50264 * 2,
                width: 7 * 2,
                rows: 4096
            }]
        );
        assert!(coverage(&head).iter().all(|&h| h == 1));
        // Rows and columns both padded: the right strip and the rows below.
        let both = PaddedLayout::new(&[4097, 4097], &[8, 8], 2);
        assert_eq!(both.zero_spans().unwrap().len(), 2);
        assert!(coverage(&both).iter().all(|&h| h == 1));
        // Rows only (K of a [K, N] operand).
        let rows = PaddedLayout::new(&[4097, 4096], &[8, 1], 4);
        assert_eq!(
            rows.zero_spans().unwrap(),
            vec![ZeroSpan {
                offset: 4097 * 4096 * 4,
                pitch: 7 * 4096 * 4,
                width: 7 * 4096 * 4,
                rows: 1
            }]
        );
        assert!(coverage(&rows).iter().all(|&h| h == 1));
        // A long vector: one strip at its end.
        let v = PaddedLayout::new(&[(1 << 23) + 3], &[8], 2);
        assert!(coverage(&v).iter().all(|&h| h == 1));
    }

    #[test]
    fn small_or_many_slab_twins_are_zeroed_whole() {
        assert_eq!(
            PaddedLayout::new(&[2049, 2049], &[8, 8], 2).zero_spans(),
            None
        );
        assert_eq!(
            PaddedLayout::new(&[4, 2049, 2049], &[1, 8, 8], 2).zero_spans(),
            None
        );
        // The size is the twin's: 2896 x 2897 halves pad to 8.4M elements.
        assert!(PaddedLayout::new(&[2896, 2897], &[8, 8], 2)
            .zero_spans()
            .is_some());
    }

    #[test]
    fn slabs_map_to_copy_fill_matrices_unless_a_leading_axis_pads() {
        // b [1025, 1025] half: the tensor as is, its twin 1032 columns wide.
        let l = PaddedLayout::new(&[1025, 1025], &[8, 8], 2);
        let m = |addr, rows, cols, ld| Matrix {
            addr,
            rows,
            cols,
            ld,
        };
        assert_eq!(
            l.slab_matrices(0x1000, 0x8000),
            Some(vec![(
                m(0x1000, 1025, 1025, 1025),
                m(0x8000, 1032, 1032, 1032)
            )])
        );
        // [2, 3, 5] -> [2, 8, 8] floats: slab 1 at 15 and 64 elements.
        let l = PaddedLayout::new(&[2, 3, 5], &[1, 8, 8], 4);
        let slabs = l.slab_matrices(0, 4096).unwrap();
        assert_eq!(slabs[1], (m(60, 3, 5, 5), m(4096 + 256, 8, 8, 8)));
        // A vector: one row.
        let v = PaddedLayout::new(&[13], &[8], 2)
            .slab_matrices(0, 256)
            .unwrap();
        assert_eq!(v, vec![(m(0, 1, 13, 13), m(256, 1, 16, 16))]);
        // A padded leading axis, or bytes the kernel does not move: None.
        assert_eq!(
            PaddedLayout::new(&[3, 5, 7], &[4, 8, 8], 2).slab_matrices(0, 0),
            None
        );
        assert_eq!(
            PaddedLayout::new(&[3, 5], &[1, 8], 1).slab_matrices(0, 0),
            None
        );
    }

    #[test]
    fn twins_of_padded_tensors_only_each_256_bytes_aligned() {
        let layouts = [
            PaddedLayout::new(&[3, 5], &[1, 8], 2), // 48 bytes -> 256
            PaddedLayout::new(&[4, 8], &[1, 8], 2), // aligned: no twin
            PaddedLayout::new(&[3, 3], &[8, 8], 2), // 128 bytes -> 256
        ];
        assert_eq!(
            twin_offsets(&layouts),
            (vec![Some(0), None, Some(256)], 512)
        );
        assert_eq!(twin_offsets(&layouts[1..2]).1, 0);
    }
}
