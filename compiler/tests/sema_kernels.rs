//! The seed kernels (tests/kernels/*.tc) lower to Triton-IR with the expected ops,
//! types and shapes.
mod sema_support;
use sema_support::*;
use tritonc::ir::*;

const DOT_DEFS: [(&str, &str); 4] = [("TYPE", "half"), ("TM", "64"), ("TN", "32"), ("TK", "16")];

fn ty(f: &Function, v: ValueId) -> String {
    f.ty(v).to_string()
}

#[test]
fn vector_add() {
    let f = lower_kernel("add.tc", &[("TYPE", "float"), ("SIZE", "128")]);
    assert_eq!(f.name, "add");
    assert_eq!(f.params.len(), 4);
    assert_eq!(ty(&f, f.params[1].value), "f32*");
    assert_eq!(count(&f, "ProgramId"), 1);
    assert_eq!(count(&f, "MakeRange"), 1);
    assert_eq!(count(&f, "Load"), 2);
    assert_eq!(count(&f, "Store"), 1);
    for op in ops_named(&f, "AddPtr") {
        assert_eq!(ty(&f, op.results[0]), "f32*[128]");
    }
    let store = ops_named(&f, "Store")[0];
    let OpKind::Store { value, mask, .. } = &store.kind else {
        unreachable!()
    };
    assert!(mask.is_none());
    assert_eq!(ty(&f, *value), "f32[128]");
}

#[test]
fn vector_add_half_stays_half() {
    let f = lower_kernel("add.tc", &[("TYPE", "half"), ("SIZE", "256")]);
    let add = ops_named(&f, "Binary");
    assert!(add.iter().any(|o| ty(&f, o.results[0]) == "f16[256]"));
    assert_eq!(count(&f, "Cast"), 0, "no conversions needed");
}

#[test]
fn transpose_plain_and_masked() {
    let defs = [("TYPE", "half"), ("TM", "32"), ("TN", "64")];
    let f = lower_kernel("transpose.tc", &defs);
    let trans = ops_named(&f, "Trans");
    assert_eq!(trans.len(), 1);
    assert_eq!(ty(&f, trans[0].results[0]), "f16[64, 32]");
    let load = ops_named(&f, "Load")[0];
    assert_eq!(ty(&f, load.results[0]), "f16[32, 64]");

    let f = lower_kernel("transpose_masked.tc", &defs);
    let OpKind::Load { mask, .. } = &ops_named(&f, "Load")[0].kind else {
        unreachable!()
    };
    let mask = mask.expect("masked load");
    assert_eq!(ty(&f, mask), "i1[32, 64]");
    let OpKind::Store { mask, .. } = &ops_named(&f, "Store")[0].kind else {
        unreachable!()
    };
    assert_eq!(ty(&f, mask.expect("masked store")), "i1[64, 32]");
    // `rm[:, newaxis] < M`: reshape to [32, 1], broadcast to [32, 64].
    assert!(ops_named(&f, "Reshape")
        .iter()
        .any(|o| ty(&f, o.results[0]) == "i32[32, 1]"));
    assert!(ops_named(&f, "Broadcast")
        .iter()
        .any(|o| ty(&f, o.results[0]) == "i1[32, 64]" || ty(&f, o.results[0]) == "i32[32, 64]"));
}

#[test]
fn matrix_add_reduce_broadcast() {
    let f = lower_kernel("matrix_ops.tc", &[]);
    let reduce = ops_named(&f, "Reduce");
    assert_eq!(reduce.len(), 1);
    let OpKind::Reduce { axis, kind, .. } = &reduce[0].kind else {
        unreachable!()
    };
    assert_eq!((*axis, *kind), (1, ReduceKind::Sum));
    assert_eq!(ty(&f, reduce[0].results[0]), "f32[16]");
    assert!(ops_named(&f, "Broadcast")
        .iter()
        .any(|o| ty(&f, o.results[0]) == "f32[16, 32]"));
    // Literals initialise tiles directly as tile constants.
    assert!(ops_named(&f, "Constant")
        .iter()
        .any(|o| ty(&f, o.results[0]) == "f32[16, 8]"));
}

fn single_dot(f: &Function) -> (&Op, ValueId, ValueId, ValueId) {
    let dots = ops_named(f, "Dot");
    assert_eq!(dots.len(), 1);
    let OpKind::Dot { a, b, acc } = &dots[0].kind else {
        unreachable!()
    };
    (dots[0], *a, *b, *acc)
}

/// The loop of a matmul kernel and the body-region arg that `c` is carried in.
fn loop_of(f: &Function) -> &Op {
    let loops: Vec<_> = f
        .body
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::While { .. }))
        .collect();
    assert_eq!(loops.len(), 1);
    loops[0]
}

#[test]
fn matmul_fuses_accumulation() {
    let f = lower_kernel("dot.tc", &DOT_DEFS);
    let (dot, a, b, acc) = single_dot(&f);
    assert_eq!(ty(&f, a), "f16[64, 16]");
    assert_eq!(ty(&f, b), "f16[16, 32]");
    assert_eq!(ty(&f, dot.results[0]), "f32[64, 32]");
    // `c += a @ b` accumulates into the carried `c` (a body-region arg).
    let OpKind::While {
        body_region, inits, ..
    } = &loop_of(&f).kind
    else {
        unreachable!()
    };
    assert!(body_region.args.contains(&acc), "acc is the carried c");
    assert!(body_region.yields.contains(&dot.results[0]));
    // k, c, pa, pb are carried.
    assert_eq!(inits.len(), 4);
    assert_eq!(count(&f, "Binary"), count(&f, "Binary"));
    assert!(
        !ops_named(&f, "Binary")
            .iter()
            .any(|o| ty(&f, o.results[0]) == "f32[64, 32]"),
        "no separate add of the product"
    );
}

#[test]
fn matmul_prefetch_masks_loads() {
    let f = lower_kernel("dot_prefetch.tc", &DOT_DEFS);
    let OpKind::While { body_region, .. } = &loop_of(&f).kind else {
        unreachable!()
    };
    let loads: Vec<_> = body_region
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Load { .. }))
        .collect();
    assert_eq!(loads.len(), 2, "the two prefetches");
    for l in loads {
        let OpKind::Load { mask, other, .. } = &l.kind else {
            unreachable!()
        };
        let (mask, other) = (mask.expect("guarded by check"), other.expect("0 elsewhere"));
        assert_eq!(f.ty(mask).scalar, ScalarType::Num(DType::I1));
        assert_eq!(f.ty(other), f.ty(l.results[0]));
        assert_eq!(f.ty(other).scalar, ScalarType::Num(DType::F16));
    }
    assert_eq!(count(&f, "Select"), 0);
}

fn dot_trans_defs(ta: bool, tb: bool) -> Vec<(&'static str, &'static str)> {
    let mut d = vec![("TYPE", "half"), ("TM", "64"), ("TN", "32"), ("TK", "16")];
    d.extend(dot_trans_defines(ta, tb));
    d
}

#[test]
fn matmul_fused_transpositions() {
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let f = lower_kernel("dot_trans.tc", &dot_trans_defs(ta, tb));
        let (dot, a, b, _) = single_dot(&f);
        assert_eq!(ty(&f, a), "f16[64, 16]", "ta={ta} tb={tb}");
        assert_eq!(ty(&f, b), "f16[16, 32]", "ta={ta} tb={tb}");
        assert_eq!(ty(&f, dot.results[0]), "f32[64, 32]");
        assert_eq!(count(&f, "Trans"), ta as usize + tb as usize);
    }
}

#[test]
fn softmax_rows() {
    let f = lower_kernel("softmax.tc", &[("TYPE", "float"), ("TN", "1024")]);
    let reduces: Vec<_> = ops_named(&f, "Reduce")
        .iter()
        .map(|o| match &o.kind {
            OpKind::Reduce { kind, .. } => (*kind, ty(&f, o.results[0])),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        reduces,
        vec![
            (ReduceKind::Max, "f32".into()),
            (ReduceKind::Sum, "f32".into())
        ]
    );
    assert_eq!(count(&f, "NumPrograms"), 1);
    assert!(ops_named(&f, "Unary")
        .iter()
        .any(|o| matches!(o.kind, OpKind::Unary { op: UnOp::Exp, .. })));
    let load = ops_named(&f, "Load")[0];
    let OpKind::Load { mask, other, .. } = &load.kind else {
        unreachable!()
    };
    assert!(mask.is_some());
    // `check ? (float)(*?(check)px) : NEG_INF`: the load is masked, -1e30 fills the rest.
    let _ = other;
    let OpKind::Store { mask, .. } = &ops_named(&f, "Store")[0].kind else {
        unreachable!()
    };
    assert!(mask.is_some());
}

/// The printed IR of the vector add: a readable record of what sema emits.
#[test]
fn vector_add_printed() {
    let f = lower_kernel("add.tc", &[("TYPE", "float"), ("SIZE", "128")]);
    insta::assert_snapshot!(tritonc::ir::printer::print_function(&f));
}

#[test]
fn parameters_keep_their_names() {
    let f = lower_ok("void k(int N, int* X) { int x = N; *X = x; }", &[]);
    let text = tritonc::ir::printer::print_function(&f);
    assert!(text.contains("%N"), "{text}");
}
