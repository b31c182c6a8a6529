//! The runtime's own kernel, `plugins/runtime/kernels/copy_fill.tc`: on the
//! CPU interpreter it pads odd matrices into aligned twins (zeros past the
//! source) and cuts them back, for 2- and 4-byte words, element by element
//! and 16 bytes at a time; and the PTX the runtime embeds is what this
//! compiler makes of it now (`scripts/runtime_kernels.sh`).

mod e2e_util;

use e2e_util::*;
use std::path::Path;
use tritonc::interp::{Element, Memory};

const SOURCE: &str = "../../plugins/runtime/kernels/copy_fill.tc";
const TILE: (usize, usize) = (16, 128);

/// One matrix: rows, columns, leading stride (elements).
#[derive(Clone, Copy, Debug)]
struct Side {
    rows: usize,
    cols: usize,
    ld: usize,
}

/// Runs copy_fill from `src` into `dst` and checks every element of the
/// destination buffer: the source where inside both, zero inside `dst`
/// only, the sentinel past `dst`'s columns (the stride gap, never written).
fn check<T: Element + PartialEq + std::fmt::Debug>(
    ty: &str,
    word: impl Fn(usize) -> T,
    sentinel: T,
    zero: T,
    align: usize,
    src: Side,
    dst: Side,
) {
    let align = align.to_string();
    let (tr, tc) = (TILE.0.to_string(), TILE.1.to_string());
    let k = Kernel::load(
        SOURCE,
        &[("TYPE", ty), ("TR", &tr), ("TC", &tc), ("ALIGN", &align)],
    );
    let what = format!("{} {src:?} -> {dst:?}", k.what);
    let src_data: Vec<T> = (0..src.rows * src.ld).map(&word).collect();
    let mut mem = Memory::new();
    let ps = mem.alloc_slice(&src_data);
    let pd = mem.alloc_slice(&vec![sentinel; dst.rows * dst.ld]);
    let programs = cdiv(dst.rows, TILE.0) * cdiv(dst.cols, TILE.1);
    let args = [
        ptr(ps),
        ptr(pd),
        int(src.rows),
        int(src.cols),
        int(src.ld),
        int(dst.rows),
        int(dst.cols),
        int(dst.ld),
    ];
    k.run([programs, 1, 1], &args, &mut mem);
    let got: Vec<T> = mem.read(pd, dst.rows * dst.ld).expect("readable");
    for r in 0..dst.rows {
        for c in 0..dst.ld {
            let want = if c >= dst.cols {
                sentinel
            } else if r < src.rows && c < src.cols {
                src_data[r * src.ld + c]
            } else {
                zero
            };
            assert_eq!(got[r * dst.ld + c], want, "{what}: element ({r}, {c})");
        }
    }
}

fn side(rows: usize, cols: usize, ld: usize) -> Side {
    Side { rows, cols, ld }
}

#[test]
fn pads_odd_halfwords_into_aligned_twins_and_cuts_them_back() {
    // Bit patterns, not values: every 16-bit word moves as is (a NaN too).
    let word = |i: usize| (i as i16).wrapping_mul(7919) | 1;
    let b16 = |flavor, src, dst| check::<i16>("int16_t", word, -21846, 0, flavor, src, dst);
    // b [37, 45] into its twin [40, 48]: rows and columns padded.
    b16(1, side(37, 45, 45), side(40, 48, 48));
    // A strided source (a view): its leading stride, not its columns.
    b16(1, side(19, 21, 29), side(24, 24, 24));
    // Back: the twin's corner into a dense odd matrix.
    b16(1, side(40, 48, 48), side(37, 45, 45));
    // Several tiles each way, with a stride gap left alone in the destination.
    b16(1, side(33, 130, 131), side(35, 136, 140));
    // Rows padded only (K of a [K, N] operand): 16 bytes at a time, both ways.
    b16(8, side(37, 136, 136), side(40, 136, 144));
    b16(8, side(40, 136, 144), side(37, 136, 136));
    // One row (a vector).
    b16(1, side(1, 13, 13), side(1, 16, 16));
}

#[test]
fn pads_odd_words_and_empty_sources_give_zeros() {
    let word = |i: usize| (i as i32).wrapping_mul(-104729) ^ 0x7f80_0001;
    let b32 = |flavor, src, dst| check::<i32>("int", word, 0x5555_5555, 0, flavor, src, dst);
    b32(1, side(17, 131, 131), side(24, 136, 136));
    b32(1, side(24, 136, 136), side(17, 131, 131));
    b32(4, side(9, 12, 16), side(16, 20, 20));
    // fp64 as word pairs: [3, 5] doubles are [3, 10] words into [3, 16].
    b32(1, side(3, 10, 10), side(3, 16, 16));
    // No source rows (K = 0): the twin is all zeros.
    b32(4, side(0, 8, 8), side(8, 8, 8));
}

#[test]
fn runtime_kernels_are_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let fresh = std::env::temp_dir().join(format!("runtime-kernels-{}", std::process::id()));
    let status = std::process::Command::new("bash")
        .arg(root.join("scripts/runtime_kernels.sh"))
        .arg(&fresh)
        .env("TRITONC", env!("CARGO_BIN_EXE_tritonc"))
        .status()
        .expect("bash runs");
    assert!(status.success(), "scripts/runtime_kernels.sh failed");
    let committed = root.join("plugins/runtime/kernels");
    let mut compared = 0;
    for entry in std::fs::read_dir(&fresh).expect("fresh folder") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("a file").to_owned();
        let now = std::fs::read_to_string(&path).expect("fresh PTX");
        let kept = std::fs::read_to_string(committed.join(&name)).unwrap_or_default();
        assert!(
            now == kept,
            "plugins/runtime/kernels/{} is not what the compiler makes of copy_fill.tc now: \
             run scripts/runtime_kernels.sh and commit it",
            name.to_string_lossy()
        );
        compared += 1;
    }
    let _ = std::fs::remove_dir_all(&fresh);
    assert_eq!(compared, 4, "two word widths, two flavors each");
}
