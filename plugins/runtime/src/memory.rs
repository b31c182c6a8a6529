//! Device memory for launchers that own their buffers (the GPU check, tests);
//! plugins pass framework pointers as [`KernelArg::Ptr`] instead.

use crate::args::KernelArg;
use crate::device::Device;
use crate::driver::CallContext;
use crate::error::{Result, RuntimeError};
use cudarc::driver::{result, sys};
use std::sync::Arc;

/// Plain numbers that may be copied bytewise to and from the device.
pub trait DeviceCopy: Copy + 'static {}
impl DeviceCopy for u8 {}
impl DeviceCopy for i8 {}
impl DeviceCopy for u16 {}
impl DeviceCopy for i16 {}
impl DeviceCopy for u32 {}
impl DeviceCopy for i32 {}
impl DeviceCopy for u64 {}
impl DeviceCopy for i64 {}
impl DeviceCopy for f32 {}
impl DeviceCopy for f64 {}

/// A `cuMemAlloc` allocation, freed on drop.
pub struct DeviceBuffer {
    device: Arc<Device>,
    ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer {
    pub fn alloc(device: &Arc<Device>, bytes: usize) -> Result<DeviceBuffer> {
        device.bind()?;
        // SAFETY: plain allocation in the bound context.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.call("cuMemAlloc", || {
            format!("{bytes} bytes on device {}", device.ordinal())
        })?;
        Ok(DeviceBuffer {
            device: device.clone(),
            ptr,
            bytes,
        })
    }

    pub fn from_slice<T: DeviceCopy>(device: &Arc<Device>, data: &[T]) -> Result<DeviceBuffer> {
        let buffer = DeviceBuffer::alloc(device, std::mem::size_of_val(data))?;
        buffer.copy_from_host(data)?;
        Ok(buffer)
    }

    /// Fills the buffer with one byte value.
    pub fn fill_bytes(&self, value: u8) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the range is our allocation.
        unsafe { result::memset_d8_sync(self.ptr, value, self.bytes) }
            .call("cuMemsetD8", || format!("{} bytes", self.bytes))
    }

    /// Copies `data` to the start of the buffer (it may be shorter).
    pub fn copy_from_host<T: DeviceCopy>(&self, data: &[T]) -> Result<()> {
        self.check_len(std::mem::size_of_val(data), "copy_from_host")?;
        self.device.bind()?;
        // SAFETY: the sizes match our allocation; T is plain data.
        unsafe { result::memcpy_htod_sync(self.ptr, data) }.call("cuMemcpyHtoD", || {
            format!("{} bytes", std::mem::size_of_val(data))
        })
    }

    /// Fills `out` from the start of the buffer (it may be shorter).
    pub fn copy_to_host<T: DeviceCopy>(&self, out: &mut [T]) -> Result<()> {
        self.check_len(std::mem::size_of_val(out), "copy_to_host")?;
        self.device.bind()?;
        // SAFETY: the sizes match our allocation; T is plain data.
        unsafe { result::memcpy_dtoh_sync(out, self.ptr) }.call("cuMemcpyDtoH", || {
            format!("{} bytes", std::mem::size_of_val(out))
        })
    }

    fn check_len(&self, bytes: usize, what: &str) -> Result<()> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(RuntimeError::InvalidLaunch {
            kernel: "<memory>".to_string(),
            reason: format!(
                "{what}: host slice of {bytes} bytes for a buffer of {}",
                self.bytes
            ),
        })
    }

    /// The device address.
    pub fn addr(&self) -> u64 {
        self.ptr
    }

    /// The address as a kernel argument.
    pub fn arg(&self) -> KernelArg {
        KernelArg::Ptr(self.ptr)
    }

    pub fn len_bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: our allocation, freed once.
            let _ = unsafe { result::free_sync(self.ptr) };
        }
    }
}

/// Device memory a framework owns and frees (an execution provider's
/// allocator, its copies between host and device): plain addresses, no
/// ownership. The device's context is made current first.
pub mod raw {
    use super::*;

    /// `cuMemAlloc` of at least one byte; free it with [`free`].
    pub fn alloc(device: &Arc<Device>, bytes: usize) -> Result<u64> {
        device.bind()?;
        // SAFETY: plain allocation in the bound context.
        unsafe { result::malloc_sync(bytes.max(1)) }.call("cuMemAlloc", || {
            format!("{bytes} bytes on device {}", device.ordinal())
        })
    }

    /// # Safety
    /// `ptr` came from [`alloc`] on `device` and is freed once.
    pub unsafe fn free(device: &Arc<Device>, ptr: u64) -> Result<()> {
        device.bind()?;
        result::free_sync(ptr).call("cuMemFree", String::new)
    }

    /// # Safety
    /// `dst` is a device allocation of at least `src.len()` bytes.
    pub unsafe fn copy_to_device(device: &Arc<Device>, dst: u64, src: &[u8]) -> Result<()> {
        device.bind()?;
        result::memcpy_htod_sync(dst, src).call("cuMemcpyHtoD", || format!("{} bytes", src.len()))
    }

    /// # Safety
    /// `src` is a device allocation of at least `dst.len()` bytes.
    pub unsafe fn copy_to_host(device: &Arc<Device>, dst: &mut [u8], src: u64) -> Result<()> {
        device.bind()?;
        result::memcpy_dtoh_sync(dst, src).call("cuMemcpyDtoH", || format!("{} bytes", dst.len()))
    }

    /// Zeroes `bytes` at `ptr` in `stream`'s order (a null stream: the
    /// legacy default one).
    ///
    /// # Safety
    /// `ptr` is a device allocation of at least `bytes` bytes, and `stream`
    /// a live stream of `device` or null.
    pub unsafe fn zero_async(
        device: &Arc<Device>,
        ptr: u64,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<()> {
        device.bind()?;
        result::memset_d8_async(ptr, 0, bytes, stream)
            .call("cuMemsetD8Async", || format!("{bytes} bytes"))
    }

    /// # Safety
    /// Both are device allocations of at least `bytes` bytes.
    pub unsafe fn copy_on_device(
        device: &Arc<Device>,
        dst: u64,
        src: u64,
        bytes: usize,
    ) -> Result<()> {
        device.bind()?;
        result::memcpy_dtod_sync(dst, src, bytes).call("cuMemcpyDtoD", || format!("{bytes} bytes"))
    }
}
