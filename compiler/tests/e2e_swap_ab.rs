//! The `swap-ab` pass keeps every result: skinny dot loops (`TM` 16 and 32,
//! `dot_masked_k.tc`, and `dot_grad.tc`'s `a @ ^b` and `^a @ b`) run on the
//! CPU interpreter before and after the passes up to and including it, for
//! sm_90a, on the same random inputs with edge tiles in M, N and K; C must be
//! bit for bit the same (each element sums the same products in the same
//! order) and close to an f64 reference. Tiles wgmma takes as they are, 32-bit
//! operands, targets without wgmma and loops that are not pipelined are left
//! alone.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::arch::Arch;
use tritonc::interp::Memory;
use tritonc::ir::{Function, OpKind};
use tritonc::passes::{PassManager, PassOptions, PassOutcome, Target};

/// `func` after the standard passes that come before `swap-ab`, then
/// `swap-ab`, for `arch` with `warps`; `None` when `swap-ab` changed nothing.
fn swapped(func: &Function, arch: Arch, warps: usize) -> (Function, Option<Function>) {
    let options = PassOptions::all().with_target(Target::plain(arch, warps));
    let mut before = func.clone();
    for pass in [
        "fold-dot-accumulator",
        "eliminate-dead-code",
        "unrotate-prefetch",
        "widen-dot-k",
    ] {
        PassManager::only(pass, options)
            .unwrap()
            .run(&mut before, &mut |_| {})
            .unwrap();
    }
    let mut after = before.clone();
    let mut reported = None;
    PassManager::only("swap-ab", options)
        .unwrap()
        .run(&mut after, &mut |e| {
            reported = Some(matches!(e.outcome, PassOutcome::Changed))
        })
        .unwrap();
    let changed = after != before;
    assert_eq!(Some(changed), reported, "the pass reports what it did");
    (before, changed.then_some(after))
}

/// The dot's accumulator shape (rows, columns).
fn dot_shape(func: &Function) -> Vec<usize> {
    tritonc::ir::walk::walk_ops(func)
        .iter()
        .find_map(|v| match v.op.kind {
            OpKind::Dot { acc, .. } => Some(func.ty(acc).shape.clone()),
            _ => None,
        })
        .expect("a dot")
}

/// Operand layout of a `dot_grad.tc` run: `a` is M x K or, transposed, K x M
/// (leading dimension `lda`); likewise `b`.
#[derive(Clone, Copy)]
struct Form {
    a_t: bool,
    b_t: bool,
}

/// C (M x N, f16, dense) of `func` on random A and B; `dims` says whether the
/// kernel takes leading dimensions (`dot_grad.tc`) or not (`dot_masked_k.tc`).
fn run(
    func: &Function,
    tiles: (usize, usize),
    mnk: (usize, usize, usize),
    form: Option<Form>,
) -> Vec<f16> {
    let (m, n, k) = mnk;
    let mut mem = Memory::new();
    let a = mem.alloc_slice(&random::<f16>(m * k, 21, 1.0));
    let b = mem.alloc_slice(&random::<f16>(k * n, 22, 1.0));
    let c = mem.alloc_slice(&vec![sentinel::<f16>(); m * n]);
    let mut args = vec![ptr(a), ptr(b), ptr(c), int(m), int(n), int(k)];
    if let Some(f) = form {
        args.push(int(if f.a_t { m } else { k }));
        args.push(int(if f.b_t { k } else { n }));
        args.push(int(n));
    }
    tritonc::interp::run(
        func,
        [cdiv(m, tiles.0), cdiv(n, tiles.1), 1],
        &args,
        &mut mem,
    )
    .unwrap_or_else(|e| panic!("interpreter: {}", e.message));
    read::<f16>(&mem, c, m * n)
}

/// C in f64 on the same inputs as [`run`].
fn reference(mnk: (usize, usize, usize), form: Form) -> Vec<f64> {
    let (m, n, k) = mnk;
    let a = random::<f16>(m * k, 21, 1.0);
    let b = random::<f16>(k * n, 22, 1.0);
    let at = |i: usize, l: usize| if form.a_t { a[l * m + i] } else { a[i * k + l] }.to_f64();
    let bt = |l: usize, j: usize| if form.b_t { b[j * k + l] } else { b[l * n + j] }.to_f64();
    matmul_f64(m, n, k, at, bt)
}

/// Runs `before` and `after` on shapes with edge tiles: the same C, close to f64.
fn assert_same_product(
    before: &Function,
    after: &Function,
    tiles: (usize, usize),
    form: Option<Form>,
    what: &str,
) {
    tritonc::ir::verifier::verify_function(after)
        .unwrap_or_else(|e| panic!("{what}: swapped IR does not verify: {e:?}"));
    let (tm, tn) = tiles;
    for mnk in [
        (tm, tn, 0),
        (tm - 3, tn, 64),
        (2 * tm + 5, 2 * tn + 8, 72),
        (tm, tn + 40, 200),
    ] {
        let want = reference(
            mnk,
            form.unwrap_or(Form {
                a_t: false,
                b_t: false,
            }),
        );
        let old = run(before, tiles, mnk, form);
        let new = run(after, tiles, mnk, form);
        let shape = format!("{what} {}x{}x{}", mnk.0, mnk.1, mnk.2);
        assert_exact(&new, &old, &format!("{shape}: swapped vs original"));
        let bound = |_: usize, w: f64| f16::ulp(w) + 1e-3 * mnk.2 as f64;
        assert_close(&new, &want, bound, &format!("{shape}: vs f64"));
    }
}

#[test]
fn skinny_tiles_swap_and_compute_the_same_product() {
    for (tm, tn, warps) in [(16, 64, 4), (32, 128, 4), (16, 128, 8), (32, 256, 8)] {
        let (s_tm, s_tn) = (tm.to_string(), tn.to_string());
        let kernel = Kernel::load(
            "dot_masked_k.tc",
            &[("TYPE", "half"), ("TM", &s_tm), ("TN", &s_tn), ("TK", "64")],
        );
        let what = format!("{tm}x{tn}, {warps} warps");
        let (before, after) = swapped(&kernel.func, Arch::Sm90a, warps);
        let after = after.unwrap_or_else(|| panic!("{what}: not swapped"));
        assert_eq!(dot_shape(&before), [tm, tn], "{what}");
        assert_eq!(dot_shape(&after), [tn, tm], "{what}: the dot computes c^T");
        assert_same_product(&before, &after, (tm, tn), None, &what);
    }
}

#[test]
fn transposed_operands_are_read_as_loaded() {
    for form in [
        Form {
            a_t: true,
            b_t: false,
        },
        Form {
            a_t: false,
            b_t: true,
        },
    ] {
        let mut defines = vec![("TYPE", "half"), ("TM", "32"), ("TN", "64"), ("TK", "64")];
        defines.extend(dot_trans_defines(form.a_t, form.b_t));
        let kernel = Kernel::load("dot_grad.tc", &defines);
        let what = format!("dot_grad a_t={} b_t={}", form.a_t, form.b_t);
        let (before, after) = swapped(&kernel.func, Arch::Sm90a, 4);
        let after = after.unwrap_or_else(|| panic!("{what}: not swapped"));
        // The kernel's transpose cancels the swap's: one `trans` in the
        // loop (the other operand's), one after it (the accumulator's).
        let transposes = tritonc::ir::walk::walk_ops(&after)
            .iter()
            .filter(|v| matches!(v.op.kind, OpKind::Trans { .. }))
            .count();
        assert_eq!(transposes, 2, "{what}");
        assert_same_product(&before, &after, (32, 64), Some(form), &what);
    }
}

#[test]
fn tiles_wgmma_takes_and_other_targets_are_left_alone() {
    let masked = |ty: &str, tm: &str, tn: &str| {
        Kernel::load(
            "dot_masked_k.tc",
            &[("TYPE", ty), ("TM", tm), ("TN", tn), ("TK", "64")],
        )
    };
    let unchanged =
        |k: &Kernel, arch: Arch, warps: usize| swapped(&k.func, arch, warps).1.is_none();
    assert!(
        unchanged(&masked("half", "64", "64"), Arch::Sm90a, 4),
        "64 rows: wgmma as is"
    );
    assert!(
        unchanged(&masked("half", "16", "64"), Arch::Sm90, 4),
        "sm_90: no wgmma"
    );
    assert!(
        unchanged(&masked("half", "16", "64"), Arch::Sm80, 4),
        "sm_80"
    );
    assert!(
        unchanged(&masked("float", "16", "64"), Arch::Sm90a, 4),
        "32-bit operands"
    );
    // 64 columns are half of two warpgroups' 128 rows: no swapped plan.
    assert!(
        unchanged(&masked("half", "16", "64"), Arch::Sm90a, 8),
        "8 warps, 64 columns"
    );
    // 192 columns: swapped, the M-major `a` of 192 rows pipelined (it
    // multiplies right on an H100 since that `a` lands unpermuted,
    // bench/results/2026-11-27d-h100-m-major-rows).
    assert!(
        !unchanged(&masked("half", "16", "192"), Arch::Sm90a, 4),
        "192 columns"
    );
    // 32 columns: fewer than one warpgroup's 64 rows.
    assert!(
        unchanged(&masked("half", "16", "32"), Arch::Sm90a, 4),
        "32 columns"
    );
    // Unaligned rows (the op's `ALIGN = 1` loop): not pipelined, so a swap
    // would transpose both operands every iteration.
    let op = |align: &str| {
        Kernel::load(
            "../ops/dot.tc",
            &[
                ("TYPE", "half"),
                ("TK", "16"),
                ("TK_DIV", "64"),
                ("TM", "16"),
                ("TN", "64"),
                ("ALIGN", align),
                ("GROUP_M", "8"),
                ("USE_A", "a"),
                ("STRIDE_AK", "1"),
                ("STRIDE_AM", "lda"),
                ("BROADCAST_AK", "newaxis,:"),
                ("BROADCAST_AM", ":,newaxis"),
                ("SHAPE_A", "TM,BK"),
                ("USE_B", "b"),
                ("STRIDE_BK", "ldb"),
                ("STRIDE_BN", "1"),
                ("BROADCAST_BK", ":,newaxis"),
                ("BROADCAST_BN", "newaxis,:"),
                ("SHAPE_B", "BK,TN"),
            ],
        )
    };
    assert!(
        !unchanged(&op("8"), Arch::Sm90a, 4),
        "the op's aligned loop swaps"
    );
    let unaligned = op("1");
    assert!(unchanged(&unaligned, Arch::Sm90a, 4), "unaligned rows");
}
