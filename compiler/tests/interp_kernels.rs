//! Whole kernels run by the interpreter over a grid, checked against Rust
//! references: vector add, transpose, reductions, softmax, matmul tiles.

mod interp_util;

use interp_util::Kernel;
use std::time::Instant;
use tritonc::interp::{run, ArgValue, Memory};
use tritonc::ir::*;

/// Deterministic values in [-scale, scale).
fn pseudo_random(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

fn cdiv(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

/// `z[i] = x[i] + y[i]` for `i < n`, BLOCK lanes per program.
fn vector_add(block: usize) -> Function {
    let mut k = Kernel::new("add");
    let x = k.ptr_param("x", DType::F32);
    let y = k.ptr_param("y", DType::F32);
    let z = k.ptr_param("z", DType::F32);
    let n = k.param("n", DType::I32);
    let pid = k.pid(0);
    let bs = k.i32(block as i64);
    let start = k.bin(BinOp::Mul, pid, bs);
    let lanes = k.range(0, block as i64);
    let offs = k.bin(BinOp::Add, start, lanes);
    let mask = k.cmp(CmpPred::Lt, offs, n);
    let px = k.add_ptr(x, offs);
    let py = k.add_ptr(y, offs);
    let xv = k.load(px, Some(mask), None);
    let yv = k.load(py, Some(mask), None);
    let sum = k.bin(BinOp::Add, xv, yv);
    let pz = k.add_ptr(z, offs);
    k.store(pz, sum, Some(mask));
    k.finish()
}

#[test]
fn vector_add_with_a_masked_tail() {
    let n = 1000;
    let (xs, ys) = (pseudo_random(n, 1, 10.0), pseudo_random(n, 2, 10.0));
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_f32(&xs), mem.alloc_f32(&ys));
    let z = mem.alloc(DType::F32, n);
    let args = [
        ArgValue::Ptr(x),
        ArgValue::Ptr(y),
        ArgValue::Ptr(z),
        ArgValue::Int(n as i64),
    ];
    run(&vector_add(128), [cdiv(n, 128), 1, 1], &args, &mut mem).unwrap();
    let got = mem.read_f32(z, n).unwrap();
    for i in 0..n {
        assert_eq!(got[i], xs[i] + ys[i], "element {i}");
    }
}

#[test]
fn vector_add_without_its_mask_runs_off_the_end() {
    // The same grid with n rounded up: the tail lanes are outside every buffer.
    let n = 1000;
    let mut mem = Memory::new();
    let x = mem.alloc(DType::F32, n);
    let y = mem.alloc(DType::F32, n);
    let z = mem.alloc(DType::F32, n);
    let args = [
        ArgValue::Ptr(x),
        ArgValue::Ptr(y),
        ArgValue::Ptr(z),
        ArgValue::Int(1024),
    ];
    let err = run(&vector_add(128), [8, 1, 1], &args, &mut mem).unwrap_err();
    assert!(
        err.message.contains("load of f32 at address"),
        "{}",
        err.message
    );
    assert!(
        err.message.contains("outside every buffer"),
        "{}",
        err.message
    );
    assert!(err.message.contains("program (7, 0, 0)"), "{}", err.message);
}

/// `y[n, m] = x[m, n]` for an `x` of `[rows, cols]`, tiles of `[t, t]`.
fn transpose(t: usize, d: DType) -> Function {
    let mut k = Kernel::new("transpose");
    let x = k.ptr_param("x", d);
    let y = k.ptr_param("y", d);
    let rows = k.param("rows", DType::I32);
    let cols = k.param("cols", DType::I32);
    let tile = k.i32(t as i64);
    let (pm, pn) = (k.pid(0), k.pid(1));
    let r0 = k.bin(BinOp::Mul, pm, tile);
    let c0 = k.bin(BinOp::Mul, pn, tile);
    let lanes = k.range(0, t as i64);
    let rm = k.bin(BinOp::Add, r0, lanes);
    let rn = k.bin(BinOp::Add, c0, lanes);
    // x + rm[:, newaxis] * cols + rn[newaxis, :]
    let rm_col = k.column(rm, t);
    let rn_row = k.row(rn, t);
    let px = k.tile_ptrs(x, rm_col, cols, rn_row);
    let mask = k.in_bounds(rm_col, rows, rn_row, cols);
    let tile_x = k.load(px, Some(mask), None);
    let tile_y = k.trans(tile_x);
    // y + rn[:, newaxis] * rows + rm[newaxis, :]
    let rn_col = k.column(rn, t);
    let rm_row = k.row(rm, t);
    let py = k.tile_ptrs(y, rn_col, rows, rm_row);
    let mask_t = k.trans(mask);
    k.store(py, tile_y, Some(mask_t));
    k.finish()
}

fn check_transpose(rows: usize, cols: usize, t: usize) {
    let xs: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let mut mem = Memory::new();
    let x = mem.alloc_f32(&xs);
    let y = mem.alloc_f32(&vec![-1.0; rows * cols]);
    let args = [
        ArgValue::Ptr(x),
        ArgValue::Ptr(y),
        ArgValue::Int(rows as i64),
        ArgValue::Int(cols as i64),
    ];
    let grid = [cdiv(rows, t), cdiv(cols, t), 1];
    run(&transpose(t, DType::F32), grid, &args, &mut mem).unwrap();
    let got = mem.read_f32(y, rows * cols).unwrap();
    for n in 0..cols {
        for m in 0..rows {
            assert_eq!(got[n * rows + m], xs[m * cols + n], "y[{n}, {m}]");
        }
    }
}

#[test]
fn masked_transpose_37x53_in_16x16_tiles() {
    check_transpose(37, 53, 16);
}

#[test]
fn transpose_512x512_runs_quickly() {
    let start = Instant::now();
    check_transpose(512, 512, 32);
    let took = start.elapsed();
    // Debug build; a budget that catches per-element blow-ups, not jitter.
    assert!(took.as_secs_f64() < 20.0, "took {took:?}");
}

/// One program reduces a `[tr, tc]` tile of a `[rows, cols]` matrix along
/// `axis` and stores the `rows` (axis 1) or `cols` (axis 0) results.
fn reduce_kernel(tr: usize, tc: usize, axis: usize, kind: ReduceKind) -> Function {
    let mut k = Kernel::new("reduce");
    let x = k.ptr_param("x", DType::F32);
    let out = k.ptr_param("out", DType::F32);
    let rows = k.param("rows", DType::I32);
    let cols = k.param("cols", DType::I32);
    let rm = k.range(0, tr as i64);
    let rn = k.range(0, tc as i64);
    let rm_col = k.column(rm, tc);
    let rn_row = k.row(rn, tr);
    let px = k.tile_ptrs(x, rm_col, cols, rn_row);
    let mask = k.in_bounds(rm_col, rows, rn_row, cols);
    let neutral = match kind {
        ReduceKind::Sum => 0.0,
        ReduceKind::Max => f64::NEG_INFINITY,
        ReduceKind::Min => f64::INFINITY,
    };
    let other = k.float(neutral, DType::F32, &[tr, tc]);
    let tile = k.load(px, Some(mask), Some(other));
    let r = k.reduce(tile, axis, kind);
    let (idx, bound) = if axis == 1 { (rm, rows) } else { (rn, cols) };
    let po = k.add_ptr(out, idx);
    let keep = k.cmp(CmpPred::Lt, idx, bound);
    k.store(po, r, Some(keep));
    k.finish()
}

fn run_reduce(axis: usize, kind: ReduceKind, rows: usize, cols: usize, xs: &[f32]) -> Vec<f32> {
    let mut mem = Memory::new();
    let x = mem.alloc_f32(xs);
    let n_out = if axis == 1 { rows } else { cols };
    let out = mem.alloc(DType::F32, n_out);
    let args = [
        ArgValue::Ptr(x),
        ArgValue::Ptr(out),
        ArgValue::Int(rows as i64),
        ArgValue::Int(cols as i64),
    ];
    run(
        &reduce_kernel(8, 32, axis, kind),
        [1, 1, 1],
        &args,
        &mut mem,
    )
    .unwrap();
    mem.read_f32(out, n_out).unwrap()
}

#[test]
fn row_sum_row_max_and_column_sum() {
    let (rows, cols) = (5, 27);
    let xs = pseudo_random(rows * cols, 7, 4.0);
    let at = |r: usize, c: usize| xs[r * cols + c];

    let sums = run_reduce(1, ReduceKind::Sum, rows, cols, &xs);
    let maxes = run_reduce(1, ReduceKind::Max, rows, cols, &xs);
    for r in 0..rows {
        let want: f64 = (0..cols).map(|c| at(r, c) as f64).sum();
        assert!(
            (sums[r] as f64 - want).abs() < 1e-5,
            "row {r}: {} vs {want}",
            sums[r]
        );
        let want = (0..cols)
            .map(|c| at(r, c))
            .fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(maxes[r], want, "row {r}");
    }

    let col_sums = run_reduce(0, ReduceKind::Sum, rows, cols, &xs);
    let col_mins = run_reduce(0, ReduceKind::Min, rows, cols, &xs);
    for c in 0..cols {
        let want: f64 = (0..rows).map(|r| at(r, c) as f64).sum();
        assert!((col_sums[c] as f64 - want).abs() < 1e-5, "column {c}");
        let want = (0..rows).map(|r| at(r, c)).fold(f32::INFINITY, f32::min);
        assert_eq!(col_mins[c], want, "column {c}");
    }
}

/// Row softmax, one program per row, `block` lanes covering `cols`.
fn softmax(block: usize) -> Function {
    let mut k = Kernel::new("softmax");
    let x = k.ptr_param("x", DType::F32);
    let y = k.ptr_param("y", DType::F32);
    let stride = k.param("stride", DType::I32);
    let cols = k.param("cols", DType::I32);
    let row = k.pid(0);
    let row_start = k.bin(BinOp::Mul, row, stride);
    let lanes = k.range(0, block as i64);
    let offs = k.bin(BinOp::Add, row_start, lanes);
    let mask = k.cmp(CmpPred::Lt, lanes, cols);
    let px = k.add_ptr(x, offs);
    let minus_inf = k.float(f64::NEG_INFINITY, DType::F32, &[block]);
    let v = k.load(px, Some(mask), Some(minus_inf));
    let m = k.reduce(v, 0, ReduceKind::Max);
    let shifted = k.bin(BinOp::Sub, v, m);
    let e = k.unary(UnOp::Exp, shifted);
    let s = k.reduce(e, 0, ReduceKind::Sum);
    let out = k.bin(BinOp::Div, e, s);
    let py = k.add_ptr(y, offs);
    k.store(py, out, Some(mask));
    k.finish()
}

#[test]
fn softmax_4096x781_matches_a_reference() {
    let (rows, cols) = (4096, 781);
    let xs = pseudo_random(rows * cols, 3, 8.0);
    let mut mem = Memory::new();
    let x = mem.alloc_f32(&xs);
    let y = mem.alloc(DType::F32, rows * cols);
    let args = [
        ArgValue::Ptr(x),
        ArgValue::Ptr(y),
        ArgValue::Int(cols as i64),
        ArgValue::Int(cols as i64),
    ];
    let start = Instant::now();
    run(&softmax(1024), [rows as u32, 1, 1], &args, &mut mem).unwrap();
    let took = start.elapsed();
    eprintln!("softmax 4096x781 interpreted in {took:?}");
    assert!(took.as_secs_f64() < 30.0, "took {took:?}");
    let got = mem.read_f32(y, rows * cols).unwrap();
    for r in 0..rows {
        let row = &xs[r * cols..(r + 1) * cols];
        let m = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
        let e: Vec<f64> = row.iter().map(|&v| (v as f64 - m).exp()).collect();
        let s: f64 = e.iter().sum();
        for c in 0..cols {
            let want = e[c] / s;
            let have = got[r * cols + c] as f64;
            assert!(
                (have - want).abs() <= 1e-5 * want.abs(),
                "y[{r}, {c}] = {have}, want {want}"
            );
        }
    }
}

/// `c[m, n] = a[m, k] @ b[k, n]` in one program, inputs of type `d`.
fn matmul(m: usize, n: usize, kk: usize, d: DType) -> Function {
    let mut k = Kernel::new("matmul");
    let a = k.ptr_param("a", d);
    let b = k.ptr_param("b", d);
    let c = k.ptr_param("c", DType::F32);
    let offsets = |k: &mut Kernel, rows: usize, cols: usize| {
        let r = k.range(0, rows as i64);
        let q = k.range(0, cols as i64);
        let r_col = k.column(r, cols);
        let q_row = k.row(q, rows);
        let stride = k.int(cols as i64, DType::I32, &[rows, cols]);
        let row_off = k.bin(BinOp::Mul, r_col, stride);
        k.bin(BinOp::Add, row_off, q_row)
    };
    let off_a = offsets(&mut k, m, kk);
    let off_b = offsets(&mut k, kk, n);
    let off_c = offsets(&mut k, m, n);
    let pa = k.add_ptr(a, off_a);
    let pb = k.add_ptr(b, off_b);
    let ta = k.load(pa, None, None);
    let tb = k.load(pb, None, None);
    let acc = k.float(0.5, DType::F32, &[m, n]);
    let prod = k.dot(ta, tb, acc);
    let pc = k.add_ptr(c, off_c);
    k.store(pc, prod, None);
    k.finish()
}

#[test]
fn dot_of_small_tiles_matches_a_triple_loop() {
    let (m, n, kk) = (16, 24, 8);
    let av = pseudo_random(m * kk, 11, 2.0);
    let bv = pseudo_random(kk * n, 12, 2.0);
    let mut mem = Memory::new();
    let (a, b) = (mem.alloc_f32(&av), mem.alloc_f32(&bv));
    let c = mem.alloc(DType::F32, m * n);
    let args = [ArgValue::Ptr(a), ArgValue::Ptr(b), ArgValue::Ptr(c)];
    run(&matmul(m, n, kk, DType::F32), [1, 1, 1], &args, &mut mem).unwrap();
    let got = mem.read_f32(c, m * n).unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f64 = 0.5
                + (0..kk)
                    .map(|p| av[i * kk + p] as f64 * bv[p * n + j] as f64)
                    .sum::<f64>();
            let have = got[i * n + j] as f64;
            assert!(
                (have - want).abs() < 1e-5,
                "c[{i}, {j}] = {have}, want {want}"
            );
        }
    }
}

#[test]
fn f16_dot_accumulates_in_f32() {
    use half::f16;
    let (m, n, kk) = (4, 4, 64);
    // 1 + 1/1024 squared summed 64 times: f16 accumulation would lose the tail.
    let av = vec![f16::from_f32(1.0 + 1.0 / 1024.0); m * kk];
    let bv = vec![f16::from_f32(1.0); kk * n];
    let mut mem = Memory::new();
    let (a, b) = (mem.alloc_f16(&av), mem.alloc_f16(&bv));
    let c = mem.alloc(DType::F32, m * n);
    let args = [ArgValue::Ptr(a), ArgValue::Ptr(b), ArgValue::Ptr(c)];
    run(&matmul(m, n, kk, DType::F16), [1, 1, 1], &args, &mut mem).unwrap();
    let want = 0.5 + 64.0 * (1.0 + 1.0 / 1024.0);
    assert!(mem.read_f32(c, m * n).unwrap().iter().all(|&v| v == want));
}

/// The matmul of the Triton-C tour: a K loop carrying the accumulator and
/// both pointer tiles, masked at every edge. `c[m, n] = a[m, k] @ b[k, n]`.
fn matmul_loop(t: usize) -> Function {
    let mut k = Kernel::new("matmul_loop");
    let a = k.ptr_param("a", DType::F32);
    let b = k.ptr_param("b", DType::F32);
    let c = k.ptr_param("c", DType::F32);
    let m = k.param("m", DType::I32);
    let n = k.param("n", DType::I32);
    let kdim = k.param("k", DType::I32);
    let tile = k.i32(t as i64);
    let (pm, pn) = (k.pid(0), k.pid(1));
    let lanes = k.range(0, t as i64);
    let m0 = k.bin(BinOp::Mul, pm, tile);
    let rm = k.bin(BinOp::Add, m0, lanes);
    let n0 = k.bin(BinOp::Mul, pn, tile);
    let rn = k.bin(BinOp::Add, n0, lanes);
    let rk = lanes;
    // pa = a + rm[:, newaxis] * k + rk[newaxis, :]; pb = b + rk[:, newaxis] * n + rn[newaxis, :]
    let rm_col = k.column(rm, t);
    let rk_row = k.row(rk, t);
    let pa0 = k.tile_ptrs(a, rm_col, kdim, rk_row);
    let rk_col = k.column(rk, t);
    let rn_row = k.row(rn, t);
    let pb0 = k.tile_ptrs(b, rk_col, n, rn_row);
    let acc0 = k.float(0.0, DType::F32, &[t, t]);
    let k0 = k.i32(0);
    let carried = vec![k.ty(k0), k.ty(acc0), k.ty(pa0), k.ty(pb0)];

    let args = k.b.open_region(carried.clone());
    let go_on = k.cmp(CmpPred::Lt, args[0], kdim);
    let cond_region = k.b.close_region(vec![go_on]);

    let args = k.b.open_region(carried.clone());
    let (kk, acc, pa, pb) = (args[0], args[1], args[2], args[3]);
    let zero = k.float(0.0, DType::F32, &[t, t]);
    let ka = k.bin(BinOp::Add, kk, rk_row);
    let mask_a = k.in_bounds(ka, kdim, rm_col, m);
    let kb = k.bin(BinOp::Add, kk, rk_col);
    let mask_b = k.in_bounds(kb, kdim, rn_row, n);
    let ta = k.load(pa, Some(mask_a), Some(zero));
    let tb = k.load(pb, Some(mask_b), Some(zero));
    let acc_next = k.dot(ta, tb, acc);
    let pa_next = k.add_ptr(pa, tile);
    let step_b = k.bin(BinOp::Mul, tile, n);
    let pb_next = k.add_ptr(pb, step_b);
    let k_next = k.bin(BinOp::Add, kk, tile);
    let body_region = k.b.close_region(vec![k_next, acc_next, pa_next, pb_next]);
    let out = k.push_while(vec![k0, acc0, pa0, pb0], cond_region, body_region, carried);

    let pc = k.tile_ptrs(c, rm_col, n, rn_row);
    let mask_c = k.in_bounds(rm_col, m, rn_row, n);
    k.store(pc, out[1], Some(mask_c));
    k.finish()
}

#[test]
fn matmul_with_a_k_loop_and_masked_edges() {
    let (m, n, kk, t) = (50, 37, 70, 16);
    let av = pseudo_random(m * kk, 21, 1.0);
    let bv = pseudo_random(kk * n, 22, 1.0);
    let mut mem = Memory::new();
    let (a, b) = (mem.alloc_f32(&av), mem.alloc_f32(&bv));
    let c = mem.alloc(DType::F32, m * n);
    let args = [
        ArgValue::Ptr(a),
        ArgValue::Ptr(b),
        ArgValue::Ptr(c),
        ArgValue::Int(m as i64),
        ArgValue::Int(n as i64),
        ArgValue::Int(kk as i64),
    ];
    run(
        &matmul_loop(t),
        [cdiv(m, t), cdiv(n, t), 1],
        &args,
        &mut mem,
    )
    .unwrap();
    let got = mem.read_f32(c, m * n).unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: f64 = (0..kk)
                .map(|p| av[i * kk + p] as f64 * bv[p * n + j] as f64)
                .sum();
            let have = got[i * n + j] as f64;
            assert!(
                (have - want).abs() < 1e-4,
                "c[{i}, {j}] = {have}, want {want}"
            );
        }
    }
}
