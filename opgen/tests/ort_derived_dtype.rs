//! A derived dtype on ONNX Runtime: examples/row_center.tc (`dtype S from
//! T`: float32 statistics for float16/float32 inputs, float64 for float64)
//! built as an ORT library and loaded into onnxruntime (CPU package) by
//! scripts/ort/check_derived_dtype.py: shape inference types the outputs by
//! the group the inputs pick, and an input of dtype S that disagrees with
//! `x` fails with a status naming both. Skipped like ort_add when
//! onnxruntime cannot be imported outside CI.

mod ort_support;

use ort_support::{build_options, repo, require_onnxruntime, run_check_script};
use triton_opgen::ort::generate;

#[test]
fn ort_derived_dtypes_type_outputs_and_check_inputs() {
    if !require_onnxruntime("ort_derived_dtype") {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let opts = build_options(
        repo().join("examples/row_center.tc"),
        out.path().join("row_center"),
    );
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let spec_rs = std::fs::read_to_string(done.out_dir.join("src/op_spec.rs")).unwrap();
    for needle in [
        // S is a column of every group: float32 for float16/float32, float64 for float64.
        "pub const DTYPE_VARS: &[&str] = &[\"T\", \"S\", ];",
        "pub const GROUPS: &[&[i32]] = &[&[1, 1, ], &[10, 1, ], &[11, 11, ], ];",
        "pub const DERIVED: &[(usize, usize)] = &[(1, 0), ];",
    ] {
        assert!(
            spec_rs.contains(needle),
            "missing `{needle}` in:\n{spec_rs}"
        );
    }
    let lib = done.library.expect("built library");
    let stdout = run_check_script("", "scripts/ort/check_derived_dtype.py", [&lib]);
    for line in [
        "ok: x float16: session opens, outputs ['tensor(float16)', 'tensor(float)']",
        "ok: x float64: session opens, outputs ['tensor(double)', 'tensor(double)']",
        "ok: x float64: run reports no CUDA device",
        "ok: x float64, shift float32: refused: examples::row_center: input `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
        "ok: x float16, shift float16: refused: examples::row_center: input `shift` has dtype float16; S must be one of {float32, float64}",
    ] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
}
