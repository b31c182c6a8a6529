//! sm_90a: the pipelined reduction loop of `dot.tc` runs on warpgroup MMA
//! (`wgmma.mma_async` with shared-memory descriptors, fences, commit and wait
//! groups), ptxas accepts it for sm_90a without spills and without
//! serializing the `wgmma`s; tiles that do not fit the warpgroups, and
//! kernels without a matched loop, keep `mma.sync`.
mod common;

use common::{compile_kernel, ptxas_report};
use tritonc::codegen::Arch;

fn compiled(file: &str, defs: &[(&str, String)], arch: Arch, num_warps: u32) -> (String, usize) {
    compiled_with(file, defs, arch, num_warps, None)
}

fn compiled_with(
    file: &str,
    defs: &[(&str, String)],
    arch: Arch,
    num_warps: u32,
    num_stages: Option<u32>,
) -> (String, usize) {
    let defs: Vec<(String, String)> = defs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut out = compile_kernel(file, &defs, arch, num_warps, num_stages)
        .unwrap_or_else(|e| panic!("{file} {defs:?}: {e}"));
    let k = out.remove(0).compiled;
    (k.ptx, k.shared_bytes)
}

fn dot(ty: &str, tm: usize, tn: usize, tk: usize) -> Vec<(&'static str, String)> {
    vec![
        ("TYPE", ty.to_string()),
        ("TM", tm.to_string()),
        ("TN", tn.to_string()),
        ("TK", tk.to_string()),
    ]
}

/// `ptxas -arch=sm_90a -v`: its report; panics when it fails, spills or
/// serializes the `wgmma`s. `None` without ptxas (outside CI).
fn ptxas_sm90a(ptx: &str, name: &str) -> Option<String> {
    let Some(report) = ptxas_report(ptx, "sm_90a", name) else {
        assert!(std::env::var("CI").is_err(), "ptxas not found (set PTXAS)");
        eprintln!("notice: ptxas not found, skipping the ptxas check of {name}");
        return None;
    };
    assert!(
        report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
        "{name} spills: {report}"
    );
    assert!(
        !report.contains("C7515"),
        "{name}: wgmma serialized: {report}"
    );
    assert!(
        !report.contains("C7510"),
        "{name}: wgmma serialized: {report}"
    );
    Some(report)
}

#[test]
fn pipelined_dots_issue_wgmma_on_sm90a() {
    // (type, TM, TN, TK, warps, instruction N, instructions a tile per
    // warpgroup, stages: as many as fit 200 KiB, at most 8)
    let configs = [
        ("half", 128, 256, 64, 8, 256, 4, 4),
        ("half", 128, 128, 64, 8, 128, 4, 6),
        ("half", 256, 128, 64, 8, 128, 8, 4),
        ("half", 64, 128, 64, 4, 128, 4, 8),
        ("half", 128, 128, 128, 8, 128, 8, 3),
        ("bf16", 128, 256, 64, 8, 256, 4, 4),
        ("bf16", 128, 128, 64, 8, 128, 4, 6),
        // TK 32 and 16: a's rows in the 64- and 32-byte swizzles; 128x128
        // fits one warpgroup at TK 32.
        ("half", 128, 256, 32, 8, 256, 2, 8),
        ("half", 128, 128, 32, 4, 128, 4, 8),
        ("bf16", 128, 128, 32, 8, 128, 2, 8),
        ("half", 64, 128, 16, 4, 128, 1, 8),
        ("half", 128, 64, 16, 8, 64, 1, 8),
        // TN 32 and 16 (skinny M: more programs along N): b's rows in the
        // 64- and 32-byte swizzles.
        ("half", 128, 32, 64, 8, 32, 4, 8),
        ("half", 64, 32, 64, 4, 32, 4, 8),
        ("bf16", 128, 16, 32, 8, 16, 2, 8),
        // TN 192, not a power of two (wgmma n192): 3 column blocks of 64 in
        // the 128-byte swizzle; the epilogue's buffer lines of 24 chunks.
        ("half", 128, 192, 64, 8, 192, 4, 5),
        ("bf16", 64, 192, 64, 4, 192, 4, 6),
        // TN 96 and 160: multiples of 32, b's rows in the 64-byte swizzle.
        ("half", 128, 96, 64, 8, 96, 4, 7),
        ("bf16", 128, 160, 64, 8, 160, 4, 5),
        // TN a multiple of 8 but not of 16: b unswizzled, in core matrices
        // of 8 rows of 16 bytes (interleave mode); stages padded to 1024.
        ("half", 128, 24, 64, 8, 24, 4, 8),
        ("bf16", 64, 40, 16, 4, 40, 1, 8),
        ("half", 128, 8, 32, 8, 8, 2, 8),
        ("half", 64, 56, 64, 4, 56, 4, 8),
        ("bf16", 128, 200, 64, 8, 200, 4, 4),
    ];
    for (ty, tm, tn, tk, warps, n, per_tile, stages) in configs {
        let name = format!("{ty}_{tm}x{tn}x{tk}_w{warps}");
        let (ptx, shared) = compiled("dot.tc", &dot(ty, tm, tn, tk), Arch::Sm90a, warps);
        let kind = if ty == "half" { "f16" } else { "bf16" };
        let wgmma = format!("wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{kind}.{kind}");
        // One group a tile in the loop, in each of the stages - 1 drain
        // steps, and in the short drain's loop (a loop shorter than the prologue).
        assert_eq!(
            ptx.matches(&wgmma).count(),
            per_tile * (stages + 1),
            "{name}"
        );
        assert!(ptx.contains(".target sm_90a"), "{name}");
        assert!(!ptx.contains("mma.sync"), "{name}");
        assert!(!ptx.contains("ldmatrix"), "{name}");
        for needed in [
            "wgmma.fence.sync.aligned;",
            "wgmma.commit_group.sync.aligned;",
            "wgmma.wait_group.sync.aligned 1;",
            "wgmma.wait_group.sync.aligned 0;",
            "fence.proxy.async.shared::cta;",
            "cp.async.cg.shared.global",
            &format!("cp.async.wait_group {};", stages - 2),
            ".extern .shared .align 1024 .b8 global_smem[];",
        ] {
            assert!(ptx.contains(needed), "{name}: no {needed}");
        }
        // Transposed B (N-major), accumulate: scale-d 1, scales 1, trans-a 0, trans-b 1.
        assert!(ptx.contains(", 1, 1, 1, 0, 1;"), "{name}");
        let stage = 2 * (tm * tk + tk * tn);
        assert!(shared >= stages * stage, "{name}: {shared} bytes");
        assert!(shared <= 227 * 1024, "{name}: {shared} bytes");
        if let Some(report) = ptxas_sm90a(&ptx, &name) {
            eprintln!(
                "{name}: {}",
                report
                    .lines()
                    .filter(|l| l.contains("Used"))
                    .collect::<String>()
            );
        }
    }
}

#[test]
fn num_stages_caps_the_pipeline_buffers() {
    let wgmma = "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16";
    let stage = 2 * (128 * 64 + 64 * 64);
    // 128x64x64: 8 buffers of 24 KiB by default, 3 when asked, 8 at most.
    for (asked, stages) in [(None, 8), (Some(3), 3), (Some(2), 2), (Some(8), 8)] {
        let (ptx, shared) =
            compiled_with("dot.tc", &dot("half", 128, 64, 64), Arch::Sm90a, 8, asked);
        // With 2 buffers a short loop is an empty one: no short drain.
        let groups = stages + usize::from(stages > 2);
        assert_eq!(ptx.matches(wgmma).count(), 4 * groups, "{asked:?}");
        assert!(
            ptx.contains(&format!("cp.async.wait_group {};", stages - 2)),
            "{asked:?}"
        );
        assert!(
            shared >= stages * stage && shared < (stages + 1) * stage,
            "{asked:?}: {shared}"
        );
    }
    // 48 KiB a stage: asking for 8 still gives the 4 that fit.
    let (_, shared) = compiled_with(
        "dot.tc",
        &dot("half", 128, 256, 64),
        Arch::Sm90a,
        8,
        Some(8),
    );
    assert!(shared <= 4 * 48 * 1024 + 16 * 1024, "{shared}");
    // No buffer is zeroed before the loop (the short drain reads only loaded tiles).
    let (ptx, _) = compiled("dot.tc", &dot("half", 128, 64, 64), Arch::Sm90a, 8);
    assert!(!ptx.contains("st.shared.v4.u32"), "buffers zeroed");
    // mma.sync keeps its own choice below the cap: 2 buffers with 8 warps.
    let (a, _) = compiled_with("dot.tc", &dot("half", 128, 128, 32), Arch::Sm90, 8, Some(8));
    let (b, _) = compiled_with("dot.tc", &dot("half", 128, 128, 32), Arch::Sm90, 8, None);
    assert_eq!(a, b);
}

#[test]
fn tiles_beyond_the_warpgroups_keep_mma_sync_on_sm90a() {
    // 256 accumulator registers a thread with 4 warps: no wgmma plan.
    let (ptx, _) = compiled("dot.tc", &dot("half", 128, 256, 64), Arch::Sm90a, 4);
    assert!(!ptx.contains("wgmma"));
    assert!(ptx.contains("mma.sync.aligned.m16n8k16"));
    // 128 accumulator registers and the copies of a whole tile with one
    // warpgroup: ptxas would spill.
    for (tm, tn) in [(128, 128), (64, 256)] {
        let (ptx, _) = compiled("dot.tc", &dot("half", tm, tn, 64), Arch::Sm90a, 4);
        assert!(!ptx.contains("wgmma"), "{tm}x{tn}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16"), "{tm}x{tn}");
    }
    // The manual pre-fetch loop is unrotated (`passes::unrotate_prefetch`) into the
    // pipelined pattern and runs on wgmma too.
    let (ptx, _) = compiled(
        "dot_prefetch.tc",
        &dot("half", 128, 128, 64),
        Arch::Sm90a,
        8,
    );
    assert!(ptx.contains("wgmma.mma_async"));
    assert!(!ptx.contains("mma.sync.aligned.m16n8k16"));
    ptxas_sm90a(&ptx, "prefetch_on_sm90a_128x128x64_w8");
}

#[test]
fn sm90_keeps_mma_sync_for_wgmma_tiles() {
    for arch in [Arch::Sm80, Arch::Sm90] {
        let (ptx, _) = compiled("dot.tc", &dot("half", 128, 128, 64), arch, 8);
        assert!(!ptx.contains("wgmma"), "{arch:?}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16"), "{arch:?}");
        assert!(
            ptx.contains(".extern .shared .align 16 .b8 global_smem[];"),
            "{arch:?}"
        );
    }
}

/// A tile dimension that is not a power of two is generated on the paths
/// checked on the GPU only: TN = 192 on wgmma; on mma.sync (sm_80, or a
/// 64-row tile split over 8 warps on sm_90a) the config is declined.
#[test]
fn tiles_of_192_columns_off_wgmma_are_declined() {
    let defs: Vec<(String, String)> = dot("half", 64, 192, 64)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (arch, warps) in [(Arch::Sm80, 4), (Arch::Sm90a, 8)] {
        let err = common::compile_kernel("dot.tc", &defs, arch, warps, None)
            .err()
            .unwrap_or_else(|| panic!("{arch:?} {warps} warps compiled"));
        let text = err.to_string();
        assert!(err.is_declined(), "{text}");
        assert!(text.contains("off the wgmma path"), "{text}");
    }
    // The same tile on one warpgroup runs on wgmma.
    let (ptx, _) = compiled("dot.tc", &dot("half", 64, 192, 64), Arch::Sm90a, 4);
    assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n192k16"));
}

/// The `-D` options of `dot_grad.tc`'s `// tritonc:` lines (`a @ ^b`, then
/// `^a @ b`) with the tile and type given.
fn dot_grad(transposed_a: bool, ty: &str, tm: usize, tn: usize) -> Vec<(&'static str, String)> {
    let source = std::fs::read_to_string(common::kernels_dir().join("dot_grad.tc")).unwrap();
    let line = source
        .lines()
        .filter_map(|l| l.strip_prefix("// tritonc:"))
        .nth(usize::from(transposed_a))
        .unwrap();
    let keys = [
        "USE_A",
        "STRIDE_AK",
        "STRIDE_AM",
        "BROADCAST_AK",
        "BROADCAST_AM",
        "SHAPE_A",
    ]
    .into_iter()
    .chain([
        "USE_B",
        "STRIDE_BK",
        "STRIDE_BN",
        "BROADCAST_BK",
        "BROADCAST_BN",
        "SHAPE_B",
    ]);
    let words = shlex::split(line).unwrap();
    let value = |key: &str| {
        let prefix = format!("-D{key}=");
        words
            .iter()
            .find_map(|w| w.strip_prefix(&prefix))
            .unwrap()
            .to_string()
    };
    let mut defs = dot(ty, tm, tn, 64);
    defs.extend(keys.map(|k| (k, value(k))));
    defs
}

/// dot's gradients on sm_90a: the transposed operand is copied as loaded
/// (16-byte `cp.async`s, nothing through global loads) and wgmma reads it
/// transposed: `b` K-major without the transpose immediate (`a @ ^b`), `a`
/// M-major with it (`^a @ b`); ptxas takes both without spills or
/// serialized `wgmma`s.
#[test]
fn transposed_operands_are_staged_as_loaded_for_wgmma() {
    for (transposed_a, immediates) in [(false, "1, 1, 1, 0, 0;"), (true, "1, 1, 1, 1, 1;")] {
        for (ty, input) in [("half", "f16"), ("bf16", "bf16")] {
            for (tm, tn, warps) in [(128, 128, 8), (128, 256, 8), (64, 128, 4)] {
                let what = format!("transposed a {transposed_a}, {ty} {tm}x{tn}, {warps} warps");
                let defs = dot_grad(transposed_a, ty, tm, tn);
                let (ptx, _) = compiled("dot_grad.tc", &defs, Arch::Sm90a, warps);
                let wgmma = format!("wgmma.mma_async.sync.aligned.m64n{tn}k16.f32.{input}.{input}");
                let lines: Vec<&str> = ptx.lines().filter(|l| l.contains(&wgmma)).collect();
                assert!(!lines.is_empty(), "{what}: no {wgmma}");
                assert!(
                    lines.iter().all(|l| l.trim_end().ends_with(immediates)),
                    "{what}"
                );
                assert!(ptx.contains("cp.async.cg.shared.global"), "{what}");
                for unwanted in ["ld.global", "st.shared.b16", "st.shared.u16", "ldmatrix"] {
                    assert!(!ptx.contains(unwanted), "{what}: {unwanted}");
                }
                // An M-major `a` lands in its own order, never permuted in
                // shared memory: the loop carries the accumulator's rows
                // permuted and one trip through shared memory after it (64-bit
                // stores, a pair of registers each) puts them in place; a zero
                // initial accumulator needs none before. A K-major `a` lands
                // permuted and the accumulator takes no trip.
                assert!(!ptx.contains("bar.warp.sync"), "{what}");
                let pairs = tm * tn / (32 * warps as usize) / 2;
                for access in ["st.shared.v2.f32", "ld.shared.v2.f32"] {
                    let want = if transposed_a { pairs } else { 0 };
                    assert_eq!(ptx.matches(access).count(), want, "{what}: {access}");
                }
                ptxas_sm90a(&ptx, &format!("dot_grad_{transposed_a}_{ty}_{tm}_{tn}"));
            }
        }
    }
}

/// Skinny tiles (fewer than 64 rows) run on wgmma through the `swap-ab`
/// pass: the instruction's rows are the tile's columns and its `N` the
/// tile's rows (`m64n16`, `m64n32`), `b` read M-major (transpose immediate
/// 1) and `a` K-major (0); the accumulator is transposed back once, after
/// the loop. On sm_90 (no wgmma) the tile stays on `mma.sync`.
#[test]
fn skinny_tiles_swap_onto_wgmma() {
    for (tm, tn, warps) in [(16, 64, 4), (32, 128, 4), (16, 128, 8), (32, 256, 8)] {
        let name = format!("swap_ab_{tm}x{tn}_w{warps}");
        let (ptx, _) = compiled(
            "dot_masked_k.tc",
            &dot("half", tm, tn, 64),
            Arch::Sm90a,
            warps,
        );
        let shape = format!("wgmma.mma_async.sync.aligned.m64n{tm}k16.f32.f16.f16");
        // One instruction per warpgroup block of the tile's columns and k16 step.
        let blocks = tn / 64 / (warps as usize / 4);
        let issued = ptx.matches(&shape).count();
        assert!(issued >= 4 * blocks, "{name}: {issued} x {shape}");
        assert_eq!(
            issued,
            ptx.matches("wgmma.mma_async").count(),
            "{name}: one shape"
        );
        assert!(
            ptx.contains(", 1, 1, 1, 1, 0;"),
            "{name}: b M-major, a K-major"
        );
        assert!(!ptx.contains("mma.sync"), "{name}");
        ptxas_sm90a(&ptx, &name);
    }
    let (ptx, _) = compiled("dot_masked_k.tc", &dot("half", 16, 64, 64), Arch::Sm90, 4);
    assert!(!ptx.contains("wgmma"));
    assert!(ptx.contains("mma.sync.aligned.m16n8k16"));
}

/// Widths that are multiples of 8 but not of 16 run on wgmma in every
/// orientation (the plain `a @ b` checked on an H100 on 2026-11-28, the
/// transposed operands on 2026-12-07: bench/results/
/// 2026-12-07j-h100-narrow-transposed): dot_tn's M-major `a` at 8 and 24
/// columns, dot_nt's K-major `b` at 8. A K-major `b` 24 wide still gets a
/// clear error: its `[24, K]` pointer tile has no blocked layout (not a
/// power of two). `swap-ab` leaves 8-row tiles alone (their swapped width
/// would be 8).
#[test]
fn narrow_widths_take_wgmma_in_every_orientation() {
    for transposed_a in [false, true] {
        let (ptx, _) = compiled(
            "dot_grad.tc",
            &dot_grad(transposed_a, "half", 128, 8),
            Arch::Sm90a,
            8,
        );
        assert!(
            ptx.contains("wgmma.mma_async.sync.aligned.m64n8k16"),
            "transposed a {transposed_a}, TN 8"
        );
        assert!(!ptx.contains("mma.sync.aligned.m16n8k16"));
        ptxas_sm90a(&ptx, &format!("dot_grad_{transposed_a}_tn8"));
    }
    let (ptx, _) = compiled(
        "dot_grad.tc",
        &dot_grad(true, "half", 128, 24),
        Arch::Sm90a,
        8,
    );
    assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n24k16"));
    ptxas_sm90a(&ptx, "dot_grad_m_major_a_tn24");
    let defs: Vec<(String, String)> = dot_grad(false, "half", 128, 24)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let err = common::compile_kernel("dot_grad.tc", &defs, Arch::Sm90a, 8, None)
        .err()
        .unwrap_or_else(|| panic!("K-major b, TN 24 compiled"));
    assert!(err.to_string().contains("not a power of two"), "{err}");
    let (ptx, _) = compiled("dot_masked_k.tc", &dot("half", 8, 64, 64), Arch::Sm90a, 4);
    assert!(!ptx.contains("wgmma"), "8-row tile swapped");
    let (ptx, _) = compiled("dot.tc", &dot("half", 128, 8, 64), Arch::Sm90a, 8);
    assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n8k16"));
}

/// An M-major `a` of 192 rows (`^a @ b`, three wgmma blocks of 64) runs
/// on wgmma. It multiplied wrong past the first stage while each stage
/// was permuted in shared memory (H100, 2026-11-27: that permutation's
/// loads assumed a row's 24 chunks divide a warp's 32 lanes); the loop now
/// carries the accumulator's rows permuted instead (H100: 30 checks, 0
/// wrong, bench/results/2026-11-27d-h100-m-major-rows).
#[test]
fn transposed_a_of_192_rows_runs_on_wgmma() {
    let (ptx, _) = compiled(
        "dot_grad.tc",
        &dot_grad(true, "half", 192, 64),
        Arch::Sm90a,
        4,
    );
    let wgmma = "wgmma.mma_async.sync.aligned.m64n64k16";
    // Three blocks of 64 rows, four k16 steps a stage.
    let per_stage = 3 * 4;
    let issued = ptx.matches(wgmma).count();
    assert!(
        issued >= per_stage && issued % per_stage == 0,
        "{issued} x {wgmma}"
    );
    assert!(!ptx.contains("mma.sync"));
    ptxas_sm90a(&ptx, "dot_grad_192_rows");
}

/// An accumulator that starts from a loaded tile (C = C0 + A^T B) moves
/// into the loop's row order before the loop and back after it: two
/// trips of 64-bit shared-memory stores, where a zero start takes one.
#[test]
fn m_major_a_with_a_loaded_accumulator_moves_its_rows_twice() {
    let defs = [
        ("TYPE", "half".to_string()),
        ("TM", "128".into()),
        ("TN", "128".into()),
        ("TK", "64".into()),
    ];
    let (ptx, _) = compiled("dot_tn_accumulate.tc", &defs, Arch::Sm90a, 8);
    let pairs = 128 * 128 / 256 / 2;
    assert!(ptx.contains("wgmma.mma_async.sync.aligned.m64n128k16"));
    let trips = |access: &str| ptx.matches(access).count();
    // Beside the two trips, the loaded C0 may reach the accumulator's
    // layout through shared memory too.
    assert!(
        trips("st.shared.v2.f32") >= 2 * pairs,
        "{}",
        trips("st.shared.v2.f32")
    );
    assert!(
        trips("ld.shared.v2.f32") >= 2 * pairs,
        "{}",
        trips("ld.shared.v2.f32")
    );
    let (zero_start, _) = compiled(
        "dot_grad.tc",
        &dot_grad(true, "half", 128, 128),
        Arch::Sm90a,
        8,
    );
    assert_eq!(zero_start.matches("st.shared.v2.f32").count(), pairs);
    ptxas_sm90a(&ptx, "dot_tn_accumulate");
    // Two buffers of 48 KiB hold half of a 128x256 accumulator's padded
    // rows: it moves in two chunks of 128 columns, a barrier pair each.
    let wide = dot_grad(true, "half", 128, 256);
    let (whole, _) = compiled_with("dot_grad.tc", &wide, Arch::Sm90a, 8, None);
    let (halves, _) = compiled_with("dot_grad.tc", &wide, Arch::Sm90a, 8, Some(2));
    let pairs = 128 * 256 / 256 / 2;
    assert_eq!(whole.matches("st.shared.v2.f32").count(), pairs);
    assert_eq!(halves.matches("st.shared.v2.f32").count(), pairs);
    ptxas_sm90a(&halves, "dot_grad_two_buffers");
}
