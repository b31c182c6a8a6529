//! End to end, source to interpreter: `transpose.tc` on sizes that are
//! multiples of the tile and `transpose_masked.tc` on ragged and degenerate
//! shapes (1 x n, n x 1) and strided buffers, f32 and f16, checked exactly.
//!
//! Layout (the seed's): X is column-major, `X[i + j * ldx]` for i < M, j < N;
//! Y = X^T is written as `Y[j + i * ldy]`.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::interp::Memory;

struct Case {
    m: usize,
    n: usize,
    ldx: usize,
    ldy: usize,
}

/// Runs the kernel on one case and checks every element of Y: the
/// transposed values where i < M and j < N, the sentinel in the stride
/// padding (`j >= N`), which only the store mask can keep unwritten.
fn check<T: Num>(file: &str, tm: usize, tn: usize, c: Case) {
    let (tm_text, tn_text) = (tm.to_string(), tn.to_string());
    let k = Kernel::load(
        file,
        &[("TYPE", T::C_TYPE), ("TM", &tm_text), ("TN", &tn_text)],
    );
    let what = format!("{} M={} N={} ldx={} ldy={}", k.what, c.m, c.n, c.ldx, c.ldy);
    // Exactly sized buffers: X holds N columns of ldx, Y holds M rows of ldy.
    let x: Vec<T> = random(c.ldx * c.n, 7, 1000.0);
    let mut mem = Memory::new();
    let px = mem.alloc_slice(&x);
    let py = mem.alloc_slice(&vec![sentinel::<T>(); c.ldy * c.m]);
    let grid = [cdiv(c.m, tm), cdiv(c.n, tn), 1];
    let args = [ptr(px), ptr(py), int(c.m), int(c.n), int(c.ldx), int(c.ldy)];
    k.run(grid, &args, &mut mem);
    let want: Vec<T> = (0..c.ldy * c.m)
        .map(|at| {
            let (i, j) = (at / c.ldy, at % c.ldy);
            if j < c.n {
                x[i + j * c.ldx]
            } else {
                sentinel()
            }
        })
        .collect();
    assert_exact(&read(&mem, py, c.ldy * c.m), &want, &what);
}

fn dense(m: usize, n: usize) -> Case {
    Case {
        m,
        n,
        ldx: m,
        ldy: n,
    }
}

#[test]
fn transpose_on_whole_tiles() {
    for (tm, tn) in [(16, 16), (16, 64), (64, 16), (64, 64)] {
        check::<f32>("transpose.tc", tm, tn, dense(128, 64));
        check::<f32>("transpose.tc", tm, tn, dense(64, 192));
    }
    check::<f16>("transpose.tc", 32, 32, dense(64, 96));
    // Strided, still whole tiles.
    check::<f32>(
        "transpose.tc",
        16,
        16,
        Case {
            m: 32,
            n: 48,
            ldx: 40,
            ldy: 56,
        },
    );
}

#[test]
fn masked_transpose_on_ragged_shapes() {
    for t in [16, 32] {
        for (m, n) in [(37, 53), (1, 70), (70, 1), (1, 1), (33, 32), (t, t)] {
            check::<f32>("transpose_masked.tc", t, t, dense(m, n));
            check::<f16>("transpose_masked.tc", t, t, dense(m, n));
        }
    }
    // Tiles that are not square.
    check::<f32>("transpose_masked.tc", 64, 16, dense(37, 53));
    check::<f16>("transpose_masked.tc", 16, 32, dense(70, 1));
}

#[test]
fn masked_transpose_with_strides() {
    // ldx > M and ldy > N: the padding is in bounds, so only the masks keep
    // the kernel from reading it into Y or writing over it.
    for t in [16, 32] {
        check::<f32>(
            "transpose_masked.tc",
            t,
            t,
            Case {
                m: 37,
                n: 53,
                ldx: 40,
                ldy: 60,
            },
        );
        check::<f16>(
            "transpose_masked.tc",
            t,
            t,
            Case {
                m: 37,
                n: 53,
                ldx: 45,
                ldy: 64,
            },
        );
        check::<f32>(
            "transpose_masked.tc",
            t,
            t,
            Case {
                m: 1,
                n: 70,
                ldx: 8,
                ldy: 72,
            },
        );
        check::<f16>(
            "transpose_masked.tc",
            t,
            t,
            Case {
                m: 70,
                n: 1,
                ldx: 75,
                ldy: 9,
            },
        );
    }
}

#[test]
fn unmasked_transpose_on_a_ragged_shape_faults() {
    let k = Kernel::load(
        "transpose.tc",
        &[("TYPE", "float"), ("TM", "16"), ("TN", "16")],
    );
    let (m, n) = (37, 53);
    let mut mem = Memory::new();
    let px = mem.alloc_slice(&vec![1f32; m * n]);
    let py = mem.alloc_slice(&vec![0f32; m * n]);
    let args = [ptr(px), ptr(py), int(m), int(n), int(m), int(n)];
    let err = k
        .try_run([cdiv(m, 16), cdiv(n, 16), 1], &args, &mut mem)
        .expect_err("an unmasked transpose past the edges must fault");
    assert!(
        err.message.contains("past the end") || err.message.contains("outside every buffer"),
        "{}",
        err.message
    );
    // Program (2, 0, 0) covers rows 32..48 of X: its loads stay inside X
    // (the columns are still short) but its store reaches Y row 47, past the
    // 37 rows Y holds. The error points at the statement, line 16.
    assert!(err.message.starts_with("store of f32"), "{}", err.message);
    assert!(err.message.contains("program (2, 0, 0)"), "{}", err.message);
    let rendered = k.render(&err);
    assert!(rendered.contains("transpose.tc:16:"), "{rendered}");
}
