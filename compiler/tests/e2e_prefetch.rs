//! The pre-fetch unrotation (the pass `passes::unrotate_prefetch`) keeps every result: the
//! seed kernels with a manual pre-fetch (`dot_prefetch.tc`, the four
//! `dot_trans.tc` variants) run on the CPU interpreter before and after the
//! rewrite on the same random inputs (K = 0, one tile, several tiles) and C
//! must be bit for bit the same, and close to an f64 reference. Loops that
//! differ from the pattern in any way are left alone (or only their matching
//! operand is rewritten), and still compute the same C.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::driver::{lower, Source};
use tritonc::interp::Memory;
use tritonc::ir::{Function, OpKind};
use tritonc::passes::unrotate_prefetch::unrotate_prefetch;

/// Leading dimension of every buffer: room for the dims used here plus the
/// tile the rotated loops read past the end of K (`dot_trans.tc` loads
/// unconditionally after the last step).
const LD: usize = 128;
const TM: usize = 32;
const TN: usize = 32;
const TK: usize = 16;

/// `func` after the pass; `None` when it changed nothing.
fn unrotated(func: &Function) -> Option<Function> {
    let mut out = func.clone();
    unrotate_prefetch(&mut out).then_some(out)
}

fn defines<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(String, String)> {
    let base = [("TYPE", "half"), ("TM", "32"), ("TN", "32"), ("TK", "16")];
    base.iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn lower_text(text: &str, defs: &[(String, String)]) -> Function {
    let dir = kernels_dir();
    let source = Source {
        path: dir.join("inline.tc"),
        text: text.to_string(),
    };
    let mut lowered = lower(&source, defs, &[dir]).unwrap_or_else(|e| panic!("{e}"));
    lowered.module.functions.remove(0)
}

fn kernel_text(file: &str) -> String {
    std::fs::read_to_string(kernels_dir().join(file)).unwrap()
}

/// Values carried by the first top-level loop.
fn carried(func: &Function) -> usize {
    func.body
        .ops
        .iter()
        .find_map(|op| match &op.kind {
            OpKind::While { inits, .. } => Some(inits.len()),
            _ => None,
        })
        .expect("a loop")
}

/// C (M x N, f16) of `func` on fixed random A and B (LD x LD each).
fn run(func: &Function, m: usize, n: usize, k: usize) -> Vec<f16> {
    let mut mem = Memory::new();
    let a = mem.alloc_slice(&random::<f16>(LD * LD, 7, 1.0));
    let b = mem.alloc_slice(&random::<f16>(LD * LD, 8, 1.0));
    let c = mem.alloc_slice(&vec![sentinel::<f16>(); LD * LD]);
    let args = [
        ptr(a),
        ptr(b),
        ptr(c),
        int(m),
        int(n),
        int(k),
        int(LD),
        int(LD),
        int(LD),
    ];
    tritonc::interp::run(func, [cdiv(m, TM), cdiv(n, TN), 1], &args, &mut mem)
        .unwrap_or_else(|e| panic!("interpreter: {}", e.message));
    let all = read::<f16>(&mem, c, LD * LD);
    (0..m)
        .flat_map(|i| all[i * LD..i * LD + n].to_vec())
        .collect()
}

/// `C = op(A) @ op(B)` in f64 on the same inputs as [`run`].
fn reference(m: usize, n: usize, k: usize, a_t: bool, b_t: bool) -> Vec<f64> {
    let a = random::<f16>(LD * LD, 7, 1.0);
    let b = random::<f16>(LD * LD, 8, 1.0);
    let at = |i: usize, l: usize| if a_t { a[l * LD + i] } else { a[i * LD + l] }.to_f64();
    let bt = |l: usize, j: usize| if b_t { b[j * LD + l] } else { b[l * LD + j] }.to_f64();
    matmul_f64(m, n, k, at, bt)
}

/// Runs `func` and its rewrite on K = 0, 1 tile and 3 tiles: bitwise equal C,
/// close to the reference.
fn assert_equivalent(func: &Function, rewritten: &Function, a_t: bool, b_t: bool, what: &str) {
    tritonc::ir::verifier::verify_function(rewritten)
        .unwrap_or_else(|e| panic!("{what}: rewritten IR does not verify: {e:?}"));
    let (m, n) = (2 * TM, 2 * TN);
    for k in [0, TK, 3 * TK] {
        let before = run(func, m, n, k);
        let after = run(rewritten, m, n, k);
        assert_exact(
            &after,
            &before,
            &format!("{what} K={k}: rewritten vs original"),
        );
        let want = reference(m, n, k, a_t, b_t);
        let bound = |_: usize, w: f64| f16::ulp(w) + 1e-3 * k as f64;
        assert_close(&after, &want, bound, &format!("{what} K={k}: vs f64"));
    }
}

#[test]
fn prefetch_kernel_unrotates_and_keeps_results() {
    let func = lower_text(&kernel_text("dot_prefetch.tc"), &defines(&[]));
    let rewritten = unrotated(&func).expect("dot_prefetch.tc matches");
    // k, c, pa, pb: the carried a and b are gone, as in dot.tc.
    assert_eq!((carried(&func), carried(&rewritten)), (6, 4));
    // No load is left before the loop; two sit at the top of the body.
    let loads_before_loop = rewritten
        .body
        .ops
        .iter()
        .take_while(|o| !matches!(o.kind, OpKind::While { .. }))
        .filter(|o| matches!(o.kind, OpKind::Load { .. }))
        .count();
    assert_eq!(loads_before_loop, 0);
    let body = rewritten
        .body
        .ops
        .iter()
        .find_map(|o| match &o.kind {
            OpKind::While { body_region, .. } => Some(body_region),
            _ => None,
        })
        .unwrap();
    assert!(body.ops[..2]
        .iter()
        .all(|o| matches!(o.kind, OpKind::Load { mask: None, .. })));
    let masked = body
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Load { mask: Some(_), .. }))
        .count();
    assert_eq!(masked, 0, "the masked pre-fetch loads are gone");
    assert_equivalent(&func, &rewritten, false, false, "dot_prefetch");
}

#[test]
fn trans_variants_unrotate_and_keep_results() {
    let text = kernel_text("dot_trans.tc");
    let a_plain = [
        ("USE_A", "a"),
        ("STRIDE_AK", "1"),
        ("STRIDE_AM", "lda"),
        ("BROADCAST_AK", "newaxis,:"),
        ("BROADCAST_AM", ":,newaxis"),
        ("SHAPE_A", "TM,TK"),
    ];
    let a_trans = [
        ("USE_A", "^a"),
        ("STRIDE_AK", "lda"),
        ("STRIDE_AM", "1"),
        ("BROADCAST_AK", ":,newaxis"),
        ("BROADCAST_AM", "newaxis,:"),
        ("SHAPE_A", "TK,TM"),
    ];
    let b_plain = [
        ("USE_B", "b"),
        ("STRIDE_BK", "ldb"),
        ("STRIDE_BN", "1"),
        ("BROADCAST_BK", ":,newaxis"),
        ("BROADCAST_BN", "newaxis,:"),
        ("SHAPE_B", "TK,TN"),
    ];
    let b_trans = [
        ("USE_B", "^b"),
        ("STRIDE_BK", "1"),
        ("STRIDE_BN", "ldb"),
        ("BROADCAST_BK", "newaxis,:"),
        ("BROADCAST_BN", ":,newaxis"),
        ("SHAPE_B", "TN,TK"),
    ];
    for (a_t, a_defs) in [(false, &a_plain), (true, &a_trans)] {
        for (b_t, b_defs) in [(false, &b_plain), (true, &b_trans)] {
            let extra: Vec<(&str, &str)> = a_defs.iter().chain(b_defs.iter()).copied().collect();
            let func = lower_text(&text, &defines(&extra));
            let what = format!("dot_trans a_t={a_t} b_t={b_t}");
            let rewritten = unrotated(&func).unwrap_or_else(|| panic!("{what} matches"));
            assert_eq!((carried(&func), carried(&rewritten)), (6, 4), "{what}");
            assert_equivalent(&func, &rewritten, a_t, b_t, &what);
        }
    }
}

/// `dot_prefetch.tc` with one edit: `from` must occur and becomes `to`.
fn edited(from: &str, to: &str) -> Function {
    let text = kernel_text("dot_prefetch.tc");
    assert!(text.contains(from), "the kernel has {from:?}");
    lower_text(&text.replacen(from, to, 1), &defines(&[]))
}

#[test]
fn loops_off_the_pattern_are_left_alone() {
    // (what, edit, values still carried after the rewrite; 6 = untouched)
    let cases: [(&str, &str, &str, usize); 6] = [
        // The last real tile would be masked off: the check is not "next
        // iteration runs".
        (
            "check one tile early",
            "bool check = k > TK;",
            "bool check = k > 2 * TK;",
            6,
        ),
        // `check` compares with the loop counter's old value plus nothing.
        (
            "check on k > 0",
            "bool check = k > TK;",
            "bool check = k > 0;",
            6,
        ),
        // a is read after the loop: only b is unrotated.
        (
            "a used after the loop",
            "*pc = c;",
            "*pc = c; TYPE* pz[TM, TK] = C + rk[newaxis, :] + rcm[:, newaxis] * ldc; *pz = a;",
            5,
        ),
        // The pre-fetch reads the pointer before the step: not the yielded one.
        (
            "load of the old pointer",
            "a = check ? *pa : 0;",
            "a = check ? *(pa - TK) : 0;",
            5,
        ),
        // A masked pre-loop load.
        (
            "masked first load",
            "TYPE a[TM, TK] = *pa; //(9)",
            "TYPE a[TM, TK] = K > 0 ? *pa : 0;",
            5,
        ),
        // A store after the in-loop load: moving the load across it could
        // read other bytes.
        (
            "store after the pre-fetch",
            "b = check ? *pb : 0;",
            "b = check ? *pb : 0; *(C + 0 ... TM) = 0;",
            6,
        ),
    ];
    for (what, from, to, left) in cases {
        let func = edited(from, to);
        let after = unrotated(&func);
        let carried_after = after.as_ref().map_or(carried(&func), carried);
        assert_eq!(carried_after, left, "{what}");
        if let Some(rewritten) = &after {
            // A partial rewrite must still compute the same C.
            let (m, n) = (2 * TM, 2 * TN);
            for k in [TK, 3 * TK] {
                assert_exact(&run(rewritten, m, n, k), &run(&func, m, n, k), what);
            }
        }
    }
}
