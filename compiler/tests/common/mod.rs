//! Test helpers: finding and running `ptxas`.
#![allow(dead_code)]
pub mod kernels;
use std::path::PathBuf;
use std::process::Command;

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
