//! A CUDA device and its primary context (the one frameworks such as PyTorch
//! use, so their streams and pointers are valid with ours).

use crate::driver::{self, CallContext};
use crate::error::{Result, RuntimeError};
use crate::module::ModuleCache;
use cudarc::driver::{result, sys};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a launcher needs to size grids and check limits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    pub name: String,
    /// (major, minor), e.g. (9, 0) for an H100.
    pub compute_capability: (i32, i32),
    /// `NUM_SM` of seed 002.
    pub sm_count: u32,
    pub warp_size: u32,
    pub max_threads_per_block: u32,
    pub max_threads_per_sm: u32,
    /// 32-bit registers per SM (`NUM_REGS` of seed 002).
    pub max_registers_per_sm: u32,
    /// Shared memory per SM, bytes.
    pub max_shared_per_sm: u32,
    /// Shared memory one block may use after opting in, bytes.
    pub max_shared_per_block_optin: u32,
    pub max_grid: (u32, u32, u32),
    /// L2 cache, bytes.
    pub l2_bytes: u32,
}

/// One device, with its primary context retained for the life of the process.
pub struct Device {
    ordinal: usize,
    handle: sys::CUdevice,
    context: sys::CUcontext,
    properties: DeviceProperties,
    pub(crate) modules: ModuleCache,
}

// SAFETY: CUdevice is an integer and CUcontext a handle the driver lets any
// thread make current.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

static DEVICES: Mutex<Option<HashMap<usize, Arc<Device>>>> = Mutex::new(None);

impl Device {
    /// Number of CUDA devices; an error value when there is no driver.
    pub fn count() -> Result<usize> {
        driver::init()?;
        let n = result::device::get_count().call("cuDeviceGetCount", String::new)?;
        Ok(n.max(0) as usize)
    }

    /// The device with this ordinal (opened once, then shared).
    pub fn open(ordinal: usize) -> Result<Arc<Device>> {
        driver::init()?;
        let mut devices = DEVICES.lock().unwrap_or_else(|e| e.into_inner());
        let devices = devices.get_or_insert_with(HashMap::new);
        if let Some(device) = devices.get(&ordinal) {
            return Ok(device.clone());
        }
        let count = Device::count()?;
        if ordinal >= count {
            return Err(RuntimeError::NoDevice(if count == 0 {
                "the CUDA driver reports no device".to_string()
            } else {
                format!("device {ordinal} requested, the driver reports {count}")
            }));
        }
        let device = Arc::new(Device::open_uncached(ordinal)?);
        devices.insert(ordinal, device.clone());
        Ok(device)
    }

    fn open_uncached(ordinal: usize) -> Result<Device> {
        let here = || format!("device {ordinal}");
        let handle = result::device::get(ordinal as i32).call("cuDeviceGet", here)?;
        // SAFETY: handle is a valid device.
        let context = unsafe { result::primary_ctx::retain(handle) }
            .call("cuDevicePrimaryCtxRetain", here)?;
        let name = result::device::get_name(handle).call("cuDeviceGetName", here)?;
        let attr = |a: sys::CUdevice_attribute| -> Result<u32> {
            // SAFETY: handle is a valid device.
            let v = unsafe { result::device::get_attribute(handle, a) }
                .call("cuDeviceGetAttribute", || {
                    format!("{a:?} of device {ordinal}")
                })?;
            Ok(v.max(0) as u32)
        };
        use sys::CUdevice_attribute::*;
        let properties = DeviceProperties {
            name,
            compute_capability: (
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)? as i32,
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)? as i32,
            ),
            sm_count: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            warp_size: attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            max_threads_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_threads_per_sm: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            max_registers_per_sm: attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
            max_shared_per_sm: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            max_shared_per_block_optin: attr(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            max_grid: (
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ),
            l2_bytes: attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?,
        };
        Ok(Device {
            ordinal,
            handle,
            context,
            properties,
            modules: ModuleCache::default(),
        })
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub fn name(&self) -> &str {
        &self.properties.name
    }

    pub fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    /// The raw `CUdevice`.
    pub fn raw(&self) -> sys::CUdevice {
        self.handle
    }

    /// The primary context, as a raw `CUcontext`.
    pub fn raw_context(&self) -> sys::CUcontext {
        self.context
    }

    /// Makes this device's primary context current on the calling thread;
    /// every runtime call that touches the device does it first.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context stays retained for the life of the process.
        unsafe { result::ctx::set_current(self.context) }
            .call("cuCtxSetCurrent", || format!("device {}", self.ordinal))
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal)
            .field("name", &self.properties.name)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_means_no_device_error_not_panic() {
        if driver::is_available() {
            return;
        }
        for result in [Device::open(0).map(|_| ()), Device::count().map(|_| ())] {
            match result {
                Err(RuntimeError::NoDevice(msg)) => assert!(msg.contains("libcuda"), "{msg}"),
                other => panic!("expected NoDevice, got {other:?}"),
            }
        }
    }
}
