// Copied verbatim by triton-opgen: one custom-op domain per session options,
// shared by every triton-opgen library registered on them. onnxruntime
// refuses a second OrtCustomOpDomain of the same name ("Domain already set in
// registry"), so the first library records its domain in a session config
// entry and the next ones add their ops to it.
use crate::{api, ok};
use ort_sys::*;
use std::ffi::{c_char, CString};

/// The config entry that holds the domain's address: process-local, written
/// and read only by these libraries.
fn key(domain: &str) -> CString {
    CString::new(format!("opgen.internal.custom_op_domain.{domain}.pid{}", std::process::id()))
        .unwrap_or_default()
}

/// Adds `op` to the domain `name` (NUL-terminated) of `options`, creating
/// and registering the domain if no opgen library did yet.
///
/// # Safety
/// `options` is the live session options ORT passed to RegisterCustomOps;
/// `op` is static.
pub unsafe fn add_op(
    options: *mut OrtSessionOptions,
    name: &str,
    op: &'static OrtCustomOp,
) -> Result<(), OrtStatusPtr> {
    let api = api();
    let key = key(name.trim_end_matches('\0'));
    let mut has = 0;
    ok((api.HasSessionConfigEntry)(options, key.as_ptr(), &mut has))?;
    if has != 0 {
        let mut buf = [0 as c_char; 64];
        let mut size = buf.len();
        ok((api.GetSessionConfigEntry)(options, key.as_ptr(), buf.as_mut_ptr(), &mut size))?;
        let text = std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy();
        if let Ok(addr) = usize::from_str_radix(text.trim_start_matches("0x"), 16) {
            let domain = addr as *mut OrtCustomOpDomain;
            return ok((api.CustomOpDomain_Add)(domain, op));
        }
    }
    // The domain must outlive every session that uses it: it is never freed.
    let mut domain: *mut OrtCustomOpDomain = std::ptr::null_mut();
    ok((api.CreateCustomOpDomain)(name.as_ptr().cast(), &mut domain))?;
    ok((api.CustomOpDomain_Add)(domain, op))?;
    ok((api.AddCustomOpDomain)(options, domain))?;
    let value = CString::new(format!("{:#x}", domain as usize)).unwrap_or_default();
    ok((api.AddSessionConfigEntry)(options, key.as_ptr(), value.as_ptr()))
}
