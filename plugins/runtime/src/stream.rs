//! Streams: our own, or a raw `CUstream` handed over by a framework.

use crate::device::Device;
use crate::driver::CallContext;
use crate::error::Result;
use cudarc::driver::{result, sys};
use std::sync::Arc;

pub struct Stream {
    device: Arc<Device>,
    raw: sys::CUstream,
    /// Destroyed on drop only when we created it.
    owned: bool,
}

// SAFETY: CUstream handles may be used from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A new non-blocking stream on `device`.
    pub fn new(device: &Arc<Device>) -> Result<Stream> {
        device.bind()?;
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking)
            .call("cuStreamCreate", || format!("device {}", device.ordinal()))?;
        Ok(Stream {
            device: device.clone(),
            raw,
            owned: true,
        })
    }

    /// The legacy default stream (handle 0) of `device`.
    pub fn default_stream(device: &Arc<Device>) -> Stream {
        Stream {
            device: device.clone(),
            raw: std::ptr::null_mut(),
            owned: false,
        }
    }

    /// Wraps a framework's stream handle (`cudaStream_t` / `CUstream`, e.g.
    /// `at::cuda::getCurrentCUDAStream().stream()`), passed as a pointer.
    ///
    /// # Safety
    /// `raw` must be a valid stream of `device`'s primary context (or null
    /// for the default stream) and outlive the returned value; it is not
    /// destroyed on drop.
    pub unsafe fn from_raw(device: &Arc<Device>, raw: *mut std::ffi::c_void) -> Stream {
        Stream {
            device: device.clone(),
            raw: raw as sys::CUstream,
            owned: false,
        }
    }

    pub fn raw(&self) -> sys::CUstream {
        self.raw
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Whether work queued on the stream is being captured into a CUDA graph
    /// (then nothing may wait on it: no event sync, no autotuning).
    pub fn is_capturing(&self) -> Result<bool> {
        self.device.bind()?;
        // SAFETY: raw is a valid stream (or null) of the bound context.
        let status = unsafe { result::stream::is_capturing(self.raw) }
            .call("cuStreamIsCapturing", String::new)?;
        Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// Waits for everything queued on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: raw is a valid stream (or null) of the bound context.
        unsafe { result::stream::synchronize(self.raw) }.call("cuStreamSynchronize", String::new)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned && self.device.bind().is_ok() {
            // SAFETY: we created the stream and nobody else destroys it.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}
