//! `tritonc --timings`: one line per compile phase on standard error, the
//! output itself unchanged. (What the times are is measured by
//! scripts/bench_compile.sh, not asserted here.)

mod common;

use common::tritonc;

const ADD: [&str; 3] = ["tests/kernels/add.tc", "-DTYPE=float", "-DSIZE=256"];

/// The `N.NN ms` at the start of the line that ends with `label`.
fn millis(report: &str, label: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.ends_with(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{report}"));
    let number = line.split_whitespace().next().unwrap();
    assert!(line.contains(" ms  "), "{line}");
    number
        .parse()
        .unwrap_or_else(|_| panic!("not a number in `{line}`"))
}

#[test]
fn timings_lists_every_phase_and_keeps_the_ptx() {
    let plain = tritonc(&ADD);
    let mut args = ADD.to_vec();
    args.push("--timings");
    let timed = tritonc(&args);
    assert!(timed.status.success());
    assert_eq!(
        plain.stdout, timed.stdout,
        "--timings must not change the PTX"
    );
    assert!(plain.stderr.is_empty());
    let report = String::from_utf8_lossy(&timed.stderr);
    let phases = [
        "front end (preprocess, lex, parse)",
        "sema (AST -> Triton-IR)",
        "Triton-IR verifier",
        "Triton-IR passes",
        "analyses (axis info, layouts)",
        "NVPTX target setup",
        "lowering to LLVM IR",
        "LLVM optimization passes",
        "NVPTX codegen (PTX)",
    ];
    let sum: f64 = phases.iter().map(|p| millis(&report, p)).sum();
    let total = millis(&report, "total");
    assert!(total > 0.0 && total >= sum - 0.05, "{report}");
    assert!(millis(&report, "since main") >= total - 0.05, "{report}");
}

#[test]
fn timings_of_ir_only_stop_after_the_passes() {
    let mut args = ADD.to_vec();
    args.extend(["--emit", "ir", "--timings"]);
    let out = tritonc(&args);
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    millis(&report, "Triton-IR verifier");
    millis(&report, "Triton-IR passes");
    assert!(!report.contains("LLVM"), "{report}");
}

#[test]
fn timings_sum_over_the_points_of_a_space() {
    let dir = std::env::temp_dir().join(format!("tritonc-timings-{}", std::process::id()));
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=[64,128]",
        "--all-configs",
        "-o",
        dir.to_str().unwrap(),
        "--timings",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(millis(&report, "NVPTX codegen (PTX)") > 0.0, "{report}");
}

/// The LLVM IR text is only printed when asked for (it costs ~5% of a
/// compile): `--emit llvm` must still give the whole optimized module, and
/// its timings then include the printing.
#[test]
fn emit_llvm_prints_the_optimized_module() {
    let mut args = ADD.to_vec();
    args.extend(["--emit", "llvm", "--timings"]);
    let out = tritonc(&args);
    assert!(out.status.success());
    let ir = String::from_utf8_lossy(&out.stdout);
    assert!(
        ir.contains("target triple = \"nvptx64-nvidia-cuda\""),
        "{ir}"
    );
    assert!(ir.contains("define void @add("), "{ir}");
    assert!(ir.contains("!nvvm.annotations"), "{ir}");
    assert!(ir.contains("addrspace(1)") && ir.contains(" load "), "{ir}");
    let report = String::from_utf8_lossy(&out.stderr);
    millis(&report, "LLVM IR to text");
    let ptx = tritonc(&ADD);
    assert!(!String::from_utf8_lossy(&ptx.stdout).contains("define void"));
}
