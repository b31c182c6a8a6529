// Copied verbatim by triton-opgen: Rust declarations of the parts of
// onnxruntime's plugin execution-provider ABI (onnxruntime_ep_c_api.h, ORT
// 1.23+) that ort-sys 2.0.0-rc.15 leaves opaque. Written from the public
// header's documented layout; every struct is append-only upstream and
// carries `ort_version_supported`, so the prefixes below stay valid in later
// versions (1.30, 1.31).
#![allow(non_snake_case, non_camel_case_types, dead_code)]

use ort_sys::{
    OrtApiBase, OrtEpDevice, OrtGraph, OrtHardwareDevice, OrtHardwareDeviceType, OrtKernelContext,
    OrtKeyValuePairs, OrtLogger, OrtMemoryInfo, OrtMemoryInfoDeviceType, OrtNode, OrtRunOptions,
    OrtSessionOptions, OrtStatusPtr, OrtSyncStream, OrtValue,
};
use std::ffi::{c_char, c_void};

/// Opaque ORT classes the EP ABI adds.
#[repr(C)]
pub struct OrtMemoryDevice {
    _private: [u8; 0],
}
#[repr(C)]
pub struct OrtEpGraphSupportInfo {
    _private: [u8; 0],
}
#[repr(C)]
pub struct OrtNodeComputeContext {
    _private: [u8; 0],
}

type Status = OrtStatusPtr;

/// The first entries of `OrtEpApi` (1.22-1.24), in header order.
#[repr(C)]
pub struct OrtEpApi {
    pub CreateEpDevice: unsafe extern "system" fn(
        factory: *mut OrtEpFactory,
        hardware_device: *const OrtHardwareDevice,
        ep_metadata: *const OrtKeyValuePairs,
        ep_options: *const OrtKeyValuePairs,
        ep_device: *mut *mut OrtEpDevice,
    ) -> Status,
    pub ReleaseEpDevice: unsafe extern "system" fn(device: *mut OrtEpDevice),
    pub EpGraphSupportInfo_AddNodesToFuse: unsafe extern "system" fn(
        info: *mut OrtEpGraphSupportInfo,
        nodes: *const *const OrtNode,
        num_nodes: usize,
        options: *const OrtNodeFusionOptions,
    ) -> Status,
    pub EpGraphSupportInfo_AddSingleNode:
        unsafe extern "system" fn(info: *mut OrtEpGraphSupportInfo, node: *const OrtNode) -> Status,
    pub NodeComputeContext_NodeName:
        unsafe extern "system" fn(context: *const OrtNodeComputeContext) -> *const c_char,
    pub EpDevice_AddAllocatorInfo:
        unsafe extern "system" fn(ep_device: *mut OrtEpDevice, info: *const OrtMemoryInfo) -> Status,
    pub MemoryInfo_GetMemoryDevice:
        unsafe extern "system" fn(info: *const OrtMemoryInfo) -> *const OrtMemoryDevice,
    pub Value_GetMemoryDevice:
        unsafe extern "system" fn(value: *const OrtValue) -> *const OrtMemoryDevice,
    pub MemoryDevice_AreEqual:
        unsafe extern "system" fn(a: *const OrtMemoryDevice, b: *const OrtMemoryDevice) -> bool,
    pub MemoryDevice_GetDeviceType:
        unsafe extern "system" fn(device: *const OrtMemoryDevice) -> OrtMemoryInfoDeviceType,
    pub MemoryDevice_GetMemoryType: unsafe extern "system" fn(device: *const OrtMemoryDevice) -> i32,
    pub MemoryDevice_GetVendorId: unsafe extern "system" fn(device: *const OrtMemoryDevice) -> u32,
    pub MemoryDevice_GetDeviceId: unsafe extern "system" fn(device: *const OrtMemoryDevice) -> u32,
    pub SyncStream_GetImpl: unsafe extern "system" fn(stream: *const OrtSyncStream) -> *const c_void,
    pub SyncStream_GetSyncId: unsafe extern "system" fn(stream: *const OrtSyncStream) -> u64,
    pub GetSyncIdForLastWaitOnSyncStream:
        unsafe extern "system" fn(producer: *const OrtSyncStream, consumer: *const OrtSyncStream) -> u64,
    /// Since 1.24: a device of the factory's own making (virtual devices
    /// need the environment option `allow_virtual_devices`).
    pub CreateHardwareDevice: unsafe extern "system" fn(
        kind: OrtHardwareDeviceType,
        vendor_id: u32,
        device_id: u32,
        vendor_name: *const c_char,
        metadata: *const OrtKeyValuePairs,
        out: *mut *mut OrtHardwareDevice,
    ) -> Status,
    pub ReleaseHardwareDevice: unsafe extern "system" fn(device: *mut OrtHardwareDevice),
}

#[repr(C)]
pub struct OrtNodeFusionOptions {
    pub ort_version_supported: u32,
    pub drop_constant_initializers: bool,
}

#[repr(C)]
pub struct OrtNodeComputeInfo {
    pub ort_version_supported: u32,
    pub CreateState: unsafe extern "system" fn(
        this: *mut OrtNodeComputeInfo,
        context: *mut OrtNodeComputeContext,
        state: *mut *mut c_void,
    ) -> Status,
    pub Compute: unsafe extern "system" fn(
        this: *mut OrtNodeComputeInfo,
        state: *mut c_void,
        context: *mut OrtKernelContext,
    ) -> Status,
    pub ReleaseState: unsafe extern "system" fn(this: *mut OrtNodeComputeInfo, state: *mut c_void),
}

#[repr(C)]
pub struct OrtDataTransferImpl {
    pub ort_version_supported: u32,
    pub Release: unsafe extern "system" fn(this: *mut OrtDataTransferImpl),
    pub CanCopy: unsafe extern "system" fn(
        this: *const OrtDataTransferImpl,
        src: *const OrtMemoryDevice,
        dst: *const OrtMemoryDevice,
    ) -> bool,
    pub CopyTensors: unsafe extern "system" fn(
        this: *mut OrtDataTransferImpl,
        src: *const *const OrtValue,
        dst: *const *mut OrtValue,
        streams: *const *mut OrtSyncStream,
        count: usize,
    ) -> Status,
}

/// `OrtEp` up to the 1.23 entries (ort_version_supported = 23).
#[repr(C)]
pub struct OrtEp {
    pub ort_version_supported: u32,
    pub GetName: unsafe extern "system" fn(this: *const OrtEp) -> *const c_char,
    pub GetCapability: unsafe extern "system" fn(
        this: *mut OrtEp,
        graph: *const OrtGraph,
        info: *mut OrtEpGraphSupportInfo,
    ) -> Status,
    pub Compile: unsafe extern "system" fn(
        this: *mut OrtEp,
        graphs: *const *const OrtGraph,
        fused_nodes: *const *const OrtNode,
        count: usize,
        compute_infos: *mut *mut OrtNodeComputeInfo,
        ep_context_nodes: *mut *mut OrtNode,
    ) -> Status,
    pub ReleaseNodeComputeInfos:
        unsafe extern "system" fn(this: *mut OrtEp, infos: *mut *mut OrtNodeComputeInfo, count: usize),
    pub GetPreferredDataLayout: Option<unsafe extern "system" fn(this: *mut OrtEp, out: *mut i32) -> Status>,
    pub ShouldConvertDataLayoutForOp: Option<
        unsafe extern "system" fn(
            this: *mut OrtEp,
            domain: *const c_char,
            op_type: *const c_char,
            target: i32,
            out: *mut i32,
        ) -> Status,
    >,
    pub SetDynamicOptions: Option<
        unsafe extern "system" fn(
            this: *mut OrtEp,
            keys: *const *const c_char,
            values: *const *const c_char,
            count: usize,
        ) -> Status,
    >,
    pub OnRunStart: Option<unsafe extern "system" fn(this: *mut OrtEp, options: *const OrtRunOptions) -> Status>,
    pub OnRunEnd: Option<
        unsafe extern "system" fn(this: *mut OrtEp, options: *const OrtRunOptions, sync: bool) -> Status,
    >,
    pub CreateAllocator: Option<
        unsafe extern "system" fn(
            this: *mut OrtEp,
            info: *const OrtMemoryInfo,
            out: *mut *mut ort_sys::OrtAllocator,
        ) -> Status,
    >,
    pub CreateSyncStreamForDevice: Option<
        unsafe extern "system" fn(this: *mut OrtEp, device: *const OrtMemoryDevice, out: *mut *mut c_void) -> Status,
    >,
    pub GetCompiledModelCompatibilityInfo:
        Option<unsafe extern "system" fn(this: *mut OrtEp, graph: *const OrtGraph) -> *const c_char>,
}

/// `OrtEpFactory` up to the 1.23 entries (ort_version_supported = 23).
#[repr(C)]
pub struct OrtEpFactory {
    pub ort_version_supported: u32,
    pub GetName: unsafe extern "system" fn(this: *const OrtEpFactory) -> *const c_char,
    pub GetVendor: unsafe extern "system" fn(this: *const OrtEpFactory) -> *const c_char,
    pub GetSupportedDevices: unsafe extern "system" fn(
        this: *mut OrtEpFactory,
        devices: *const *const OrtHardwareDevice,
        num_devices: usize,
        ep_devices: *mut *mut OrtEpDevice,
        max_ep_devices: usize,
        num_ep_devices: *mut usize,
    ) -> Status,
    pub CreateEp: unsafe extern "system" fn(
        this: *mut OrtEpFactory,
        devices: *const *const OrtHardwareDevice,
        metadata: *const *const OrtKeyValuePairs,
        num_devices: usize,
        session_options: *const OrtSessionOptions,
        logger: *const OrtLogger,
        ep: *mut *mut OrtEp,
    ) -> Status,
    pub ReleaseEp: unsafe extern "system" fn(this: *mut OrtEpFactory, ep: *mut OrtEp),
    pub GetVendorId: unsafe extern "system" fn(this: *const OrtEpFactory) -> u32,
    pub GetVersion: unsafe extern "system" fn(this: *const OrtEpFactory) -> *const c_char,
    pub ValidateCompiledModelCompatibilityInfo: Option<
        unsafe extern "system" fn(
            this: *mut OrtEpFactory,
            devices: *const *const OrtHardwareDevice,
            num_devices: usize,
            info: *const c_char,
            out: *mut i32,
        ) -> Status,
    >,
    pub CreateAllocator: unsafe extern "system" fn(
        this: *mut OrtEpFactory,
        info: *const OrtMemoryInfo,
        options: *const OrtKeyValuePairs,
        out: *mut *mut ort_sys::OrtAllocator,
    ) -> Status,
    pub ReleaseAllocator: unsafe extern "system" fn(this: *mut OrtEpFactory, allocator: *mut ort_sys::OrtAllocator),
    pub CreateDataTransfer:
        unsafe extern "system" fn(this: *mut OrtEpFactory, out: *mut *mut OrtDataTransferImpl) -> Status,
    pub IsStreamAware: unsafe extern "system" fn(this: *const OrtEpFactory) -> bool,
    pub CreateSyncStreamForDevice: Option<
        unsafe extern "system" fn(
            this: *mut OrtEpFactory,
            device: *const OrtMemoryDevice,
            options: *const OrtKeyValuePairs,
            out: *mut *mut c_void,
        ) -> Status,
    >,
}

/// The library's `CreateEpFactories` signature.
pub type CreateEpFactoriesFn = unsafe extern "C" fn(
    registered_name: *const c_char,
    api_base: *const OrtApiBase,
    logger: *const OrtLogger,
    factories: *mut *mut OrtEpFactory,
    max_factories: usize,
    num_factories: *mut usize,
) -> Status;
