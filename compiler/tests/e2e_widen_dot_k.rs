//! The `widen-dot-k` pass keeps every result: `dot_masked_k.tc` (loads
//! masked on the tensors' bounds, TK 16 and 32) runs on the CPU interpreter
//! before and after the pass for sm_90a on the same random inputs, with K
//! below one tile, between the old and the new tile, and off both (the
//! wider last step reads past K only where the masks zero-fill); C must be
//! close to an f64 reference either way, and the widened loop must step 64.

mod e2e_util;

use e2e_util::*;
use half::f16;
use tritonc::arch::Arch;
use tritonc::interp::Memory;
use tritonc::ir::{Function, OpKind};
use tritonc::passes::widen_dot_k::WidenDotK;
use tritonc::passes::{Pass, PassOptions, Target};

const TM: usize = 64;
const TN: usize = 64;

fn widened(func: &Function, arch: Arch) -> Option<Function> {
    let mut out = func.clone();
    let options = PassOptions::all().with_target(Target::plain(arch, 4));
    WidenDotK.run(&mut out, &options).then_some(out)
}

/// The K tile of the loop's `a` (its loads' width along K).
fn k_tile(func: &Function) -> usize {
    tritonc::ir::walk::walk_ops(func)
        .iter()
        .find_map(|v| match v.op.kind {
            OpKind::Dot { a, .. } => Some(func.ty(a).shape[1]),
            _ => None,
        })
        .expect("a dot")
}

/// C (M x N, f16, dense) of `func` on random A (M x K) and B (K x N).
fn run(func: &Function, m: usize, n: usize, k: usize) -> Vec<f16> {
    let mut mem = Memory::new();
    let a = mem.alloc_slice(&random::<f16>(m * k, 11, 1.0));
    let b = mem.alloc_slice(&random::<f16>(k * n, 12, 1.0));
    let c = mem.alloc_slice(&vec![sentinel::<f16>(); m * n]);
    let args = [ptr(a), ptr(b), ptr(c), int(m), int(n), int(k)];
    tritonc::interp::run(func, [cdiv(m, TM), cdiv(n, TN), 1], &args, &mut mem)
        .unwrap_or_else(|e| panic!("interpreter: {}", e.message));
    read::<f16>(&mem, c, m * n)
}

/// C in f64 on the same inputs as [`run`].
fn reference(m: usize, n: usize, k: usize) -> Vec<f64> {
    let a = random::<f16>(m * k, 11, 1.0);
    let b = random::<f16>(k * n, 12, 1.0);
    matmul_f64(
        m,
        n,
        k,
        |i, l| a[i * k + l].to_f64(),
        |l, j| b[l * n + j].to_f64(),
    )
}

/// `dot_masked_k.tc` with TM = 64 and these TYPE, TN and TK.
fn masked_k(ty: &str, tn: &str, tk: &str) -> Kernel {
    Kernel::load(
        "dot_masked_k.tc",
        &[("TYPE", ty), ("TM", "64"), ("TN", tn), ("TK", tk)],
    )
}

#[test]
fn widened_loops_compute_the_same_product() {
    for tk in ["16", "32"] {
        let kernel = masked_k("half", "64", tk);
        let wide =
            widened(&kernel.func, Arch::Sm90a).unwrap_or_else(|| panic!("TK {tk}: not widened"));
        tritonc::ir::verifier::verify_function(&wide)
            .unwrap_or_else(|e| panic!("TK {tk}: widened IR does not verify: {e:?}"));
        assert_eq!(k_tile(&wide), 64, "TK {tk}");
        // K: none, below the old tile, one old tile, between, off both, several.
        for (m, n, k) in [
            (64, 64, 0),
            (40, 72, 8),
            (64, 8, 32),
            (33, 64, 48),
            (70, 24, 96),
            (64, 64, 200),
        ] {
            let want = reference(m, n, k);
            let bound = |_: usize, w: f64| f16::ulp(w) + 1e-3 * k as f64;
            for (what, func) in [("original", &kernel.func), ("widened", &wide)] {
                let got = run(func, m, n, k);
                assert_close(&got, &want, bound, &format!("TK {tk} {what} {m}x{n}x{k}"));
            }
        }
    }
}

#[test]
fn other_targets_and_wide_tiles_are_left_alone() {
    let tk32 = masked_k("half", "64", "32");
    assert!(
        widened(&tk32.func, Arch::Sm90).is_none(),
        "sm_90 (no wgmma)"
    );
    let tk64 = masked_k("half", "64", "64");
    assert!(widened(&tk64.func, Arch::Sm90a).is_none(), "TK 64 already");
    let f32_tk16 = masked_k("float", "64", "16");
    assert!(
        widened(&f32_tk16.func, Arch::Sm90a).is_none(),
        "32-bit operands"
    );
    // 64x256 on one warpgroup: K 64 would take more registers than wgmma's
    // plan allows (mma.sync instead), so TK 32 stays and TK 16 goes to 32.
    let wide_n =
        |tk: &str| widened(&masked_k("half", "256", tk).func, Arch::Sm90a).map(|f| k_tile(&f));
    assert_eq!(wide_n("32"), None, "64x256x32 stays on wgmma");
    assert_eq!(wide_n("16"), Some(32), "64x256x16 widens only to 32");
    // The seed's dot loads without masks: a wider step would read past K.
    let seed = Kernel::load(
        "dot.tc",
        &[("TYPE", "half"), ("TM", "64"), ("TN", "64"), ("TK", "32")],
    );
    assert!(widened(&seed.func, Arch::Sm90a).is_none(), "unmasked loads");
}
