//! The runtime's own kernel, `copy_fill` (`kernels/copy_fill.tc`, compiled
//! by `scripts/runtime_kernels.sh`): copies a row-major matrix into another
//! and zero-fills what the source lacks. Padding an op's odd-sized inputs
//! into aligned twins and cutting padded outputs back each take one launch,
//! writing every byte once, where a memset and a 2-D driver copy cost more
//! host time and move rows of a few KB at about half the bandwidth.

use crate::device::Device;
use crate::error::{Result, RuntimeError};
use crate::kernel::{Grid, Kernel};
use crate::manifest::Variant;
use crate::module::ModuleImage;
use crate::stream::Stream;
use crate::KernelArg;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A row-major matrix in device memory: `rows` rows of `cols` elements,
/// row `r` starting `ld` elements after row `r - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub addr: u64,
    pub rows: usize,
    pub cols: usize,
    pub ld: usize,
}

/// The kernel's tile: `TR` rows of `TC` columns a program (the script's `-D`s).
const TILE_ROWS: usize = 16;
const TILE_COLS: usize = 128;
/// A side whose address is 16-byte aligned and whose columns and leading
/// stride are whole 16-byte runs can be read or written 16 bytes at a time.
const VECTOR_BYTES: usize = 16;

/// Which embedded PTX: the word width, and whether both sides move 16
/// bytes at a time (with one side only, the other's lanes sit 16 bytes
/// apart: slower than neither, `kernels/copy_fill.tc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Flavor {
    word_bytes: usize,
    vector: bool,
}

impl Flavor {
    fn image(self) -> &'static str {
        match (self.word_bytes, self.vector) {
            (2, false) => include_str!("../kernels/copy_fill_b16_generic.ptx"),
            (2, true) => include_str!("../kernels/copy_fill_b16_vec16.ptx"),
            (_, false) => include_str!("../kernels/copy_fill_b32_generic.ptx"),
            (_, true) => include_str!("../kernels/copy_fill_b32_vec16.ptx"),
        }
    }

    /// The manifest entry: the parameters' types and promises, which the
    /// launch checks (vectorized: pointers 16-byte aligned, columns and
    /// leading strides multiples of a vector; else pointers aligned to a
    /// word only).
    fn variant(self) -> Variant {
        let elem = if self.word_bytes == 2 { "i16" } else { "i32" };
        let (align, multiple) = match self.vector {
            true => (VECTOR_BYTES, VECTOR_BYTES / self.word_bytes),
            false => (self.word_bytes, 1),
        };
        let json = serde_json::json!({
            "file": "copy_fill.ptx",
            "kernel": "copy_fill",
            "num_warps": 4,
            "params": [
                {"name": "S", "type": format!("{elem}*"), "aligned": align, "readonly": true},
                {"name": "D", "type": format!("{elem}*"), "aligned": align, "writeonly": true},
                {"name": "rows", "type": "i32"},
                {"name": "cols", "type": "i32", "multiple_of": multiple},
                {"name": "lds", "type": "i32", "multiple_of": multiple},
                {"name": "dst_rows", "type": "i32"},
                {"name": "dst_cols", "type": "i32", "multiple_of": multiple},
                {"name": "ldd", "type": "i32", "multiple_of": multiple},
            ],
        });
        serde_json::from_value(json).expect("copy_fill's manifest entry is well formed")
    }
}

/// `m` in words of `word_bytes` (an element of 8 bytes is two 4-byte words).
fn in_words(m: Matrix, elem_bytes: usize, word_bytes: usize) -> Matrix {
    let per = elem_bytes / word_bytes;
    Matrix {
        cols: m.cols * per,
        ld: m.ld * per,
        ..m
    }
}

/// Whether a side (in words) can move 16 bytes at a time.
fn vectorizes(m: Matrix, word_bytes: usize) -> bool {
    let vector = VECTOR_BYTES / word_bytes;
    m.addr % VECTOR_BYTES as u64 == 0 && m.cols % vector == 0 && (m.ld % vector == 0 || m.rows <= 1)
}

/// What one launch needs: the flavor, the two sides in words, the programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    flavor: Flavor,
    src: Matrix,
    dst: Matrix,
    programs: u32,
}

/// The launch for these sides, or why the kernel cannot take them: elements
/// of 2 bytes or a multiple of 4, at most 2^31 - 1 elements a side (its
/// indices are 32-bit).
fn plan(src: Matrix, dst: Matrix, elem_bytes: usize) -> std::result::Result<Plan, String> {
    let word_bytes = match elem_bytes {
        2 => 2,
        n if n >= 4 && n % 4 == 0 => 4,
        n => {
            return Err(format!(
                "elements of {n} bytes (copy_fill takes 2, or a multiple of 4)"
            ))
        }
    };
    let (src, dst) = (
        in_words(src, elem_bytes, word_bytes),
        in_words(dst, elem_bytes, word_bytes),
    );
    let fits = |m: Matrix| {
        let span = m
            .rows
            .saturating_sub(1)
            .saturating_mul(m.ld)
            .saturating_add(m.cols);
        span <= i32::MAX as usize && m.ld <= i32::MAX as usize && m.rows <= i32::MAX as usize
    };
    if !fits(src) || !fits(dst) {
        return Err(format!(
            "a {}x{} matrix (ld {}) into {}x{} (ld {}): past 32-bit indices",
            src.rows, src.cols, src.ld, dst.rows, dst.cols, dst.ld
        ));
    }
    let tiles = dst.rows.div_ceil(TILE_ROWS) * dst.cols.div_ceil(TILE_COLS);
    let programs = u32::try_from(tiles)
        .ok()
        .filter(|&p| p <= i32::MAX as u32)
        .ok_or_else(|| format!("{tiles} tiles"))?;
    let flavor = Flavor {
        word_bytes,
        vector: vectorizes(src, word_bytes) && vectorizes(dst, word_bytes),
    };
    Ok(Plan {
        flavor,
        src,
        dst,
        programs,
    })
}

/// Whether [`copy_fill_async`] takes these sides (else the caller copies
/// another way).
pub fn supports(src: Matrix, dst: Matrix, elem_bytes: usize) -> bool {
    plan(src, dst, elem_bytes).is_ok()
}

/// Kernels loaded, by device ordinal and flavor.
type Loaded = Mutex<HashMap<(usize, Flavor), Arc<Kernel>>>;

/// The kernel of `flavor` on `device`, loaded once: loading and reading
/// attributes cost more than a launch.
fn loaded(device: &Arc<Device>, flavor: Flavor) -> Result<Arc<Kernel>> {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let key = (device.ordinal(), flavor);
    let map = LOADED.get_or_init(Default::default);
    if let Some(k) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(k.clone());
    }
    let image = ModuleImage::Ptx(flavor.image().to_string());
    let kernel = Arc::new(Kernel::from_image(
        device,
        &image,
        "the runtime's copy_fill",
        flavor.variant(),
    )?);
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, kernel.clone());
    Ok(kernel)
}

/// Copies `src` into `dst` in `stream`'s order: `dst[r, c] = src[r, c]`
/// where `r < src.rows` and `c < src.cols`, zero elsewhere in `dst`'s
/// `rows` x `cols` (what lies past them in `dst` stays untouched). Elements
/// of `elem_bytes`; an empty `dst` launches nothing.
///
/// # Safety
/// Both addresses are device memory of `device` holding their matrices,
/// and `stream` a live stream of `device` or null.
pub unsafe fn copy_fill_async(
    device: &Arc<Device>,
    stream: sys::CUstream,
    src: Matrix,
    dst: Matrix,
    elem_bytes: usize,
) -> Result<()> {
    if dst.rows == 0 || dst.cols == 0 {
        return Ok(());
    }
    let p = plan(src, dst, elem_bytes).map_err(|why| RuntimeError::InvalidLaunch {
        kernel: "copy_fill".to_string(),
        reason: why,
    })?;
    let kernel = loaded(device, p.flavor)?;
    // SAFETY: the caller vouches for the stream (not destroyed on drop).
    let stream = unsafe { Stream::from_raw(device, stream.cast()) };
    let i32_of = |n: usize| KernelArg::I32(n as i32); // plan() bounded each
    kernel.launch(
        &stream,
        Grid(p.programs, 1, 1),
        &[
            KernelArg::Ptr(p.src.addr),
            KernelArg::Ptr(p.dst.addr),
            i32_of(p.src.rows),
            i32_of(p.src.cols),
            i32_of(p.src.ld),
            i32_of(p.dst.rows),
            i32_of(p.dst.cols),
            i32_of(p.dst.ld),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(addr: u64, rows: usize, cols: usize, ld: usize) -> Matrix {
        Matrix {
            addr,
            rows,
            cols,
            ld,
        }
    }

    #[test]
    fn only_two_aligned_sides_vectorize() {
        // a [1025, 1025] half into its twin [1025, 1032]: element by element.
        let p = plan(m(0x1000, 1025, 1025, 1025), m(0x9000, 1025, 1032, 1032), 2).unwrap();
        assert_eq!(
            p.flavor,
            Flavor {
                word_bytes: 2,
                vector: false
            }
        );
        assert_eq!(p.programs, 1025u32.div_ceil(16) * 1032u32.div_ceil(128));
        // A twin with padded rows only, cut back: both sides whole vectors.
        let rows = plan(m(0x9000, 1032, 1024, 1024), m(0x1000, 1025, 1024, 1024), 2).unwrap();
        assert!(rows.flavor.vector);
        // An address off 16 bytes, or a stride off a vector, keeps it scalar.
        assert!(
            !plan(m(0x1002, 8, 8, 8), m(0x2000, 8, 8, 8), 2)
                .unwrap()
                .flavor
                .vector
        );
        assert!(
            !plan(m(0x1000, 8, 8, 12), m(0x2000, 8, 8, 8), 2)
                .unwrap()
                .flavor
                .vector
        );
        // One row: its stride does not matter.
        assert!(
            plan(m(0x1000, 1, 8, 3), m(0x2000, 1, 8, 8), 2)
                .unwrap()
                .flavor
                .vector
        );
    }

    #[test]
    fn wide_elements_move_as_words_and_odd_widths_are_refused() {
        // fp64 [3, 5] into [3, 8]: 4-byte words, twice the columns.
        let p = plan(m(0, 3, 5, 5), m(256, 3, 8, 8), 8).unwrap();
        assert_eq!(p.flavor.word_bytes, 4);
        assert_eq!(
            (p.src.cols, p.src.ld, p.dst.cols, p.dst.ld),
            (10, 10, 16, 16)
        );
        assert!(!p.flavor.vector);
        // [3, 8] doubles into [4, 8]: 16 words a row, both sides vectorize.
        assert!(
            plan(m(0, 3, 8, 8), m(256, 4, 8, 8), 8)
                .unwrap()
                .flavor
                .vector
        );
        assert_eq!(
            plan(m(0, 3, 5, 5), m(0, 3, 8, 8), 4)
                .unwrap()
                .flavor
                .word_bytes,
            4
        );
        assert!(plan(m(0, 3, 5, 5), m(0, 3, 8, 8), 1)
            .unwrap_err()
            .contains("1 bytes"));
        assert!(!supports(m(0, 3, 5, 5), m(0, 3, 8, 8), 6));
    }

    #[test]
    fn sides_past_32_bit_indices_are_refused() {
        let big = m(0, 65536, 65536, 65536);
        assert!(plan(big, m(0, 8, 8, 8), 2).unwrap_err().contains("32-bit"));
        // One row of a long vector: the span is its columns.
        assert!(supports(
            m(0, 1, 1 << 30, 1 << 30),
            m(0, 1, 1 << 30, 1 << 30),
            2
        ));
    }

    #[test]
    fn every_flavor_declares_its_promises() {
        for word_bytes in [2, 4] {
            for vector in [false, true] {
                let f = Flavor { word_bytes, vector };
                let v = f.variant();
                assert_eq!(v.params.len(), 8);
                assert!(f.image().contains(".entry copy_fill("));
                let multiple = if vector {
                    (VECTOR_BYTES / word_bytes) as u64
                } else {
                    1
                };
                for i in [3, 4, 6, 7] {
                    assert_eq!(v.params[i].multiple_of, Some(multiple), "{f:?} param {i}");
                }
                // Vectorized PTX exactly where promised.
                assert_eq!(f.image().contains("v4.b32"), vector, "{f:?}");
            }
        }
    }
}
