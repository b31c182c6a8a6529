//! End to end, source to interpreter: matrix products (`dot.tc`,
//! `dot_prefetch.tc`, the four variants of `dot_trans.tc`, and the masked
//! gradient loops of `dot_grad.tc`), f32 and f16, on shapes that are
//! multiples of the tiles (the seed kernels have no masks; `dot_grad.tc`'s
//! also on edge tiles),
//! against a Rust triple loop in f64: within the f32 accumulation bound for
//! random data, and exactly for data whose products and sums are exact.
//!
//! Layouts: C[i * ldc + j]; A is A[i * lda + l], or A[l * lda + i] when
//! transposed (`USE_A=^a`); B is B[l * ldb + j], or B[j * ldb + l] when
//! transposed (`USE_B=^b`).

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::interp::Memory;

#[derive(Clone, Copy)]
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    /// Extra columns in each leading dimension (a multiple of 8, as the
    /// kernels' `__multipleof(8)` promise).
    pad: usize,
    a_t: bool,
    b_t: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Data {
    /// Uniform in [-1, 1): checked within the f32 accumulation bound.
    Random,
    /// Multiples of 1/4: every product and sum is exact, checked exactly.
    Exact,
}

/// Runs `file` with tiles (tm, tn, tk) on `p` and checks every element of C,
/// including the sentinels in its stride padding. `overread` pads A and B
/// with one more tile of K: `dot_trans.tc` as the seed writes it loads the
/// next tile after the last iteration without a guard.
fn check<T: Num>(
    file: &str,
    (tm, tn, tk): (usize, usize, usize),
    p: Problem,
    data: Data,
    overread: bool,
) {
    let (tm_text, tn_text, tk_text) = (tm.to_string(), tn.to_string(), tk.to_string());
    let mut defines = vec![
        ("TYPE", T::C_TYPE),
        ("TM", &tm_text),
        ("TN", &tn_text),
        ("TK", &tk_text),
    ];
    if file == "dot_trans.tc" || file == "dot_grad.tc" {
        defines.extend(dot_trans_defines(p.a_t, p.b_t));
    }
    let kernel = Kernel::load(file, &defines);
    let (m, n, k) = (p.m, p.n, p.k);
    let what = format!("{} M={m} N={n} K={k} pad={}", kernel.what, p.pad);
    // Stored shapes: (rows, leading dimension).
    let (a_rows, lda) = if p.a_t {
        (k, m + p.pad)
    } else {
        (m, k + p.pad)
    };
    let (b_rows, ldb) = if p.b_t {
        (n, k + p.pad)
    } else {
        (k, n + p.pad)
    };
    let ldc = n + p.pad;
    let extra = |ld: usize| if overread { tk * ld } else { 0 };
    let gen = |len, seed| match data {
        Data::Random => random::<T>(len, seed, 1.0),
        Data::Exact => quarters::<T>(len, seed),
    };
    let a: Vec<T> = gen(a_rows * lda + extra(lda), 31);
    let b: Vec<T> = gen(b_rows * ldb + extra(ldb), 32);
    let at = |i: usize, l: usize| a[if p.a_t { l * lda + i } else { i * lda + l }].to_f64();
    let bt = |l: usize, j: usize| b[if p.b_t { j * ldb + l } else { l * ldb + j }].to_f64();

    let mut mem = Memory::new();
    let (pa, pb) = (mem.alloc_slice(&a), mem.alloc_slice(&b));
    let pc = mem.alloc_slice(&vec![sentinel::<T>(); m * ldc]);
    let args = [
        ptr(pa),
        ptr(pb),
        ptr(pc),
        int(m),
        int(n),
        int(k),
        int(lda),
        int(ldb),
        int(ldc),
    ];
    let grid = [m.div_ceil(tm) as u32, n.div_ceil(tn) as u32, 1];
    kernel.run(grid, &args, &mut mem);
    let got: Vec<T> = read(&mem, pc, m * ldc);

    let mut want = vec![sentinel::<T>().to_f64(); m * ldc];
    // Sum of |a * b| per element: the scale of the accumulation error.
    let mut scale = vec![0.0; m * ldc];
    for i in 0..m {
        for j in 0..n {
            want[i * ldc + j] = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
            scale[i * ldc + j] = (0..k).map(|l| (at(i, l) * bt(l, j)).abs()).sum();
        }
    }
    match data {
        Data::Exact => {
            let want: Vec<T> = want.iter().map(|&w| T::from_f64(w)).collect();
            assert_exact(&got, &want, &what);
        }
        Data::Random => {
            // f32 accumulation of k products in any order, then the rounding
            // of the stored type.
            let tol =
                |at: usize, w: f64| k as f64 * f32::EPSILON as f64 * scale[at] + T::ulp(w) / 2.0;
            assert_close(&got, &want, tol, &what);
        }
    }
}

fn problem(m: usize, n: usize, k: usize) -> Problem {
    Problem {
        m,
        n,
        k,
        pad: 0,
        a_t: false,
        b_t: false,
    }
}

#[test]
fn dot_f32() {
    for data in [Data::Random, Data::Exact] {
        check::<f32>("dot.tc", (32, 32, 8), problem(64, 64, 64), data, false);
        check::<f32>("dot.tc", (32, 32, 8), problem(64, 96, 40), data, false);
        check::<f32>(
            "dot.tc",
            (16, 32, 8),
            Problem {
                pad: 8,
                ..problem(48, 64, 32)
            },
            data,
            false,
        );
    }
}

#[test]
fn dot_f16() {
    for data in [Data::Random, Data::Exact] {
        check::<f16>("dot.tc", (64, 64, 16), problem(64, 64, 64), data, false);
        check::<f16>(
            "dot.tc",
            (32, 64, 16),
            Problem {
                pad: 16,
                ..problem(64, 128, 48)
            },
            data,
            false,
        );
    }
}

#[test]
fn dot_prefetch() {
    // The prefetch is guarded (`check ? *pa : 0`), so exact buffers suffice.
    for data in [Data::Random, Data::Exact] {
        check::<f16>(
            "dot_prefetch.tc",
            (64, 64, 16),
            problem(64, 64, 64),
            data,
            false,
        );
        check::<f32>(
            "dot_prefetch.tc",
            (32, 32, 8),
            problem(64, 96, 40),
            data,
            false,
        );
        check::<f32>(
            "dot_prefetch.tc",
            (32, 32, 8),
            Problem {
                pad: 8,
                ..problem(32, 32, 8)
            },
            data,
            false,
        );
    }
}

#[test]
fn dot_trans_all_four_layouts() {
    for (a_t, b_t) in [(false, false), (true, false), (false, true), (true, true)] {
        let p = Problem {
            a_t,
            b_t,
            ..problem(64, 64, 64)
        };
        for data in [Data::Random, Data::Exact] {
            check::<f16>("dot_trans.tc", (64, 32, 16), p, data, true);
            check::<f32>(
                "dot_trans.tc",
                (32, 32, 8),
                Problem { pad: 8, ..p },
                data,
                true,
            );
        }
    }
}

/// dot's gradients as `tests/ops/dot_nt.tc` and `dot_tn.tc` loop when
/// aligned (masked loads, `a @ ^b` and `^a @ b`, the loops the pipeline
/// stages transposed): whole tiles and edge tiles along M, N and K.
#[test]
fn dot_grad_transposed_operands_with_edges() {
    for (a_t, b_t) in [(false, true), (true, false)] {
        for (m, n, k) in [(64, 64, 64), (72, 40, 24)] {
            let p = Problem {
                a_t,
                b_t,
                ..problem(m, n, k)
            };
            for data in [Data::Random, Data::Exact] {
                check::<f16>("dot_grad.tc", (32, 32, 16), p, data, false);
                check::<f32>(
                    "dot_grad.tc",
                    (32, 32, 8),
                    Problem { pad: 8, ..p },
                    data,
                    false,
                );
            }
        }
    }
}

#[test]
fn dot_trans_as_written_reads_one_tile_past_k() {
    // Why the dot_trans checks pad A and B: after the last iteration the seed
    // kernel prefetches the next tile unguarded (`a = *pa;`). With buffers of
    // exactly K columns the interpreter reports that access.
    let mut defines = vec![("TYPE", "float"), ("TM", "32"), ("TN", "32"), ("TK", "8")];
    defines.extend(dot_trans_defines(false, false));
    let kernel = Kernel::load("dot_trans.tc", &defines);
    let (m, n, k) = (32, 32, 16);
    let mut mem = Memory::new();
    let pa = mem.alloc_slice(&vec![1f32; m * k]);
    let pb = mem.alloc_slice(&vec![1f32; k * n]);
    let pc = mem.alloc_slice(&vec![0f32; m * n]);
    let args = [
        ptr(pa),
        ptr(pb),
        ptr(pc),
        int(m),
        int(n),
        int(k),
        int(k),
        int(n),
        int(n),
    ];
    let err = kernel
        .try_run([1, 1, 1], &args, &mut mem)
        .expect_err("the unguarded prefetch runs past A or B");
    let rendered = kernel.render(&err);
    assert!(err.message.starts_with("load of f32"), "{rendered}");
    assert!(rendered.contains("dot_trans.tc:34:"), "{rendered}");
}
