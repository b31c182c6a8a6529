//! The seed's pre-fetching matmul (`dot_prefetch.tc`), unrotated by
//! `passes::unrotate_prefetch`, is software-pipelined like the plain loop: `cp.async`
//! on sm_90, warpgroup MMA on sm_90a; ptxas accepts it without spills. A
//! pre-fetch whose mask is not "the next iteration runs" keeps the register
//! path.
mod common;

use common::{find_ptxas, kernels_dir};
use std::process::Command;
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::{compile, CompileOptions, Source};

fn prefetch_text() -> String {
    std::fs::read_to_string(kernels_dir().join("dot_prefetch.tc")).unwrap()
}

fn ptx_of(text: &str, ty: &str, tiles: [usize; 3], arch: Arch, num_warps: u32) -> String {
    let source = Source {
        path: kernels_dir().join("dot_prefetch.tc"),
        text: text.to_string(),
    };
    let options = CompileOptions {
        include_dirs: vec![kernels_dir()],
        codegen: CodegenOptions {
            arch,
            num_warps,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    };
    let defs: Vec<(String, String)> = [("TYPE", ty.to_string())]
        .into_iter()
        .chain(
            ["TM", "TN", "TK"]
                .into_iter()
                .zip(tiles.map(|t| t.to_string())),
        )
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mut out = compile(&source, &defs, &options).unwrap_or_else(|e| panic!("{defs:?}: {e}"));
    out.remove(0).compiled.ptx
}

/// `ptxas -arch=<arch> -v` must succeed without spills; skipped without
/// ptxas outside CI.
fn ptxas_no_spills(ptx: &str, arch: &str, name: &str) {
    let Some(ptxas) = find_ptxas() else {
        assert!(std::env::var("CI").is_err(), "ptxas not found (set PTXAS)");
        eprintln!("notice: ptxas not found, skipping the ptxas check of {name}");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tritonc-prefetch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.ptx"));
    std::fs::write(&src, ptx).unwrap();
    let out = Command::new(ptxas)
        .args([&format!("-arch={arch}"), "-v", "-o"])
        .arg(dir.join(format!("{name}.cubin")))
        .arg(&src)
        .output()
        .expect("ptxas runs");
    let report = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "ptxas {arch} on {name}: {report}");
    assert!(
        report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
        "{name} spills: {report}"
    );
    assert!(
        !report.contains("C7515") && !report.contains("C7510"),
        "{name}: wgmma serialized: {report}"
    );
}

#[test]
fn prefetch_is_pipelined_with_cp_async_on_sm90() {
    let text = prefetch_text();
    for (ty, tiles, warps) in [
        ("half", [128, 128, 32], 8),
        ("half", [64, 64, 32], 4),
        ("bf16", [64, 64, 32], 4),
    ] {
        let ptx = ptx_of(&text, ty, tiles, Arch::Sm90, warps);
        let name = format!(
            "prefetch_{ty}_{}_{}_{}_w{warps}",
            tiles[0], tiles[1], tiles[2]
        );
        assert!(
            ptx.contains("cp.async.cg.shared.global"),
            "{name}: no cp.async"
        );
        assert!(ptx.contains("cp.async.wait_group"), "{name}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16"), "{name}");
        // The rotated loop's masked register loads are gone.
        assert!(!ptx.contains("ld.global"), "{name}: register loads left");
        ptxas_no_spills(&ptx, "sm_90", &name);
    }
}

#[test]
fn prefetch_runs_on_wgmma_on_sm90a() {
    let text = prefetch_text();
    for (ty, tiles) in [
        ("half", [128, 256, 64]),
        ("half", [128, 128, 64]),
        ("bf16", [128, 256, 64]),
    ] {
        let ptx = ptx_of(&text, ty, tiles, Arch::Sm90a, 8);
        let name = format!("prefetch_wg_{ty}_{}_{}_{}", tiles[0], tiles[1], tiles[2]);
        assert!(ptx.contains("wgmma.mma_async"), "{name}: no wgmma");
        assert!(ptx.contains("wgmma.commit_group"), "{name}");
        assert!(ptx.contains("cp.async"), "{name}");
        assert!(!ptx.contains("mma.sync"), "{name}");
        ptxas_no_spills(&ptx, "sm_90a", &name);
    }
}

#[test]
fn prefetch_off_the_pattern_keeps_the_register_path() {
    // The last tile would be masked off: not "the next iteration runs".
    let text = prefetch_text().replacen("bool check = k > TK;", "bool check = k > 2 * TK;", 1);
    for arch in [Arch::Sm90, Arch::Sm90a] {
        let ptx = ptx_of(&text, "half", [128, 128, 64], arch, 8);
        assert!(!ptx.contains("cp.async"), "{arch:?}");
        assert!(!ptx.contains("wgmma"), "{arch:?}");
        assert!(ptx.contains("mma.sync.aligned.m16n8k16"), "{arch:?}");
    }
}
