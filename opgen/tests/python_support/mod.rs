//! What the Python-driven tests share: the repository root, the
//! "python3 imports it, or skip (fail under CI)" rule, running a check
//! script that must succeed, and for the frameworks whose op library is
//! built here (TensorFlow, JAX): the runtime bridge, building ops in
//! parallel, and check scripts that print `ok:`/`FAIL:` lines per section.

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

/// `build(op)` for every op at once, one thread each; the results in order.
pub fn build_in_parallel<T: Send>(
    ops: &[&str],
    build: impl Fn(&str) -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    std::thread::scope(|scope| {
        let jobs: Vec<_> = ops
            .iter()
            .map(|op| {
                let build = &build;
                scope.spawn(move || build(op))
            })
            .collect();
        jobs.into_iter()
            .map(|j| {
                j.join()
                    .unwrap_or_else(|_| Err("build thread panicked".into()))
            })
            .collect()
    })
}

/// Runs `python3 <repo>/script dirs...` and returns its output, which must
/// end with a `done: ` line (the script got through every section).
pub fn run_sectioned_checks<'a>(
    script: &str,
    dirs: impl Iterator<Item = &'a Path>,
    env: &[(&str, &str)],
) -> Result<String, String> {
    let run = Command::new("python3")
        .arg(repo().join(script))
        .args(dirs)
        .envs(env.iter().copied())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    if stdout.contains("done: ") {
        Ok(stdout)
    } else {
        Err(format!(
            "{script} stopped early:\n{stdout}\n{}",
            String::from_utf8_lossy(&run.stderr)
        ))
    }
}

/// Asserts that section `section` of a check script's output has no
/// failure and has each of `expected` (whole `ok: section: ...` lines).
pub fn assert_section_of(output: &Result<String, String>, section: &str, expected: &[&str]) {
    let output = output.as_ref().unwrap_or_else(|e| panic!("{e}"));
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

/// A stand-in for the prebuilt runtime archive in `dir` (a --no-build
/// folder only copies it).
pub fn fake_bridge(dir: &Path) -> PathBuf {
    let path = dir.join("libopgen_bridge.a");
    std::fs::write(&path, b"!<arch>\n").unwrap();
    path
}

/// The .tc file of a bundled op (tests/ops/) or an example (examples/).
pub fn op_file(op: &str) -> PathBuf {
    let bundled = repo().join(format!("tests/ops/{op}.tc"));
    if bundled.is_file() {
        bundled
    } else {
        repo().join(format!("examples/{op}.tc"))
    }
}

/// Installs `wheel` (no dependencies: the venv sees this Python's packages)
/// into a fresh virtual environment and runs `script` there, from a folder
/// outside the repository (so that nothing imports from the build folders);
/// returns its stdout, panicking with its output when it fails.
pub fn install_wheel_and_run(wheel: &Path, script: &str, env: &[(&str, &str)]) -> String {
    let venv = tempfile::tempdir().expect("temp dir");
    let status = Command::new("python3")
        .args(["-m", "venv", "--system-site-packages"])
        .arg(venv.path())
        .status()
        .expect("python3 -m venv runs");
    assert!(status.success(), "python3 -m venv failed");
    let python = venv.path().join("bin/python");
    let install = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
        ])
        .arg(wheel)
        .output()
        .expect("pip runs");
    assert!(
        install.status.success(),
        "pip install {} failed:\n{}",
        wheel.display(),
        String::from_utf8_lossy(&install.stderr)
    );
    let run = Command::new(&python)
        .args(["-c", script])
        .current_dir(venv.path())
        .envs(env.iter().copied())
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "the installed wheel failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}
