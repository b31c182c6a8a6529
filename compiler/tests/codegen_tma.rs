//! TMA copies in PTX (`tritonc --tma`, the `tma-loads` pass): a masked
//! 128x128x64 dot loop on two warpgroups copies `a` clear of the last rows
//! in one 5-d box per warpgroup (its rows folded as the accumulator layout
//! permutes them) and by `cp.async` at the edge, `b` in one 3-d box clear of
//! the last columns and in 2-d boxes at the edge; the kernel takes its three
//! tensor maps by value after its arguments and the manifest says how to
//! encode them. A mask one row off its pointer keeps `cp.async`. Values are
//! checked on the H100 (`scripts/gpu/tma_check.py`, `bench/results/
//! 2026-11-26-h100-tma/`); the IR the pass leaves, in `tests/passes/tma_*`.
mod common;

use common::{all_configs_manifest, ptxas_report, tritonc_ptx};

const KERNEL: &str = "compiler/tests/passes/tma_loads_dot.tc";

fn ptx(shift: u32, extra: &[&str]) -> String {
    let define = format!("-DKSHIFT={shift}");
    let mut args = vec![
        KERNEL,
        define.as_str(),
        "--arch",
        "sm_90a",
        "--num-warps",
        "8",
    ];
    args.extend_from_slice(extra);
    tritonc_ptx(&args, &args.join(" "))
}

/// The `wgmma.mma_async` lines of `ptx`.
fn wgmma_lines(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter(|l| l.contains("wgmma.mma_async"))
        .collect()
}

/// tritonc's arguments for the kernel's manifest with `--tma` and `extra`.
fn manifest_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        KERNEL,
        "-DKSHIFT=0",
        "--arch",
        "sm_90a",
        "--num-warps",
        "8",
        "--tma",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn tma_copies_take_the_place_of_cp_async_where_the_tiles_are_boxes() {
    let plain = ptx(0, &[]);
    let tma = ptx(0, &["--tma"]);
    assert!(!plain.contains("cp.async.bulk.tensor") && !plain.contains("mbarrier"));
    // Prologue and main loop each issue a stage: a in 2 folded boxes (one
    // per warpgroup), b in 1 folded box or 2 plain ones (128 columns).
    let count = |what: &str| tma.matches(what).count();
    assert_eq!(count("cp.async.bulk.tensor.5d"), 2 * 2, "a's folded boxes");
    assert_eq!(count("cp.async.bulk.tensor.3d"), 2, "b's folded box");
    assert_eq!(
        count("cp.async.bulk.tensor.2d"),
        2 * 2,
        "b's boxes at the edge"
    );
    // a at the last rows still by cp.async (16 bytes, 4 a thread a stage).
    assert_eq!(count("cp.async.cg.shared.global"), 2 * 4);
    // One barrier per stage (6 of 32 KiB), armed with the bytes each brings.
    assert_eq!(count("mbarrier.init.shared::cta.b64"), 6);
    assert_eq!(count("mbarrier.arrive.expect_tx"), 2);
    assert!(count("mbarrier.try_wait.parity") >= 2);
    // Three tensor maps by value after the 9 arguments, read in place.
    assert_eq!(count(".param .align 64 .b8"), 3);
    assert_eq!(count(".param ."), plain.matches(".param .").count() + 3);
    assert_eq!(count("cvta.param.u64"), 3);
    if let Some(report) = ptxas_report(&tma, "sm_90a", "tma_dot") {
        assert!(report.contains(" 0 bytes spill stores"), "{report}");
    }
}

#[test]
fn a_mask_off_its_pointer_keeps_cp_async() {
    let ptx = ptx(1, &["--tma"]);
    assert!(!ptx.contains("cp.async.bulk.tensor"));
    assert!(!ptx.contains(".param .align 64"));
    assert!(ptx.contains("cp.async.cg.shared.global"));
}

#[test]
fn the_manifest_says_how_to_encode_each_tensor_map() {
    let manifest = all_configs_manifest(&manifest_args(&[]), "tma");
    let maps = manifest["variants"][0]["tensor_maps"].as_array().unwrap();
    assert_eq!(maps.len(), 3);
    // Parameters: A 0, B 1, M 3, N 4, K 5, lda 6, ldb 7.
    let b_plain = &maps[0];
    assert_eq!(
        [
            b_plain["base"].clone(),
            b_plain["rows"].clone(),
            b_plain["cols"].clone()
        ],
        [1, 5, 4].map(serde_json::Value::from)
    );
    assert_eq!(b_plain["row_stride"], 7);
    assert_eq!(b_plain["dims"].as_array().unwrap().len(), 2);
    let a_folded = &maps[1];
    assert_eq!(a_folded["base"], 0);
    assert_eq!(a_folded["row_stride"], 6);
    let dims = a_folded["dims"].as_array().unwrap();
    let strides: Vec<String> = dims.iter().map(|d| d["stride"].to_string()).collect();
    assert_eq!(
        strides,
        [
            r#"{"elements":1}"#,
            r#"{"rows":1}"#,
            r#"{"rows":64}"#,
            r#"{"rows":8}"#,
            r#"{"rows":32}"#
        ]
    );
    let boxes: Vec<u64> = dims
        .iter()
        .map(|d| d["box_size"].as_u64().unwrap())
        .collect();
    assert_eq!(boxes, [64, 8, 2, 4, 1]);
    let b_folded = maps[2]["dims"].as_array().unwrap();
    assert_eq!(b_folded[2]["extent"].to_string(), r#"{"cols_over":64}"#);
    assert_eq!(b_folded[2]["box_size"], 2);
}

#[test]
fn a_multicast_pair_shares_b_and_meets_before_each_refill() {
    let tma = ptx(0, &["--tma"]);
    let pair = ptx(0, &["--tma", "--tma-multicast"]);
    let count = |ptx: &str, what: &str| ptx.matches(what).count();
    assert_eq!(count(&tma, "multicast::cluster"), 0);
    assert!(!tma.contains(".reqnctapercluster"));
    // Clusters of two along x; b's two column blocks one by each program,
    // into both (prologue and main loop), beside the copies each makes of
    // its own b when the pair's columns differ.
    assert!(
        pair.contains(".reqnctapercluster 2, 1, 1"),
        "no cluster shape"
    );
    assert_eq!(count(&pair, ".multicast::cluster"), 2 * 2);
    assert_eq!(
        count(&pair, "cp.async.bulk.tensor.3d"),
        count(&tma, "cp.async.bulk.tensor.3d")
    );
    // The pair compares b's first column through the peer's shared memory
    // once, meets (relaxed) before each refill, and before leaving.
    assert_eq!(count(&pair, "mapa.shared::cluster.u32"), 1);
    assert_eq!(count(&pair, "ld.shared::cluster.u32"), 1);
    assert_eq!(count(&pair, "barrier.cluster.arrive.relaxed.aligned"), 1);
    assert_eq!(count(&pair, "barrier.cluster.arrive.release.aligned"), 2);
    if let Some(report) = ptxas_report(&pair, "sm_90a", "tma_pair") {
        assert!(report.contains(" 0 bytes spill stores"), "{report}");
    }
    // Split-K's cluster along z leaves b to each program.
    let split = ptx(0, &["--tma", "--tma-multicast", "--split-k", "2"]);
    assert_eq!(count(&split, ".multicast::cluster"), 0);
    assert!(split.contains(".reqnctapercluster 1, 1, 2"));
    // The manifest says a launch's grid x must be even.
    let manifest = all_configs_manifest(&manifest_args(&["--tma-multicast"]), "tma_pair");
    assert_eq!(manifest["variants"][0]["cluster_x"], 2);
}

#[test]
fn tma_multicast_needs_tma() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .args([KERNEL, "-DKSHIFT=0", "--arch", "sm_90a", "--tma-multicast"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tma"), "{err}");
}

/// tritonc's arguments for `tests/kernels/dot_grad.tc` with the macros of
/// its `nth` `// tritonc:` line (0: `a @ ^b`, 1: `^a @ b`), on two
/// warpgroups of sm_90a with `--tma`.
fn dot_grad_tma_args(nth: usize) -> Vec<String> {
    let path = common::kernels_dir().join("dot_grad.tc");
    let source = std::fs::read_to_string(&path).unwrap();
    let line = source
        .lines()
        .filter_map(|l| l.strip_prefix("// tritonc:"))
        .nth(nth)
        .unwrap();
    let mut words = shlex::split(line).unwrap();
    words.insert(0, path.display().to_string());
    words.extend(["--arch", "sm_90a", "--num-warps", "8", "--tma"].map(String::from));
    words
}

/// dot's gradient A B^T (`tests/kernels/dot_grad.tc`, `a @ ^b`): the K-major
/// `b` comes in one 2-d box of its `[256, 64]` tile a stage beside `a`'s
/// folded boxes, read by wgmma without its transpose immediate; so with a
/// producer warpgroup too. ptxas takes both without spills.
#[test]
fn a_k_major_b_is_one_box_a_stage() {
    let words: Vec<String> = dot_grad_tma_args(0)
        .into_iter()
        .map(|w| w.replace("-DTN=128", "-DTN=256"))
        .collect();
    assert!(words.iter().any(|w| w == "-DUSE_B=^b"));
    for extra in [None, Some("--warp-specialize")] {
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.extend(extra);
        let what = args.join(" ");
        let ptx = tritonc_ptx(&args, &what);
        let wgmma = wgmma_lines(&ptx);
        assert!(!wgmma.is_empty(), "{what}");
        assert!(
            wgmma
                .iter()
                .all(|l| l.trim_end().ends_with("1, 1, 1, 0, 0;")),
            "{what}"
        );
        let boxes = |dims: &str| ptx.matches(&format!("cp.async.bulk.tensor.{dims}")).count();
        assert!(boxes("2d") > 0, "{what}: b's box");
        assert!(boxes("5d") > 0, "{what}: a's folded boxes");
        if let Some(report) = ptxas_report(&ptx, "sm_90a", "dot_grad_tma") {
            assert!(report.contains(" 0 bytes spill stores"), "{what}: {report}");
        }
    }
}

/// dot's gradient A^T B (`tests/kernels/dot_grad.tc`, `^a @ b`): the
/// M-major `a` lands as loaded, so it comes as `b` does, in 2-d boxes
/// (two per stage: 128 columns in swizzled rows of 64), every tile, and no
/// thread issues a `cp.async`; wgmma reads it with the transpose immediate.
/// Neither multicast nor a producer warpgroup is offered for it.
#[test]
fn an_m_major_a_comes_in_boxes() {
    let words = dot_grad_tma_args(1);
    assert!(words.iter().any(|w| w == "-DUSE_A=^a"));
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    let what = args.join(" ");
    let ptx = tritonc_ptx(&args, &what);
    assert!(!ptx.contains("cp.async.cg"), "{what}: a by cp.async");
    assert!(!ptx.contains("cp.async.bulk.tensor.5d"), "{what}: a folded");
    // Prologue and main loop: a's two boxes beside b's (one folded box or
    // two plain ones at the last columns).
    let boxes = |dims: &str| ptx.matches(&format!("cp.async.bulk.tensor.{dims}")).count();
    assert_eq!(boxes("2d"), 2 * (2 + 2), "{what}");
    assert_eq!(boxes("3d"), 2, "{what}");
    assert!(ptx
        .lines()
        .filter(|l| l.contains("wgmma.mma_async"))
        .all(|l| l.trim_end().ends_with("1, 1, 1, 1, 1;")));
    if let Some(report) = ptxas_report(&ptx, "sm_90a", "dot_grad_m_major_tma") {
        assert!(report.contains(" 0 bytes spill stores"), "{what}: {report}");
    }
    // The manifest encodes a third map, over `a` (parameters: A 0, M 3,
    // K 5, lda 6): its `[K, M]` rows, 64 x 64 boxes; no cluster pair and no
    // producer warps even when asked for.
    let mut asked = args.clone();
    asked.extend(["--tma-multicast", "--warp-specialize"]);
    let manifest = all_configs_manifest(&asked, "tma_m_major");
    let variant = &manifest["variants"][0];
    let maps = variant["tensor_maps"].as_array().unwrap();
    assert_eq!(maps.len(), 3);
    let a = &maps[2];
    let got = [&a["base"], &a["rows"], &a["cols"], &a["row_stride"]];
    assert_eq!(got.map(|v| v.as_u64().unwrap()), [0, 5, 3, 6]);
    let boxes: Vec<u64> = a["dims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["box_size"].as_u64().unwrap())
        .collect();
    assert_eq!(boxes, [64, 64]);
    assert_ne!(variant["cluster_x"], 2, "{variant}");
    assert!(
        variant["producer_warps"].as_u64().unwrap_or(0) == 0,
        "{variant}"
    );
}

/// `tests/kernels/dot_accumulate.tc`'s path.
fn accumulate_kernel() -> String {
    common::kernels_dir()
        .join("dot_accumulate.tc")
        .display()
        .to_string()
}

/// tritonc's arguments for `dot_accumulate.tc` in half, TK 64, on 8 warps
/// of sm_90a, with the tile's `-DTM=..` and `-DTN=..`.
fn accumulate_args<'a>(path: &'a str, tile: [&'a str; 2]) -> Vec<&'a str> {
    let mut args = vec![path, "-DTYPE=half"];
    args.extend(tile);
    args.extend(["-DTK=64", "--arch", "sm_90a", "--num-warps", "8"]);
    args
}

/// 192x192 tiles on two warpgroups (`tests/kernels/dot_accumulate.tc`'s
/// loop): they split N, each 192 rows and 96 columns
/// (`wgmma.m64n96k16`, b in 64-byte rows so that warpgroup 1's columns
/// start on a whole atom). `a` lands as loaded, in 2-d boxes every tile
/// (no folded map, no `cp.async`); b in one folded 3-d box. The loop
/// carries the accumulator in the instructions' order: one trip of 64-bit
/// stores after it (a zero start) and, for a loaded C0, one before it as
/// well. Without TMA the tile is not offered on wgmma (144 accumulator
/// registers leave the copies none) and the compiler declines it.
#[test]
fn warpgroups_split_n_on_192_square_tiles() {
    let path = accumulate_kernel();
    let base = accumulate_args(&path, ["-DTM=192", "-DTN=192"]);
    let mut args = base.clone();
    args.push("--tma");
    let what = args.join(" ");
    let ptx = tritonc_ptx(&args, &what);
    let wgmma = wgmma_lines(&ptx);
    // Three 64-row blocks and four k16 steps a stage.
    assert!(!wgmma.is_empty() && wgmma.len() % 12 == 0, "{what}");
    assert!(wgmma.iter().all(|l| l.contains(".m64n96k16")), "{what}");
    assert!(!ptx.contains("cp.async.cg"), "{what}: a by cp.async");
    assert!(!ptx.contains("cp.async.bulk.tensor.5d"), "{what}: a folded");
    let boxes = |dims: &str| ptx.matches(&format!("cp.async.bulk.tensor.{dims}")).count();
    assert!(boxes("2d") > 0 && boxes("3d") > 0, "{what}");
    // 144 registers a thread, moved in pairs: before and after the loop.
    let pairs = 192 * 192 / 256 / 2;
    let stores = ptx.matches("st.shared.v2.f32").count();
    assert!(stores >= 2 * pairs, "{what}: {stores} pair stores");
    if let Some(report) = ptxas_report(&ptx, "sm_90a", "dot_split_n") {
        assert!(report.contains(" 0 bytes spill stores"), "{what}: {report}");
    }
    // Two buffers (96 KiB) hold 96 of the 192 columns at a time: each
    // warpgroup's values go in its own chunk, behind a branch.
    let mut two = args.clone();
    two.extend(["--num-stages", "2"]);
    let ptx = tritonc_ptx(&two, &two.join(" "));
    assert!(ptx.matches("st.shared.v2.f32").count() >= 2 * pairs);
    let out = common::tritonc(&base);
    assert!(!out.status.success(), "192x192 without --tma compiled");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a power of two"), "{err}");
}

/// A tile whose width is a multiple of 8 but not of 16 (128x24): `b` lands
/// unswizzled, in core matrices of 8 rows of 16 bytes, so its maps ask for
/// no swizzle and boxes 8 columns wide (three a stage, or one folded box of
/// three blocks); the instructions are `m64n24k16`.
#[test]
fn narrow_b_comes_in_unswizzled_boxes_of_8_columns() {
    let path = accumulate_kernel();
    let mut args = accumulate_args(&path, ["-DTM=128", "-DTN=24"]);
    args.push("--tma");
    let what = args.join(" ");
    let ptx = tritonc_ptx(&args, &what);
    let wgmma = wgmma_lines(&ptx);
    assert!(!wgmma.is_empty(), "{what}");
    assert!(wgmma.iter().all(|l| l.contains(".m64n24k16")), "{what}");
    if let Some(report) = ptxas_report(&ptx, "sm_90a", "dot_narrow_b") {
        assert!(report.contains(" 0 bytes spill stores"), "{what}: {report}");
    }
    let manifest = all_configs_manifest(&args, "narrow");
    let maps = manifest["variants"][0]["tensor_maps"].as_array().unwrap();
    // Parameters: A 0, B 1; b's plain and folded maps, a's folded one.
    let b_maps: Vec<_> = maps.iter().filter(|m| m["base"] == 1).collect();
    assert_eq!(b_maps.len(), 2, "{maps:?}");
    for m in &b_maps {
        assert_eq!(m["swizzle_bytes"], 0, "{m}");
        assert_eq!(m["dims"][0]["box_size"], 8, "{m}");
    }
    let folded = b_maps
        .iter()
        .find(|m| m["dims"].as_array().unwrap().len() == 3)
        .expect("b's folded map");
    assert_eq!(folded["dims"][2]["box_size"], 3);
    assert_eq!(folded["dims"][2]["stride"].to_string(), r#"{"elements":8}"#);
    let a = maps.iter().find(|m| m["base"] == 0).unwrap();
    assert_eq!(a["swizzle_bytes"], 128);
}
