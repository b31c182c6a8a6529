//! Warp-specialized TMA pipelines in PTX (`tritonc --tma --warp-specialize`):
//! the masked 128x128x64 dot loop of `tests/passes/tma_loads_dot.tc` on two
//! consumer warpgroups gets a producer warpgroup (384 threads): thread 0
//! initializes a filled and a free barrier per stage, the producer gives
//! registers back and one of its threads issues every copy (`a` at the last
//! rows in 8-row boxes, no `cp.async` left), the consumers take the
//! registers, wait on the filled barriers, free each stage with one arrival
//! per warp and meet among themselves only (named barrier 1). Both run
//! persistently: at most the resident programs, each looping over tiles
//! below a last parameter, the stage count carried across tiles, so the
//! producer copies a tile's first stages during the previous one's
//! epilogue (the buffers lie below every other op's scratch). Values are
//! checked on the H100 (`scripts/gpu/tma_check.py --variants "TMA=3"`,
//! `bench/results/2026-11-27-h100-warp-specialized/`); the IR the pass
//! leaves, in `tests/passes/tma_loads_warp_specialized*`.
mod common;

use common::{all_configs_manifest, ptxas_report, tritonc, tritonc_ptx};

const KERNEL: &str = "compiler/tests/warp_specialize_dot.tc";

fn args<'a>(warps: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    // Two warpgroups take 128 rows, one 64.
    let rows = if warps == "8" { "-DTM=128" } else { "-DTM=64" };
    let mut args = vec![
        KERNEL,
        "-DKSHIFT=0",
        rows,
        "--arch",
        "sm_90a",
        "--num-warps",
        warps,
        "--tma",
    ];
    args.extend_from_slice(extra);
    args
}

fn ptx(warps: &str, extra: &[&str]) -> String {
    let args = args(warps, extra);
    tritonc_ptx(&args, &args.join(" "))
}

fn count(ptx: &str, what: &str) -> usize {
    ptx.matches(what).count()
}

#[test]
fn a_producer_warpgroup_issues_every_copy() {
    let ptx = ptx("8", &["--warp-specialize"]);
    assert!(
        ptx.contains(".maxntid 384, 1, 1"),
        "8 warps + the producer's 4"
    );
    // Registers move from the producer to the two consumer warpgroups.
    assert_eq!(count(&ptx, "setmaxnreg.dec.sync.aligned.u32 40;"), 1);
    assert_eq!(count(&ptx, "setmaxnreg.inc.sync.aligned.u32 232;"), 1);
    // 6 stages: filled (one arrival) and free (one per consumer warp).
    assert_eq!(count(&ptx, "mbarrier.init.shared::cta.b64 [%r"), 12);
    assert_eq!(count(&ptx, "], 1;"), 6);
    assert_eq!(count(&ptx, "], 8;"), 6);
    // One copy site (the producer's loop): a's 2 folded boxes or 16 boxes
    // of 8 rows at the edge, b's folded box or its 2 column blocks.
    assert_eq!(count(&ptx, "cp.async.bulk.tensor.5d"), 2);
    assert_eq!(count(&ptx, "cp.async.bulk.tensor.3d"), 1);
    assert_eq!(count(&ptx, "cp.async.bulk.tensor.2d"), 16 + 2);
    assert_eq!(count(&ptx, "mbarrier.arrive.expect_tx"), 1);
    assert!(
        !ptx.contains("cp.async.cg"),
        "no cp.async left to consumers"
    );
    // Consumers free the stage before after each read and the last one
    // after the loop, one arrival per warp; they meet only among their 256
    // threads after the one meeting of all 384.
    assert_eq!(count(&ptx, "mbarrier.arrive.shared::cta.b64 _"), 2);
    assert_eq!(count(&ptx, "bar.sync \t0;"), 1, "{ptx}");
    assert!(count(&ptx, "barrier.sync \t1, 256;") >= 1);
    // Four tensor maps: b plain and folded, a folded and in 8-row boxes;
    // then the tile count of the persistent grid: producer and consumers
    // each loop over tiles `ctaid.x, + nctaid.x, ..` below it.
    assert_eq!(count(&ptx, ".param .align 64 .b8"), 4);
    let plain = tritonc_ptx(&args("8", &[]), "without a producer");
    assert_eq!(count(&ptx, ".param ."), count(&plain, ".param .") + 1 + 1);
    assert_eq!(count(&ptx, "%nctaid.x"), 2, "two tile loops");
    assert!(!plain.contains("%nctaid.x"));
    if let Some(report) = ptxas_report(&ptx, "sm_90a", "ws_dot") {
        // The launch's 384 threads start with 168 registers each, the most
        // that lets the consumers take 232.
        assert!(report.contains("Used 168 registers"), "{report}");
        assert!(report.contains(" 0 bytes spill stores"), "{report}");
    }
}

#[test]
fn one_consumer_warpgroup_keeps_its_registers() {
    let ptx = ptx("4", &["--warp-specialize"]);
    assert!(ptx.contains(".maxntid 256, 1, 1"));
    assert!(!ptx.contains("setmaxnreg"), "256 threads fit 255 registers");
    assert!(count(&ptx, "], 1;") > 0);
    assert_eq!(
        count(&ptx, "], 4;"),
        count(&ptx, "], 1;"),
        "read by 4 warps"
    );
    assert!(count(&ptx, "barrier.sync \t1, 128;") >= 1);
}

#[test]
fn a_multicast_pair_frees_each_stage_in_both_programs() {
    let ptx = ptx("8", &["--warp-specialize", "--tma-multicast"]);
    assert!(ptx.contains(".reqnctapercluster 2, 1, 1"), "clusters of 2");
    // A stage is free once the 8 consumer warps of both programs read it
    // (a copy into it may write both): each warp arrives here and, through
    // the peer's address (`mapa`), there, after each read and after the loop.
    let stages = count(&ptx, "], 1;");
    assert_eq!(count(&ptx, "], 16;"), stages);
    assert_eq!(count(&ptx, "mbarrier.arrive.shared::cta.b64 _"), 2);
    assert_eq!(count(&ptx, "mbarrier.arrive.shared::cluster.b64 _"), 2);
    assert_eq!(count(&ptx, "mapa.shared::cluster.u32"), 2);
    // Where the pair's tiles share b's columns each producer copies half
    // of its column blocks into both programs, else its own.
    assert_eq!(count(&ptx, ".multicast::cluster"), 2);
    // The pair meets once, after the barriers are initialized; instead of
    // meeting again before leaving, the producer waits until both
    // programs' consumers read its last stages: the filled wait, the free
    // wait and one per stage at the end.
    assert_eq!(count(&ptx, "barrier.cluster.arrive"), 1);
    assert_eq!(count(&ptx, "mbarrier.try_wait"), 2 + stages);
    assert_eq!(
        count(&ptx, "barrier.cluster.wait"),
        1,
        "no idle warp waits on the cluster at the exit (it cost 1.5x)"
    );
    let manifest = all_configs_manifest(
        &args("8", &["--warp-specialize", "--tma-multicast"]),
        "ws_pair",
    );
    let variant = &manifest["variants"][0];
    assert_eq!(variant["cluster_x"], 2);
    assert_eq!(variant["persistent"], true);
    assert_eq!(variant["producer_warps"], 4);
    if let Some(report) = ptxas_report(&ptx, "sm_90a", "ws_pair_dot") {
        assert!(report.contains("Used 168 registers"), "{report}");
        assert!(report.contains(" 0 bytes spill stores"), "{report}");
    }
}

#[test]
fn the_manifest_adds_the_producer_warps() {
    let manifest = all_configs_manifest(&args("8", &["--warp-specialize"]), "ws");
    let variant = &manifest["variants"][0];
    assert_eq!(variant["num_warps"], 8);
    assert_eq!(variant["producer_warps"], 4);
    assert_eq!(variant["persistent"], true);
    assert_eq!(variant["tensor_maps"].as_array().unwrap().len(), 4);
    let plain = all_configs_manifest(&args("8", &[]), "ws_off");
    assert!(plain["variants"][0].get("producer_warps").is_none());
    assert!(plain["variants"][0].get("persistent").is_none());
}

#[test]
fn a_loop_bound_in_memory_keeps_thread_0_issuing() {
    let file = "compiler/tests/passes/tma_loads_warp_specialized_bound_in_memory.tc";
    let bound = [
        file,
        "-DKSHIFT=0",
        "--arch",
        "sm_90a",
        "--num-warps",
        "8",
        "--tma",
        "--warp-specialize",
    ];
    let ptx = tritonc_ptx(&bound, "bound in memory");
    assert!(ptx.contains("cp.async.bulk.tensor"), "still TMA");
    assert!(ptx.contains(".maxntid 256, 1, 1"));
    assert!(!ptx.contains("setmaxnreg"));
    // The user hears why the switch did nothing; a kernel that takes it
    // compiles quietly.
    let out = tritonc(&bound);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success());
    assert!(
        err.contains("note: --warp-specialize: no loop of `dot` takes a producer warpgroup"),
        "{err}"
    );
    let taken = tritonc(&args("8", &["--warp-specialize"]));
    assert!(taken.status.success() && taken.stderr.is_empty());
}

#[test]
fn warp_specialize_needs_tma_and_no_split() {
    let base = [
        KERNEL,
        "-DKSHIFT=0",
        "-DTM=128",
        "--arch",
        "sm_90a",
        "--num-warps",
        "8",
    ];
    for extra in [
        &["--warp-specialize"][..],
        &["--tma", "--warp-specialize", "--split-k", "2"],
    ] {
        let mut all = base.to_vec();
        all.extend_from_slice(extra);
        let out = tritonc(&all);
        assert!(!out.status.success(), "{all:?} should be refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--warp-specialize"), "{err}");
    }
}
