//! The generated ONNX Runtime library as a plugin execution provider, on a
//! machine without a GPU: onnxruntime loads it with
//! `register_execution_provider_library`, the EP offers a device (the CPU
//! entry, under OPGEN_ORT_EP_WITHOUT_GPU=1, which scripts/ort/check_ep.py
//! sets), both nodes of an add -> add model are placed on it, and a run
//! reports the missing CUDA device. The GPU half (values, no host round trip
//! between the nodes) runs on the H100: scripts/ort/check_ep.py --gpu.

mod ort_support;

use ort_support::{build_add, run_check_script};

#[test]
fn ort_add_library_registers_as_execution_provider() {
    let Some((_out, done)) = build_add("ort_ep") else {
        return;
    };
    let lib = done.library.expect("built library");
    let stdout = run_check_script(
        "",
        "scripts/ort/check_ep.py",
        [lib.as_os_str(), "--no-gpu".as_ref()],
    );
    for line in [
        "ok: EP opgen_triton_add registered",
        "ok: session providers ['opgen_triton_add', 'CPUExecutionProvider']",
        "ok: run without a GPU",
    ] {
        assert!(stdout.contains(line), "missing `{line}`:\n{stdout}");
    }
}
