// Copied verbatim by triton-opgen: the op as a plugin execution provider
// (`onnxruntime.register_execution_provider_library(name, path)`, ORT 1.23+).
// The factory offers the NVIDIA GPU, a device allocator (cuMemAlloc) and a
// data transfer (cuMemcpy); the EP claims this library's nodes and runs them
// on device memory, so consecutive nodes pass tensors without host copies.
// The op's schema (type and shape inference) still comes from
// `register_custom_ops_library` on the same file.
use crate::ep_abi::{self, *};
use crate::{api, compute_node, error, gpu, guarded, ok, op_spec, stats, Memory, API};
use opgen_runtime::memory::raw;
use ort_sys::*;
use std::ffi::{c_char, c_void, CStr, CString};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const NVIDIA: u32 = 0x10de;
const EP_ABI_VERSION: u32 = 23;
/// Set to 1 on a machine without a GPU to offer the EP on the CPU device
/// anyway (tests of registration, capability and compilation in CI).
const WITHOUT_GPU_ENV: &str = "OPGEN_ORT_EP_WITHOUT_GPU";

static EP_API: AtomicPtr<ep_abi::OrtEpApi> = AtomicPtr::new(std::ptr::null_mut());

fn ep_api() -> &'static ep_abi::OrtEpApi {
    // SAFETY: set in CreateEpFactories before ORT calls into the factory.
    unsafe { &*EP_API.load(Ordering::Acquire) }
}

/// Runs one of the EP's callbacks (`what`), turning a panic into an ORT status.
fn guarded_ep(what: &str, f: impl FnOnce() -> Result<(), OrtStatusPtr>) -> OrtStatusPtr {
    // format_args: nothing is allocated unless there was a panic.
    guarded(format_args!("the EP's {what}"), f)
}

#[repr(C)]
struct Factory {
    base: OrtEpFactory,
    name: CString,
    /// The GPU memory the allocator hands out (created with the first device).
    memory_info: AtomicPtr<OrtMemoryInfo>,
}

#[repr(C)]
struct Ep {
    base: OrtEp,
    factory: *const Factory,
}

/// ORT asks its plugin allocators for every tensor of every run (no arena),
/// and cuMemAlloc/cuMemFree cost tens of microseconds and synchronize; so
/// freed blocks are kept by size and handed out again.
#[repr(C)]
struct Allocator {
    base: OrtAllocator,
    info: *const OrtMemoryInfo,
    /// Size of every block ORT holds now.
    live: Mutex<HashMap<u64, usize>>,
    /// Freed blocks by size, for reuse.
    spare: Mutex<HashMap<usize, Vec<u64>>>,
}

impl Drop for Allocator {
    fn drop(&mut self) {
        let spare = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        if let Ok(device) = gpu::device(0) {
            for ptr in spare.into_values().flatten() {
                // SAFETY: our blocks, no longer handed out.
                let _ = unsafe { raw::free(&device, ptr) };
            }
        }
    }
}

#[repr(C)]
struct Transfer {
    base: OrtDataTransferImpl,
}

#[repr(C)]
struct ComputeInfo {
    base: OrtNodeComputeInfo,
    /// The node's attributes, read when the graph is compiled.
    attrs: Vec<crate::attrs::AttrValue>,
}

#[no_mangle]
pub unsafe extern "C" fn CreateEpFactories(
    registered_name: *const c_char,
    api_base: *const OrtApiBase,
    _logger: *const OrtLogger,
    factories: *mut *mut OrtEpFactory,
    max_factories: usize,
    num_factories: *mut usize,
) -> OrtStatusPtr {
    if api_base.is_null() || factories.is_null() || num_factories.is_null() {
        return OrtStatusPtr(std::ptr::null_mut());
    }
    let table = ((*api_base).GetApi)(ORT_API_VERSION);
    if table.is_null() {
        *num_factories = 0;
        return OrtStatusPtr(std::ptr::null_mut());
    }
    API.store(table as *mut OrtApi, Ordering::Release);
    let ep = (api().GetEpApi)();
    if ep.is_null() || max_factories == 0 {
        *num_factories = 0;
        return error(
            OrtErrorCode::ORT_FAIL,
            &format!("{}: this onnxruntime has no plugin EP API", op_spec::QUALIFIED),
        );
    }
    EP_API.store(ep as *mut ep_abi::OrtEpApi, Ordering::Release);
    let name = if registered_name.is_null() {
        CString::new(format!("opgen_{}", op_spec::QUALIFIED.replace("::", "_"))).unwrap_or_default()
    } else {
        CStr::from_ptr(registered_name).to_owned()
    };
    let factory = Box::new(Factory {
        base: OrtEpFactory {
            ort_version_supported: EP_ABI_VERSION,
            GetName: factory_name,
            GetVendor: factory_vendor,
            GetSupportedDevices: supported_devices,
            CreateEp: create_ep,
            ReleaseEp: release_ep,
            GetVendorId: factory_vendor_id,
            GetVersion: factory_version,
            ValidateCompiledModelCompatibilityInfo: None,
            CreateAllocator: create_allocator,
            ReleaseAllocator: release_allocator,
            CreateDataTransfer: create_data_transfer,
            IsStreamAware: not_stream_aware,
            CreateSyncStreamForDevice: None,
        },
        name,
        memory_info: AtomicPtr::new(std::ptr::null_mut()),
    });
    *factories = Box::into_raw(factory).cast();
    *num_factories = 1;
    OrtStatusPtr(std::ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn ReleaseEpFactory(factory: *mut OrtEpFactory) -> OrtStatusPtr {
    if !factory.is_null() {
        let factory = Box::from_raw(factory.cast::<Factory>());
        let info = factory.memory_info.load(Ordering::Acquire);
        if !info.is_null() {
            (api().ReleaseMemoryInfo)(info);
        }
    }
    OrtStatusPtr(std::ptr::null_mut())
}

unsafe extern "system" fn factory_name(this: *const OrtEpFactory) -> *const c_char {
    (*this.cast::<Factory>()).name.as_ptr()
}

unsafe extern "system" fn factory_vendor(_this: *const OrtEpFactory) -> *const c_char {
    c"triton-opgen".as_ptr()
}

unsafe extern "system" fn factory_vendor_id(_this: *const OrtEpFactory) -> u32 {
    0
}

unsafe extern "system" fn factory_version(_this: *const OrtEpFactory) -> *const c_char {
    c"0.1.0".as_ptr()
}

unsafe extern "system" fn not_stream_aware(_this: *const OrtEpFactory) -> bool {
    false
}

/// Offers the NVIDIA GPU among onnxruntime's discovered devices (Linux:
/// /sys/class/drm/card*); if discovery found none, a device of our own
/// (OrtEpApi::CreateHardwareDevice, 1.24+).
unsafe extern "system" fn supported_devices(
    this: *mut OrtEpFactory,
    devices: *const *const OrtHardwareDevice,
    num_devices: usize,
    ep_devices: *mut *mut OrtEpDevice,
    max_ep_devices: usize,
    num_ep_devices: *mut usize,
) -> OrtStatusPtr {
    guarded_ep("device selection", || {
        *num_ep_devices = 0;
        let without_gpu = std::env::var(WITHOUT_GPU_ENV).is_ok_and(|v| v == "1");
        if max_ep_devices == 0 || (gpu::device(0).is_err() && !without_gpu) {
            return Ok(()); // no CUDA device: the EP offers nothing
        }
        let api = api();
        let list: &[*const OrtHardwareDevice] = if devices.is_null() {
            &[]
        } else {
            std::slice::from_raw_parts(devices, num_devices)
        };
        let is = |d: *const OrtHardwareDevice, kind: OrtHardwareDeviceType| {
            (api.HardwareDevice_Type)(d) == kind
        };
        let gpu_found = list.iter().copied().find(|&d| {
            is(d, OrtHardwareDeviceType::OrtHardwareDeviceType_GPU)
                && (api.HardwareDevice_VendorId)(d) == NVIDIA
        });
        let cpu = list
            .iter()
            .copied()
            .find(|&d| is(d, OrtHardwareDeviceType::OrtHardwareDeviceType_CPU));
        // How the device was found, for `OrtEpDevice.ep_metadata["opgen.hardware"]`.
        let (hardware, how) = match (gpu_found, without_gpu) {
            (Some(d), _) => (d, "discovered NVIDIA GPU".to_string()),
            (None, true) => (cpu.unwrap_or(std::ptr::null()), format!("CPU device ({WITHOUT_GPU_ENV}=1)")),
            (None, false) => {
                let mut made: *mut OrtHardwareDevice = std::ptr::null_mut();
                let status = (ep_api().CreateHardwareDevice)(
                    OrtHardwareDeviceType::OrtHardwareDeviceType_GPU,
                    NVIDIA,
                    0,
                    c"NVIDIA".as_ptr(),
                    std::ptr::null(),
                    &mut made,
                );
                if status.0.is_null() && !made.is_null() {
                    (made as *const _, "GPU device made by the EP".to_string()) // kept for the process
                } else {
                    let why = if status.0.is_null() {
                        "no device returned".to_string()
                    } else {
                        let text = CStr::from_ptr((api.GetErrorMessage)(status.0)).to_string_lossy().into_owned();
                        (api.ReleaseStatus)(status.0);
                        text
                    };
                    // ORT places nodes by the EP, memory by the allocator's
                    // OrtMemoryInfo (GPU): the CPU entry only names the EP.
                    (
                        cpu.unwrap_or(std::ptr::null()),
                        format!("CPU device entry; no NVIDIA GPU discovered and CreateHardwareDevice refused: {why}"),
                    )
                }
            }
        };
        if hardware.is_null() {
            return Ok(());
        }
        let mut metadata: *mut OrtKeyValuePairs = std::ptr::null_mut();
        (api.CreateKeyValuePairs)(&mut metadata);
        let how = CString::new(how.replace('\0', " ")).unwrap_or_default();
        (api.AddKeyValuePair)(metadata, c"opgen.hardware".as_ptr(), how.as_ptr());
        let mut ep_device: *mut OrtEpDevice = std::ptr::null_mut();
        let created = ok((ep_api().CreateEpDevice)(this, hardware, metadata, std::ptr::null(), &mut ep_device));
        (api.ReleaseKeyValuePairs)(metadata);
        created?;
        let factory = &*this.cast::<Factory>();
        let mut info = factory.memory_info.load(Ordering::Acquire);
        if info.is_null() {
            ok((api.CreateMemoryInfo_V2)(
                c"OpgenCuda".as_ptr(),
                OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_GPU,
                NVIDIA,
                0,
                OrtDeviceMemoryType::OrtDeviceMemoryType_DEFAULT,
                0,
                OrtAllocatorType::OrtDeviceAllocator,
                &mut info,
            ))?;
            factory.memory_info.store(info, Ordering::Release);
        }
        ok((ep_api().EpDevice_AddAllocatorInfo)(ep_device, info))?;
        *ep_devices = ep_device;
        *num_ep_devices = 1;
        Ok(())
    })
}

unsafe extern "system" fn create_ep(
    this: *mut OrtEpFactory,
    _devices: *const *const OrtHardwareDevice,
    _metadata: *const *const OrtKeyValuePairs,
    _num_devices: usize,
    _session_options: *const OrtSessionOptions,
    _logger: *const OrtLogger,
    ep: *mut *mut OrtEp,
) -> OrtStatusPtr {
    let instance = Box::new(Ep {
        base: OrtEp {
            ort_version_supported: EP_ABI_VERSION,
            GetName: ep_name,
            GetCapability: get_capability,
            Compile: compile,
            ReleaseNodeComputeInfos: release_compute_infos,
            GetPreferredDataLayout: None,
            ShouldConvertDataLayoutForOp: None,
            SetDynamicOptions: None,
            OnRunStart: None,
            OnRunEnd: None,
            CreateAllocator: None,
            CreateSyncStreamForDevice: None,
            GetCompiledModelCompatibilityInfo: None,
        },
        factory: this.cast::<Factory>(),
    });
    *ep = Box::into_raw(instance).cast();
    OrtStatusPtr(std::ptr::null_mut())
}

unsafe extern "system" fn release_ep(_this: *mut OrtEpFactory, ep: *mut OrtEp) {
    if !ep.is_null() {
        drop(Box::from_raw(ep.cast::<Ep>()));
    }
}

unsafe extern "system" fn ep_name(this: *const OrtEp) -> *const c_char {
    (*(*this.cast::<Ep>()).factory).name.as_ptr()
}

/// Claims every node of this library's op, one fused node each.
unsafe extern "system" fn get_capability(
    _this: *mut OrtEp,
    graph: *const OrtGraph,
    info: *mut OrtEpGraphSupportInfo,
) -> OrtStatusPtr {
    guarded_ep("GetCapability", || {
        let api = api();
        let mut count = 0usize;
        ok((api.Graph_GetNumNodes)(graph, &mut count))?;
        let mut nodes: Vec<*const OrtNode> = vec![std::ptr::null(); count];
        ok((api.Graph_GetNodes)(graph, nodes.as_mut_ptr(), count))?;
        let domain = op_spec::DOMAIN.trim_end_matches('\0');
        let name = op_spec::OP_NAME.trim_end_matches('\0');
        for node in nodes {
            let mut node_domain: *const c_char = std::ptr::null();
            let mut node_op: *const c_char = std::ptr::null();
            ok((api.Node_GetDomain)(node, &mut node_domain))?;
            ok((api.Node_GetOperatorType)(node, &mut node_op))?;
            let text = |p: *const c_char| if p.is_null() { "".into() } else { CStr::from_ptr(p).to_string_lossy() };
            if text(node_domain) == domain && text(node_op) == name {
                ok((ep_api().EpGraphSupportInfo_AddNodesToFuse)(info, &node, 1, std::ptr::null()))?;
            }
        }
        Ok(())
    })
}

unsafe extern "system" fn compile(
    _this: *mut OrtEp,
    graphs: *const *const OrtGraph,
    _fused_nodes: *const *const OrtNode,
    count: usize,
    compute_infos: *mut *mut OrtNodeComputeInfo,
    _ep_context_nodes: *mut *mut OrtNode,
) -> OrtStatusPtr {
    guarded_ep("Compile", || {
        for i in 0..count {
            let attrs = node_attrs(*graphs.add(i))?;
            let info = Box::new(ComputeInfo {
                base: OrtNodeComputeInfo {
                    ort_version_supported: EP_ABI_VERSION,
                    CreateState: create_state,
                    Compute: compute_fused,
                    ReleaseState: release_state,
                },
                attrs,
            });
            *compute_infos.add(i) = Box::into_raw(info).cast();
        }
        Ok(())
    })
}

/// The attributes of the one node of a fused graph (fused nodes carry none).
unsafe fn node_attrs(graph: *const OrtGraph) -> Result<Vec<crate::attrs::AttrValue>, OrtStatusPtr> {
    let api = api();
    let mut count = 0usize;
    ok((api.Graph_GetNumNodes)(graph, &mut count))?;
    let mut nodes: Vec<*const OrtNode> = vec![std::ptr::null(); count];
    ok((api.Graph_GetNodes)(graph, nodes.as_mut_ptr(), count))?;
    match nodes.first() {
        Some(&node) => crate::attrs::from_node(node).map_err(|why| error(OrtErrorCode::ORT_INVALID_ARGUMENT, &why)),
        None => Ok(Vec::new()),
    }
}

unsafe extern "system" fn release_compute_infos(
    _this: *mut OrtEp,
    infos: *mut *mut OrtNodeComputeInfo,
    count: usize,
) {
    for i in 0..count {
        let info = *infos.add(i);
        if !info.is_null() {
            drop(Box::from_raw(info.cast::<ComputeInfo>()));
        }
    }
}

unsafe extern "system" fn create_state(
    _this: *mut OrtNodeComputeInfo,
    _context: *mut OrtNodeComputeContext,
    state: *mut *mut c_void,
) -> OrtStatusPtr {
    // Stateless: device memory comes from ORT's allocator (ours).
    *state = Box::into_raw(Box::new(0u8)).cast();
    OrtStatusPtr(std::ptr::null_mut())
}

unsafe extern "system" fn release_state(_this: *mut OrtNodeComputeInfo, state: *mut c_void) {
    if !state.is_null() {
        drop(Box::from_raw(state.cast::<u8>()));
    }
}

unsafe extern "system" fn compute_fused(
    this: *mut OrtNodeComputeInfo,
    _state: *mut c_void,
    context: *mut OrtKernelContext,
) -> OrtStatusPtr {
    let info = &*(this as *const ComputeInfo);
    guarded_ep("Compute", || compute_node(Memory::Device, &info.attrs, context))
}

unsafe extern "system" fn create_allocator(
    this: *mut OrtEpFactory,
    _info: *const OrtMemoryInfo,
    _options: *const OrtKeyValuePairs,
    out: *mut *mut OrtAllocator,
) -> OrtStatusPtr {
    let factory = &*this.cast::<Factory>();
    let mut base = OrtAllocator::default();
    base.version = ORT_API_VERSION;
    base.Alloc = Some(alloc);
    base.Free = Some(free);
    base.Info = Some(allocator_info);
    let allocator = Box::new(Allocator {
        base,
        info: factory.memory_info.load(Ordering::Acquire),
        live: Mutex::new(HashMap::new()),
        spare: Mutex::new(HashMap::new()),
    });
    *out = Box::into_raw(allocator).cast();
    OrtStatusPtr(std::ptr::null_mut())
}

unsafe extern "system" fn release_allocator(_this: *mut OrtEpFactory, allocator: *mut OrtAllocator) {
    if !allocator.is_null() {
        drop(Box::from_raw(allocator.cast::<Allocator>()));
    }
}

unsafe extern "system" fn alloc(this: *mut OrtAllocator, size: usize) -> *mut c_void {
    let allocator = &*this.cast::<Allocator>();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let reused = lock(&allocator.spare).get_mut(&size).and_then(|v| v.pop());
        let ptr = match reused {
            Some(ptr) => ptr,
            None => {
                let device = gpu::device(0).ok()?;
                let ptr = raw::alloc(&device, size).ok()?;
                stats::add(stats::DEVICE_ALLOCS, 1);
                ptr
            }
        };
        lock(&allocator.live).insert(ptr, size);
        Some(ptr)
    }));
    match result {
        Ok(Some(ptr)) => ptr as *mut c_void,
        _ => std::ptr::null_mut(), // ORT reports the failed allocation
    }
}

unsafe extern "system" fn free(this: *mut OrtAllocator, p: *mut c_void) {
    if p.is_null() {
        return;
    }
    let allocator = &*this.cast::<Allocator>();
    let _ = catch_unwind(AssertUnwindSafe(|| {
        if let Some(size) = lock(&allocator.live).remove(&(p as u64)) {
            lock(&allocator.spare).entry(size).or_default().push(p as u64);
        }
    }));
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe extern "system" fn allocator_info(this: *const OrtAllocator) -> *const OrtMemoryInfo {
    (*this.cast::<Allocator>()).info
}

unsafe extern "system" fn create_data_transfer(
    _this: *mut OrtEpFactory,
    out: *mut *mut OrtDataTransferImpl,
) -> OrtStatusPtr {
    let transfer = Box::new(Transfer {
        base: OrtDataTransferImpl {
            ort_version_supported: EP_ABI_VERSION,
            Release: release_transfer,
            CanCopy: can_copy,
            CopyTensors: copy_tensors,
        },
    });
    *out = Box::into_raw(transfer).cast();
    OrtStatusPtr(std::ptr::null_mut())
}

unsafe extern "system" fn release_transfer(this: *mut OrtDataTransferImpl) {
    if !this.is_null() {
        drop(Box::from_raw(this.cast::<Transfer>()));
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Host,
    Gpu,
    Other,
}

unsafe fn side(device: *const OrtMemoryDevice) -> Side {
    if device.is_null() {
        return Side::Other;
    }
    let e = ep_api();
    match (e.MemoryDevice_GetDeviceType)(device) {
        OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU => Side::Host,
        OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_GPU
            if (e.MemoryDevice_GetVendorId)(device) == NVIDIA =>
        {
            Side::Gpu
        }
        _ => Side::Other,
    }
}

unsafe extern "system" fn can_copy(
    _this: *const OrtDataTransferImpl,
    src: *const OrtMemoryDevice,
    dst: *const OrtMemoryDevice,
) -> bool {
    matches!(
        (side(src), side(dst)),
        (Side::Host, Side::Gpu) | (Side::Gpu, Side::Host) | (Side::Gpu, Side::Gpu)
    )
}

unsafe extern "system" fn copy_tensors(
    _this: *mut OrtDataTransferImpl,
    src: *const *const OrtValue,
    dst: *const *mut OrtValue,
    _streams: *const *mut OrtSyncStream,
    count: usize,
) -> OrtStatusPtr {
    guarded_ep("data transfer", || {
        let api = api();
        let device = gpu::device(0).map_err(crate::failure)?;
        for i in 0..count {
            let (from, to) = (*src.add(i), *dst.add(i));
            let mut bytes = 0usize;
            ok((api.GetTensorSizeInBytes)(from, &mut bytes))?;
            let mut from_data: *mut c_void = std::ptr::null_mut();
            let mut to_data: *mut c_void = std::ptr::null_mut();
            ok((api.GetTensorMutableData)(from as *mut OrtValue, &mut from_data))?;
            ok((api.GetTensorMutableData)(to, &mut to_data))?;
            let e = ep_api();
            let sides = (side((e.Value_GetMemoryDevice)(from)), side((e.Value_GetMemoryDevice)(to)));
            let start = Instant::now();
            let copied = match sides {
                (Side::Host, Side::Gpu) => {
                    let host = std::slice::from_raw_parts(from_data.cast::<u8>(), bytes);
                    let r = raw::copy_to_device(&device, to_data as u64, host);
                    stats::add(stats::H2D_COPIES, 1);
                    stats::add(stats::H2D_BYTES, bytes as u64);
                    stats::add(stats::H2D_NS, start.elapsed().as_nanos() as u64);
                    r
                }
                (Side::Gpu, Side::Host) => {
                    let host = std::slice::from_raw_parts_mut(to_data.cast::<u8>(), bytes);
                    let r = raw::copy_to_host(&device, host, from_data as u64);
                    stats::add(stats::D2H_COPIES, 1);
                    stats::add(stats::D2H_BYTES, bytes as u64);
                    stats::add(stats::D2H_NS, start.elapsed().as_nanos() as u64);
                    r
                }
                (Side::Gpu, Side::Gpu) => raw::copy_on_device(&device, to_data as u64, from_data as u64, bytes),
                _ => {
                    return Err(error(
                        OrtErrorCode::ORT_NOT_IMPLEMENTED,
                        &format!("{}: the EP copies only between host and its GPU", op_spec::QUALIFIED),
                    ))
                }
            };
            copied.map_err(|e| error(OrtErrorCode::ORT_EP_FAIL, &format!("{}: {e}", op_spec::QUALIFIED)))?;
        }
        Ok(())
    })
}
