//! What the ONNX Runtime tests share: paths, the onnxruntime availability rule
//! and the build options.

#![allow(dead_code)]

#[path = "../python_support/mod.rs"]
mod python_support;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use python_support::{install_wheel_and_run, repo, run_check_script};

use python_support::{require_python, PythonModules};
use std::path::PathBuf;
use tempfile::TempDir;
use triton_opgen::ort::{generate, OrtGenerated, OrtOptions};
use tritonc::codegen::Arch;

/// Whether python3 has onnxruntime, onnx and numpy. Missing them fails under CI
/// (scripts/setup.sh installs them); elsewhere the test prints a notice and is skipped.
pub fn require_onnxruntime(test: &str) -> bool {
    require_python(
        test,
        &PythonModules {
            import: "import onnxruntime, onnx, numpy",
            env: &[],
            ci_message:
                "onnxruntime/onnx/numpy cannot be imported by python3 (scripts/setup.sh installs them)",
            skip_reason: "python3 cannot import onnxruntime and onnx (pip install onnxruntime==1.31.1 onnx==1.23.2)",
        },
    )
}

/// tests/ops/add.tc generated and built into a temporary folder (kept alive
/// by the returned guard); `None` when `test` is skipped for want of onnxruntime.
pub fn build_add(test: &str) -> Option<(TempDir, OrtGenerated)> {
    if !require_onnxruntime(test) {
        return None;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let opts = build_options(
        repo().join("tests/ops/add.tc"),
        out.path().join("triton_add_ort"),
    );
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    Some((out, done))
}

/// Builds `input` into `out_dir` for sm_90.
pub fn build_options(input: PathBuf, out_dir: PathBuf) -> OrtOptions {
    OrtOptions {
        input,
        out_dir: Some(out_dir),
        arch: Arch::Sm90,
        include_dirs: Vec::new(),
        no_build: false,
        // Shared between runs so ort-sys compiles once.
        target_dir: Some(repo().join("target/ort-ops")),
        tuned: None,
    }
}
