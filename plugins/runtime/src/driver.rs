//! Finding and initialising the CUDA driver without ever panicking.
//!
//! cudarc opens libcuda lazily and panics when the library or one of its
//! symbols is missing. So before the first cudarc call we open the library
//! ourselves, check every symbol the runtime uses, and only then call cuInit;
//! each failure becomes [`RuntimeError::NoDevice`].

use crate::error::{Result, RuntimeError};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Every driver entry point the runtime calls, under the name cudarc loads
/// (the versioned names of CUDA 13.0's headers).
pub(crate) const REQUIRED_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent",
    "cuModuleLoadDataEx",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuFuncGetAttribute",
    "cuFuncSetAttribute",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    "cuLaunchKernel",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamIsCapturing",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventSynchronize",
    "cuEventElapsedTime_v2",
    "cuEventDestroy_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemsetD8_v2",
    "cuMemsetD8Async",
];

/// What the driver said about itself once initialised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverInfo {
    /// `cuDriverGetVersion`: 13000 for CUDA 13.0.
    pub version: i32,
}

/// Set once libcuda is open with every symbol of [`REQUIRED_SYMBOLS`].
static SYMBOLS_CHECKED: AtomicBool = AtomicBool::new(false);

static DRIVER: OnceLock<Result<DriverInfo, String>> = OnceLock::new();

/// Opens libcuda, checks its symbols and calls `cuInit(0)`, once per process.
/// Every later call returns the same answer.
pub fn init() -> Result<DriverInfo> {
    DRIVER
        .get_or_init(probe_and_init)
        .clone()
        .map_err(RuntimeError::NoDevice)
}

/// True when the driver loaded and initialised (never panics).
pub fn is_available() -> bool {
    init().is_ok()
}

fn probe_and_init() -> Result<DriverInfo, String> {
    // SAFETY: only opens shared libraries by name (their initialisers run,
    // as they would for any dlopen of libcuda).
    if !unsafe { sys::is_culib_present() } {
        let mut names = cudarc::get_lib_name_candidates("cuda");
        let mut seen = std::collections::HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        return Err(format!(
            "no CUDA driver: libcuda.so.1 not found (searched {})",
            names.join(", ")
        ));
    }
    // SAFETY: is_culib_present just succeeded, so culib() finds the library.
    let lib = unsafe { sys::culib() };
    let missing: Vec<&str> = REQUIRED_SYMBOLS
        .iter()
        .copied()
        // SAFETY: looking a symbol up does not call it.
        .filter(|name| unsafe { lib.get::<*const ()>(name.as_bytes()) }.is_err())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "CUDA driver too old: libcuda lacks {} (a CUDA 13.0 driver or newer is needed)",
            missing.join(", ")
        ));
    }
    SYMBOLS_CHECKED.store(true, Ordering::Release);
    // SAFETY: all symbols present; cuInit may be called any number of times.
    let init = unsafe { sys::cuInit(0) };
    if init != sys::CUresult::CUDA_SUCCESS {
        let err = DriverError(init);
        return Err(format!(
            "cuInit failed: {} ({})",
            error_name(&err),
            error_text(&err)
        ));
    }
    let mut version = 0;
    // SAFETY: version is a valid out pointer.
    unsafe { sys::cuDriverGetVersion(&mut version) };
    Ok(DriverInfo { version })
}

/// `CUDA_ERROR_INVALID_PTX`: the enum's own name, no driver call needed.
fn error_name(err: &DriverError) -> String {
    format!("{:?}", err.0)
}

/// The driver's description; only asked once the library's symbols are
/// known to be there (cudarc would panic otherwise).
fn error_text(err: &DriverError) -> String {
    if !SYMBOLS_CHECKED.load(Ordering::Acquire) {
        return "no driver to describe it".to_string();
    }
    err.error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown error".to_string())
}

/// Turns a driver error into [`RuntimeError::Cuda`] naming the call and what
/// it was for.
pub(crate) fn cuda_error(call: &'static str, context: String, err: DriverError) -> RuntimeError {
    RuntimeError::Cuda {
        call,
        context,
        code: err.0 as u32,
        name: error_name(&err),
        message: error_text(&err),
    }
}

/// `result.call("cuLaunchKernel", || format!("kernel {name}"))?`
pub(crate) trait CallContext<T> {
    fn call(self, call: &'static str, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> CallContext<T> for std::result::Result<T, DriverError> {
    fn call(self, call: &'static str, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| cuda_error(call, context(), e))
    }
}

impl CallContext<()> for sys::CUresult {
    fn call(self, call: &'static str, context: impl FnOnce() -> String) -> Result<()> {
        self.result().call(call, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine (and CI) has no libcuda: the answer must be an error
    /// value that says so, and asking twice gives the same answer.
    #[test]
    fn missing_driver_is_an_error_value() {
        if unsafe { sys::is_culib_present() } {
            eprintln!("libcuda present: skipping the no-driver check");
            return;
        }
        let err = init().unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("no CUDA device: no CUDA driver"), "{text}");
        assert!(text.contains("libcuda"), "{text}");
        assert!(matches!(init(), Err(RuntimeError::NoDevice(_))));
        assert!(!is_available());
    }

    #[test]
    fn cuda_errors_name_the_call_and_context() {
        let err = cuda_error(
            "cuLaunchKernel",
            "kernel add".into(),
            DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
        );
        let text = err.to_string();
        assert!(
            text.starts_with("cuLaunchKernel failed (kernel add): "),
            "{text}"
        );
        assert!(text.contains("CUDA_ERROR_INVALID_VALUE (1)"), "{text}");
    }
}
