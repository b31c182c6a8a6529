//! What the JAX tests share: the jax-or-fail-in-CI rule, options, and the
//! op libraries, built once per test binary against the XLA FFI headers of
//! the installed jaxlib (CPU package: no GPU, no CUDA needed to build).

#![allow(dead_code)]

#[path = "../python_support/mod.rs"]
mod python_support;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use python_support::{bridge_lib, fake_bridge, install_wheel_and_run, op_file, repo};

use python_support::{
    assert_section_of, build_in_parallel, require_python, run_sectioned_checks, PythonModules,
};
use std::path::PathBuf;
use std::sync::OnceLock;
use triton_opgen::jax::{generate, JaxGenerated, JaxOptions};
use tritonc::codegen::Arch;

const CPU_ONLY: (&str, &str) = ("JAX_PLATFORMS", "cpu");

/// Whether python3 imports jax. Missing it fails under CI (scripts/setup.sh
/// installs it); elsewhere the test prints a notice and is skipped.
pub fn require_jax(test: &str) -> bool {
    require_python(
        test,
        &PythonModules {
            import: "import jax",
            env: &[CPU_ONLY],
            ci_message:
                "jax cannot be imported by python3 (scripts/setup.sh installs jax and jaxlib)",
            skip_reason: "python3 cannot import jax (pip install jax==0.10.2 jaxlib==0.10.2)",
        },
    )
}

pub fn options(op: &str, out_dir: PathBuf, no_build: bool, bridge: PathBuf) -> JaxOptions {
    JaxOptions {
        input: op_file(op),
        out_dir: Some(out_dir),
        arch: Arch::Sm90,
        no_build,
        python: "python3".into(),
        bridge_lib: Some(bridge),
        include_dirs: Vec::new(),
        tuned: None,
    }
}

/// The ops the checks use: add, softmax (no gradient, a requirement), dot
/// with the two ops its gradient calls, the example with attributes and the
/// one with a derived dtype.
pub const OPS: &[&str] = &[
    "add",
    "softmax",
    "dot",
    "dot_nt",
    "dot_tn",
    "scale_shift",
    "row_center",
];

/// Generates and builds every op in `OPS` (in parallel) under
/// target/jax-ops/, once per test binary.
pub fn built_ops() -> &'static Result<Vec<JaxGenerated>, String> {
    static BUILT: OnceLock<Result<Vec<JaxGenerated>, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = repo().join("target/jax-ops");
        let bridge = bridge_lib();
        build_in_parallel(OPS, |op| {
            let opts = options(op, root.join(op), false, bridge.clone());
            generate(&opts, |_| {}).map_err(|e| format!("{op}: {e}"))
        })
    })
}

/// The output of check_ops.py over the built ops, run once per test binary.
pub fn check_output() -> &'static Result<String, String> {
    static OUTPUT: OnceLock<Result<String, String>> = OnceLock::new();
    OUTPUT.get_or_init(|| {
        let built = built_ops().as_ref().map_err(Clone::clone)?;
        run_sectioned_checks(
            "opgen/tests/jax_support/check_ops.py",
            built.iter().map(|g| g.out_dir.as_path()),
            &[CPU_ONLY],
        )
    })
}

/// Asserts that section `section` of the check output has no failure and
/// has each of `expected` (whole `ok: section: ...` lines).
pub fn assert_section(section: &str, expected: &[&str]) {
    assert_section_of(check_output(), section, expected);
}
