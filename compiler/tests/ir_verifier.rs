//! The verifier accepts well-formed kernels and rejects each broken rule with
//! a message naming the op and the problem, at the op's span.
mod ir_support;

use ir_support::*;
use tritonc::ir::verifier::{verify_function, verify_module};
use tritonc::ir::*;

#[track_caller]
fn rejects(f: &Function, needle: &str) -> tritonc::span::Span {
    match verify_function(f) {
        Ok(()) => panic!("expected an error containing {needle:?}, verifier accepted"),
        Err(e) => {
            assert!(
                e.message.contains(needle),
                "error {:?} does not contain {needle:?}",
                e.message
            );
            e.span
        }
    }
}

/// The span `B` gave the op whose first result is `v`.
fn span_of(f: &Function, v: ValueId) -> tritonc::span::Span {
    walk::walk_ops(f)
        .iter()
        .find(|o| o.op.results.first() == Some(&v))
        .expect("op defining v")
        .op
        .span
}

/// The kind of the first `While` of the function body, to break by hand.
fn first_while(f: &mut Function) -> &mut OpKind {
    let w = f
        .body
        .ops
        .iter_mut()
        .find(|o| matches!(o.kind, OpKind::While { .. }));
    &mut w.expect("a while op").kind
}

#[test]
fn valid_kernels_pass() {
    let fs = [
        add_kernel(1024, ParamAttrs::default()),
        sum_loop_kernel(),
        softmax_kernel(),
        if_kernel(),
        matmul_kernel(64, 64, 32, ParamAttrs::default()),
    ];
    for f in &fs {
        if let Err(e) = verify_function(f) {
            panic!("{} rejected: {}", f.name, e.message);
        }
    }
    verify_module(&Module {
        functions: fs.to_vec(),
    })
    .unwrap();
}

#[test]
fn module_rejects_duplicate_names() {
    let f = add_kernel(128, ParamAttrs::default());
    let e = verify_module(&Module {
        functions: vec![f.clone(), f],
    })
    .unwrap_err();
    assert!(e.message.contains("@add is defined twice"), "{}", e.message);
}

#[test]
fn elementwise_operand_types_must_match() {
    let mut k = B::new("k");
    let a = k.range(0, 128);
    let b = k.range(0, 64);
    let s = k.op(
        OpKind::Binary {
            op: BinOp::Add,
            lhs: a,
            rhs: b,
        },
        tile(DType::I32, &[128]),
    );
    let f = k.finish();
    let span = rejects(&f, "add: operand types differ: i32[128] and i32[64]");
    assert_eq!(span, span_of(&f, s));
}

#[test]
fn use_before_definition() {
    let mut f = add_kernel(128, ParamAttrs::default());
    // Swap the make_range with the add that uses it.
    let ops = &mut f.body.ops;
    let r = ops
        .iter()
        .position(|o| matches!(o.kind, OpKind::MakeRange { .. }))
        .unwrap();
    ops.swap(r, r + 1);
    rejects(&f, "add: uses %8 before its definition");
}

#[test]
fn use_outside_defining_region() {
    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::I32));
    let t = k.int(1, Type::num(DType::I1));
    k.b.open_region(vec![]);
    let inner = k.int(7, i32t());
    k.name(inner, "seven");
    let then_r = k.b.close_region(vec![]);
    let else_r = Region::default();
    k.op0(OpKind::If {
        cond: t,
        then_region: then_r,
        else_region: else_r,
    });
    k.store(p, inner, None);
    rejects(
        &k.finish(),
        "store: uses %seven outside the region that defines it",
    );
}

#[test]
fn single_definition() {
    let mut f = add_kernel(128, ParamAttrs::default());
    // The second op re-defines the first op's result.
    let first = f.body.ops[0].results[0];
    f.body.ops[1].results[0] = first;
    let span = rejects(&f, "constant: %id is defined more than once");
    assert_eq!(span, f.body.ops[1].span);
}

#[test]
fn cmp_gives_i1() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.op(
        OpKind::Cmp {
            pred: CmpPred::Lt,
            lhs: a,
            rhs: a,
        },
        tile(DType::I32, &[16]),
    );
    rejects(
        &k.finish(),
        "cmp lt: result has type i32[16], expected i1[16]",
    );
}

#[test]
fn splat_needs_scalar_source() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.op(OpKind::Splat { src: a }, tile(DType::I32, &[16, 16]));
    rejects(&k.finish(), "splat: source must be a scalar, not i32[16]");
}

#[test]
fn broadcast_only_from_size_one() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    let col = k.reshape(a, &[16, 1]);
    k.broadcast(col, &[16, 8]); // fine
    k.op(OpKind::Broadcast { src: col }, tile(DType::I32, &[8, 8]));
    rejects(
        &k.finish(),
        "broadcast: cannot broadcast i32[16, 1] to i32[8, 8]: axis 0 has size 16, not 1 or 8",
    );
}

#[test]
fn reshape_keeps_element_count() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.op(OpKind::Reshape { src: a }, tile(DType::I32, &[4, 8]));
    rejects(
        &k.finish(),
        "reshape: cannot reshape i32[16] to i32[4, 8]: 16 elements vs 32",
    );
}

#[test]
fn addptr_shapes_and_offset_type() {
    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let pt = k.splat(p, &[16]);
    let r = k.range(0, 32);
    k.op(
        OpKind::AddPtr { ptr: pt, offset: r },
        ptr_tile(DType::F32, &[16]),
    );
    rejects(
        &k.finish(),
        "addptr: pointer f32*[16] and offset i32[32] differ in shape",
    );

    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let x = k.float(1.0, f32t());
    k.op(OpKind::AddPtr { ptr: p, offset: x }, Type::ptr(DType::F32));
    rejects(&k.finish(), "addptr: offset must be an integer, not f32");
}

#[test]
fn select_condition_is_i1() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.op(
        OpKind::Select {
            cond: a,
            on_true: a,
            on_false: a,
        },
        tile(DType::I32, &[16]),
    );
    rejects(
        &k.finish(),
        "select: condition has type i32[16], expected i1[16]",
    );
}

#[test]
fn load_mask_shape_and_other_type() {
    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let pt = k.splat(p, &[16]);
    let r = k.range(0, 8);
    let zero = k.int(0, tile(DType::I32, &[8]));
    let m = k.cmp(CmpPred::Gt, r, zero);
    k.op(
        OpKind::Load {
            ptr: pt,
            mask: Some(m),
            other: None,
        },
        tile(DType::F32, &[16]),
    );
    rejects(&k.finish(), "load: mask has type i1[8], expected i1[16]");

    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let pt = k.splat(p, &[16]);
    let t = k.int(1, tile(DType::I1, &[16]));
    let other = k.int(0, tile(DType::I32, &[16]));
    k.op(
        OpKind::Load {
            ptr: pt,
            mask: Some(t),
            other: Some(other),
        },
        tile(DType::F32, &[16]),
    );
    rejects(
        &k.finish(),
        "load: other has type i32[16], expected f32[16]",
    );
}

#[test]
fn store_value_matches_pointee() {
    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F16));
    let pt = k.splat(p, &[16]);
    let v = k.float(0.0, tile(DType::F32, &[16]));
    k.store(pt, v, None);
    rejects(
        &k.finish(),
        "store: stored value has type f32[16], expected f16[16]",
    );
}

#[test]
fn trans_is_2d() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    let a3 = k.reshape(a, &[2, 2, 4]);
    k.op(OpKind::Trans { src: a3 }, tile(DType::I32, &[4, 2, 2]));
    rejects(&k.finish(), "trans: needs a 2-D tile, not i32[2, 2, 4]");

    let mut k = B::new("k");
    let a = k.range(0, 16);
    let a2 = k.reshape(a, &[2, 8]);
    k.op(OpKind::Trans { src: a2 }, tile(DType::I32, &[2, 8]));
    rejects(
        &k.finish(),
        "trans: result has type i32[2, 8], expected i32[8, 2]",
    );
}

#[test]
fn reduce_axis_and_shape() {
    let mut k = B::new("k");
    let x = k.float(1.0, tile(DType::F32, &[4, 8]));
    k.op(
        OpKind::Reduce {
            src: x,
            axis: 2,
            kind: ReduceKind::Sum,
        },
        tile(DType::F32, &[4]),
    );
    rejects(&k.finish(), "reduce sum: axis 2 out of range for f32[4, 8]");

    let mut k = B::new("k");
    let x = k.float(1.0, tile(DType::F32, &[4, 8]));
    k.op(
        OpKind::Reduce {
            src: x,
            axis: 1,
            kind: ReduceKind::Max,
        },
        tile(DType::F32, &[8]),
    );
    rejects(
        &k.finish(),
        "reduce max: result has type f32[8], expected f32[4]",
    );
}

#[test]
fn dot_shapes_and_accumulator() {
    let mut k = B::new("k");
    let a = k.float(1.0, tile(DType::F16, &[16, 32]));
    let b = k.float(1.0, tile(DType::F16, &[16, 8]));
    let c = k.float(0.0, tile(DType::F32, &[16, 8]));
    k.op(OpKind::Dot { a, b, acc: c }, tile(DType::F32, &[16, 8]));
    rejects(
        &k.finish(),
        "dot: inner dimensions differ: f16[16, 32] @ f16[16, 8]",
    );

    let mut k = B::new("k");
    let a = k.float(1.0, tile(DType::F16, &[16, 32]));
    let b = k.float(1.0, tile(DType::F16, &[32, 8]));
    let c = k.float(0.0, tile(DType::F16, &[16, 8]));
    k.op(OpKind::Dot { a, b, acc: c }, tile(DType::F16, &[16, 8]));
    rejects(
        &k.finish(),
        "dot: accumulator has type f16[16, 8], expected f32[16, 8]",
    );
}

#[test]
fn make_range_result() {
    let mut k = B::new("k");
    k.op(
        OpKind::MakeRange { start: 4, end: 20 },
        tile(DType::I32, &[20]),
    );
    rejects(
        &k.finish(),
        "make_range: result has type i32[20], expected i32[16]",
    );
    let mut k = B::new("k");
    k.op(
        OpKind::MakeRange { start: 4, end: 4 },
        tile(DType::I32, &[1]),
    );
    rejects(&k.finish(), "make_range: empty range 4..4");
}

#[test]
fn if_yields_match_results() {
    let mut f = if_kernel();
    // Make the else branch yield nothing.
    let OpKind::If { else_region, .. } = &mut f.body.ops[3].kind else {
        panic!("op 3 is the first if")
    };
    else_region.yields.clear();
    let span = rejects(&f, "if: else region yields 0 values, expected 1");
    assert_eq!(span, f.body.ops[3].span);

    let mut k = B::new("k");
    let t = k.int(1, Type::num(DType::I1));
    k.b.open_region(vec![]);
    let one = k.int(1, i32t());
    let then_r = k.b.close_region(vec![one]);
    k.b.open_region(vec![]);
    let two = k.float(2.0, f32t());
    let else_r = k.b.close_region(vec![two]);
    k.op(
        OpKind::If {
            cond: t,
            then_region: then_r,
            else_region: else_r,
        },
        i32t(),
    );
    rejects(
        &k.finish(),
        "if: else region yield 0 has type f32, expected i32",
    );
}

#[test]
fn while_condition_and_body_types() {
    let mut f = sum_loop_kernel();
    let OpKind::While { body_region, .. } = first_while(&mut f) else {
        unreachable!()
    };
    body_region.yields.swap(0, 1);
    rejects(
        &f,
        "while: body region yield 0 has type f32[128], expected i32",
    );

    let mut f = sum_loop_kernel();
    let OpKind::While {
        cond_region,
        body_region,
        ..
    } = first_while(&mut f)
    else {
        unreachable!()
    };
    cond_region.yields = vec![body_region.args[0]];
    // The condition now yields a value of the body: out of scope, but the
    // type rule is checked first.
    rejects(
        &f,
        "while: condition region must yield a scalar i1, not i32",
    );

    let mut f = sum_loop_kernel();
    let OpKind::While { cond_region, .. } = first_while(&mut f) else {
        unreachable!()
    };
    cond_region.args.pop();
    rejects(
        &f,
        "while: condition region takes 1 arguments, but 2 values are carried",
    );
}

#[test]
fn return_placement() {
    let mut k = B::new("k");
    k.op0(OpKind::Return);
    k.int(1, i32t());
    rejects(&k.finish(), "return: must be the last op of its region");

    let mut k = B::new("k");
    let zero = k.int(0, i32t());
    let a = k.b.open_region(vec![i32t()]);
    k.op0(OpKind::Return);
    let t = k.cmp(CmpPred::Lt, a[0], a[0]);
    let cond = k.b.close_region(vec![t]);
    let a = k.b.open_region(vec![i32t()]);
    let body = k.b.close_region(vec![a[0]]);
    let s = k.span();
    k.b.push(
        OpKind::While {
            inits: vec![zero],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        vec![i32t()],
        s,
    );
    rejects(
        &k.finish(),
        "return: not allowed in a loop condition region",
    );
}

#[test]
fn atomics() {
    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let v = k.int(1, i32t());
    k.op(
        OpKind::AtomicRmw {
            op: AtomicOp::Add,
            ptr: p,
            value: v,
            mask: None,
        },
        f32t(),
    );
    rejects(
        &k.finish(),
        "atomic_rmw add: value has type i32, expected f32",
    );

    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::I32));
    let v = k.int(1, i32t());
    k.op(
        OpKind::AtomicCas {
            ptr: p,
            cmp: v,
            value: v,
        },
        f32t(),
    );
    rejects(&k.finish(), "atomic_cas: result has type f32, expected i32");
}

#[test]
fn unary_and_binary_element_kinds() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.unary(UnOp::Exp, a);
    rejects(&k.finish(), "exp: needs a float operand, not i32[16]");

    let mut k = B::new("k");
    let x = k.float(1.0, f32t());
    k.bin(BinOp::Shl, x, x);
    rejects(&k.finish(), "shl: needs integer operands, not f32");

    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    k.bin(BinOp::Add, p, p);
    rejects(&k.finish(), "add: operands are pointers (f32*)");
}

#[test]
fn params_are_scalars_and_results_are_counted() {
    let mut k = B::new("k");
    k.param("T", tile(DType::F32, &[4]));
    rejects(
        &k.finish(),
        "function @k: parameter T must be a scalar, not f32[4]",
    );

    let mut k = B::new("k");
    let p = k.param("P", Type::ptr(DType::F32));
    let x = k.float(1.0, f32t());
    k.op(
        OpKind::Store {
            ptr: p,
            value: x,
            mask: None,
        },
        f32t(),
    );
    rejects(&k.finish(), "store: has 1 results, expected 0");
}

#[test]
fn bad_value_ids_do_not_panic() {
    let mut f = add_kernel(128, ParamAttrs::default());
    if let OpKind::Binary { rhs, .. } = &mut f.body.ops[2].kind {
        *rhs = ValueId(10_000);
    }
    rejects(&f, "mul: uses %10000 which has no entry in the value table");
}

#[test]
fn errors_become_diagnostics() {
    let mut k = B::new("k");
    let a = k.range(0, 16);
    k.unary(UnOp::Sqrt, a);
    let e = verify_function(&k.finish()).unwrap_err();
    let span = e.span;
    let d: tritonc::Diagnostic = e.into();
    assert_eq!(d.span, span);
    assert!(d
        .message
        .starts_with("invalid Triton-IR: sqrt: needs a float operand"));
}
