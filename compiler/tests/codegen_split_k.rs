//! Split-K in PTX (`tritonc --split-k S`): the kernel declares its cluster
//! (`.reqnctapercluster 1, 1, S`) and takes one parameter more
//! (`split_tile`), every CTA but the last publishes its
//! accumulator 16 bytes a thread at a time, the last reads the others'
//! through `mapa` + `ld.shared::cluster` between two cluster barriers, and
//! ptxas takes it without spills. Where split-K does not apply (sm_80, a
//! split of 1) the PTX is the unsplit kernel's. The values are checked on
//! the interpreter (`opgen/tests/ops_interp.rs`) and on the H100
//! (`scripts/gpu/split_k_check.py`).
mod common;

use common::{all_configs_manifest, ptxas_report, tritonc, tritonc_ptx};

/// A masked 64x64x32 dot loop (the pass file test's kernel).
const KERNEL: &str = "compiler/tests/passes/split_k_masked_dot.tc";

fn ptx(args: &[&str]) -> String {
    let mut all = vec![KERNEL];
    all.extend_from_slice(args);
    tritonc_ptx(&all, &all.join(" "))
}

#[test]
fn split_k_declares_its_cluster_and_sums_through_distributed_shared_memory() {
    for (splits, warps) in [(4usize, "4"), (2, "8"), (8, "4")] {
        let s = splits.to_string();
        let plain = ptx(&["--arch", "sm_90a", "--num-warps", warps]);
        let ptx = ptx(&["--arch", "sm_90a", "--num-warps", warps, "--split-k", &s]);
        assert!(
            ptx.contains(&format!(".reqnctapercluster 1, 1, {splits}")),
            "split {splits}: no cluster directive"
        );
        // One parameter more: `split_tile`, the tile of program 0.
        assert_eq!(
            ptx.matches(".param .").count(),
            plain.matches(".param .").count() + 1,
            "split {splits}"
        );
        // Two cluster barriers on every path (publish, then keep alive),
        // each arrive + wait (LLVM may copy the second into both branches).
        let arrives = ptx
            .matches("barrier.cluster.arrive.release.aligned")
            .count();
        assert_eq!(
            ptx.matches("barrier.cluster.wait.acquire.aligned").count(),
            arrives
        );
        assert!((2..=3).contains(&arrives), "{arrives} cluster barriers");
        // A 64x64 f32 tile over 32 x warps threads, 4 floats a load, from
        // each of the other splits - 1 CTAs.
        let threads = 32 * warps.parse::<usize>().unwrap();
        let chunks = 64 * 64 / threads / 4;
        assert_eq!(
            ptx.matches("ld.shared::cluster.v4.f32").count(),
            chunks * (splits - 1),
            "split {splits}, {warps} warps"
        );
        assert_eq!(
            ptx.matches("mapa.shared::cluster.u32").count(),
            chunks * (splits - 1)
        );
        assert!(ptx.matches("st.shared.v4.f32").count() >= chunks);
        // The loop still runs on tensor cores: wgmma with one warpgroup,
        // mma.sync with 8 warps (a 64-row tile is one warpgroup's).
        let engine = if warps == "4" {
            "wgmma.mma_async"
        } else {
            "mma.sync"
        };
        assert!(ptx.contains(engine), "split {splits}: not on {engine}");
        if let Some(report) = ptxas_report(&ptx, "sm_90a", &format!("split_k_{splits}_{warps}")) {
            assert!(
                report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
                "split {splits} spills: {report}"
            );
        } else {
            assert!(std::env::var("CI").is_err(), "ptxas not found (set PTXAS)");
        }
    }
}

#[test]
fn no_split_where_it_does_not_apply() {
    let plain = ptx(&["--arch", "sm_90a"]);
    assert_eq!(ptx(&["--arch", "sm_90a", "--split-k", "1"]), plain);
    assert!(!plain.contains("reqnctapercluster"));
    // sm_80 has no clusters: the pass is skipped.
    assert_eq!(
        ptx(&["--arch", "sm_80", "--split-k", "4"]),
        ptx(&["--arch", "sm_80"])
    );
}

#[test]
fn the_manifest_records_the_programs_per_tile() {
    let manifest = all_configs_manifest(&[KERNEL, "--arch", "sm_90a", "--split-k", "4"], "split-k");
    assert_eq!(manifest["variants"][0]["cluster_splits"], 4);
}

#[test]
fn split_k_out_of_range_is_a_clear_error() {
    for bad in ["0", "9"] {
        let out = tritonc(&[KERNEL, "--arch", "sm_90a", "--split-k", bad]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--split-k"), "{err}");
    }
}
