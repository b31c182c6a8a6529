//! End to end, source to interpreter: the matmul kernels `dot_remat.tc` (seed
//! 003's rematerialized epilogue) and `matmul_grouped.tc` (seed 004: GROUP_M
//! program swizzle, masked edges, fused leaky ReLU) in f32, f16 and bf16,
//! against a Rust triple loop in f64. Every element of C is checked, and the
//! padding columns of C must keep their sentinel (nothing written past N).
//!
//! Layouts (row-major): A[i * lda + l], B[l * ldb + j], C[i * ldc + j].

mod e2e_util;

use e2e_util::*;
use half::{bf16, f16};
use tritonc::interp::{ArgValue, Memory};

#[derive(Clone, Copy, Debug)]
struct Shape {
    m: usize,
    n: usize,
    k: usize,
    /// Extra columns in each leading dimension (holding sentinels in C).
    pad: usize,
}

fn shape(m: usize, n: usize, k: usize) -> Shape {
    Shape { m, n, k, pad: 0 }
}

#[derive(Clone, Copy, PartialEq)]
enum Data {
    /// Uniform in [-1, 1): checked within the f32 accumulation bound.
    Random,
    /// Multiples of 1/4: every product, sum and `alpha * c` (alpha a power of
    /// two) is exact in f32, so C is checked bit for bit.
    Exact,
}

/// Tiles and program grouping of one compiled variant.
#[derive(Clone, Copy, Debug)]
struct Tiles {
    tm: usize,
    tn: usize,
    tk: usize,
    group_m: usize,
}

/// What a variant of `matmul_grouped.tc` is built with.
#[derive(Clone, Copy)]
struct Variant {
    tiles: Tiles,
    /// `Some(alpha)`: the leaky ReLU epilogue (`-DLEAKY_RELU=1`).
    leaky: Option<f64>,
    /// `-DDIV=__multipleof(16)`: M, N, K and the leading dims are multiples of 16.
    div16: bool,
}

/// The program of 1-D id `pid` as (tile row, tile column): groups of
/// `group_m` tile rows, column by column inside a group (seed 004).
fn grouped_tile(pid: usize, grid_m: usize, grid_n: usize, group_m: usize) -> (usize, usize) {
    let width = group_m * grid_n;
    let first_m = pid / width * group_m;
    let group_size = (grid_m - first_m).min(group_m);
    (first_m + pid % width % group_size, pid % width / group_size)
}

struct Operands<T> {
    a: Vec<T>,
    b: Vec<T>,
    lda: usize,
    ldb: usize,
    ldc: usize,
}

fn operands<T: Num>(s: Shape, data: Data) -> Operands<T> {
    let (lda, ldb, ldc) = (s.k + s.pad, s.n + s.pad, s.n + s.pad);
    let gen = |len, seed| match data {
        Data::Random => random::<T>(len, seed, 1.0),
        Data::Exact => quarters::<T>(len, seed),
    };
    Operands {
        a: gen(s.m * lda, 41),
        b: gen(s.k * ldb, 42),
        lda,
        ldb,
        ldc,
    }
}

/// The exact product (sentinels in the padding) and, per element, the sum of
/// |a * b| (the scale of the f32 accumulation error).
fn reference<T: Num>(s: Shape, o: &Operands<T>, leaky: Option<f64>) -> (Vec<f64>, Vec<f64>) {
    let mut want = vec![sentinel::<T>().to_f64(); s.m * o.ldc];
    let mut scale = vec![0.0; s.m * o.ldc];
    for i in 0..s.m {
        for j in 0..s.n {
            let terms = (0..s.k).map(|l| o.a[i * o.lda + l].to_f64() * o.b[l * o.ldb + j].to_f64());
            let sum: f64 = terms.clone().sum();
            want[i * o.ldc + j] = match leaky {
                Some(alpha) if sum < 0.0 => alpha * sum,
                _ => sum,
            };
            scale[i * o.ldc + j] = terms.map(f64::abs).sum();
        }
    }
    (want, scale)
}

/// Compares C with the reference: exactly for exact data, else within the
/// f32 accumulation bound, one f32 rounding (of `alpha * c`) and the rounding
/// of the stored type.
fn compare<T: Num>(got: &[T], want: &[f64], scale: &[f64], s: Shape, data: Data, what: &str) {
    match data {
        Data::Exact => {
            let want: Vec<T> = want.iter().map(|&w| T::from_f64(w)).collect();
            assert_exact(got, &want, what);
        }
        Data::Random => {
            let tol = |at: usize, w: f64| {
                s.k as f64 * f32::EPSILON as f64 * scale[at] + f32::ulp(w) + T::ulp(w) / 2.0
            };
            assert_close(got, want, tol, what);
        }
    }
}

fn grouped_kernel<T: Num>(v: Variant) -> Kernel {
    let t = v.tiles;
    let (tm, tn, tk, g) = (
        t.tm.to_string(),
        t.tn.to_string(),
        t.tk.to_string(),
        t.group_m.to_string(),
    );
    let leaky = if v.leaky.is_some() { "1" } else { "0" };
    let mut defines = vec![
        ("TYPE", T::C_TYPE),
        ("TM", tm.as_str()),
        ("TN", tn.as_str()),
        ("TK", tk.as_str()),
        ("GROUP_M", g.as_str()),
        ("LEAKY_RELU", leaky),
    ];
    if v.div16 {
        defines.push(("DIV", "__multipleof(16)"));
    }
    Kernel::load("matmul_grouped.tc", &defines)
}

/// The arguments every matmul kernel here starts with: `A, B, C, M, N, K,
/// lda, ldb, ldc`.
fn matmul_args(pa: u64, pb: u64, pc: u64, s: Shape, o: &Operands<impl Num>) -> Vec<ArgValue> {
    vec![
        ptr(pa),
        ptr(pb),
        ptr(pc),
        int(s.m),
        int(s.n),
        int(s.k),
        int(o.lda),
        int(o.ldb),
        int(o.ldc),
    ]
}

/// `matmul_grouped.tc` takes the leaky-ReLU slope last.
fn grouped_args(
    pa: u64,
    pb: u64,
    pc: u64,
    s: Shape,
    o: &Operands<impl Num>,
    alpha: f64,
) -> Vec<ArgValue> {
    let mut args = matmul_args(pa, pb, pc, s, o);
    args.push(ArgValue::Float(alpha));
    args
}

/// Runs `matmul_grouped.tc` on its full 1-D grid and checks every element.
fn check_grouped<T: Num>(v: Variant, s: Shape, data: Data) {
    let kernel = grouped_kernel::<T>(v);
    let what = format!("{} {s:?}", kernel.what);
    let o = operands::<T>(s, data);
    let mut mem = Memory::new();
    let (pa, pb) = (mem.alloc_slice(&o.a), mem.alloc_slice(&o.b));
    let pc = mem.alloc_slice(&vec![sentinel::<T>(); s.m * o.ldc]);
    let programs = cdiv(s.m, v.tiles.tm) * cdiv(s.n, v.tiles.tn);
    let args = grouped_args(pa, pb, pc, s, &o, v.leaky.unwrap_or(0.0));
    kernel.run([programs, 1, 1], &args, &mut mem);
    let got: Vec<T> = read(&mem, pc, s.m * o.ldc);
    let (want, scale) = reference(s, &o, v.leaky);
    compare(&got, &want, &scale, s, data, &what);
}

const SMALL: Tiles = Tiles {
    tm: 16,
    tn: 16,
    tk: 8,
    group_m: 2,
};

/// Shapes whose M, N and K are not multiples of any tile, a single row, a
/// single column, K smaller than one tile, and padded leading dimensions.
fn odd_shapes() -> Vec<Shape> {
    vec![
        shape(37, 53, 29),
        shape(1, 70, 17),
        shape(70, 1, 9),
        shape(33, 17, 5),
        Shape {
            pad: 3,
            ..shape(50, 41, 23)
        },
    ]
}

fn odd_shapes_all<T: Num>(leaky: Option<f64>) {
    for tiles in [
        SMALL,
        Tiles {
            tm: 32,
            tn: 16,
            tk: 16,
            group_m: 3,
        },
    ] {
        let v = Variant {
            tiles,
            leaky,
            div16: false,
        };
        for s in odd_shapes() {
            for data in [Data::Random, Data::Exact] {
                check_grouped::<T>(v, s, data);
            }
        }
    }
}

#[test]
fn grouped_f32_odd_shapes() {
    odd_shapes_all::<f32>(None);
}

#[test]
fn grouped_f16_odd_shapes() {
    odd_shapes_all::<f16>(None);
}

#[test]
fn grouped_bf16_odd_shapes() {
    odd_shapes_all::<bf16>(None);
}

#[test]
fn grouped_leaky_relu_every_type() {
    // 0.25 keeps `alpha * c` exact for the exact data; 0.1 rounds.
    for alpha in [0.25, 0.1] {
        let v = Variant {
            tiles: SMALL,
            leaky: Some(alpha),
            div16: false,
        };
        for s in [shape(37, 53, 29), shape(1, 70, 17)] {
            let datas: &[Data] = if alpha == 0.25 {
                &[Data::Random, Data::Exact]
            } else {
                &[Data::Random]
            };
            for &data in datas {
                check_grouped::<f32>(v, s, data);
                check_grouped::<f16>(v, s, data);
                check_grouped::<bf16>(v, s, data);
            }
        }
    }
}

#[test]
fn grouped_leaky_relu_changes_negative_outputs() {
    // Guards against a reference and a kernel that both skip the epilogue:
    // with alpha = 0.25 the negative outputs must be a quarter of the plain ones.
    let s = shape(20, 20, 12);
    let plain = Variant {
        tiles: SMALL,
        leaky: None,
        div16: false,
    };
    let leaky = Variant {
        leaky: Some(0.25),
        ..plain
    };
    let run = |v: Variant| {
        let kernel = grouped_kernel::<f32>(v);
        let o = operands::<f32>(s, Data::Exact);
        let mut mem = Memory::new();
        let (pa, pb) = (mem.alloc_slice(&o.a), mem.alloc_slice(&o.b));
        let pc = mem.alloc_slice(&vec![0f32; s.m * o.ldc]);
        let args = grouped_args(pa, pb, pc, s, &o, v.leaky.unwrap_or(0.0));
        kernel.run([4, 1, 1], &args, &mut mem);
        read::<f32>(&mem, pc, s.m * o.ldc)
    };
    let (p, l) = (run(plain), run(leaky));
    let negatives = p.iter().filter(|&&x| x < 0.0).count();
    assert!(negatives > 50, "test data gives negative outputs");
    for (x, y) in p.iter().zip(&l) {
        assert_eq!(*y, if *x < 0.0 { x * 0.25 } else { *x });
    }
}

#[test]
fn grouped_multiple_of_16_variant() {
    // `-DDIV=__multipleof(16)`: M, N, K, lda, ldb, ldc multiples of 16, but
    // not of the tiles, so the masks still cut the last tiles.
    let tiles = Tiles {
        tm: 32,
        tn: 32,
        tk: 32,
        group_m: 2,
    };
    for leaky in [None, Some(0.25)] {
        let v = Variant {
            tiles,
            leaky,
            div16: true,
        };
        for s in [
            shape(48, 80, 48),
            shape(16, 96, 16),
            Shape {
                pad: 16,
                ..shape(80, 48, 112)
            },
        ] {
            for data in [Data::Random, Data::Exact] {
                check_grouped::<f16>(v, s, data);
                check_grouped::<bf16>(v, s, data);
                check_grouped::<f32>(v, s, data);
            }
        }
    }
}

#[test]
fn grouped_programs_take_tiles_in_group_order() {
    // Launch only the first `p` programs: exactly the tiles the GROUP_M order
    // gives them must be written (row-major order would give other tiles).
    let tiles = Tiles {
        tm: 8,
        tn: 8,
        tk: 8,
        group_m: 2,
    };
    let v = Variant {
        tiles,
        leaky: None,
        div16: false,
    };
    // 5 x 3 tiles; the last group has one tile row; the last row and column
    // of tiles are partial.
    let s = shape(37, 21, 8);
    let (grid_m, grid_n) = (5, 3);
    let kernel = grouped_kernel::<f32>(v);
    let o = operands::<f32>(s, Data::Exact);
    let (want, _) = reference(s, &o, None);
    for p in [1, 3, 7, 13, 15] {
        let mut mem = Memory::new();
        let (pa, pb) = (mem.alloc_slice(&o.a), mem.alloc_slice(&o.b));
        let pc = mem.alloc_slice(&vec![sentinel::<f32>(); s.m * o.ldc]);
        let args = grouped_args(pa, pb, pc, s, &o, 0.0);
        kernel.run([p as u32, 1, 1], &args, &mut mem);
        let got: Vec<f32> = read(&mem, pc, s.m * o.ldc);
        let done: Vec<(usize, usize)> = (0..p)
            .map(|pid| grouped_tile(pid, grid_m, grid_n, tiles.group_m))
            .collect();
        for i in 0..s.m {
            for j in 0..s.n {
                let expect = if done.contains(&(i / tiles.tm, j / tiles.tn)) {
                    want[i * o.ldc + j] as f32
                } else {
                    sentinel::<f32>()
                };
                assert_eq!(
                    got[i * o.ldc + j],
                    expect,
                    "first {p} programs, C[{i}][{j}] (tiles done: {done:?})"
                );
            }
        }
    }
}

#[test]
fn group_order_model_covers_every_tile_once() {
    // The Rust model used above is itself a permutation of the tiles.
    for (grid_m, grid_n, g) in [(5, 3, 2), (1, 7, 8), (9, 2, 4), (8, 8, 8), (3, 1, 2)] {
        let mut seen = vec![false; grid_m * grid_n];
        for pid in 0..grid_m * grid_n {
            let (m, n) = grouped_tile(pid, grid_m, grid_n, g);
            assert!(m < grid_m && n < grid_n && !seen[m * grid_n + n]);
            seen[m * grid_n + n] = true;
        }
    }
    assert_eq!(grouped_tile(2, 5, 3, 2), (0, 1));
    assert_eq!(grouped_tile(12, 5, 3, 2), (4, 0));
}

/// `dot_remat.tc` (seed 003: no masks, so M, N, K are multiples of the tiles).
fn check_remat<T: Num>((tm, tn, tk): (usize, usize, usize), s: Shape, data: Data) {
    let (tm_text, tn_text, tk_text) = (tm.to_string(), tn.to_string(), tk.to_string());
    let defines = [
        ("TYPE", T::C_TYPE),
        ("TM", tm_text.as_str()),
        ("TN", tn_text.as_str()),
        ("TK", tk_text.as_str()),
    ];
    let kernel = Kernel::load("dot_remat.tc", &defines);
    let what = format!("{} {s:?}", kernel.what);
    let o = operands::<T>(s, data);
    let mut mem = Memory::new();
    let (pa, pb) = (mem.alloc_slice(&o.a), mem.alloc_slice(&o.b));
    let pc = mem.alloc_slice(&vec![sentinel::<T>(); s.m * o.ldc]);
    let args = matmul_args(pa, pb, pc, s, &o);
    kernel.run([cdiv(s.m, tm), cdiv(s.n, tn), 1], &args, &mut mem);
    let got: Vec<T> = read(&mem, pc, s.m * o.ldc);
    let (want, scale) = reference(s, &o, None);
    compare(&got, &want, &scale, s, data, &what);
}

#[test]
fn dot_remat_every_type() {
    for data in [Data::Random, Data::Exact] {
        check_remat::<f32>((32, 32, 8), shape(64, 96, 40), data);
        check_remat::<f16>((64, 64, 16), shape(64, 128, 48), data);
        check_remat::<bf16>(
            (32, 64, 32),
            Shape {
                pad: 8,
                ..shape(64, 64, 64)
            },
            data,
        );
    }
}
