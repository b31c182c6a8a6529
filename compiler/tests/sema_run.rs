//! Lowered kernels run on the CPU interpreter give the right numbers: the end-to-end
//! check that sema's broadcasting, masks, loops and products mean what the source says.
mod sema_support;
use sema_support::*;
use tritonc::interp::{run, ArgValue, Memory};

fn ptr(p: u64) -> ArgValue {
    ArgValue::Ptr(p)
}

fn int(i: i64) -> ArgValue {
    ArgValue::Int(i)
}

/// Deterministic test data without a RNG dependency.
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 200) as f32 / 50.0
                - 2.0
        })
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-4 * (1.0 + b.abs())
}

#[test]
fn vector_add() {
    let f = lower_kernel("add.tc", &[("TYPE", "float"), ("SIZE", "32")]);
    let n = 128;
    let (a, b) = (data(n, 1), data(n, 2));
    let mut mem = Memory::new();
    let (pa, pb, pc) = (
        mem.alloc_slice(&a),
        mem.alloc_slice(&b),
        mem.alloc_slice(&vec![0f32; n]),
    );
    run(
        &f,
        [4, 1, 1],
        &[int(n as i64), ptr(pa), ptr(pb), ptr(pc)],
        &mut mem,
    )
    .unwrap();
    let c: Vec<f32> = mem.read(pc, n).unwrap();
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "element {i}");
    }
}

#[test]
fn masked_transpose_stays_in_bounds() {
    let f = lower_kernel(
        "transpose_masked.tc",
        &[("TYPE", "float"), ("TM", "16"), ("TN", "8")],
    );
    let (m, n) = (37usize, 21usize);
    let x = data(m * n, 3);
    let mut mem = Memory::new();
    // Exactly sized buffers: any unmasked lane out of bounds is an interpreter error.
    let (px, py) = (mem.alloc_slice(&x), mem.alloc_slice(&vec![0f32; m * n]));
    let grid = [m.div_ceil(16) as u32, n.div_ceil(8) as u32, 1];
    let args = [
        ptr(px),
        ptr(py),
        int(m as i64),
        int(n as i64),
        int(m as i64),
        int(n as i64),
    ];
    run(&f, grid, &args, &mut mem).unwrap();
    let y: Vec<f32> = mem.read(py, m * n).unwrap();
    // X is column-major (x[i + j*ldx]); Y = X^T is written as y[j + i*ldy].
    for i in 0..m {
        for j in 0..n {
            assert_eq!(y[j + i * n], x[i + j * m], "({i}, {j})");
        }
    }
}

#[test]
#[allow(clippy::approx_constant)] // the seed's 3.14
fn matrix_ops_snippet() {
    let f = lower_kernel("matrix_ops.tc", &[]);
    let mut mem = Memory::new();
    let out = mem.alloc_slice(&vec![0f32; 16 * 32]);
    run(&f, [1, 1, 1], &[ptr(out)], &mut mem).unwrap();
    let v: Vec<f32> = mem.read(out, 16 * 32).unwrap();
    let expect = (3.14f32 + 5.17f32) * 8.0;
    assert!(v.iter().all(|x| close(*x, expect)), "{:?}", &v[..4]);
}

#[test]
fn softmax_rows_with_persistent_programs() {
    let f = lower_kernel("softmax.tc", &[("TYPE", "float"), ("TN", "64")]);
    let (m, n) = (5usize, 37usize);
    let x = data(m * n, 4);
    let mut mem = Memory::new();
    let (px, py) = (mem.alloc_slice(&x), mem.alloc_slice(&vec![0f32; m * n]));
    // Two programs stride over five rows.
    let args = [
        ptr(py),
        ptr(px),
        int(n as i64),
        int(n as i64),
        int(m as i64),
        int(n as i64),
    ];
    run(&f, [2, 1, 1], &args, &mut mem).unwrap();
    let y: Vec<f32> = mem.read(py, m * n).unwrap();
    for r in 0..m {
        let row = &x[r * n..(r + 1) * n];
        let mx = row.iter().cloned().fold(f32::MIN, f32::max);
        let den: f32 = row.iter().map(|v| (v - mx).exp()).sum();
        for c in 0..n {
            let want = (row[c] - mx).exp() / den;
            assert!(
                close(y[r * n + c], want),
                "row {r} col {c}: {} vs {want}",
                y[r * n + c]
            );
        }
    }
}

/// The arguments of the matmul kernels: A, B, C, M, N, K, lda, ldb, ldc (C
/// is row-major [M, N]: ldc = N).
fn matmul_args(
    (pa, pb, pc): (u64, u64, u64),
    (m, n, k): (usize, usize, usize),
    lda: usize,
    ldb: usize,
) -> [ArgValue; 9] {
    [
        ptr(pa),
        ptr(pb),
        ptr(pc),
        int(m as i64),
        int(n as i64),
        int(k as i64),
        int(lda as i64),
        int(ldb as i64),
        int(n as i64),
    ]
}

/// Every element of C [m, n] (`got(i, j)`) is the f32 sum over `l` of
/// `a(i, l) * b(l, j)`, within `rel * (1 + |want|)`.
fn check_product(
    (m, n, k): (usize, usize, usize),
    a: impl Fn(usize, usize) -> f32,
    b: impl Fn(usize, usize) -> f32,
    got: impl Fn(usize, usize) -> f32,
    rel: f32,
    what: &str,
) {
    for i in 0..m {
        for j in 0..n {
            let want: f32 = (0..k).map(|l| a(i, l) * b(l, j)).sum();
            let got = got(i, j);
            assert!(
                (got - want).abs() <= rel * (1.0 + want.abs()),
                "{what}({i}, {j}): {got} vs {want}"
            );
        }
    }
}

/// C = A x B with A stored [M, K] (or [K, M] when `a_t`), B [K, N] (or [N, K]).
fn check_matmul(kernel: &str, defines: &[(&str, &str)], a_t: bool, b_t: bool) {
    let f = lower_kernel(kernel, defines);
    let (m, n, k) = (32usize, 48usize, 40usize);
    let (a, b) = (data(m * k, 5), data(k * n, 6));
    let at = |i: usize, l: usize| if a_t { a[l * m + i] } else { a[i * k + l] };
    let bt = |l: usize, j: usize| if b_t { b[j * k + l] } else { b[l * n + j] };
    let mut mem = Memory::new();
    // The seed's fused-transposition loop loads one tile past K on its last
    // iteration (unguarded, as written): pad A and B so that read stays in bounds.
    let pad = |v: &[f32]| [v, &vec![0f32; v.len()]].concat();
    let (pa, pb, pc) = (
        mem.alloc_slice(&pad(&a)),
        mem.alloc_slice(&pad(&b)),
        mem.alloc_slice(&vec![0f32; m * n]),
    );
    let lda = if a_t { m } else { k };
    let ldb = if b_t { k } else { n };
    let args = matmul_args((pa, pb, pc), (m, n, k), lda, ldb);
    run(&f, [(m / 16) as u32, (n / 16) as u32, 1], &args, &mut mem).unwrap();
    let c: Vec<f32> = mem.read(pc, m * n).unwrap();
    let what = format!("{kernel} ");
    check_product((m, n, k), at, bt, |i, j| c[i * n + j], 1e-4, &what);
}

const TILES: [(&str, &str); 4] = [("TYPE", "float"), ("TM", "16"), ("TN", "16"), ("TK", "8")];

#[test]
fn matmul_plain() {
    check_matmul("dot.tc", &TILES, false, false);
}

#[test]
fn matmul_prefetch() {
    check_matmul("dot_prefetch.tc", &TILES, false, false);
}

#[test]
fn matmul_fused_transpositions() {
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut d = TILES.to_vec();
        d.extend(dot_trans_defines(ta, tb));
        check_matmul("dot_trans.tc", &d, ta, tb);
    }
}

/// Scalar control flow: nested if/else and loops carry the right values out.
#[test]
fn scalar_control_flow() {
    let src = "
__global__ void k(int* out, int n) {
  int sum = 0;
  int odd = 0;
  int i = 0;
  while (i < n) {
    if (i % 2 == 1) { odd++; } else { sum += i; }
    i = i + 1;
  }
  int fact = 1;
  for (int j = 1; j <= 5; j++) fact *= j;
  int d = 0;
  do { d += 3; } while (d < 10);
  if (n > 100) return;
  *out = sum;
  *(out + 1) = odd;
  *(out + 2) = fact;
  *(out + 3) = d;
  *(out + 4) = n > 5 ? 1 : -1;
  *(out + 5) = max(n, 7) - min(2, n);
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let out = mem.alloc_slice(&[0i32; 6]);
    run(&f, [1, 1, 1], &[ptr(out), int(9)], &mut mem).unwrap();
    let got: Vec<i32> = mem.read(out, 6).unwrap();
    assert_eq!(got, vec![2 + 4 + 6 + 8, 4, 120, 12, 1, 9 - 2]);
    // Early return: nothing is written.
    let out2 = mem.alloc_slice(&[0i32; 6]);
    run(&f, [1, 1, 1], &[ptr(out2), int(101)], &mut mem).unwrap();
    assert_eq!(mem.read::<i32>(out2, 6).unwrap(), vec![0; 6]);
}

/// Tile-level ops: ternaries with tile conditions, reductions on axis 0,
/// min/max reductions, atomics, half arithmetic with weak literals.
#[test]
fn tile_ops() {
    let src = "
__global__ void k(float* out, float* acc, half* h) {
  int r[4] = 0 ... 4;
  int c[8] = 0 ... 8;
  float t[4, 8] = r[:, newaxis] * 8 + c[newaxis, :];
  float colsum[8] = t[+, :];
  float rowmax[4] = t[:, max];
  float m = t[:, min][min];
  float sel[4, 8] = t > 10 ? t : -t;
  *(out + c) = colsum;
  *(out + 8 + r) = rowmax;
  *(out + 12) = m;
  *(out + 16 + r[:, newaxis] * 8 + c[newaxis, :]) = sel;
  atomic_add(acc + r, 1.5);
  atomic_add(acc + r, r, r < 2);
  half hv[4] = *(h + r);
  *(h + r) = hv * 2 + 0.5;
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let out = mem.alloc_slice(&[0f32; 48]);
    let acc = mem.alloc_slice(&[1f32; 4]);
    let h = mem.alloc_slice(&[half::f16::from_f32(1.0); 4]);
    run(&f, [1, 1, 1], &[ptr(out), ptr(acc), ptr(h)], &mut mem).unwrap();
    let o: Vec<f32> = mem.read(out, 48).unwrap();
    let t = |i: usize, j: usize| (i * 8 + j) as f32;
    for (j, &sum) in o.iter().take(8).enumerate() {
        assert_eq!(sum, (0..4).map(|i| t(i, j)).sum::<f32>());
    }
    for i in 0..4 {
        assert_eq!(o[8 + i], t(i, 7));
        for j in 0..8 {
            let v = t(i, j);
            assert_eq!(o[16 + i * 8 + j], if v > 10.0 { v } else { -v });
        }
    }
    assert_eq!(o[12], 0.0);
    assert_eq!(mem.read::<f32>(acc, 4).unwrap(), vec![2.5, 3.5, 2.5, 2.5]);
    let hv: Vec<half::f16> = mem.read(h, 4).unwrap();
    assert!(hv.iter().all(|x| x.to_f32() == 2.5));
}

/// `break` and `continue` through flags: the step is skipped after `break`,
/// the rest of the body after either, and nested loops keep their own flags.
#[test]
fn break_and_continue() {
    let src = "
__global__ void k(int* out, int n) {
  int i = 0;
  int s = 0;
  for (i = 0; i < n; i++) {
    if (i == 7) break;
    if (i % 2 == 0) continue;
    s += i;
  }
  int j = 0;
  int t = 0;
  while (1) {
    j++;
    if (j > 4) { break; }
    t += j;
  }
  int w = 0;
  for (int a = 0; a < 3; a++) {
    for (int b = 0; b < 10; b++) {
      if (b == a) break;
      w += 10;
    }
    w += 1;
  }
  *out = i;
  *(out + 1) = s;
  *(out + 2) = j;
  *(out + 3) = t;
  *(out + 4) = w;
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let out = mem.alloc_slice(&[0i32; 5]);
    run(&f, [1, 1, 1], &[ptr(out), int(100)], &mut mem).unwrap();
    assert_eq!(
        mem.read::<i32>(out, 5).unwrap(),
        vec![7, 1 + 3 + 5, 5, 10, 33]
    );
    // Without the early exit the loop runs to n.
    let out2 = mem.alloc_slice(&[0i32; 5]);
    run(&f, [1, 1, 1], &[ptr(out2), int(5)], &mut mem).unwrap();
    assert_eq!(mem.read::<i32>(out2, 2).unwrap(), vec![5, 1 + 3]);
}

/// `i < n && *(p + i) > 5` must not load past `n`: the buffer holds exactly n
/// ints, so an eager load would be an out-of-bounds error in the interpreter.
#[test]
fn short_circuit_guards_scalar_loads() {
    let src = "
__global__ void k(int* out, int* data, int n) {
  int found = 0;
  for (int i = 0; i < 8; i++) {
    if (i < n && *(data + i) > 5) found++;
  }
  *out = found;
  *(out + 1) = n < 1 || *(data + n - 1) == 7;
  *(out + 2) = n > 100 || 0 || n == 4;
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let data = mem.alloc_slice(&[9i32, 1, 6, 7]);
    let out = mem.alloc_slice(&[0i32; 3]);
    run(&f, [1, 1, 1], &[ptr(out), ptr(data), int(4)], &mut mem).unwrap();
    assert_eq!(mem.read::<i32>(out, 3).unwrap(), vec![3, 1, 1]);
}

/// Loads nested inside a `?:` arm or on the right of a tile `&&` are masked by
/// the lanes that use them: X holds exactly n floats, fewer than the tile.
#[test]
fn guarded_arms_do_not_read_out_of_bounds() {
    let src = "
__global__ void k(float* X, float* Y, int n) {
  int r[8] = 0 ... 8;
  bool m[8] = r < n;
  *(Y + r) = m ? *(X + r) * 2 + 1 : -1;
  bool pos[8] = m && *(X + r) > 0;
  *(Y + 8 + r) = pos ? 1 : 0;
  *(Y + 16 + r) = !m ? 5 : -(*(X + r));
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let x = [1.0f32, -2.0, 3.0, -4.0, 5.0];
    let px = mem.alloc_slice(&x);
    let py = mem.alloc_slice(&[0f32; 24]);
    run(&f, [1, 1, 1], &[ptr(px), ptr(py), int(5)], &mut mem).unwrap();
    let y: Vec<f32> = mem.read(py, 24).unwrap();
    assert_eq!(&y[..8], &[3.0, -3.0, 7.0, -7.0, 11.0, -1.0, -1.0, -1.0]);
    assert_eq!(&y[8..16], &[1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(&y[16..], &[-1.0, 2.0, -3.0, 4.0, -5.0, 5.0, 5.0, 5.0]);
}

/// A bounds-checked matmul (the seed says checks "can be easily added"): the
/// masks live in the loop, M, N, K are not multiples of the tiles, and the
/// buffers are exactly sized, so every out-of-range lane must stay masked.
#[test]
fn bounds_checked_matmul() {
    let src = "
__global__ void dot(float* A, float* B, float* C, int M, int N, int K, int lda, int ldb, int ldc) {
  int pm = get_program_id(0);
  int pn = get_program_id(1);
  int rm[TM] = pm * TM + 0 ... TM;
  int rn[TN] = pn * TN + 0 ... TN;
  int rk[TK] = 0 ... TK;
  float c[TM, TN] = 0;
  float* pa[TM, TK] = A + rk[newaxis, :] + rm[:, newaxis] * lda;
  float* pb[TK, TN] = B + rk[:, newaxis] * ldb + rn[newaxis, :];
  for (int k = 0; k < K; k += TK) {
    bool ca[TM, TK] = (rm[:, newaxis] < M) && (k + rk[newaxis, :] < K);
    bool cb[TK, TN] = (k + rk[:, newaxis] < K) && (rn[newaxis, :] < N);
    float a[TM, TK] = ca ? *pa : 0;
    float b[TK, TN] = cb ? *pb : 0;
    c += a @ b;
    pa += TK;
    pb += TK * ldb;
  }
  float* pc[TM, TN] = C + rm[:, newaxis] * ldc + rn[newaxis, :];
  *?((rm[:, newaxis] < M) && (rn[newaxis, :] < N)) pc = c;
}";
    let f = lower_ok(src, &[("TM", "16"), ("TN", "16"), ("TK", "8")]);
    let (m, n, k) = (37usize, 29usize, 45usize);
    let (a, b) = (data(m * k, 7), data(k * n, 8));
    let mut mem = Memory::new();
    let (pa, pb, pc) = (
        mem.alloc_slice(&a),
        mem.alloc_slice(&b),
        mem.alloc_slice(&vec![0f32; m * n]),
    );
    let args = matmul_args((pa, pb, pc), (m, n, k), k, n);
    run(
        &f,
        [m.div_ceil(16) as u32, n.div_ceil(16) as u32, 1],
        &args,
        &mut mem,
    )
    .unwrap();
    let c: Vec<f32> = mem.read(pc, m * n).unwrap();
    let at = |i: usize, l: usize| a[i * k + l];
    let bt = |l: usize, j: usize| b[l * n + j];
    check_product((m, n, k), at, bt, |i, j| c[i * n + j], 1e-4, "");
}

/// The seed matmul in half precision: f16 operands, f32 accumulation, f16 result.
#[test]
fn matmul_half() {
    use half::f16;
    let f = lower_kernel(
        "dot.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "16"), ("TK", "8")],
    );
    let (m, n, k) = (32usize, 16usize, 24usize);
    let a: Vec<f16> = data(m * k, 9).into_iter().map(f16::from_f32).collect();
    let b: Vec<f16> = data(k * n, 10).into_iter().map(f16::from_f32).collect();
    let mut mem = Memory::new();
    let (pa, pb, pc) = (
        mem.alloc_slice(&a),
        mem.alloc_slice(&b),
        mem.alloc_slice(&vec![f16::ZERO; m * n]),
    );
    let args = matmul_args((pa, pb, pc), (m, n, k), k, n);
    run(&f, [(m / 16) as u32, (n / 16) as u32, 1], &args, &mut mem).unwrap();
    let c: Vec<f16> = mem.read(pc, m * n).unwrap();
    let at = |i: usize, l: usize| a[i * k + l].to_f32();
    let bt = |l: usize, j: usize| b[l * n + j].to_f32();
    check_product((m, n, k), at, bt, |i, j| c[i * n + j].to_f32(), 1e-2, "");
}

/// Atomics (compare-and-swap, max, masked min, exchange) and the older
/// `get_range_id` spelling.
#[test]
fn atomics_and_aliases() {
    let src = "
__global__ void k(int* p, int* old) {
  int r[4] = 0 ... 4;
  int pid = get_range_id(0);
  *(old + r) = atomic_cas(p + r, r, 10 + r);
  atomic_max(p + r, 11);
  atomic_min(p + r, 0, r > 2);
  *(old + 4) = atomic_exch(p + 1, pid + 100);
}";
    let f = lower_ok(src, &[]);
    let mut mem = Memory::new();
    let p = mem.alloc_slice(&[0i32, 5, 2, 7]);
    let old = mem.alloc_slice(&[0i32; 5]);
    run(&f, [1, 1, 1], &[ptr(p), ptr(old)], &mut mem).unwrap();
    assert_eq!(mem.read::<i32>(old, 5).unwrap(), vec![0, 5, 2, 7, 11]);
    assert_eq!(mem.read::<i32>(p, 4).unwrap(), vec![11, 100, 12, 0]);
}
