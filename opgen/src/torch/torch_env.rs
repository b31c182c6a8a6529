//! Finding the PyTorch to build against: `--torch-dir`, else the one
//! `python3` imports.

use crate::python_probe::{self, Probe};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorchEnv {
    /// The `torch` package folder (holds `include/` and `lib/`).
    pub dir: PathBuf,
    /// `torch._C._GLIBCXX_USE_CXX11_ABI` as 0 or 1.
    pub cxx11_abi: u8,
}

/// `dir` given: checked, ABI from `TORCH_CXX11_ABI` (default 1, what torch
/// wheels use since 2.7). Otherwise asks `python`.
pub fn find_torch(dir: Option<&Path>, python: &str) -> Result<TorchEnv, String> {
    let env = match dir {
        Some(dir) => TorchEnv {
            dir: dir.to_path_buf(),
            cxx11_abi: std::env::var("TORCH_CXX11_ABI")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(1),
        },
        None => ask_python(python)?,
    };
    let header = env.dir.join("include/torch/library.h");
    if !header.exists() {
        return Err(format!(
            "{} is not a PyTorch install with C++ headers: {} is missing",
            env.dir.display(),
            header.display()
        ));
    }
    Ok(env)
}

fn ask_python(python: &str) -> Result<TorchEnv, String> {
    const SCRIPT: &str =
        "import os, torch; print(os.path.dirname(torch.__file__)); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))";
    let hint = "pass --torch-dir DIR (the torch package folder), or --no-build to write a build folder for a machine that has torch";
    let stdout = python_probe::run(
        python,
        &Probe {
            framework: "PyTorch",
            module: "torch",
            script: SCRIPT,
            env: &[],
            hint,
        },
    )?;
    let mut lines = stdout.lines();
    let dir = lines.next().unwrap_or("").trim();
    let abi = lines.next().unwrap_or("1").trim();
    if dir.is_empty() {
        return Err(format!(
            "PyTorch not found: `{python}` printed no torch folder; {hint}"
        ));
    }
    Ok(TorchEnv {
        dir: PathBuf::from(dir),
        cxx11_abi: abi.parse().unwrap_or(1),
    })
}

impl TorchEnv {
    /// `torch.__version__` as torch/version.py spells it (`2.11.0+cu130`).
    pub fn version(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.dir.join("version.py")).ok()?;
        text.lines().find_map(|line| {
            let value = line.strip_prefix("__version__")?.trim_start();
            let value = value
                .strip_prefix(':')
                .map_or(value, |v| v.split('=').nth(1).unwrap_or(v));
            let value = value.strip_prefix('=').unwrap_or(value).trim();
            Some(value.trim_matches(|c| c == '\'' || c == '"').to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_comes_from_version_py() {
        let tmp = tempfile::tempdir().unwrap();
        let env = TorchEnv {
            dir: tmp.path().to_path_buf(),
            cxx11_abi: 1,
        };
        assert_eq!(env.version(), None);
        std::fs::write(
            tmp.path().join("version.py"),
            "from typing import Optional\n__version__ = '2.11.0+cu130'\ndebug = False\n",
        )
        .unwrap();
        assert_eq!(env.version().as_deref(), Some("2.11.0+cu130"));
        std::fs::write(
            tmp.path().join("version.py"),
            "__version__: str = \"2.9.1\"\n",
        )
        .unwrap();
        assert_eq!(env.version().as_deref(), Some("2.9.1"));
    }
}
