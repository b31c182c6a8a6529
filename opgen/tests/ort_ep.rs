//! The generated ONNX Runtime library as a plugin execution provider, on a
//! machine without a GPU: onnxruntime loads it with
//! `register_execution_provider_library`, the EP offers a device (the CPU
//! entry, under OPGEN_ORT_EP_WITHOUT_GPU=1, which scripts/ort/check_ep.py
//! sets), both nodes of an add -> add model are placed on it, and a run
//! reports the missing CUDA device. The GPU half (values, no host round trip
//! between the nodes) runs on the H100: scripts/ort/check_ep.py --gpu.

use std::process::Command;
mod ort_support;

use ort_support::{build_options, repo, require_onnxruntime};
use triton_opgen::ort::generate;

#[test]
fn ort_add_library_registers_as_execution_provider() {
    if !require_onnxruntime("ort_ep") {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let opts = build_options(
        repo().join("tests/ops/add.tc"),
        out.path().join("triton_add_ort"),
    );
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let lib = done.library.expect("built library");
    let run = Command::new("python3")
        .arg(repo().join("scripts/ort/check_ep.py"))
        .arg(&lib)
        .arg("--no-gpu")
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    println!("{stdout}");
    assert!(
        run.status.success(),
        "check_ep.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for line in [
        "ok: EP opgen_triton_add registered",
        "ok: session providers ['opgen_triton_add', 'CPUExecutionProvider']",
        "ok: run without a GPU",
    ] {
        assert!(stdout.contains(line), "missing `{line}`:\n{stdout}");
    }
}
