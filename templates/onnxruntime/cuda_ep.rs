// Copied verbatim by triton-opgen: the op on ONNX Runtime's CUDA execution
// provider (onnxruntime-gpu). ORT hands the kernel device tensors and its
// compute stream: the launch goes on that stream, nothing is copied and
// nothing waits on the host (the autotuner times configs once per shape
// bucket, at a shape's first call, unless a pre-tuned table names the choice).
// With the CPU-only package this registration is simply never used.
use crate::{api, compute_node, custom_op, gpu, guarded, ok, KernelCallbacks, Memory, NodeKernel};
use ort_sys::*;
use std::ffi::{c_char, c_int, c_void};

const CUDA_EP: &str = "CUDAExecutionProvider\0";

/// The op on ORT's CUDA execution provider.
pub(crate) static OP: OrtCustomOp = custom_op(KernelCallbacks { ep: get_ep, compute });

unsafe extern "system" fn get_ep(_op: *const OrtCustomOp) -> *const c_char {
    CUDA_EP.as_ptr().cast()
}

/// The node's attributes come with its kernel; the op's modules and tuned
/// choices are per process and device.
unsafe extern "system" fn compute(kernel: *mut c_void, ctx: *mut OrtKernelContext) -> OrtStatusPtr {
    let kernel = &*(kernel as *const NodeKernel);
    guarded("the op library", || compute_node(Memory::CudaEp(ep_stream(ctx)?), &kernel.attrs, ctx))
}

/// ORT's compute stream for this node and the device its tensors are on.
unsafe fn ep_stream(ctx: *mut OrtKernelContext) -> Result<gpu::EpStream, OrtStatusPtr> {
    let api = api();
    let mut stream: *mut c_void = std::ptr::null_mut();
    ok((api.KernelContext_GetGPUComputeStream)(ctx, &mut stream))?;
    let mut count = 0usize;
    ok((api.KernelContext_GetInputCount)(ctx, &mut count))?;
    let mut ordinal: c_int = 0;
    if count > 0 {
        let mut value: *const OrtValue = std::ptr::null();
        ok((api.KernelContext_GetInput)(ctx, 0, &mut value))?;
        let mut info: *const OrtMemoryInfo = std::ptr::null();
        // The value owns its memory info: nothing to release.
        ok((api.GetTensorMemoryInfo)(value, &mut info))?;
        ok((api.MemoryInfoGetId)(info, &mut ordinal))?;
    }
    Ok(gpu::EpStream {
        stream,
        ordinal: usize::try_from(ordinal).unwrap_or(0),
    })
}
