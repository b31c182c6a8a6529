//! Finding the XLA FFI headers to build against: `$JAX_FFI_INCLUDE`, else
//! the folder `jax.ffi.include_dir()` names in the jax that `python` imports.

use crate::python_probe::{self, Probe};
use std::path::{Path, PathBuf};

/// The folder holding `xla/ffi/api/ffi.h`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JaxEnv {
    pub include_dir: PathBuf,
}

const SCRIPT: &str = "import jax; print(jax.ffi.include_dir())";

pub fn find_jax(python: &str) -> Result<JaxEnv, String> {
    let from_env = std::env::var_os("JAX_FFI_INCLUDE").map(PathBuf::from);
    let (include_dir, origin) = match from_env {
        Some(dir) => (dir, "$JAX_FFI_INCLUDE".to_string()),
        None => {
            let hint = "install it (`pip install jax` is enough to build; `jax[cuda13]` runs it), set JAX_FFI_INCLUDE to jaxlib's include folder, pass --python for another interpreter, or --no-build to write the build folder only";
            let stdout = python_probe::run(
                python,
                &Probe {
                    framework: "JAX",
                    module: "jax",
                    script: SCRIPT,
                    env: &[("JAX_PLATFORMS", "cpu")],
                    hint,
                },
            )?;
            let dir = stdout.lines().last().unwrap_or("").trim().to_string();
            (
                PathBuf::from(dir),
                format!("`{python}`'s jax.ffi.include_dir()"),
            )
        }
    };
    check_headers(&include_dir, &origin)?;
    Ok(JaxEnv { include_dir })
}

fn check_headers(dir: &Path, origin: &str) -> Result<(), String> {
    if dir.join("xla/ffi/api/ffi.h").is_file() {
        Ok(())
    } else {
        Err(format!(
            "the XLA FFI headers are not in {} ({origin}): xla/ffi/api/ffi.h is missing",
            dir.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_headers_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let err = check_headers(tmp.path(), "$JAX_FFI_INCLUDE").unwrap_err();
        assert!(err.contains("xla/ffi/api/ffi.h is missing"), "{err}");
        assert!(err.contains("($JAX_FFI_INCLUDE)"), "{err}");
        let api = tmp.path().join("xla/ffi/api");
        std::fs::create_dir_all(&api).unwrap();
        std::fs::write(api.join("ffi.h"), "").unwrap();
        assert!(check_headers(tmp.path(), "x").is_ok());
    }
}
