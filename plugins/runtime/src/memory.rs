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
/// allocator, its copies between host and device), and stream-ordered
/// scratch (`alloc_async`, from the runtime's own pool, for padded copies):
/// plain addresses, no ownership. The device's context is made current first.
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

    /// Zeroes `span.rows` rows of `span.width` bytes, `span.pitch` apart,
    /// from `ptr` in `stream`'s order (one row: a plain memset).
    ///
    /// # Safety
    /// The rows lie in a device allocation of `device`, and `stream` is a
    /// live stream of `device` or null.
    pub unsafe fn zero_rows_async(
        device: &Arc<Device>,
        ptr: u64,
        span: &crate::pad::ZeroSpan,
        stream: sys::CUstream,
    ) -> Result<()> {
        if span.rows <= 1 {
            return zero_async(device, ptr, span.width, stream);
        }
        device.bind()?;
        sys::cuMemsetD2D8Async(ptr, span.pitch, 0, span.width, span.rows, stream)
            .call("cuMemsetD2D8Async", || {
                format!("{} rows of {} bytes", span.rows, span.width)
            })
    }

    /// At least one byte in `stream`'s order from the runtime's own memory
    /// pool on `device` ([`scratch_pool`]: no device-wide sync, no mapping
    /// once warm); free it with [`free_async`] on the same stream.
    ///
    /// # Safety
    /// `stream` is a live stream of `device` or null, and the memory is
    /// used in that stream's order only.
    pub unsafe fn alloc_async(
        device: &Arc<Device>,
        bytes: usize,
        stream: sys::CUstream,
    ) -> Result<u64> {
        device.bind()?;
        let pool = scratch_pool(device)?;
        let mut ptr = 0u64;
        sys::cuMemAllocFromPoolAsync(&mut ptr, bytes.max(1), pool, stream)
            .call("cuMemAllocFromPoolAsync", || {
                format!("{bytes} bytes on device {}", device.ordinal())
            })?;
        Ok(ptr)
    }

    /// Bytes the scratch pool keeps mapped between syncs.
    const SCRATCH_KEEP: u64 = 512 << 20;

    /// A `CUmemoryPool` handle, shared by every thread of the process.
    struct Pool(sys::CUmemoryPool);
    // SAFETY: a pool handle may be used from any thread (the driver
    // serializes its own state).
    unsafe impl Send for Pool {}

    /// The runtime's stream-ordered pool on `device`, made on first use. Not
    /// the device's default pool, whose release threshold (0: freed memory
    /// goes back to the OS at every sync, so each call would map its scratch
    /// anew) other libraries in the process may rely on: this one keeps up
    /// to [`SCRATCH_KEEP`] bytes.
    fn scratch_pool(device: &Arc<Device>) -> Result<sys::CUmemoryPool> {
        static POOLS: std::sync::Mutex<Vec<(usize, Pool)>> = std::sync::Mutex::new(Vec::new());
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        let ordinal = device.ordinal();
        if let Some((_, pool)) = pools.iter().find(|(o, _)| *o == ordinal) {
            return Ok(pool.0);
        }
        let props = scratch_pool_props(ordinal as i32);
        // SAFETY: valid props; the threshold attribute takes a u64.
        let pool = unsafe {
            let pool = result::mem_pool::create(&props)
                .call("cuMemPoolCreate", || format!("device {ordinal}"))?;
            let mut keep = SCRATCH_KEEP;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep as *mut u64).cast(),
            )
            .call("cuMemPoolSetAttribute", String::new)?;
            pool
        };
        pools.push((ordinal, Pool(pool)));
        Ok(pool)
    }

    /// # Safety
    /// `ptr` came from [`alloc_async`] on `device` and `stream`, and is freed once.
    pub unsafe fn free_async(device: &Arc<Device>, ptr: u64, stream: sys::CUstream) -> Result<()> {
        device.bind()?;
        result::free_async(ptr, stream).call("cuMemFreeAsync", String::new)
    }

    /// Runs `copy` device to device in `stream`'s order.
    ///
    /// # Safety
    /// Both of its spans are device memory of `device` that hold `rows`
    /// rows at their pitch; `stream` is a live stream of `device` or null.
    pub unsafe fn copy_rows_async(
        device: &Arc<Device>,
        copy: &RowsCopy,
        stream: sys::CUstream,
    ) -> Result<()> {
        device.bind()?;
        sys::cuMemcpy2DAsync_v2(&copy.descriptor(), stream).call("cuMemcpy2DAsync", || {
            format!("{} rows of {} bytes", copy.rows, copy.row_bytes)
        })
    }

    /// A device-pinned pool on device `ordinal`, the rest zero (as the
    /// driver asks of reserved fields; every enum here has a zero value).
    pub(crate) fn scratch_pool_props(ordinal: i32) -> sys::CUmemPoolProps {
        // SAFETY: all-zero is a valid value of each field (integers,
        // pointers, and enums whose INVALID member is 0).
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ordinal;
        props
    }

    /// `rows` rows of `row_bytes` bytes from `src` (rows `src_pitch` bytes
    /// apart) to `dst` (rows `dst_pitch` apart), device to device.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct RowsCopy {
        pub dst: u64,
        pub dst_pitch: usize,
        pub src: u64,
        pub src_pitch: usize,
        pub row_bytes: usize,
        pub rows: usize,
    }

    impl RowsCopy {
        /// The `cuMemcpy2D` description. Every field spelled out: the
        /// memory-type enum has no zero value, so a zeroed struct is not a
        /// valid one.
        pub fn descriptor(&self) -> sys::CUDA_MEMCPY2D {
            let RowsCopy {
                dst,
                dst_pitch,
                src,
                src_pitch,
                row_bytes,
                rows,
            } = *self;
            sys::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                srcHost: std::ptr::null(),
                srcDevice: src,
                srcArray: std::ptr::null_mut(),
                srcPitch: src_pitch,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
                dstHost: std::ptr::null_mut(),
                dstDevice: dst,
                dstArray: std::ptr::null_mut(),
                dstPitch: dst_pitch,
                WidthInBytes: row_bytes,
                Height: rows,
            }
        }
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

#[cfg(test)]
mod tests {
    use super::raw::{scratch_pool_props, RowsCopy};
    use cudarc::driver::sys::{CUmemAllocationType, CUmemLocationType, CUmemorytype};

    /// The scratch pool's props are built without a GPU (a zeroed struct
    /// of an enum without a zero value would abort here).
    #[test]
    fn the_scratch_pool_is_device_pinned_memory_of_its_device() {
        let p = scratch_pool_props(3);
        assert_eq!(
            p.allocType,
            CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED
        );
        assert_eq!(
            p.location.type_,
            CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE
        );
        assert_eq!((p.location.id, p.maxSize), (3, 0));
        assert!(p.win32SecurityAttributes.is_null());
    }

    /// A 2-D copy's description is built without a GPU: device to device,
    /// the pitches and extent as given, no host or array side.
    #[test]
    fn a_rows_copy_is_device_to_device_with_its_pitches() {
        let c = RowsCopy {
            dst: 0x2000,
            dst_pitch: 4128,
            src: 0x1000,
            src_pitch: 4098,
            row_bytes: 4098,
            rows: 2049,
        }
        .descriptor();
        assert_eq!(
            (c.dstDevice, c.dstPitch, c.srcDevice, c.srcPitch),
            (0x2000, 4128, 0x1000, 4098)
        );
        assert_eq!((c.WidthInBytes, c.Height), (4098, 2049));
        assert_eq!(c.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!(c.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert!(c.srcHost.is_null() && c.dstHost.is_null());
        assert!(c.srcArray.is_null() && c.dstArray.is_null());
        assert_eq!((c.srcXInBytes, c.srcY, c.dstXInBytes, c.dstY), (0, 0, 0, 0));
    }
}
