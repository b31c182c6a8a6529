//! The one error type of the runtime. Every failure is a value: no panics on a
//! missing driver, a bad manifest, wrong arguments or a failing CUDA call.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// No usable CUDA driver or device: the library is absent, too old, cuInit
    /// failed, or there is no device with that ordinal.
    #[error("no CUDA device: {0}")]
    NoDevice(String),

    /// A CUDA driver call returned an error.
    #[error("{call} failed{}: {name} ({code}): {message}", context_suffix(.context))]
    Cuda {
        /// The driver function, e.g. `cuModuleLoadDataEx`.
        call: &'static str,
        /// What we were doing: kernel, file, sizes.
        context: String,
        /// The CUresult as a number, e.g. 218.
        code: u32,
        /// The CUresult name, e.g. `CUDA_ERROR_INVALID_PTX`.
        name: String,
        /// The driver's description, plus the JIT log when there is one.
        message: String,
    },

    /// Reading or writing a file failed (manifest, PTX, cache).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("invalid manifest {}: {message}", path.display())]
    Manifest { path: PathBuf, message: String },

    #[error("kernel `{kernel}`: expected {expected} arguments ({signature}), got {got}")]
    ArgCount {
        kernel: String,
        signature: String,
        expected: usize,
        got: usize,
    },

    #[error("kernel `{kernel}`, parameter {index} `{param}`: expected {expected}, got {got}")]
    ArgType {
        kernel: String,
        index: usize,
        param: String,
        expected: String,
        got: String,
    },

    #[error("kernel `{kernel}`: {reason}")]
    InvalidLaunch { kernel: String, reason: String },

    #[error("autotune `{key}`: {reason}")]
    Autotune { key: String, reason: String },
}

fn context_suffix(context: &str) -> String {
    if context.is_empty() {
        String::new()
    } else {
        format!(" ({context})")
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
