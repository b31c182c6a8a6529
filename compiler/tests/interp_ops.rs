//! Interpreter semantics op by op: control flow, half precision, casts,
//! atomics, and the errors a bad kernel or launch gives (never a panic).

mod interp_util;

use half::{bf16, f16};
use interp_util::Kernel;
use tritonc::interp::{run, run_with, ArgValue, Memory, RunOptions};
use tritonc::ir::*;

fn one_program(f: &Function, args: &[ArgValue], mem: &mut Memory) {
    run(f, [1, 1, 1], args, mem).unwrap();
}

/// `while (i < n) { acc += i; i += 1; } *out = acc;` with carried `(i, acc)`.
fn sum_below() -> Function {
    let mut k = Kernel::new("sum_below");
    let out = k.ptr_param("out", DType::I32);
    let n = k.param("n", DType::I32);
    let zero = k.i32(0);
    let i32t = Type::num(DType::I32);
    let cond_args = k.b.open_region(vec![i32t.clone(), i32t.clone()]);
    let go_on = k.cmp(CmpPred::Lt, cond_args[0], n);
    let cond_region = k.b.close_region(vec![go_on]);
    let body_args = k.b.open_region(vec![i32t.clone(), i32t.clone()]);
    let one = k.i32(1);
    let next_i = k.bin(BinOp::Add, body_args[0], one);
    let next_acc = k.bin(BinOp::Add, body_args[1], body_args[0]);
    let body_region = k.b.close_region(vec![next_i, next_acc]);
    let results = k.push_while(
        vec![zero, zero],
        cond_region,
        body_region,
        vec![i32t.clone(), i32t],
    );
    k.store(out, results[1], None);
    k.finish()
}

#[test]
fn while_loop_carries_values() {
    let f = sum_below();
    for n in [0i64, 1, 10, 1000] {
        let mut mem = Memory::new();
        let out = mem.alloc_i32(&[-7]);
        one_program(&f, &[ArgValue::Ptr(out), ArgValue::Int(n)], &mut mem);
        assert_eq!(
            mem.read_i32(out, 1).unwrap(),
            vec![(n * (n - 1) / 2) as i32],
            "n = {n}"
        );
    }
}

#[test]
fn a_loop_that_never_ends_hits_the_step_limit() {
    let f = sum_below();
    let mut mem = Memory::new();
    let out = mem.alloc(DType::I32, 1);
    let options = RunOptions { max_steps: 5000 };
    let args = [ArgValue::Ptr(out), ArgValue::Int(1 << 30)];
    let err = run_with(&f, [1, 1, 1], &args, &mut mem, &options).unwrap_err();
    assert!(
        err.message.contains("step limit of 5000"),
        "{}",
        err.message
    );

    // A loop whose regions have no ops at all still counts its iterations.
    let mut k = Kernel::new("spin");
    let yes = k.boolean(true);
    k.b.open_region(vec![]);
    let cond_region = k.b.close_region(vec![yes]);
    k.b.open_region(vec![]);
    let body_region = k.b.close_region(vec![]);
    let span = tritonc::Span::new(0, 500, 505);
    k.b.push(
        OpKind::While {
            inits: vec![],
            cond_region,
            body_region,
            pipeline: None,
            prefetch: None,
        },
        vec![],
        span,
    );
    let f = k.finish();
    let err = run_with(&f, [1, 1, 1], &[], &mut Memory::new(), &options).unwrap_err();
    assert_eq!(err.span, span);
    assert!(err.message.contains("step limit"), "{}", err.message);
}

/// `*out = x > 5 ? x * 2 : x - 1` through an `If` with results.
#[test]
fn if_yields_the_taken_branch() {
    let mut k = Kernel::new("branch");
    let out = k.ptr_param("out", DType::I32);
    let x = k.param("x", DType::I32);
    let five = k.i32(5);
    let big = k.cmp(CmpPred::Gt, x, five);
    k.b.open_region(vec![]);
    let two = k.i32(2);
    let doubled = k.bin(BinOp::Mul, x, two);
    let then_region = k.b.close_region(vec![doubled]);
    k.b.open_region(vec![]);
    let one = k.i32(1);
    let less = k.bin(BinOp::Sub, x, one);
    let else_region = k.b.close_region(vec![less]);
    let r = k.push_if(big, then_region, else_region, vec![Type::num(DType::I32)])[0];
    k.store(out, r, None);
    let f = k.finish();
    for (x, want) in [(7, 14), (5, 4), (-3, -4)] {
        let mut mem = Memory::new();
        let out = mem.alloc(DType::I32, 1);
        one_program(&f, &[ArgValue::Ptr(out), ArgValue::Int(x)], &mut mem);
        assert_eq!(mem.read_i32(out, 1).unwrap(), vec![want], "x = {x}");
    }
}

/// Odd programs return before their store; the rest of the grid still runs.
#[test]
fn return_ends_only_its_program() {
    let mut k = Kernel::new("evens");
    let out = k.ptr_param("out", DType::I32);
    let pid = k.pid(0);
    let two = k.i32(2);
    let parity = k.bin(BinOp::Rem, pid, two);
    let one = k.i32(1);
    let odd = k.cmp(CmpPred::Eq, parity, one);
    k.return_if(odd);
    let p = k.add_ptr(out, pid);
    let n = k.nprog(0);
    let v = k.bin(BinOp::Add, pid, n);
    k.store(p, v, None);
    let f = k.finish();
    let mut mem = Memory::new();
    let out = mem.alloc(DType::I32, 6);
    run(&f, [6, 1, 1], &[ArgValue::Ptr(out)], &mut mem).unwrap();
    assert_eq!(mem.read_i32(out, 6).unwrap(), vec![6, 0, 8, 0, 10, 0]);
}

/// Programs run x fastest and see their own ids on every axis.
#[test]
fn grid_order_and_program_ids() {
    let mut k = Kernel::new("ids");
    let out = k.ptr_param("out", DType::I32);
    let counter = k.ptr_param("counter", DType::I32);
    let (x, y, z) = (k.pid(0), k.pid(1), k.pid(2));
    let (nx, ny) = (k.nprog(0), k.nprog(1));
    let zy = k.bin(BinOp::Mul, z, ny);
    let zy_y = k.bin(BinOp::Add, zy, y);
    let row = k.bin(BinOp::Mul, zy_y, nx);
    let linear = k.bin(BinOp::Add, row, x);
    let one = k.i32(1);
    let ticket = k.atomic(AtomicOp::Add, counter, one, None);
    let p = k.add_ptr(out, linear);
    k.store(p, ticket, None);
    let f = k.finish();
    let mut mem = Memory::new();
    let out = mem.alloc(DType::I32, 24);
    let counter = mem.alloc(DType::I32, 1);
    run(
        &f,
        [2, 3, 4],
        &[ArgValue::Ptr(out), ArgValue::Ptr(counter)],
        &mut mem,
    )
    .unwrap();
    assert_eq!(
        mem.read_i32(out, 24).unwrap(),
        (0..24).collect::<Vec<i32>>()
    );
}

/// `z = x op y` over one tile of `n` elements of type `d`.
fn elementwise(op: BinOp, d: DType, n: usize) -> Function {
    let mut k = Kernel::new("elementwise");
    let x = k.ptr_param("x", d);
    let y = k.ptr_param("y", d);
    let z = k.ptr_param("z", d);
    let offs = k.range(0, n as i64);
    let (px, py, pz) = (k.add_ptr(x, offs), k.add_ptr(y, offs), k.add_ptr(z, offs));
    let (xv, yv) = (k.load(px, None, None), k.load(py, None, None));
    let r = k.bin(op, xv, yv);
    k.store(pz, r, None);
    k.finish()
}

#[test]
fn f16_add_rounds_each_result() {
    let xs: Vec<f16> = [1.0, 2048.0, 0.1, 65504.0, -3.5]
        .iter()
        .map(|&v| f16::from_f32(v))
        .collect();
    let ys: Vec<f16> = [1.0 / 2048.0, 1.0, 0.2, 65504.0, 1.25]
        .iter()
        .map(|&v| f16::from_f32(v))
        .collect();
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_f16(&xs), mem.alloc_f16(&ys));
    let z = mem.alloc(DType::F16, 5);
    let f = elementwise(BinOp::Add, DType::F16, 5);
    one_program(
        &f,
        &[ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)],
        &mut mem,
    );
    let got = mem.read_f16(z, 5).unwrap();
    let want: Vec<f16> = xs
        .iter()
        .zip(&ys)
        .map(|(a, b)| f16::from_f32(a.to_f32() + b.to_f32()))
        .collect();
    assert_eq!(got, want);
    // The halfway and overflow cases the rounding must get right.
    assert_eq!(got[0], f16::from_f32(1.0));
    assert_eq!(got[1], f16::from_f32(2048.0));
    assert!(got[3].is_infinite());
}

#[test]
fn bf16_mul_rounds_each_result() {
    let xs = [bf16::from_f32(1.0 + 1.0 / 128.0), bf16::from_f32(3.0)];
    let ys = [bf16::from_f32(1.0 + 1.0 / 128.0), bf16::from_f32(-0.5)];
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_bf16(&xs), mem.alloc_bf16(&ys));
    let z = mem.alloc(DType::BF16, 2);
    let f = elementwise(BinOp::Mul, DType::BF16, 2);
    one_program(
        &f,
        &[ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)],
        &mut mem,
    );
    // (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14: the last term is below bf16's precision.
    let want = [bf16::from_f32(1.0 + 1.0 / 64.0), bf16::from_f32(-1.5)];
    assert_eq!(mem.read_bf16(z, 2).unwrap(), want);
}

#[test]
fn int_arithmetic_is_c_on_the_width() {
    let xs = [i32::MAX, -7, -7, 7, -16, 1, i32::MIN];
    let ys = [1, 2, 2, -2, 2, 31, -1];
    let ops = [
        (BinOp::Add, vec![i32::MIN, -5, -5, 5, -14, 32, i32::MAX]),
        (BinOp::Div, vec![i32::MAX, -3, -3, -3, -8, 0, i32::MIN]),
        (BinOp::Rem, vec![0, -1, -1, 1, 0, 1, 0]),
        (BinOp::Shr, vec![i32::MAX >> 1, -2, -2, 0, -4, 0, -1]),
        (BinOp::Shl, vec![-2, -28, -28, 0, -64, i32::MIN, 0]),
        (BinOp::Mul, vec![i32::MAX, -14, -14, -14, -32, 31, i32::MIN]),
    ];
    for (op, want) in ops {
        let mut mem = Memory::new();
        let (x, y) = (mem.alloc_i32(&xs), mem.alloc_i32(&ys));
        let z = mem.alloc(DType::I32, xs.len());
        let f = elementwise(op, DType::I32, xs.len());
        one_program(
            &f,
            &[ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)],
            &mut mem,
        );
        assert_eq!(mem.read_i32(z, xs.len()).unwrap(), want, "{op:?}");
    }
}

#[test]
fn float_min_max_drop_nan() {
    let xs = [1.0f32, f32::NAN, -0.5];
    let ys = [f32::NAN, 2.0, 3.0];
    for (op, want) in [
        (BinOp::Min, [1.0, 2.0, -0.5]),
        (BinOp::Max, [1.0, 2.0, 3.0]),
    ] {
        let mut mem = Memory::new();
        let (x, y) = (mem.alloc_f32(&xs), mem.alloc_f32(&ys));
        let z = mem.alloc(DType::F32, 3);
        let f = elementwise(op, DType::F32, 3);
        one_program(
            &f,
            &[ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)],
            &mut mem,
        );
        assert_eq!(mem.read_f32(z, 3).unwrap(), want, "{op:?}");
    }
}

/// Loads a tile of `from`, casts it to `to`, stores it.
fn cast_kernel(from: DType, to: DType, n: usize) -> Function {
    let mut k = Kernel::new("cast");
    let x = k.ptr_param("x", from);
    let y = k.ptr_param("y", to);
    let offs = k.range(0, n as i64);
    let px = k.add_ptr(x, offs);
    let v = k.load(px, None, None);
    let c = k.cast(v, ScalarType::Num(to));
    let py = k.add_ptr(y, offs);
    k.store(py, c, None);
    k.finish()
}

#[test]
fn casts_between_number_types() {
    let run_cast = |from: DType, to: DType, mem: &mut Memory, x: u64, n: usize| -> u64 {
        let y = mem.alloc(to, n);
        one_program(
            &cast_kernel(from, to, n),
            &[ArgValue::Ptr(x), ArgValue::Ptr(y)],
            mem,
        );
        y
    };
    let mut mem = Memory::new();
    let floats = mem.alloc_f32(&[2.9, -2.9, 1e10, 0.0, 65519.0, 1.0 / 3.0]);
    let y = run_cast(DType::F32, DType::I32, &mut mem, floats, 6);
    assert_eq!(
        mem.read_i32(y, 6).unwrap(),
        vec![2, -2, i32::MAX, 0, 65519, 0]
    );
    let y = run_cast(DType::F32, DType::F16, &mut mem, floats, 6);
    let halves: Vec<f32> = mem
        .read_f16(y, 6)
        .unwrap()
        .iter()
        .map(|h| h.to_f32())
        .collect();
    assert_eq!(
        &halves[..5],
        &[1485.0 / 512.0, -1485.0 / 512.0, f32::INFINITY, 0.0, 65504.0]
    );
    assert_eq!(halves[5], f16::from_f32(1.0 / 3.0).to_f32());
    let y = run_cast(DType::F32, DType::I1, &mut mem, floats, 6);
    assert_eq!(
        mem.read_bool(y, 6).unwrap(),
        vec![true, true, true, false, true, true]
    );
    let y = run_cast(DType::F32, DType::F64, &mut mem, floats, 6);
    assert_eq!(mem.read_f64(y, 1).unwrap(), vec![2.9f32 as f64]);

    let ints = mem.alloc_i32(&[300, -129, 127, -1]);
    let y = run_cast(DType::I32, DType::I8, &mut mem, ints, 4);
    assert_eq!(mem.read_i8(y, 4).unwrap(), vec![44, 127, 127, -1]);
    let y = run_cast(DType::I32, DType::I64, &mut mem, ints, 4);
    assert_eq!(mem.read_i64(y, 4).unwrap(), vec![300, -129, 127, -1]);
    let y = run_cast(DType::I32, DType::BF16, &mut mem, ints, 4);
    let want: Vec<bf16> = [300.0, -129.0, 127.0, -1.0]
        .iter()
        .map(|&v| bf16::from_f32(v))
        .collect();
    assert_eq!(mem.read_bf16(y, 4).unwrap(), want);

    let bytes = mem.alloc_i8(&[-1, 5]);
    let y = run_cast(DType::I8, DType::I32, &mut mem, bytes, 2);
    assert_eq!(mem.read_i32(y, 2).unwrap(), vec![-1, 5], "sign-extends");
    let bools = mem.alloc_bool(&[true, false]);
    let y = run_cast(DType::I1, DType::I32, &mut mem, bools, 2);
    assert_eq!(mem.read_i32(y, 2).unwrap(), vec![1, 0]);
}

#[test]
fn atomics_are_sequential_read_modify_writes() {
    // A histogram: four programs add 1 per value into 8 bins, colliding within
    // a tile and across programs; the returned old values are stored too.
    let mut k = Kernel::new("histogram");
    let x = k.ptr_param("x", DType::I32);
    let bins = k.ptr_param("bins", DType::I32);
    let olds = k.ptr_param("olds", DType::I32);
    let pid = k.pid(0);
    let sixteen = k.i32(16);
    let start = k.bin(BinOp::Mul, pid, sixteen);
    let lanes = k.range(0, 16);
    let offs = k.bin(BinOp::Add, start, lanes);
    let px = k.add_ptr(x, offs);
    let v = k.load(px, None, None);
    let pb = k.add_ptr(bins, v);
    let ones = k.int(1, DType::I32, &[16]);
    // Lanes whose value is 7 are masked off: bin 7 stays empty.
    let seven = k.i32(7);
    let keep = k.cmp(CmpPred::Ne, v, seven);
    let old = k.atomic(AtomicOp::Add, pb, ones, Some(keep));
    let po = k.add_ptr(olds, offs);
    k.store(po, old, None);
    let f = k.finish();

    let xs: Vec<i32> = (0..64).map(|i| (i * i + 3 * i) % 8).collect();
    let mut mem = Memory::new();
    let x = mem.alloc_i32(&xs);
    let bins = mem.alloc(DType::I32, 8);
    let olds = mem.alloc(DType::I32, 64);
    run(
        &f,
        [4, 1, 1],
        &[ArgValue::Ptr(x), ArgValue::Ptr(bins), ArgValue::Ptr(olds)],
        &mut mem,
    )
    .unwrap();
    let mut want = [0i32; 8];
    let mut want_old = vec![0i32; 64];
    for (i, &b) in xs.iter().enumerate() {
        if b != 7 {
            want_old[i] = want[b as usize];
            want[b as usize] += 1;
        }
    }
    assert_eq!(mem.read_i32(bins, 8).unwrap(), want);
    assert_eq!(mem.read_i32(olds, 64).unwrap(), want_old);
}

#[test]
fn atomic_max_and_compare_and_swap() {
    // Each program: old = atomic_max(m, pid * 1.5); then cas(lock, 0, pid + 1).
    let mut k = Kernel::new("max_cas");
    let m = k.ptr_param("m", DType::F32);
    let lock = k.ptr_param("lock", DType::I32);
    let olds = k.ptr_param("olds", DType::I32);
    let pid = k.pid(0);
    let pf = k.cast(pid, ScalarType::Num(DType::F32));
    let step = k.float(1.5, DType::F32, &[]);
    let v = k.bin(BinOp::Mul, pf, step);
    k.atomic(AtomicOp::Max, m, v, None);
    let zero = k.i32(0);
    let one = k.i32(1);
    let mine = k.bin(BinOp::Add, pid, one);
    let old = k.push(
        OpKind::AtomicCas {
            ptr: lock,
            cmp: zero,
            value: mine,
        },
        Type::num(DType::I32),
    );
    let po = k.add_ptr(olds, pid);
    k.store(po, old, None);
    let f = k.finish();
    let mut mem = Memory::new();
    let m = mem.alloc_f32(&[2.0]);
    let lock = mem.alloc(DType::I32, 1);
    let olds = mem.alloc(DType::I32, 3);
    run(
        &f,
        [3, 1, 1],
        &[ArgValue::Ptr(m), ArgValue::Ptr(lock), ArgValue::Ptr(olds)],
        &mut mem,
    )
    .unwrap();
    assert_eq!(mem.read_f32(m, 1).unwrap(), vec![3.0]);
    assert_eq!(
        mem.read_i32(lock, 1).unwrap(),
        vec![1],
        "only the first CAS wins"
    );
    assert_eq!(mem.read_i32(olds, 3).unwrap(), vec![0, 1, 1]);
}

/// Loads `x[offset]` without a mask and stores it to `y[0]`.
fn load_at(offset: i64) -> (Function, tritonc::Span) {
    let mut k = Kernel::new("load_at");
    let x = k.ptr_param("x", DType::F32);
    let y = k.ptr_param("y", DType::F32);
    let off = k.int(offset, DType::I32, &[]);
    let p = k.add_ptr(x, off);
    let v = k.load(p, None, None);
    let span = k.last_span();
    k.store(y, v, None);
    (k.finish(), span)
}

#[test]
fn out_of_bounds_load_is_an_error_at_the_load() {
    let mut mem = Memory::new();
    let x = mem.alloc_f32(&[1.0; 4]);
    let y = mem.alloc(DType::F32, 1);
    let args = [ArgValue::Ptr(x), ArgValue::Ptr(y)];
    let (ok, _) = load_at(3);
    run(&ok, [1, 1, 1], &args, &mut mem).unwrap();
    assert_eq!(mem.read_f32(y, 1).unwrap(), vec![1.0]);
    for offset in [4, -1, 1 << 20] {
        let (f, span) = load_at(offset);
        let err = run(&f, [1, 1, 1], &args, &mut mem).unwrap_err();
        assert_eq!(err.span, span, "offset {offset}");
        let addr = format!("{:#x}", x.wrapping_add((offset * 4) as u64));
        assert!(
            err.message.starts_with(&format!(
                "load of f32 at address {addr} is outside every buffer"
            )),
            "{}",
            err.message
        );
        assert_eq!(err.to_diagnostic().span, span);
    }
}

#[test]
fn misaligned_and_stray_accesses_are_errors() {
    // An i8* to x, advanced one byte, reinterpreted as f32*.
    let mut k = Kernel::new("misaligned");
    let x = k.ptr_param("x", DType::F32);
    let bytes = k.cast(x, ScalarType::Ptr(DType::I8));
    let one = k.i32(1);
    let shifted = k.add_ptr(bytes, one);
    let p = k.cast(shifted, ScalarType::Ptr(DType::F32));
    let v = k.load(p, None, None);
    k.store(x, v, None);
    let f = k.finish();
    let mut mem = Memory::new();
    let x = mem.alloc(DType::F32, 4);
    let err = run(&f, [1, 1, 1], &[ArgValue::Ptr(x)], &mut mem).unwrap_err();
    assert!(err.message.contains("misaligned"), "{}", err.message);

    // A store through a null pointer.
    let mut k = Kernel::new("null_store");
    let p = k.ptr_param("p", DType::I32);
    let v = k.i32(3);
    k.store(p, v, None);
    let span = k.last_span();
    let err = run(&k.finish(), [1, 1, 1], &[ArgValue::Ptr(0)], &mut mem).unwrap_err();
    assert_eq!(err.span, span);
    assert!(
        err.message.starts_with("store of i32 at address 0x0"),
        "{}",
        err.message
    );
}

#[test]
fn masked_off_lanes_never_touch_memory() {
    // Every pointer is null; the mask is all false.
    let mut k = Kernel::new("masked");
    let p = k.ptr_param("p", DType::F32);
    let offs = k.range(0, 8);
    let ptrs = k.add_ptr(p, offs);
    let eight = k.i32(8);
    let never = k.cmp(CmpPred::Gt, offs, eight);
    let other = k.float(2.5, DType::F32, &[8]);
    let v = k.load(ptrs, Some(never), Some(other));
    k.store(ptrs, v, Some(never));
    let f = k.finish();
    run(&f, [1, 1, 1], &[ArgValue::Ptr(0)], &mut Memory::new()).unwrap();
}

#[test]
fn bad_arguments_are_errors() {
    let f = sum_below();
    let mut mem = Memory::new();
    let out = mem.alloc(DType::I32, 1);
    let err = run(&f, [1, 1, 1], &[ArgValue::Ptr(out)], &mut mem).unwrap_err();
    assert!(
        err.message.contains("takes 2 arguments but 1 were given"),
        "{}",
        err.message
    );
    assert_eq!(err.span, f.span);
    let err = run(
        &f,
        [1, 1, 1],
        &[ArgValue::Int(0), ArgValue::Int(3)],
        &mut mem,
    )
    .unwrap_err();
    assert!(err.message.contains("`out`"), "{}", err.message);
    assert!(err.message.contains("must be a pointer"), "{}", err.message);
    let err = run(
        &f,
        [1, 1, 1],
        &[ArgValue::Ptr(out), ArgValue::Float(3.0)],
        &mut mem,
    )
    .unwrap_err();
    assert!(
        err.message.contains("must be an integer"),
        "{}",
        err.message
    );
    let err = run(
        &f,
        [1, 1, 1],
        &[ArgValue::Ptr(out), ArgValue::Int(1 << 40)],
        &mut mem,
    )
    .unwrap_err();
    assert!(err.message.contains("does not fit"), "{}", err.message);
}

#[test]
fn integer_division_by_zero_is_an_error() {
    let mut mem = Memory::new();
    let x = mem.alloc_i32(&[1, 2]);
    let y = mem.alloc_i32(&[1, 0]);
    let z = mem.alloc(DType::I32, 2);
    let f = elementwise(BinOp::Div, DType::I32, 2);
    let err = run(
        &f,
        [1, 1, 1],
        &[ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)],
        &mut mem,
    )
    .unwrap_err();
    assert!(err.message.contains("division by zero"), "{}", err.message);
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    // A use of a value no op defines.
    let mut k = Kernel::new("undefined");
    let ghost = k.b.new_value(Type::num(DType::I32), None);
    let one = k.i32(1);
    k.bin(BinOp::Add, ghost, one);
    let err = run(&k.finish(), [1, 1, 1], &[], &mut Memory::new()).unwrap_err();
    assert!(
        err.message.contains("used before it is defined"),
        "{}",
        err.message
    );

    // An add of tiles of different lengths.
    let mut k = Kernel::new("mismatch");
    let a = k.range(0, 4);
    let b = k.range(0, 8);
    let ty = k.ty(a);
    k.push(
        OpKind::Binary {
            op: BinOp::Add,
            lhs: a,
            rhs: b,
        },
        ty,
    );
    assert!(run(&k.finish(), [1, 1, 1], &[], &mut Memory::new()).is_err());
}

/// `for (i = 0; ; i++) { out[i] = i; if (i == 3) return; }` — a return inside
/// a loop ends the program; later ops never run.
#[test]
fn return_inside_a_loop_ends_the_program() {
    let mut k = Kernel::new("early");
    let out = k.ptr_param("out", DType::I32);
    let zero = k.i32(0);
    let i32t = Type::num(DType::I32);
    k.b.open_region(vec![i32t.clone()]);
    let always = k.boolean(true);
    let cond_region = k.b.close_region(vec![always]);
    let args = k.b.open_region(vec![i32t.clone()]);
    let i = args[0];
    let p = k.add_ptr(out, i);
    k.store(p, i, None);
    let three = k.i32(3);
    let done = k.cmp(CmpPred::Eq, i, three);
    k.return_if(done);
    let one = k.i32(1);
    let next = k.bin(BinOp::Add, i, one);
    let body_region = k.b.close_region(vec![next]);
    let r = k.push_while(vec![zero], cond_region, body_region, vec![i32t]);
    // Never reached: would write 99 at out[0].
    let v = k.i32(99);
    let p = k.add_ptr(out, r[0]);
    k.store(p, v, None);
    let f = k.finish();
    let mut mem = Memory::new();
    let out = mem.alloc_i32(&[-1; 6]);
    run(&f, [1, 1, 1], &[ArgValue::Ptr(out)], &mut mem).unwrap();
    assert_eq!(mem.read_i32(out, 6).unwrap(), vec![0, 1, 2, 3, -1, -1]);
}
