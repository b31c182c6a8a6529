//! The hand-written probe kernels of runtime_gpu_check must assemble for
//! the GPUs we target. Runs where ptxas is found (CI installs it), and says
//! so where it is not.

use std::path::{Path, PathBuf};
use std::process::Command;

fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        return Some(PathBuf::from(p));
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import nvidia, os; print(os.path.join(nvidia.__path__[0], 'cu13', 'bin', 'ptxas'))",
        ])
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    path.is_file().then_some(path)
}

#[test]
fn probe_ptx_assembles_for_sm80_and_sm90() {
    let Some(ptxas) = ptxas() else {
        eprintln!("ptxas not found (set PTXAS): probe.ptx not assembled");
        return;
    };
    let ptx = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/runtime_gpu_check/probe.ptx");
    let dir = tempfile::tempdir().unwrap();
    for arch in ["sm_80", "sm_90"] {
        let out = Command::new(&ptxas)
            .arg(format!("-arch={arch}"))
            .arg(&ptx)
            .arg("-o")
            .arg(dir.path().join(format!("probe_{arch}.cubin")))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ptxas -arch={arch}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cubin = std::fs::read(dir.path().join(format!("probe_{arch}.cubin"))).unwrap();
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
