//! Test helpers: running the `tritonc` binary, finding and running `ptxas`.
#![allow(dead_code)]
pub mod kernels;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (kernel paths in tests are relative to it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `tests/kernels/`, the kernels the tests compile (and their include folder).
pub fn kernels_dir() -> PathBuf {
    root().join("tests/kernels")
}

/// Compiles `tests/kernels/<file>` with these macro values for `arch` with
/// `num_warps` warps and at most `num_stages` pipeline buffers.
pub fn compile_kernel(
    file: &str,
    defines: &[(String, String)],
    arch: tritonc::codegen::Arch,
    num_warps: u32,
    num_stages: Option<u32>,
) -> Result<Vec<tritonc::driver::KernelOutput>, tritonc::driver::CompileError> {
    let source = tritonc::driver::Source::read(&kernels_dir().join(file)).unwrap();
    let options = tritonc::driver::CompileOptions {
        include_dirs: vec![kernels_dir()],
        codegen: tritonc::codegen::CodegenOptions {
            arch,
            num_warps,
            num_stages,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    };
    tritonc::driver::compile(&source, defines, &options)
}

/// Runs the `tritonc` binary in the repository root.
pub fn tritonc<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("tritonc runs")
}

/// The manifest `tritonc args... --all-configs -o <temp dir>` writes (the
/// folder removed after); panics with tritonc's message when it fails.
pub fn all_configs_manifest(args: &[&str], tag: &str) -> serde_json::Value {
    let dir = std::env::temp_dir().join(format!("tritonc-{tag}-{}", std::process::id()));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--all-configs", "-o", dir.to_str().unwrap()]);
    let out = tritonc(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&text).unwrap()
}

/// The PTX `tritonc args...` prints; panics with its message (after `what`)
/// when it fails.
pub fn tritonc_ptx<S: AsRef<OsStr>>(args: &[S], what: &str) -> String {
    let out = tritonc(args);
    assert!(
        out.status.success(),
        "tritonc {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 PTX")
}

/// What `ptxas -v` reports for one kernel.
pub struct PtxasUsage {
    pub registers: usize,
    /// Spill stores plus spill loads.
    pub spill_bytes: usize,
}

/// Assembles `ptx` for `arch` with `ptxas -v` and returns its report (what
/// it prints on standard error); panics when ptxas fails. `None` without ptxas.
pub fn ptxas_report(ptx: &str, arch: &str, name: &str) -> Option<String> {
    let ptxas = find_ptxas()?;
    let dir = std::env::temp_dir().join(format!("tritonc-ptxas-v-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(format!("{name}_{arch}.ptx"));
    std::fs::write(&src, ptx).expect("write ptx");
    let out = Command::new(ptxas)
        .args([&format!("-arch={arch}"), "-v", "-o"])
        .arg(dir.join(format!("{name}_{arch}.cubin")))
        .arg(&src)
        .output()
        .expect("run ptxas");
    let report = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "ptxas {arch} on {name}: {report}");
    Some(report)
}

/// Registers and spills of `ptx` on sm_90 (`ptxas -v`); `None` without ptxas.
pub fn ptxas_usage(ptx: &str, name: &str) -> Option<PtxasUsage> {
    ptxas_usage_on(ptx, "sm_90", name)
}

/// [`ptxas_usage`] on `arch` (`sm_90a` for wgmma kernels).
pub fn ptxas_usage_on(ptx: &str, arch: &str, name: &str) -> Option<PtxasUsage> {
    let log = ptxas_report(ptx, arch, name)?;
    let number_before = |word: &str| -> usize {
        log.split(word)
            .next()
            .and_then(|s| s.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{word}` in ptxas output: {log}"))
    };
    Some(PtxasUsage {
        registers: number_before(" registers"),
        spill_bytes: number_before(" bytes spill stores") + number_before(" bytes spill loads"),
    })
}

/// `ptxas` from env `PTXAS`, else from the `nvidia` Python package (CUDA 13).
pub fn find_ptxas() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("PTXAS") {
        return Some(PathBuf::from(p));
    }
    let out = Command::new("python3")
        .args(["-c", "import nvidia, os; print(nvidia.__path__[0])"])
        .output()
        .ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let path = PathBuf::from(dir.trim()).join("cu13/bin/ptxas");
    path.exists().then_some(path)
}

/// Assembles `ptx` for `arch` (`sm_80`); panics with ptxas's message on failure.
/// Without ptxas: fails under CI, else prints a notice and skips.
pub fn check_ptxas(ptx: &str, arch: &str, name: &str) {
    let Some(ptxas) = find_ptxas() else {
        if std::env::var("CI").is_ok() {
            panic!("ptxas not found (set PTXAS)");
        }
        eprintln!("notice: ptxas not found, skipping the ptxas check of {name}");
        return;
    };
    let dir = std::env::temp_dir().join(format!("tritonc-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let src = dir.join(format!("{name}_{arch}.ptx"));
    std::fs::write(&src, ptx).expect("write ptx");
    let out = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-o")
        .arg(dir.join(format!("{name}_{arch}.cubin")))
        .arg(&src)
        .output()
        .expect("run ptxas");
    assert!(
        out.status.success(),
        "ptxas -arch={arch} failed on {name}:\n{}\n--- PTX ---\n{ptx}",
        String::from_utf8_lossy(&out.stderr)
    );
}
