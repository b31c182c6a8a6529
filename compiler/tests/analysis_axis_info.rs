//! Axis info (contiguity, divisibility, constancy) on sample kernels, and the
//! vector widths codegen derives from it.
mod ir_support;

use ir_support::*;
use tritonc::analysis::axis_info::{analyze, AxisInfoMap};
use tritonc::ir::*;

/// The first value named `name`.
fn named(f: &Function, name: &str) -> ValueId {
    let i = f
        .values
        .iter()
        .position(|v| v.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("no value named {name}"));
    ValueId(i as u32)
}

fn the_while(f: &Function) -> &Op {
    f.body
        .ops
        .iter()
        .find(|o| matches!(o.kind, OpKind::While { .. }))
        .expect("a loop")
}

fn multiple_of(n: u64) -> ParamAttrs {
    ParamAttrs {
        multiple_of: Some(n),
        ..Default::default()
    }
}

fn checked(f: &Function) -> AxisInfoMap {
    verifier::verify_function(f).expect("valid IR");
    analyze(f)
}

/// [`checked`] with misaligned runs allowed (`--misaligned-runs`).
fn with_runs(f: &Function) -> AxisInfoMap {
    AxisInfoMap {
        misaligned_runs: true,
        ..checked(f)
    }
}

#[test]
fn add_kernel_offsets_and_width() {
    let f = add_kernel(1024, multiple_of(16));
    let info = checked(&f);
    let off = info.get(named(&f, "off")).unwrap();
    assert_eq!(off.contiguity, vec![1024]);
    assert_eq!(off.divisibility, vec![1024]);
    assert_eq!(off.constancy, vec![1]);
    // `id * 1024` is a multiple of 1024 although `id` is not known to be.
    let base = f.body.ops[2].results[0];
    assert_eq!(info.get(base).unwrap().divisibility, vec![1024]);
    assert_eq!(info.get(named(&f, "id")).unwrap().divisibility, vec![1]);
    let px = named(&f, "px");
    let p = info.get(px).unwrap();
    assert_eq!(p.contiguity, vec![1024]);
    assert_eq!(p.divisibility, vec![16]); // bytes: the 16-byte default
                                          // The mask `off < N` is constant over runs of 16 when N is a multiple of 16.
    let mask = named(&f, "mask");
    assert_eq!(info.get(mask).unwrap().constancy, vec![16]);
    assert_eq!(info.vector_width(px, None, &f), 4);
    assert_eq!(info.vector_width(px, Some(mask), &f), 4);
    assert_eq!(info.vector_width(named(&f, "pz"), Some(mask), &f), 4);
}

#[test]
fn mask_without_multiple_of_forces_scalar_access() {
    let f = add_kernel(1024, ParamAttrs::default());
    let info = checked(&f);
    let mask = named(&f, "mask");
    assert_eq!(info.get(mask).unwrap().constancy, vec![1]);
    let px = named(&f, "px");
    assert_eq!(info.vector_width(px, None, &f), 4);
    assert_eq!(info.vector_width(px, Some(mask), &f), 1);
}

#[test]
fn mask_with_small_multiple_limits_width() {
    // N a multiple of 2 only: runs of 2 equal mask lanes.
    let f = add_kernel(1024, multiple_of(2));
    let info = checked(&f);
    let mask = named(&f, "mask");
    assert_eq!(info.get(mask).unwrap().constancy, vec![2]);
    assert_eq!(info.vector_width(named(&f, "px"), Some(mask), &f), 2);
}

/// `X + (id * 1024 + 0 ... 1024 + k)`: the int param `k` has no attribute,
/// so the addresses may start anywhere.
fn offset_kernel(k_attrs: ParamAttrs, elem: DType) -> (Function, ValueId) {
    let mut b = B::new("shifted");
    let x = b.param("X", Type::ptr(elem));
    let k = b.param_attrs("k", i32t(), k_attrs);
    let id = b.pid(0);
    let size = b.int(1024, i32t());
    let base = b.bin(BinOp::Mul, id, size);
    let base = b.splat(base, &[1024]);
    let r = b.range(0, 1024);
    let off = b.bin(BinOp::Add, base, r);
    let kt = b.splat(k, &[1024]);
    let off = b.bin(BinOp::Add, off, kt);
    let px = b.splat(x, &[1024]);
    let px = b.addptr(px, off);
    let v = b.load(px, None);
    b.store(px, v, None);
    (b.finish(), px)
}

#[test]
fn unaligned_int_param_makes_width_one() {
    let (f, px) = offset_kernel(ParamAttrs::default(), DType::F32);
    let info = checked(&f);
    let p = info.get(px).unwrap();
    assert_eq!(p.contiguity, vec![1024]);
    assert_eq!(p.divisibility, vec![4]);
    assert_eq!(info.vector_width(px, None, &f), 1);

    let (f, px) = offset_kernel(multiple_of(4), DType::F32);
    assert_eq!(checked(&f).vector_width(px, None, &f), 4);
    // f16 with k a multiple of 4: 8 bytes, so 4 halves.
    let (f, px) = offset_kernel(multiple_of(4), DType::F16);
    assert_eq!(checked(&f).vector_width(px, None, &f), 4);
    let (f, px) = offset_kernel(multiple_of(8), DType::F16);
    assert_eq!(checked(&f).vector_width(px, None, &f), 8);
}

#[test]
fn pointer_param_attributes() {
    let mut b = B::new("k");
    let x = b.param_attrs(
        "X",
        Type::ptr(DType::F16),
        ParamAttrs {
            aligned: Some(4),
            ..Default::default()
        },
    );
    let y = b.param_attrs("Y", Type::ptr(DType::F16), multiple_of(2));
    let z = b.param("Z", Type::ptr(DType::F64));
    let r = b.range(0, 64);
    let mut ptrs = vec![];
    for p in [x, y, z] {
        let t = b.splat(p, &[64]);
        ptrs.push(b.addptr(t, r));
    }
    let f = b.finish();
    let info = checked(&f);
    assert_eq!(info.get(x).unwrap().divisibility, vec![4]);
    assert_eq!(info.get(y).unwrap().divisibility, vec![4]);
    assert_eq!(info.get(z).unwrap().divisibility, vec![16]);
    assert_eq!(info.vector_width(ptrs[0], None, &f), 2);
    assert_eq!(info.vector_width(ptrs[1], None, &f), 2);
    assert_eq!(info.vector_width(ptrs[2], None, &f), 2); // 16 bytes of f64
}

#[test]
fn matmul_pointers_contiguous_along_k() {
    let f = matmul_kernel(64, 64, 32, multiple_of(8));
    let info = checked(&f);
    let pa = named(&f, "pa");
    let a = info.get(pa).unwrap();
    assert_eq!(a.contiguity, vec![1, 32]);
    assert_eq!(a.divisibility[1], 16);
    assert_eq!(info.vector_width(pa, None, &f), 8);
    let pb = named(&f, "pb");
    assert_eq!(info.get(pb).unwrap().contiguity, vec![1, 64]);
    assert_eq!(info.vector_width(pb, None, &f), 8);
    let pc = named(&f, "pc");
    assert_eq!(info.get(pc).unwrap().contiguity, vec![1, 64]);
    assert_eq!(info.vector_width(pc, None, &f), 4);
    // The pointers the loop carries keep their facts: pa + 32, pb + 32 * ldb.
    let w = the_while(&f);
    let OpKind::While { body_region, .. } = &w.kind else {
        unreachable!()
    };
    let (pa_body, pb_body) = (body_region.args[2], body_region.args[3]);
    assert_eq!(info.get(pa_body), info.get(pa));
    assert_eq!(info.vector_width(pa_body, None, &f), 8);
    assert_eq!(info.vector_width(pb_body, None, &f), 8);
    assert_eq!(info.vector_width(w.results[2], None, &f), 8);
}

#[test]
fn matmul_without_stride_attributes() {
    let f = matmul_kernel(64, 64, 32, ParamAttrs::default());
    let info = checked(&f);
    let pa = named(&f, "pa");
    // Still contiguous along k, but rows may start at any even byte.
    assert_eq!(info.get(pa).unwrap().contiguity, vec![1, 32]);
    assert_eq!(info.get(pa).unwrap().divisibility[1], 2);
    assert_eq!(info.vector_width(pa, None, &f), 1);
    // Read misaligned, a run is 16 bytes of it (8 halves) along k; across
    // rows (axis 0) nothing is contiguous.
    assert_eq!(with_runs(&f).run_width_along(pa, 1, &f), 8);
    assert_eq!(with_runs(&f).run_width_along(pa, 0, &f), 1);
    // Off unless the compile asks for them.
    assert_eq!(info.run_width_along(pa, 1, &f), 1);
}

#[test]
fn run_width_ignores_alignment_and_masks_but_not_contiguity() {
    // k unknown: addresses start anywhere, but 1024 run in a row.
    let (f, px) = offset_kernel(ParamAttrs::default(), DType::F32);
    let info = with_runs(&f);
    assert_eq!(info.vector_width(px, None, &f), 1);
    assert_eq!(info.run_width_along(px, 0, &f), 4);
    let (f, px) = offset_kernel(ParamAttrs::default(), DType::F16);
    assert_eq!(with_runs(&f).run_width_along(px, 0, &f), 8);
    let (f, px) = offset_kernel(ParamAttrs::default(), DType::F64);
    assert_eq!(with_runs(&f).run_width_along(px, 0, &f), 2);
    // Bytes: 16 of them; under 4 bytes (a word) no run is read misaligned.
    let (f, px) = offset_kernel(ParamAttrs::default(), DType::I8);
    assert_eq!(with_runs(&f).run_width_along(px, 0, &f), 16);
    // A mask that changes every element does not shorten the run (the
    // thread's masked loads take the element-wise path).
    let f = add_kernel(1024, ParamAttrs::default());
    let info = with_runs(&f);
    assert_eq!(
        info.vector_width(named(&f, "px"), Some(named(&f, "mask")), &f),
        1
    );
    assert_eq!(info.run_width_along(named(&f, "px"), 0, &f), 4);
}

/// `p = X + 0 ... 128; while (i < n) { *p = ...; p = p + step; i++ }`.
fn stepping_loop(step: i64) -> Function {
    let mut b = B::new("step");
    let x = b.param("X", Type::ptr(DType::F32));
    let n = b.param("n", i32t());
    let r = b.range(0, 128);
    let p0 = b.splat(x, &[128]);
    let p0 = b.addptr(p0, r);
    let zero = b.int(0, i32t());
    let carried = vec![i32t(), ptr_tile(DType::F32, &[128])];
    let a = b.b.open_region(carried.clone());
    let c = b.cmp(CmpPred::Lt, a[0], n);
    let cond = b.b.close_region(vec![c]);
    let a = b.b.open_region(carried.clone());
    b.name(a[1], "p");
    let v = b.float(1.0, tile(DType::F32, &[128]));
    b.store(a[1], v, None);
    let s = b.int(step, tile(DType::I32, &[128]));
    let p1 = b.addptr(a[1], s);
    let one = b.int(1, i32t());
    let i1 = b.bin(BinOp::Add, a[0], one);
    let body = b.b.close_region(vec![i1, p1]);
    let sp = b.span();
    b.b.push(
        OpKind::While {
            inits: vec![zero, p0],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        carried,
        sp,
    );
    b.finish()
}

#[test]
fn loop_carried_pointer_meets_its_updates() {
    // Steps of 128 elements keep 16-byte alignment.
    let f = stepping_loop(128);
    let info = checked(&f);
    let p = named(&f, "p");
    assert_eq!(info.get(p).unwrap().divisibility, vec![16]);
    assert_eq!(info.vector_width(p, None, &f), 4);
    // Steps of 2 floats: only 8 bytes.
    let f = stepping_loop(2);
    let info = checked(&f);
    let p = named(&f, "p");
    assert_eq!(info.get(p).unwrap().divisibility, vec![8]);
    assert_eq!(info.get(p).unwrap().contiguity, vec![128]);
    assert_eq!(info.vector_width(p, None, &f), 2);
    // Steps of 1: any float.
    let f = stepping_loop(1);
    let info = checked(&f);
    let p = named(&f, "p");
    assert_eq!(info.vector_width(p, None, &f), 1);
    // The counter starts at 0 but is incremented: nothing known.
    let w = the_while(&f);
    assert_eq!(info.get(w.results[0]).unwrap().divisibility, vec![1]);
    assert_eq!(info.get(w.results[0]).unwrap().value, None);
}

#[test]
fn reshape_broadcast_and_trans_move_facts() {
    let mut b = B::new("k");
    let r = b.range(0, 16);
    let row = b.reshape(r, &[1, 16]);
    let full = b.broadcast(row, &[8, 16]);
    let t = b.op(OpKind::Trans { src: full }, tile(DType::I32, &[16, 8]));
    let four = b.int(4, tile(DType::I32, &[8, 16]));
    let scaled = b.bin(BinOp::Mul, full, four);
    let sixteen = b.int(16, tile(DType::I32, &[8, 16]));
    let rem = b.bin(BinOp::Rem, scaled, sixteen);
    let f = b.finish();
    let info = checked(&f);
    let full_i = info.get(full).unwrap();
    assert_eq!(full_i.contiguity, vec![1, 16]);
    assert_eq!(full_i.constancy, vec![8, 1]);
    let t_i = info.get(t).unwrap();
    assert_eq!(t_i.contiguity, vec![16, 1]);
    assert_eq!(t_i.constancy, vec![1, 8]);
    let s_i = info.get(scaled).unwrap();
    assert_eq!(s_i.contiguity, vec![1, 1]);
    assert_eq!(s_i.divisibility, vec![4, 4]);
    assert_eq!(info.get(rem).unwrap().divisibility, vec![4, 4]);
}

#[test]
fn partial_constancy_keeps_divisibility_honest() {
    // s = r + (r < 4 ? 16 : 32) = [16, 17, 18, 19, 36, 37, ...]: runs of 4
    // consecutive values whose starts (16, 36, ...) are multiples of 4 only.
    let mut b = B::new("k");
    let r = b.range(0, 16);
    let four = b.int(4, tile(DType::I32, &[16]));
    let m = b.cmp(CmpPred::Lt, r, four);
    let x = b.int(16, tile(DType::I32, &[16]));
    let y = b.int(32, tile(DType::I32, &[16]));
    let sel = b.op(
        OpKind::Select {
            cond: m,
            on_true: x,
            on_false: y,
        },
        tile(DType::I32, &[16]),
    );
    let s = b.bin(BinOp::Add, r, sel);
    let f = b.finish();
    let info = checked(&f);
    assert_eq!(info.get(m).unwrap().constancy, vec![4]);
    let sel_i = info.get(sel).unwrap();
    assert_eq!((sel_i.constancy[0], sel_i.divisibility[0]), (4, 16));
    let s_i = info.get(s).unwrap();
    assert_eq!(s_i.contiguity, vec![4]);
    assert_eq!(s_i.divisibility, vec![4]);
}

#[test]
fn order_and_dump() {
    let f = matmul_kernel(64, 64, 32, multiple_of(8));
    let info = checked(&f);
    assert_eq!(info.contiguity_order(named(&f, "pa")), vec![1, 0]);
    assert_eq!(info.contiguity_order(named(&f, "rm")), vec![0]);
    let text = info.dump(&f);
    assert!(
        text.contains("%rk: contiguity [32] divisibility [2147483648] constancy [1]\n"),
        "{text}"
    );
    assert!(text.contains("%lda: contiguity [1] divisibility [8] constancy [1]\n"));
}

#[test]
fn width_along_the_first_axis() {
    // Column-major tile: p = X + rk[:, newaxis] + rn[newaxis, :] * ld.
    let mut b = B::new("k");
    let x = b.param("X", Type::ptr(DType::F16));
    let ld = b.param_attrs("ld", i32t(), multiple_of(8));
    let rk = b.range(0, 32);
    let rk = b.reshape(rk, &[32, 1]);
    let rk = b.broadcast(rk, &[32, 16]);
    let rn = b.range(0, 16);
    let rn = b.reshape(rn, &[1, 16]);
    let rn = b.broadcast(rn, &[32, 16]);
    let ld = b.splat(ld, &[32, 16]);
    let cols = b.bin(BinOp::Mul, rn, ld);
    let xt = b.splat(x, &[32, 16]);
    let p = b.addptr(xt, rk);
    let p = b.addptr(p, cols);
    let f = b.finish();
    let info = checked(&f);
    assert_eq!(info.contiguity_order(p), vec![0, 1]);
    assert_eq!(info.vector_width(p, None, &f), 1);
    assert_eq!(info.vector_width_along(p, None, 0, &f), 8);
    assert_eq!(info.vector_width_along(p, None, 2, &f), 1);
}

#[test]
fn odd_inputs_do_not_panic() {
    let mut b = B::new("k");
    let n = b.param_attrs("n", i32t(), multiple_of(0));
    let big = b.int(i64::MIN, i32t());
    let s = b.bin(BinOp::Mul, big, big);
    let d = b.bin(BinOp::Div, n, big);
    let f = b.finish();
    let info = analyze(&f);
    assert_eq!(info.get(n).unwrap().divisibility, vec![1]);
    assert_eq!(info.get(s).unwrap().value, Some(0));
    assert_eq!(info.get(d).unwrap().divisibility, vec![1]);
    // Facts of values the analysis never saw: width 1, no panic.
    assert_eq!(info.vector_width(ValueId(999), None, &f), 1);
}
