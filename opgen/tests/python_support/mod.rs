//! What the Python-driven tests share: the repository root, the
//! "python3 imports it, or skip (fail under CI)" rule, and running a check
//! script that must succeed.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A Python dependency of a test and what to say when it is missing.
pub struct PythonModules<'a> {
    /// What `python3 -c` runs: `import onnxruntime, onnx`.
    pub import: &'a str,
    pub env: &'a [(&'a str, &'a str)],
    /// The panic message under CI, where scripts/setup.sh installs it.
    pub ci_message: &'a str,
    /// Why the test is skipped elsewhere: `python3 cannot import ...`.
    pub skip_reason: &'a str,
}

/// Whether python3 runs `modules.import`. Missing them fails under CI (env CI
/// set); elsewhere the test prints a notice and is skipped.
pub fn require_python(test: &str, modules: &PythonModules) -> bool {
    let importable = Command::new("python3")
        .args(["-c", modules.import])
        .envs(modules.env.iter().copied())
        .output()
        .is_ok_and(|o| o.status.success());
    if importable {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{}", modules.ci_message);
    }
    eprintln!("SKIPPED {test}: {}", modules.skip_reason);
    false
}

/// Runs `python3 <repo>/script args...`, prints its stdout and returns it;
/// panics (naming `label`, the script and its output) when it fails.
pub fn run_check_script<I, S>(label: &str, script: &str, args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let run = Command::new("python3")
        .arg(repo().join(script))
        .args(args)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    println!("{stdout}");
    assert!(
        run.status.success(),
        "{label}{script} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}
