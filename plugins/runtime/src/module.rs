//! Module images (PTX or cubin), loading them with the JIT's error log, and
//! the per-device cache keyed by the image's hash.

use crate::device::Device;
use crate::driver::{cuda_error, CallContext};
use crate::error::{Result, RuntimeError};
use cudarc::driver::result::DriverError;
use cudarc::driver::sys;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What the driver loads: PTX text (JIT-compiled for the device) or a cubin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleImage {
    Ptx(String),
    Cubin(Vec<u8>),
}

const ELF_MAGIC: &[u8] = b"\x7fELF";

impl ModuleImage {
    /// Reads a `.ptx` or `.cubin` file (told apart by the ELF magic).
    pub fn from_file(path: &Path) -> Result<ModuleImage> {
        let bytes = std::fs::read(path).map_err(|source| RuntimeError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if bytes.starts_with(ELF_MAGIC) {
            return Ok(ModuleImage::Cubin(bytes));
        }
        String::from_utf8(bytes)
            .map(ModuleImage::Ptx)
            .map_err(|_| RuntimeError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "neither PTX text nor an ELF cubin",
                ),
            })
    }

    /// The bytes handed to the driver: PTX must end with a NUL.
    fn driver_bytes(&self) -> Vec<u8> {
        match self {
            ModuleImage::Ptx(text) => {
                let mut bytes = Vec::with_capacity(text.len() + 1);
                bytes.extend_from_slice(text.as_bytes());
                bytes.push(0);
                bytes
            }
            ModuleImage::Cubin(bytes) => bytes.clone(),
        }
    }

    /// FNV-1a over the kind and content: stable across processes and builds.
    pub fn content_hash(&self) -> u64 {
        let (tag, bytes): (u8, &[u8]) = match self {
            ModuleImage::Ptx(t) => (b'p', t.as_bytes()),
            ModuleImage::Cubin(b) => (b'c', b),
        };
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &byte in std::iter::once(&tag).chain(bytes) {
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        hash
    }
}

/// A loaded module; unloaded when the last user drops it.
pub struct Module {
    handle: sys::CUmodule,
    context: sys::CUcontext,
    /// Where it came from, for error messages.
    pub label: String,
}

// SAFETY: module handles may be used from any thread once loaded.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    pub fn raw(&self) -> sys::CUmodule {
        self.handle
    }

    /// Looks up a kernel entry point by name.
    pub fn function(&self, name: &str) -> Result<sys::CUfunction> {
        let c_name = CString::new(name).map_err(|_| RuntimeError::InvalidLaunch {
            kernel: name.to_string(),
            reason: "kernel name contains a NUL byte".to_string(),
        })?;
        // SAFETY: handle is a live module; c_name outlives the call.
        unsafe { cudarc::driver::result::module::get_function(self.handle, c_name) }
            .call("cuModuleGetFunction", || {
                format!("kernel `{name}` in {}", self.label)
            })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: the context is retained for the process; the module is ours.
        unsafe {
            let _ = sys::cuCtxSetCurrent(self.context);
            let _ = sys::cuModuleUnload(self.handle);
        }
    }
}

/// Loaded modules of one device, keyed by image hash (the device ordinal is
/// the other half of the key: each device has its own cache).
#[derive(Default)]
pub struct ModuleCache {
    modules: Mutex<HashMap<u64, Arc<Module>>>,
    loads: AtomicUsize,
}

impl ModuleCache {
    /// How many images were really loaded (not served from the cache).
    pub fn loads(&self) -> usize {
        self.loads.load(Ordering::Relaxed)
    }

    pub fn len(&self) -> usize {
        self.modules.lock().map(|m| m.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const JIT_LOG_BYTES: usize = 16 * 1024;

impl Device {
    /// Loads `image` into this device's primary context, or returns the
    /// module already loaded from the same image.
    pub fn load_module(&self, image: &ModuleImage, label: &str) -> Result<Arc<Module>> {
        let key = image.content_hash();
        let mut modules = self
            .modules
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(module) = modules.get(&key) {
            return Ok(module.clone());
        }
        self.bind()?;
        let handle = load_with_log(image, label)?;
        self.modules.loads.fetch_add(1, Ordering::Relaxed);
        let module = Arc::new(Module {
            handle,
            context: self.raw_context(),
            label: label.to_string(),
        });
        modules.insert(key, module.clone());
        Ok(module)
    }

    /// The module cache, for statistics.
    pub fn module_cache(&self) -> &ModuleCache {
        &self.modules
    }
}

/// `cuModuleLoadDataEx` with an error-log buffer, so a PTX the JIT rejects
/// comes back with the JIT's own message.
fn load_with_log(image: &ModuleImage, label: &str) -> Result<sys::CUmodule> {
    let bytes = image.driver_bytes();
    let mut log = vec![0u8; JIT_LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [
        log.as_mut_ptr() as *mut c_void,
        JIT_LOG_BYTES as *mut c_void,
    ];
    let mut module = std::ptr::null_mut();
    // SAFETY: bytes (NUL-terminated for PTX) and log outlive the call; the
    // option arrays have matching lengths.
    let status = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            bytes.as_ptr() as *const c_void,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status == sys::CUresult::CUDA_SUCCESS {
        return Ok(module);
    }
    let mut err = cuda_error(
        "cuModuleLoadDataEx",
        format!("loading {label}"),
        DriverError(status),
    );
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let jit_log = String::from_utf8_lossy(&log[..end]).trim().to_string();
    if let RuntimeError::Cuda { message, .. } = &mut err {
        if !jit_log.is_empty() {
            message.push_str("; JIT log: ");
            message.push_str(&jit_log);
        }
    }
    Err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_depends_on_content_and_kind() {
        let a = ModuleImage::Ptx("abc".into());
        let b = ModuleImage::Ptx("abd".into());
        let c = ModuleImage::Cubin(b"abc".to_vec());
        assert_eq!(
            a.content_hash(),
            ModuleImage::Ptx("abc".into()).content_hash()
        );
        assert_ne!(a.content_hash(), b.content_hash());
        assert_ne!(a.content_hash(), c.content_hash());
    }

    #[test]
    fn ptx_gets_a_nul_terminator() {
        assert_eq!(ModuleImage::Ptx("x".into()).driver_bytes(), b"x\0");
        assert_eq!(ModuleImage::Cubin(vec![1, 2]).driver_bytes(), vec![1, 2]);
    }

    #[test]
    fn files_are_told_apart_by_elf_magic() {
        let dir = tempfile::tempdir().unwrap();
        let ptx = dir.path().join("k.ptx");
        let cubin = dir.path().join("k.cubin");
        std::fs::write(&ptx, ".version 8.0\n").unwrap();
        std::fs::write(&cubin, b"\x7fELF\x02\x01\xff").unwrap();
        assert!(matches!(
            ModuleImage::from_file(&ptx).unwrap(),
            ModuleImage::Ptx(_)
        ));
        assert!(matches!(
            ModuleImage::from_file(&cubin).unwrap(),
            ModuleImage::Cubin(_)
        ));
        let err = ModuleImage::from_file(&dir.path().join("none.ptx")).unwrap_err();
        assert!(err.to_string().contains("none.ptx"), "{err}");
    }
}
