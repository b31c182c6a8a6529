// Copied verbatim by triton-opgen: finds out whether a CUDA device exists,
// opening the driver at run time (the library links nothing from CUDA).
use std::ffi::{c_char, c_int, c_void};

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}
const RTLD_NOW: c_int = 2;

/// Ok(count > 0), or a message saying why there is no device.
pub fn device_count() -> Result<i32, String> {
    let lib = c"libcuda.so.1";
    // SAFETY: dlopen/dlsym with NUL-terminated names; the symbols are called
    // with the CUDA driver API's signatures.
    unsafe {
        let handle = dlopen(lib.as_ptr(), RTLD_NOW);
        if handle.is_null() {
            return Err("the CUDA driver (libcuda.so.1) cannot be loaded".into());
        }
        let init = dlsym(handle, c"cuInit".as_ptr());
        let count = dlsym(handle, c"cuDeviceGetCount".as_ptr());
        if init.is_null() || count.is_null() {
            return Err("libcuda.so.1 lacks cuInit/cuDeviceGetCount".into());
        }
        let init: extern "C" fn(u32) -> c_int = std::mem::transmute(init);
        let count: extern "C" fn(*mut c_int) -> c_int = std::mem::transmute(count);
        let rc = init(0);
        if rc != 0 {
            return Err(format!("cuInit failed with CUDA error {rc}"));
        }
        let mut n: c_int = 0;
        let rc = count(&mut n);
        if rc != 0 {
            return Err(format!("cuDeviceGetCount failed with CUDA error {rc}"));
        }
        if n == 0 {
            return Err("the CUDA driver reports no device".into());
        }
        Ok(n)
    }
}
