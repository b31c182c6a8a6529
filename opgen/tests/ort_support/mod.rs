//! What the ONNX Runtime tests share: paths, the onnxruntime availability rule
//! and the build options.

use std::path::{Path, PathBuf};
use std::process::Command;
use triton_opgen::ort::OrtOptions;
use tritonc::codegen::Arch;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Whether python3 has onnxruntime, onnx and numpy. Missing them fails under CI
/// (scripts/setup.sh installs them); elsewhere the test prints a notice and is skipped.
pub fn require_onnxruntime(test: &str) -> bool {
    let importable = Command::new("python3")
        .args(["-c", "import onnxruntime, onnx, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if importable {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "onnxruntime/onnx/numpy cannot be imported by python3 (scripts/setup.sh installs them)"
        );
    }
    eprintln!("SKIPPED {test}: python3 cannot import onnxruntime and onnx (pip install onnxruntime==1.31.1 onnx==1.23.2)");
    false
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
    }
}
