//! `triton-opgen` works away from this repository (issue 17): the runtime
//! bridge archive comes from inside the binary and the ONNX Runtime crate
//! gets the runtime crates' sources from it too. The binary is copied into a
//! temporary folder and run from there, as `cargo install` would place it.

#[path = "jax_support/mod.rs"]
mod jax_support;
mod ort_support;

use ort_support::{repo, require_onnxruntime, run_check_script};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tool copied out of target/, alone in a folder.
fn installed_tool(dir: &Path) -> PathBuf {
    let bin = dir.join("bin/triton-opgen");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_triton-opgen"), &bin).unwrap();
    bin
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("triton-opgen runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// The JAX library links the embedded archive (g++ against jaxlib's headers).
#[test]
fn jax_op_links_the_embedded_bridge() {
    if !jax_support::require_jax("jax_op_links_the_embedded_bridge") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let tool = installed_tool(tmp.path());
    let out = tmp.path().join("add_jax");
    run(Command::new(&tool)
        .arg(repo().join("tests/ops/add.tc"))
        .args(["--framework", "jax", "-o"])
        .arg(&out)
        .env_remove("OPGEN_BRIDGE_LIB")
        .current_dir(tmp.path()));
    let lib = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "so"))
        .expect("a shared library in the build folder");
    let nm = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(symbols.contains("triton_add_cuda"), "{symbols}");
}

/// The ONNX Runtime crate builds against the bundled runtime crates and the
/// library loads into onnxruntime with its checks.
#[test]
fn ort_op_builds_from_the_bundled_runtime_sources() {
    if !require_onnxruntime("ort_op_builds_from_the_bundled_runtime_sources") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let tool = installed_tool(tmp.path());
    let out = tmp.path().join("add_ort");
    run(Command::new(&tool)
        .arg(repo().join("tests/ops/add.tc"))
        .args(["--framework", "ort", "-o"])
        .arg(&out)
        .arg("--target-dir")
        .arg(repo().join("target/ort-bundled"))
        .env("OPGEN_PLUGINS_DIR", "bundled")
        .current_dir(tmp.path()));
    let manifest = std::fs::read_to_string(out.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("opgen-runtime = { path = \"opgen-plugins/runtime\" }"),
        "{manifest}"
    );
    assert!(out.join("opgen-plugins/bridge/src/lib.rs").is_file());
    let lib = repo().join("target/ort-bundled/release/libopgen_ort_triton_add.so");
    let stdout = run_check_script("", "scripts/ort/check_add.py", [&lib]);
    for line in ["ok: library loaded", "ok: run without a GPU"] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
}

#[test]
fn a_plugins_dir_without_the_crates_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_triton-opgen"))
        .arg(repo().join("tests/ops/add.tc"))
        .args(["--framework", "ort", "--no-build", "-o"])
        .arg(tmp.path().join("out"))
        .env("OPGEN_PLUGINS_DIR", tmp.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not hold the opgen runtime and bridge crates")
            && err.contains("built into triton-opgen"),
        "{err}"
    );
}
