// Copied verbatim by triton-opgen: an ONNX Runtime custom-op library for the
// op described in op_spec.rs. onnxruntime loads it with
// `SessionOptions.register_custom_ops_library(path)` and calls
// `RegisterCustomOps`, which adds the op to its domain twice: for the CPU
// execution provider (host tensors, copied to the GPU and back; what the CPU
// package runs) and for the CUDA execution provider (device tensors, launched
// on ORT's stream; cuda_ep.rs). One file serves both packages.
#![allow(non_snake_case, clippy::missing_safety_doc)]

mod attrs;
mod call;
mod check;
mod cuda_ep;
mod domain;
mod ep;
mod ep_abi;
mod gpu;
mod op_spec;
mod pad;
mod spec_types;
mod stats;

use check::Seen;
use ort_sys::*;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The API table of the onnxruntime that loaded us.
pub(crate) static API: AtomicPtr<OrtApi> = AtomicPtr::new(std::ptr::null_mut());

pub(crate) fn api() -> &'static OrtApi {
    // SAFETY: set in RegisterCustomOps before ORT can call any op callback.
    unsafe { &*API.load(Ordering::Acquire) }
}

const ONNX_UNDEFINED: i32 = 0;

/// How one provider's kernel runs (every provider makes and drops a
/// [`NodeKernel`] the same way).
pub(crate) struct KernelCallbacks {
    pub ep: unsafe extern "system" fn(*const OrtCustomOp) -> *const c_char,
    pub compute: unsafe extern "system" fn(*mut c_void, *mut OrtKernelContext) -> OrtStatusPtr,
}

/// One node's kernel: its attributes, read when the session is created, and
/// (on the CPU provider) device buffers reused between its calls.
pub(crate) struct NodeKernel {
    pub state: gpu::KernelState,
    pub attrs: Vec<attrs::AttrValue>,
}

/// The op's description for one execution provider: everything but the
/// kernel callbacks (name, types, shape inference) is shared.
pub(crate) const fn custom_op(kernel: KernelCallbacks) -> OrtCustomOp {
    OrtCustomOp {
        version: ORT_API_VERSION,
        CreateKernel: Some(create_kernel),
        GetName: Some(get_name),
        GetExecutionProviderType: Some(kernel.ep),
        GetInputType: Some(input_type),
        GetInputTypeCount: Some(input_count),
        GetOutputType: Some(output_type),
        GetOutputTypeCount: Some(output_count),
        KernelCompute: Some(compute_v1),
        KernelDestroy: Some(destroy_kernel),
        GetInputCharacteristic: Some(required),
        GetOutputCharacteristic: Some(required),
        // The provider's default memory: host for CPU, the GPU for CUDA.
        GetInputMemoryType: Some(mem_type),
        GetVariadicInputMinArity: Some(one),
        GetVariadicInputHomogeneity: Some(zero),
        GetVariadicOutputMinArity: Some(one),
        GetVariadicOutputHomogeneity: Some(zero),
        CreateKernelV2: Some(create_kernel_v2),
        KernelComputeV2: Some(kernel.compute),
        InferOutputShapeFn: Some(infer_shapes),
        GetStartVersion: Some(start_version),
        GetEndVersion: Some(end_version),
        // No aliasing or in-place outputs.
        GetMayInplace: None,
        ReleaseMayInplace: None,
        GetAliasMap: None,
        ReleaseAliasMap: None,
    }
}

/// The op on ORT's CPU execution provider.
static OP: OrtCustomOp = custom_op(KernelCallbacks {
    ep: get_ep,
    compute: compute_v2,
});

#[no_mangle]
pub unsafe extern "C" fn RegisterCustomOps(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
) -> OrtStatusPtr {
    if api_base.is_null() {
        return OrtStatusPtr(std::ptr::null_mut());
    }
    let table = ((*api_base).GetApi)(ORT_API_VERSION);
    if table.is_null() {
        // No table to build a status with: ORT reports the failed registration.
        return OrtStatusPtr(std::ptr::null_mut());
    }
    API.store(table as *mut OrtApi, Ordering::Release);
    let added = REGISTERED
        .iter()
        .try_for_each(|op| domain::add_op(options, op_spec::DOMAIN, op));
    match added {
        Ok(()) => OrtStatusPtr(std::ptr::null_mut()),
        Err(status) => status,
    }
}

/// What RegisterCustomOps adds: the op once per execution provider.
static REGISTERED: [&OrtCustomOp; 2] = [&OP, &cuda_ep::OP];

/// The execution providers the op is registered for, space-separated (CPU
/// for NULL), as ORT reads them from the registered ops; for tools and tests.
/// Writes a NUL-terminated prefix into `buf`; returns the full length.
///
/// # Safety
/// `buf` is writable for `len` bytes (or null).
#[no_mangle]
pub unsafe extern "C" fn opgen_ort_providers(buf: *mut c_char, len: usize) -> usize {
    let names: Vec<String> = REGISTERED
        .iter()
        .map(|op| {
            let ep = op.GetExecutionProviderType.map_or(std::ptr::null(), |f| f(*op));
            if ep.is_null() {
                "CPUExecutionProvider".to_string()
            } else {
                std::ffi::CStr::from_ptr(ep).to_string_lossy().into_owned()
            }
        })
        .collect();
    stats::write_c_text(&names.join(" "), buf, len)
}

pub(crate) fn error(code: OrtErrorCode, message: &str) -> OrtStatusPtr {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: CreateStatus copies the message.
    unsafe { (api().CreateStatus)(code, text.as_ptr()) }
}

/// Turns an ORT status into a Result (releasing it).
pub(crate) unsafe fn ok(status: OrtStatusPtr) -> Result<(), OrtStatusPtr> {
    if status.0.is_null() {
        Ok(())
    } else {
        Err(status)
    }
}

unsafe fn describe(info: *const OrtTensorTypeAndShapeInfo) -> Result<Seen, OrtStatusPtr> {
    let api = api();
    let mut dtype = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    ok((api.GetTensorElementType)(info, &mut dtype))?;
    let mut rank = 0usize;
    ok((api.GetDimensionsCount)(info, &mut rank))?;
    let mut dims = vec![0i64; rank];
    ok((api.GetDimensions)(info, dims.as_mut_ptr(), rank))?;
    Ok(Seen {
        dtype: dtype as i32,
        dims,
        names: Vec::new(),
    })
}

/// `describe` plus the graph's names of the unknown dims (`S` for a
/// `dim_param` S; empty where the graph has none): what shape inference
/// passes on to the outputs.
unsafe fn describe_symbolic(info: *const OrtTensorTypeAndShapeInfo) -> Result<Seen, OrtStatusPtr> {
    let mut seen = describe(info)?;
    let mut ptrs: Vec<*const c_char> = vec![std::ptr::null(); seen.dims.len()];
    ok((api().GetSymbolicDimensions)(info, ptrs.as_mut_ptr(), ptrs.len()))?;
    seen.names = ptrs
        .iter()
        .map(|&p| {
            if p.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        })
        .collect();
    Ok(seen)
}

unsafe extern "system" fn infer_shapes(
    _op: *const OrtCustomOp,
    ctx: *mut OrtShapeInferContext,
) -> OrtStatusPtr {
    match infer(ctx) {
        Ok(()) => OrtStatusPtr(std::ptr::null_mut()),
        Err(status) => status,
    }
}

unsafe fn infer(ctx: *mut OrtShapeInferContext) -> Result<(), OrtStatusPtr> {
    let api = api();
    let mut count = 0usize;
    ok((api.ShapeInferContext_GetInputCount)(ctx, &mut count))?;
    let mut seen = Vec::with_capacity(count);
    for i in 0..count {
        let mut info: *mut OrtTensorTypeAndShapeInfo = std::ptr::null_mut();
        // The context owns `info` (releasing it here frees it twice).
        ok((api.ShapeInferContext_GetInputTypeShape)(ctx, i, &mut info))?;
        seen.push(describe_symbolic(info)?);
    }
    let derived = check::check(&seen).map_err(|m| error(OrtErrorCode::ORT_INVALID_ARGUMENT, &m))?;
    for (index, (dtype, dims, names)) in derived.outputs.iter().enumerate() {
        let mut info: *mut OrtTensorTypeAndShapeInfo = std::ptr::null_mut();
        ok((api.CreateTensorTypeAndShapeInfo)(&mut info))?;
        let result = set_output(ctx, index, info, *dtype, dims, names);
        (api.ReleaseTensorTypeAndShapeInfo)(info);
        result?;
    }
    Ok(())
}

unsafe fn set_output(
    ctx: *mut OrtShapeInferContext,
    index: usize,
    info: *mut OrtTensorTypeAndShapeInfo,
    dtype: i32,
    dims: &[i64],
    names: &[String],
) -> Result<(), OrtStatusPtr> {
    let api = api();
    ok((api.SetTensorElementType)(info, element_type(dtype)))?;
    ok((api.SetDimensions)(info, dims.as_ptr(), dims.len()))?;
    // Unknown dims keep the graph's name of the input dim they equal (the
    // `S` of x[S, D]), so the output shows `S`, not `?`. Never the spec's own
    // symbol: ORT takes equal names for equal sizes across the whole graph.
    let owned: Vec<CString> = names
        .iter()
        .map(|n| CString::new(n.as_str()).unwrap_or_default())
        .collect();
    let mut ptrs: Vec<*const c_char> = owned.iter().map(|c| c.as_ptr()).collect();
    ok((api.SetSymbolicDimensions)(
        info,
        ptrs.as_mut_ptr(),
        ptrs.len(),
    ))?;
    ok((api.ShapeInferContext_SetOutputTypeShape)(ctx, index, info))
}

fn element_type(code: i32) -> ONNXTensorElementDataType {
    use ONNXTensorElementDataType::*;
    match code {
        1 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
        3 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
        5 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,
        6 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
        7 => ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
        9 => ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
        10 => ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
        11 => ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
        16 => ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16,
        _ => ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED,
    }
}

unsafe extern "system" fn compute_v2(
    kernel: *mut c_void,
    ctx: *mut OrtKernelContext,
) -> OrtStatusPtr {
    guarded("the op library", || compute(kernel, ctx))
}

/// Runs `f`, turning a panic into an ORT status that says where (`place`):
/// a panic must not unwind into onnxruntime's C++ frames.
pub(crate) fn guarded(
    place: impl std::fmt::Display,
    f: impl FnOnce() -> Result<(), OrtStatusPtr>,
) -> OrtStatusPtr {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(())) => OrtStatusPtr(std::ptr::null_mut()),
        Ok(Err(status)) => status,
        Err(_) => error(
            OrtErrorCode::ORT_FAIL,
            &format!("{}: internal error (panic in {place})", op_spec::QUALIFIED),
        ),
    }
}

/// Where a node's tensors live: host memory (custom op on ORT's CPU
/// provider: copied to the GPU and back), the GPU of the plugin EP's nodes
/// (device 0, default stream, timed), or the GPU of a CUDA EP node (its
/// device and ORT's compute stream; never waits on the host).
pub(crate) enum Memory<'a> {
    Host(&'a gpu::KernelState),
    Device,
    CudaEp(gpu::EpStream),
}

unsafe fn compute(kernel: *mut c_void, ctx: *mut OrtKernelContext) -> Result<(), OrtStatusPtr> {
    let kernel = &*(kernel as *const NodeKernel);
    compute_node(Memory::Host(&kernel.state), &kernel.attrs, ctx)
}

/// One node's run: checks, plan, outputs, launch.
pub(crate) unsafe fn compute_node(
    memory: Memory,
    attrs: &[attrs::AttrValue],
    ctx: *mut OrtKernelContext,
) -> Result<(), OrtStatusPtr> {
    let started = std::time::Instant::now();
    let api = api();
    let mut count = 0usize;
    ok((api.KernelContext_GetInputCount)(ctx, &mut count))?;
    let mut seen = Vec::with_capacity(count);
    let mut tensors = Vec::with_capacity(count + op_spec::OUTPUTS.len());
    for i in 0..count {
        let mut value: *const OrtValue = std::ptr::null();
        ok((api.KernelContext_GetInput)(ctx, i, &mut value))?;
        let mut info: *mut OrtTensorTypeAndShapeInfo = std::ptr::null_mut();
        ok((api.GetTensorTypeAndShape)(value, &mut info))?;
        let described = describe(info);
        (api.ReleaseTensorTypeAndShapeInfo)(info);
        let described = described?;
        let mut data: *mut c_void = std::ptr::null_mut();
        // Read only (host memory, or device memory under the EP).
        ok((api.GetTensorMutableData)(value as *mut OrtValue, &mut data))?;
        tensors.push(host_tensor(data, described.dtype, &described.dims));
        seen.push(described);
    }
    let derived =
        check::check(&seen).map_err(|m| error(OrtErrorCode::ORT_INVALID_ARGUMENT, &m))?;
    let shapes = seen
        .iter()
        .map(|s| s.dims.clone())
        .chain(derived.outputs.iter().map(|(_, dims, _)| dims.clone()))
        .collect();
    let plan = gpu::plan(derived.group, shapes, derived.dims, attrs).map_err(failure)?;
    // The CPU package hands us host tensors; the kernels need a GPU.
    let ordinal = match &memory {
        Memory::CudaEp(ep) => ep.ordinal,
        _ => 0,
    };
    let device = match plan {
        Some(_) => Some(gpu::device(ordinal).map_err(failure)?),
        None => None,
    };
    for (index, (dtype, dims, _)) in derived.outputs.iter().enumerate() {
        let mut value: *mut OrtValue = std::ptr::null_mut();
        ok((api.KernelContext_GetOutput)(ctx, index, dims.as_ptr(), dims.len(), &mut value))?;
        let mut data: *mut c_void = std::ptr::null_mut();
        ok((api.GetTensorMutableData)(value, &mut data))?;
        tensors.push(host_tensor(data, *dtype, dims));
    }
    let result = match (&plan, &device, memory) {
        (Some(plan), Some(device), Memory::Host(state)) => {
            gpu::run(state, device, plan, &tensors).map_err(failure)
        }
        (Some(plan), Some(device), Memory::Device) => {
            let addrs: Vec<u64> = tensors.iter().map(|t| t.data as u64).collect();
            gpu::launch_timed(device, plan, &addrs).map_err(failure)
        }
        (Some(plan), Some(device), Memory::CudaEp(ep)) => {
            let addrs: Vec<u64> = tensors.iter().map(|t| t.data as u64).collect();
            gpu::launch_on(device, plan, &addrs, ep.stream).map_err(failure)
        }
        // An empty tensor: nothing for the kernel to read, the outputs are
        // zeros (a matmul over K = 0), never unwritten memory.
        (_, _, memory) => gpu::zero_outputs(memory, ordinal, &tensors[seen.len()..]).map_err(failure),
    };
    stats::add(stats::CALLS, 1);
    stats::add(stats::COMPUTE_NS, started.elapsed().as_nanos() as u64);
    result
}

fn host_tensor(data: *mut c_void, dtype: i32, dims: &[i64]) -> gpu::HostTensor {
    let elements: i64 = dims.iter().map(|&d| d.max(0)).product();
    gpu::HostTensor {
        data: data.cast(),
        bytes: elements as usize * spec_types::dtype_bytes(dtype),
    }
}

pub(crate) fn failure(f: gpu::Failure) -> OrtStatusPtr {
    match f {
        gpu::Failure::NoDevice(why) => error(
            OrtErrorCode::ORT_FAIL,
            &format!(
                "{}: no CUDA device ({why}); this op runs its Triton kernels on an NVIDIA GPU",
                op_spec::QUALIFIED
            ),
        ),
        gpu::Failure::Invalid(m) => error(OrtErrorCode::ORT_INVALID_ARGUMENT, &m),
        gpu::Failure::Cuda(m) => error(OrtErrorCode::ORT_EP_FAIL, &m),
        gpu::Failure::Broken(m) => error(OrtErrorCode::ORT_FAIL, &format!("{}: {m}", op_spec::QUALIFIED)),
    }
}

unsafe extern "system" fn compute_v1(_kernel: *mut c_void, _ctx: *mut OrtKernelContext) {
    // ORT calls compute_v2 (version >= 16); V1 cannot report an error.
}

/// The node's kernel, or why its attributes do not do.
unsafe fn new_kernel(info: *const OrtKernelInfo) -> Result<*mut c_void, String> {
    let attrs = attrs::from_kernel_info(info)?;
    Ok(Box::into_raw(Box::new(NodeKernel { state: gpu::KernelState::default(), attrs })).cast())
}

/// CreateKernel (before ORT 16): cannot report an error; ORT calls V2.
unsafe extern "system" fn create_kernel(
    _op: *const OrtCustomOp,
    _api: *const OrtApi,
    info: *const OrtKernelInfo,
) -> *mut c_void {
    new_kernel(info).unwrap_or(std::ptr::null_mut())
}

/// CreateKernelV2 of every provider's op: a bad attribute fails the session.
unsafe extern "system" fn create_kernel_v2(
    _op: *const OrtCustomOp,
    _api: *const OrtApi,
    info: *const OrtKernelInfo,
    kernel: *mut *mut c_void,
) -> OrtStatusPtr {
    match new_kernel(info) {
        Ok(made) => {
            *kernel = made;
            OrtStatusPtr(std::ptr::null_mut())
        }
        Err(why) => error(OrtErrorCode::ORT_INVALID_ARGUMENT, &why),
    }
}

unsafe extern "system" fn destroy_kernel(kernel: *mut c_void) {
    if !kernel.is_null() {
        drop(Box::from_raw(kernel.cast::<NodeKernel>()));
    }
}

unsafe extern "system" fn get_name(_op: *const OrtCustomOp) -> *const c_char {
    op_spec::OP_NAME.as_ptr().cast()
}

unsafe extern "system" fn get_ep(_op: *const OrtCustomOp) -> *const c_char {
    // NULL: ORT's CPU execution provider, where the CPU package puts tensors.
    std::ptr::null()
}

fn type_of(desc: &spec_types::TensorDesc) -> ONNXTensorElementDataType {
    match desc.dtype {
        // Any type: the op checks dtypes itself to name the argument.
        spec_types::DtypeDesc::Var(_) => element_type(ONNX_UNDEFINED),
        spec_types::DtypeDesc::Fixed(code) => element_type(code),
    }
}

unsafe extern "system" fn input_type(
    _op: *const OrtCustomOp,
    index: usize,
) -> ONNXTensorElementDataType {
    op_spec::INPUTS
        .get(index)
        .map_or(element_type(ONNX_UNDEFINED), type_of)
}

unsafe extern "system" fn output_type(
    _op: *const OrtCustomOp,
    index: usize,
) -> ONNXTensorElementDataType {
    op_spec::OUTPUTS
        .get(index)
        .map_or(element_type(ONNX_UNDEFINED), type_of)
}

unsafe extern "system" fn input_count(_op: *const OrtCustomOp) -> usize {
    op_spec::INPUTS.len()
}

unsafe extern "system" fn output_count(_op: *const OrtCustomOp) -> usize {
    op_spec::OUTPUTS.len()
}

unsafe extern "system" fn required(
    _op: *const OrtCustomOp,
    _index: usize,
) -> OrtCustomOpInputOutputCharacteristic {
    OrtCustomOpInputOutputCharacteristic::INPUT_OUTPUT_REQUIRED
}

unsafe extern "system" fn mem_type(_op: *const OrtCustomOp, _index: usize) -> OrtMemType {
    OrtMemType::OrtMemTypeDefault
}

unsafe extern "system" fn one(_op: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn zero(_op: *const OrtCustomOp) -> c_int {
    0
}

unsafe extern "system" fn start_version(_op: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn end_version(_op: *const OrtCustomOp) -> c_int {
    c_int::MAX
}
