//! Language features one at a time: literal typing, conversions, control-flow
//! merging, subscripts, guarded loads, compound assignments, casts.
mod sema_support;
use sema_support::*;
use tritonc::ir::*;

/// Result types of every op of one kind, in order.
fn result_types(f: &Function, kind: &str) -> Vec<String> {
    ops_named(f, kind)
        .iter()
        .flat_map(|o| o.results.iter().map(|v| f.ty(*v).to_string()))
        .collect()
}

#[test]
fn int_and_float_literals_take_the_tile_type() {
    let f = lower_ok(
        "void k(half* H) { int r[8] = 0 ... 8; half h[8] = *(H + r); *(H + r) = h * 2 + 1.5; }",
        &[],
    );
    assert_eq!(result_types(&f, "Binary"), vec!["f16[8]", "f16[8]"]);
    assert_eq!(count(&f, "Cast"), 0);
}

#[test]
fn float_literal_turns_int_tiles_into_f32() {
    let f = lower_ok(
        "void k(float* X) { int r[8] = 0 ... 8; *(X + r) = r * 0.5; }",
        &[],
    );
    assert_eq!(result_types(&f, "Cast"), vec!["f32[8]"]);
    assert_eq!(result_types(&f, "Binary"), vec!["f32[8]"]);
}

#[test]
fn literal_arithmetic_folds() {
    let f = lower_ok(
        "void k(float* X) { *X = 1 / 2; *(X + 1) = 1.0 / 4; *(X + (3 << 1)) = -(2 - 5); }",
        &[],
    );
    let consts: Vec<Const> = ops_named(&f, "Constant")
        .iter()
        .map(|o| match o.kind {
            OpKind::Constant { value } => value,
            _ => unreachable!(),
        })
        .collect();
    assert!(consts.contains(&Const::Int(0)), "{consts:?}");
    assert!(consts.contains(&Const::Float(0.25)), "{consts:?}");
    assert!(consts.contains(&Const::Int(6)), "{consts:?}");
    assert!(consts.contains(&Const::Int(3)), "{consts:?}");
    assert_eq!(count(&f, "Binary"), 0);
}

#[test]
fn usual_arithmetic_conversions() {
    let f = lower_ok(
        "void k(half a, bf16 b, char c, long l, float* X, long* L) { *X = a + b; *L = c + l; *(L + 1) = c + 1; }",
        &[],
    );
    assert_eq!(result_types(&f, "Binary"), vec!["f32", "i64", "i8"]);
}

#[test]
fn comparisons_give_bools_and_logic_stays_bool() {
    let f = lower_ok(
        "void k(int* X, int n) { int r[8] = 0 ... 8; bool m[8] = r < n && !(r == 3) || r > 6; \
         *?(m) (X + r) = ~r << 2; }",
        &[],
    );
    assert!(result_types(&f, "Cmp").iter().all(|t| t == "i1[8]"));
    assert!(ops_named(&f, "Binary")
        .iter()
        .any(|o| matches!(o.kind, OpKind::Binary { op: BinOp::And, .. })
            && f.ty(o.results[0]).to_string() == "i1[8]"));
    assert!(ops_named(&f, "Binary")
        .iter()
        .any(|o| matches!(o.kind, OpKind::Binary { op: BinOp::Shl, .. })));
    assert_eq!(count(&f, "Unary"), 2, "logical not and bitwise not");
}

#[test]
fn if_merges_assigned_tiles() {
    let f = lower_ok(
        "void k(float* X, int n) { int r[4] = 0 ... 4; float t[4] = 0; int keep = 1; \
         if (n > 0) { t = t + 1; } else { float u[4] = 2; t = u; } *(X + r) = t + keep; }",
        &[],
    );
    let ifs = ops_named(&f, "If");
    assert_eq!(ifs.len(), 1);
    // Only `t` is assigned in a branch; `u` is local to its branch.
    assert_eq!(result_types(&f, "If"), vec!["f32[4]"]);
}

#[test]
fn if_without_assignments_has_no_results() {
    let f = lower_ok("void k(float* X, int n) { if (n > 0) *X = 1; }", &[]);
    assert_eq!(result_types(&f, "If"), Vec::<String>::new());
    let OpKind::If {
        then_region,
        else_region,
        ..
    } = &ops_named(&f, "If")[0].kind
    else {
        unreachable!()
    };
    assert_eq!(
        then_region
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Store { .. }))
            .count(),
        1
    );
    assert!(else_region.ops.is_empty());
}

#[test]
fn nested_loops_carry_only_what_they_assign() {
    let f = lower_ok(
        "void k(int* X, int n) { int total = 0; int unused = 5; \
         for (int i = 0; i < n; i++) { for (int j = 0; j < i; j++) { total += j; } } *X = total + unused; }",
        &[],
    );
    let loops = ops_named(&f, "While");
    assert_eq!(loops.len(), 2);
    let OpKind::While { inits: outer, .. } = &loops[0].kind else {
        unreachable!()
    };
    let OpKind::While { inits: inner, .. } = &loops[1].kind else {
        unreachable!()
    };
    assert_eq!(outer.len(), 2, "total and i");
    assert_eq!(inner.len(), 2, "total and j");
}

#[test]
fn reduction_with_newaxis_in_one_subscript() {
    let f = lower_ok(
        "void k(float* X) { int r[4] = 0 ... 4; int c[8] = 0 ... 8; \
         float t[4, 8] = *(X + r[:, newaxis] * 8 + c[newaxis, :]); \
         float s[4, 1] = t[:, +, newaxis]; float m[1, 8] = t[max, :][newaxis, :]; \
         *(X + r[:, newaxis] * 8 + c[newaxis, :]) = t - s + m; }",
        &[],
    );
    assert_eq!(result_types(&f, "Reduce"), vec!["f32[4]", "f32[8]"]);
    assert!(result_types(&f, "Reshape").contains(&"f32[4, 1]".to_string()));
    assert!(result_types(&f, "Reshape").contains(&"f32[1, 8]".to_string()));
}

#[test]
fn ternary_of_two_loads_masks_both() {
    let f = lower_ok(
        "void k(float* X, float* Y, float* Z) { int r[8] = 0 ... 8; bool c[8] = r < 4; \
         *(Z + r) = c ? *(X + r) : *(Y + r); }",
        &[],
    );
    let loads = ops_named(&f, "Load");
    assert_eq!(loads.len(), 2);
    for l in &loads {
        let OpKind::Load { mask, .. } = &l.kind else {
            unreachable!()
        };
        assert!(mask.is_some());
    }
    // The second load fills the lanes the first one skips.
    let OpKind::Load { other, .. } = &loads[1].kind else {
        unreachable!()
    };
    assert_eq!(*other, Some(loads[0].results[0]));
    assert_eq!(count(&f, "Select"), 0);
}

#[test]
fn ternary_on_values_is_a_select() {
    let f = lower_ok(
        "void k(float* X) { int r[8] = 0 ... 8; float v[8] = r < 4 ? 1 : r; *(X + r) = v; }",
        &[],
    );
    assert_eq!(result_types(&f, "Select"), vec!["i32[8]"]);
}

#[test]
fn compound_store_loads_then_stores() {
    let f = lower_ok(
        "void k(float* X) { int r[8] = 0 ... 8; *(X + r) += 2; *?(r < 3) (X + r) *= 3; }",
        &[],
    );
    assert_eq!(count(&f, "Load"), 2);
    assert_eq!(count(&f, "Store"), 2);
    let OpKind::Store { mask, .. } = &ops_named(&f, "Store")[1].kind else {
        unreachable!()
    };
    assert!(mask.is_some());
}

#[test]
fn pointer_increments_and_casts() {
    let f = lower_ok(
        "void k(float* X, int n) { float* p = X; p++; p += n; half* h = (half*) p; \
         int i = (int) 2.7; *h = (half) i; }",
        &[],
    );
    assert_eq!(count(&f, "AddPtr"), 2);
    assert!(result_types(&f, "Cast").contains(&"f16*".to_string()));
    assert!(ops_named(&f, "Constant").iter().any(|o| o.kind
        == OpKind::Constant {
            value: Const::Int(2)
        }));
}

#[test]
fn product_without_fusion() {
    let f = lower_ok(
        "void k(float* C) { half a[16, 8] = 1; half b[8, 4] = 2; float c[16, 4] = 3; \
         c = a @ b + c; half d[16, 4] = 0; d += a @ b; }",
        &[],
    );
    let dots = ops_named(&f, "Dot");
    assert_eq!(dots.len(), 2);
    for d in &dots {
        let OpKind::Dot { acc, .. } = &d.kind else {
            unreachable!()
        };
        assert!(
            matches!(
                ops_named(&f, "Constant")
                    .iter()
                    .find(|o| o.results[0] == *acc)
                    .map(|o| &o.kind),
                Some(OpKind::Constant { .. })
            ),
            "zero accumulator"
        );
    }
    // `d` is half: the f32 product is added in f32 and converted back.
    assert!(result_types(&f, "Cast").contains(&"f16[16, 4]".to_string()));
}

#[test]
fn int8_product_accumulates_in_int32() {
    let f = lower_ok(
        "void k(int* C) { char a[16, 32] = 1; char b[32, 8] = 1; int c[16, 8] = a @ b; }",
        &[],
    );
    assert_eq!(result_types(&f, "Dot"), vec!["i32[16, 8]"]);
}

#[test]
fn literal_conditions_pick_a_branch() {
    let f = lower_ok(
        "void k(float* X) { if (1) *X = 1; else *X = 2; while (0) { *X = 3; } }",
        &[],
    );
    assert_eq!(count(&f, "If"), 0);
    assert_eq!(count(&f, "Store"), 1);
}

#[test]
fn return_inside_a_loop() {
    let f = lower_ok("void k(int* X, int n) { for (int i = 0; i < n; i++) { if (i == 3) return; *(X + i) = i; } }", &[]);
    assert_eq!(count(&f, "Return"), 1);
}

#[test]
fn lower_all_reports_every_failing_function() {
    let text = "void a() { int x = y; }\nvoid b() { }\nvoid c() { float* p = 1.5; }\nvoid b() { }";
    let tu = parse_text("t.tc", text, &options(&[])).2.unwrap();
    let errors = tritonc::sema::lower_all(&tu).unwrap_err();
    let msgs: Vec<&str> = errors.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert!(msgs[0].contains("`y`"));
    assert!(msgs[1].contains("cannot initialize `p`"), "{msgs:?}");
    assert!(msgs[2].contains("defined twice"));
}

#[test]
fn unit_strides_leave_no_ops() {
    let f = lower_ok(
        "void k(float* X) { int r[8] = 0 ... 8; *(X + r * 1 + 0) = 1.0 * (float)(r / 1); }",
        &[],
    );
    assert_eq!(count(&f, "Binary"), 0);
    let f = lower_kernel(
        "dot.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "16"), ("TK", "8")],
    );
    assert!(!ops_named(&f, "Constant").iter().any(|o| o.kind
        == OpKind::Constant {
            value: Const::Int(1)
        }));
}

#[test]
fn large_literals_widen_and_narrow_stores_wrap() {
    let f = lower_ok(
        "void k(long* L, char* C, int n) { *L = n + 5000000000; *C = 300; }",
        &[],
    );
    assert_eq!(result_types(&f, "Binary"), vec!["i64"]);
    assert!(ops_named(&f, "Constant").iter().any(|o| o.kind
        == OpKind::Constant {
            value: Const::Int(44)
        }));
}

#[test]
fn pointer_tiles_broadcast_from_scalars() {
    // Seed 000: `float* c_broadcast[32] = c; float* c_ptr[32] = c_broadcast + off;`
    let f = lower_ok(
        "void k(float* c) { int off[32] = 0 ... 32; float* c_broadcast[32] = c; \
         float* c_ptr[32] = c_broadcast + off; *c_ptr = 1; }",
        &[],
    );
    assert_eq!(result_types(&f, "Splat"), vec!["f32*[32]"]);
    assert_eq!(result_types(&f, "AddPtr"), vec!["f32*[32]"]);
}

#[test]
fn empty_branches_leave_no_if() {
    let f = lower_ok("void k(int n) { if (n > 0) ; else { } }", &[]);
    assert_eq!(count(&f, "If"), 0);
}

/// Float constants folded to ints agree with the run-time cast: truncate and
/// saturate (an i32 constant never holds an i64 value).
#[test]
fn float_constants_fold_to_ints_by_saturating() {
    use tritonc::ir::{Const, OpKind};
    let text = "__global__ void k(int* Y) { int a = -3.0e38f; *(Y + 4) = a; char b = 1e9; *(Y + 5) = b; int c = 2.9; *(Y + 6) = c; }";
    let tu = parse_text("k.tc", text, &options(&[])).2.unwrap();
    let module = tritonc::sema::lower(&tu).unwrap();
    let ints: Vec<i64> = module.functions[0]
        .body
        .ops
        .iter()
        .filter_map(|op| match op.kind {
            OpKind::Constant {
                value: Const::Int(i),
            } if i != 4 && i != 5 && i != 6 => Some(i),
            _ => None,
        })
        .collect();
    assert_eq!(ints, vec![i32::MIN as i64, 127, 2]);
    tritonc::ir::verifier::verify_function(&module.functions[0]).unwrap();
}
