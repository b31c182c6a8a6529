//! Node attributes on ONNX Runtime: examples/scale_shift.tc (alpha, beta:
//! float; relu: bool) built as an ORT library and loaded into onnxruntime
//! (CPU package) by scripts/ort/check_attrs.py: sessions with and without
//! the attributes open and reach the launch, and a wrong attribute fails the
//! session with a status naming it. Skipped like ort_add when onnxruntime
//! cannot be imported outside CI.

mod ort_support;

use ort_support::{build_options, repo, require_onnxruntime, run_check_script};
use triton_opgen::ort::generate;

#[test]
fn ort_attributes_are_node_attributes() {
    if !require_onnxruntime("ort_attrs") {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let opts = build_options(
        repo().join("examples/scale_shift.tc"),
        out.path().join("scale_shift"),
    );
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let spec_rs = std::fs::read_to_string(done.out_dir.join("src/op_spec.rs")).unwrap();
    for needle in [
        "AttrDesc { name: \"alpha\", kind: AttrKind::Float, default: Some(AttrValue::Float(1.0)) },",
        "AttrDesc { name: \"relu\", kind: AttrKind::Bool, default: Some(AttrValue::Int(0)) },",
        "(LaunchArg::F32(c.attr_f(0)), \"alpha\"),",
        "(LaunchArg::I32(c.attr_i(2)), \"relu\"),",
    ] {
        assert!(spec_rs.contains(needle), "missing `{needle}` in:\n{spec_rs}");
    }
    let lib = done.library.expect("built library");
    let stdout = run_check_script("", "scripts/ort/check_attrs.py", [&lib]);
    for line in [
        "ok: defaults: session opens, output dims ['N']",
        "ok: {'alpha': 2.5, 'beta': -1.0}: run reports no CUDA device",
        "ok: {'alpha': -3.0, 'relu': 1}: session opens, output dims ['N']",
        "ok: {'alpha': 2}: session refused: examples::scale_shift: attribute `alpha` must be a float (ONNX FLOAT)",
        "ok: {'relu': 5}: session refused: examples::scale_shift: attribute `relu` is a bool (ONNX INT, 0 or 1), got 5",
        "ok: {'beta': 'x'}: session refused: examples::scale_shift: attribute `beta` must be a float (ONNX FLOAT)",
    ] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
}
