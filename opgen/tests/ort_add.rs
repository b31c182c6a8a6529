//! `--framework ort` end to end on a machine without a GPU: generates and
//! builds the ONNX Runtime library for tests/ops/add.tc, then
//! scripts/ort/check_add.py loads it into the real onnxruntime (registration,
//! type/shape inference, the "no CUDA device" error, errors naming the
//! argument). Skipped with a notice when onnxruntime/onnx cannot be imported,
//! except in CI (env CI set), where that fails.

mod ort_support;

use ort_support::{build_add, run_check_script};
use triton_opgen::ort::{generate, OrtOptions};
use tritonc::codegen::Arch;

#[test]
fn ort_add_library_loads_and_reports_errors() {
    let Some((_out, done)) = build_add("ort_add") else {
        return;
    };
    assert_eq!(
        done.variants, 6,
        "float32 and float16 times SIZE 256/1024/4096"
    );
    assert_eq!(done.context.groups, vec![vec![1], vec![10]]);
    let lib = done.library.expect("built library");
    let spec_rs = std::fs::read_to_string(done.out_dir.join("src/op_spec.rs")).unwrap();
    assert!(
        spec_rs.contains("pub const DOMAIN: &str = \"triton\\0\";"),
        "{spec_rs}"
    );
    // Every variant's PTX is written next to the crate and embedded.
    assert_eq!(
        spec_rs.matches("include_str!(\"../ptx/").count(),
        6,
        "{spec_rs}"
    );
    let ptx = std::fs::read_to_string(done.out_dir.join("ptx/5.ptx")).unwrap();
    assert!(ptx.contains(".visible .entry add("), "{ptx}");
    assert!(
        spec_rs.contains("(LaunchArg::I32(c.dim(\"N\")), \"N\")"),
        "{spec_rs}"
    );
    assert!(
        spec_rs.contains("[cdiv(c.dim(\"N\"), m(\"SIZE\")), 1i64, 1i64, ]"),
        "{spec_rs}"
    );
    let stdout = run_check_script("", "scripts/ort/check_add.py", [&lib]);
    for line in [
        "ok: library loaded",
        "ok: output z inferred as tensor(float) ['N']",
        "ok: run without a GPU",
        "ok: float64 inputs at run time",
        "ok: mismatched lengths",
        "ok: rank 2 inputs",
        "ok: registered for CPUExecutionProvider CUDAExecutionProvider",
        "ok: 0 pre-tuned entries taken",
    ] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
}

/// A PTX file edited in the generated crate (then built) is refused when the
/// op runs, naming the variant, before any driver call (issue 15, item 6).
#[test]
fn an_edited_ptx_file_is_an_error_naming_the_variant() {
    if !ort_support::require_onnxruntime("an_edited_ptx_file_is_an_error_naming_the_variant") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut opts = ort_support::build_options(
        ort_support::repo().join("tests/ops/add.tc"),
        out.path().join("triton_add_ort"),
    );
    opts.no_build = true;
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let ptx = done.out_dir.join("ptx/3.ptx");
    let text = std::fs::read_to_string(&ptx).unwrap();
    assert!(text.contains(".entry add("), "{text}");
    std::fs::write(&ptx, text.replace(".entry add(", ".entry add_(")).unwrap();
    let lib =
        triton_opgen::ort::build_library(&done.out_dir, &done.context, opts.target_dir.as_deref())
            .unwrap_or_else(|e| panic!("{e}"));
    let stdout = run_check_script("", "scripts/ort/check_edited_ptx.py", [&lib]);
    assert!(stdout.contains("ok: an edited PTX file"), "{stdout}");
}

#[test]
fn ort_rejects_a_file_without_spec() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("plain.tc");
    std::fs::write(&kernel, "__global__ void k(int N) {}\n").unwrap();
    let opts = OrtOptions {
        input: kernel,
        out_dir: Some(dir.path().join("out")),
        arch: Arch::Sm90,
        include_dirs: Vec::new(),
        no_build: true,
        target_dir: None,
        tuned: None,
    };
    let err = generate(&opts, |_| {}).expect_err("no spec");
    assert!(err.0.contains("no `#pragma opgen` lines"), "{}", err.0);
}

/// `--tuned FILE`: the library embeds the table and takes this op's entries
/// (so a server never benchmarks those shapes), not other ops'.
#[test]
fn ort_add_embeds_a_pre_tuned_table() {
    if !ort_support::require_onnxruntime("ort_add_tuned") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("tuned.json");
    std::fs::write(
        &table,
        r#"{"format_version": 3, "entries": {
            "triton::add|[1048576]|T=float32|NVIDIA H100 80GB HBM3|cands=3:5f2e8a61|code=1c2d3e4f": {"config": "SIZE=1024 num_warps=4", "time_ms": 0.01},
            "triton::add|[4096]|T=float16|NVIDIA H100 80GB HBM3|cands=3:5f2e8a61|code=2d3e4f50": {"config": "SIZE=256 num_warps=4", "time_ms": 0.002},
            "triton::softmax|[4096x4096]|T=float32|NVIDIA H100 80GB HBM3|cands=1:0badf00d|code=0badf00d": {"config": "TN=4096", "time_ms": 0.1}
        }}"#,
    )
    .unwrap();
    let mut opts = ort_support::build_options(
        ort_support::repo().join("tests/ops/add.tc"),
        dir.path().join("add_tuned"),
    );
    opts.tuned = Some(table);
    // Its own target folder: the library has the same name as ort_add's.
    opts.target_dir = Some(ort_support::repo().join("target/ort-ops-tuned"));
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let spec_rs = std::fs::read_to_string(done.out_dir.join("src/op_spec.rs")).unwrap();
    assert!(spec_rs.contains("pub const TUNED: &str = \"{"), "{spec_rs}");
    let lib = done.library.expect("built library");
    let stdout = run_check_script(
        "",
        "scripts/ort/check_add.py",
        [lib.as_os_str(), "2".as_ref()],
    );
    assert!(stdout.contains("ok: 2 pre-tuned entries taken"), "{stdout}");
}

/// `--wheel` for ORT: a package whose get_library_path() is the library
/// inside the installed package, which onnxruntime registers.
#[test]
fn ort_wheel_installs_and_registers() {
    let Some((_out, done)) = build_add("ort_wheel") else {
        return;
    };
    let dist = tempfile::tempdir().unwrap();
    let wheel = triton_opgen::wheel::write_wheel(
        dist.path(),
        &triton_opgen::ort::wheel_spec(&done).unwrap(),
    )
    .unwrap();
    let out = ort_support::install_wheel_and_run(
        &wheel,
        "import os, triton_add_ort, onnxruntime as ort\n\
         path = triton_add_ort.get_library_path()\n\
         print('site-packages' in path, os.path.isfile(path))\n\
         opts = ort.SessionOptions()\n\
         opts.register_custom_ops_library(path)\n\
         print('registered')",
        &[],
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["True True", "registered"],
        "{out}"
    );
}
