//! What the TensorFlow tests share: paths, the tensorflow-or-fail-in-CI rule,
//! the runtime bridge, and the op libraries, built once per test binary
//! (compiling against TensorFlow's headers is the slow part).

#![allow(dead_code)]

#[path = "../python_support/mod.rs"]
mod python_support;

pub use python_support::repo;

use python_support::{require_python, PythonModules};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use triton_opgen::tf::{generate, TfGenerated, TfOptions};
use tritonc::codegen::Arch;

/// Whether python3 imports tensorflow. Missing it fails under CI
/// (scripts/setup.sh installs it); elsewhere the test prints a notice and is skipped.
pub fn require_tensorflow(test: &str) -> bool {
    require_python(
        test,
        &PythonModules {
            import: "import tensorflow",
            env: &[("TF_CPP_MIN_LOG_LEVEL", "2")],
            ci_message:
                "tensorflow cannot be imported by python3 (scripts/setup.sh installs tensorflow-cpu)",
            skip_reason: "python3 cannot import tensorflow (pip install tensorflow-cpu==2.21.0)",
        },
    )
}

/// The runtime bridge archive: `cargo build` puts it in target/release, while
/// `cargo test` leaves it in target/release/deps with a hash in its name; the
/// newest of those is the one built from this tree.
pub fn bridge_lib() -> PathBuf {
    let release = repo().join("target/release");
    let mut found: Vec<PathBuf> = vec![release.join("libopgen_bridge.a")];
    if let Ok(entries) = std::fs::read_dir(release.join("deps")) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("libopgen_bridge-") && name.ends_with(".a") {
                found.push(entry.path());
            }
        }
    }
    found
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| {
            panic!("libopgen_bridge.a is not built: run `cargo build --release -p opgen-bridge`")
        })
}

pub fn options(op: &str, out_dir: PathBuf, no_build: bool, bridge: PathBuf) -> TfOptions {
    TfOptions {
        input: repo().join(format!("tests/ops/{op}.tc")),
        out_dir: Some(out_dir),
        arch: Arch::Sm90,
        no_build,
        python: "python3".into(),
        bridge_lib: Some(bridge),
        include_dirs: Vec::new(),
        tuned: None,
    }
}

/// The ops the checks use: add, and dot with the two ops its gradient calls.
pub const OPS: &[&str] = &["add", "dot", "dot_nt", "dot_tn"];

/// Generates and builds every op in `OPS` (in parallel) under
/// target/tf-ops/, once per test binary.
pub fn built_ops() -> &'static Result<Vec<TfGenerated>, String> {
    static BUILT: OnceLock<Result<Vec<TfGenerated>, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = repo().join("target/tf-ops");
        let bridge = bridge_lib();
        std::thread::scope(|scope| {
            let jobs: Vec<_> = OPS
                .iter()
                .map(|op| {
                    let opts = options(op, root.join(op), false, bridge.clone());
                    scope.spawn(move || generate(&opts, |_| {}).map_err(|e| format!("{op}: {e}")))
                })
                .collect();
            jobs.into_iter()
                .map(|j| {
                    j.join()
                        .unwrap_or_else(|_| Err("build thread panicked".into()))
                })
                .collect()
        })
    })
}

/// The output of check_ops.py over the built ops, run once per test binary
/// (importing TensorFlow takes seconds).
pub fn check_output() -> &'static Result<String, String> {
    static OUTPUT: OnceLock<Result<String, String>> = OnceLock::new();
    OUTPUT.get_or_init(|| {
        let built = built_ops().as_ref().map_err(Clone::clone)?;
        let run = Command::new("python3")
            .arg(repo().join("opgen/tests/tf_support/check_ops.py"))
            .args(built.iter().map(|g| &g.out_dir))
            .env("TF_CPP_MIN_LOG_LEVEL", "2")
            .output()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
        if stdout.contains("done: ") {
            Ok(stdout)
        } else {
            Err(format!(
                "check_ops.py stopped early:\n{stdout}\n{}",
                String::from_utf8_lossy(&run.stderr)
            ))
        }
    })
}

/// Asserts that section `section` of the check output has no failure and
/// has each of `expected` (whole `ok: section: ...` lines).
pub fn assert_section(section: &str, expected: &[&str]) {
    let output = check_output().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let prefix = format!("FAIL: {section}: ");
    let failed: Vec<&str> = output.lines().filter(|l| l.starts_with(&prefix)).collect();
    assert!(
        failed.is_empty(),
        "{}\n\nfull output:\n{output}",
        failed.join("\n")
    );
    for line in expected {
        let want = format!("ok: {section}: {line}");
        assert!(
            output.lines().any(|l| l == want),
            "missing `{want}` in:\n{output}"
        );
    }
}
