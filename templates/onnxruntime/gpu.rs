// Copied verbatim by triton-opgen: runs the op on the GPU. For onnxruntime's
// CPU provider, whose tensors live in host memory, it copies the inputs to
// device buffers the kernel instance keeps, launches the embedded PTX through
// the opgen bridge (autotuning among the variants the call allows), and copies
// the outputs back; on device tensors (the CUDA EP, the plugin EP) it only
// launches. Every copy and launch is counted in stats.rs.
use crate::call::{Call, LaunchArg};
use crate::op_spec::{self, CFG_NAMES, GROUP_VARIANTS, VARIANT_DATA};
use crate::stats;
use opgen_bridge::{KernelArg, LaunchGrid, Op, VariantRef};
use opgen_runtime::pad::PaddedLayout;
use opgen_runtime::{Device, DeviceBuffer, EventTimer, KernelTimer, RuntimeError, Stream};
use std::ffi::c_void;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Why a call could not run.
pub enum Failure {
    /// No driver or device: the caller reports ORT_FAIL.
    NoDevice(String),
    /// The inputs do not fit the kernel (argument range, no config).
    Invalid(String),
    /// A CUDA call failed.
    Cuda(String),
    /// The embedded variants cannot be used on any device (an edited PTX).
    Broken(String),
}

/// One tensor of the call in host memory.
pub struct HostTensor {
    pub data: *mut u8,
    pub bytes: usize,
}

/// Per kernel instance: device buffers reused between calls (inputs, then
/// outputs), grown when a call needs more.
#[derive(Default)]
pub struct KernelState {
    buffers: Mutex<Vec<Option<DeviceBuffer>>>,
}

/// A CUDA EP node's compute stream (`cudaStream_t`) and device.
pub struct EpStream {
    pub stream: *mut c_void,
    pub ordinal: usize,
}

/// The device, or why there is none (as the runtime words it); first, what
/// makes the embedded variants unusable anywhere, found without a GPU.
pub fn device(ordinal: usize) -> Result<Arc<Device>, Failure> {
    if let Some(problem) = op().problem() {
        return Err(Failure::Broken(problem));
    }
    Device::open(ordinal).map_err(|e| match e {
        RuntimeError::NoDevice(why) => Failure::NoDevice(why),
        other => Failure::Cuda(other.to_string()),
    })
}

/// The bridge's op over the embedded variants (created once), and how many
/// entries of the pre-tuned table it took.
fn op_and_tuned() -> &'static (Op, usize) {
    static OP: OnceLock<(Op, usize)> = OnceLock::new();
    OP.get_or_init(|| {
        let table: Vec<VariantRef> = VARIANT_DATA
            .iter()
            .map(|v| VariantRef {
                kernel: v.kernel,
                config: v.config,
                json: v.json,
                image: v.ptx.as_bytes(),
            })
            .collect();
        let op = opgen_bridge::new_op(op_spec::QUALIFIED, &table);
        // The pre-tuned table (`--tuned`): its shapes are never benchmarked.
        let taken = opgen_bridge::preload(&op, op_spec::TUNED);
        (op, taken)
    })
}

fn op() -> &'static Op {
    &op_and_tuned().0
}

/// Entries of the embedded pre-tuned table (`--tuned`) the op took.
pub fn tuned_entries() -> usize {
    op_and_tuned().1
}

/// What a call launches, worked out before any GPU work: the kernel's
/// arguments and the candidate variants with their grids.
pub struct Plan {
    group: usize,
    call: Call,
    args: Vec<(LaunchArg, &'static str)>,
    candidates: Vec<u32>,
    grids: Vec<LaunchGrid>,
    /// The plan's key ([`call_key`]), under which the bridge remembers its
    /// decision: a decided call launches again without its candidates
    /// (`launch_known`).
    call_key: Vec<i64>,
    /// The spec's `pad` line applies: the tensors' layouts and their padded
    /// twins' (inputs, then outputs); `call` is the padded call.
    pad: Option<Vec<PaddedLayout>>,
}

/// Plans made, by their call key: a serving graph calls a node with the same
/// shapes again and again, and planning evaluates every variant's
/// requirements and grid.
type PlanCache = HashMap<Vec<i64>, Arc<Plan>>;
static PLANS: OnceLock<Mutex<PlanCache>> = OnceLock::new();
/// Plans kept before the cache starts over.
const MAX_PLANS: usize = 1024;

/// Plans the kernel of `group` for tensors of these shapes (inputs, then
/// outputs); `dims` are the spec's dims. `None`: a tensor is empty, nothing to do.
pub fn plan(
    group: usize,
    shapes: Vec<Vec<i64>>,
    dims: Vec<(&'static str, i64)>,
    attrs: &[crate::attrs::AttrValue],
) -> Result<Option<Arc<Plan>>, Failure> {
    if shapes.iter().any(|s| s.iter().product::<i64>() == 0) {
        return Ok(None);
    }
    let cache = PLANS.get_or_init(|| Mutex::new(HashMap::new()));
    let key = call_key(group, &shapes, attrs);
    // A statement of its own: the guard is gone before the insert below.
    let known = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
    if let Some(plan) = known {
        return Ok(Some(plan));
    }
    let plan = Arc::new(new_plan(group, shapes, dims, attrs.to_vec(), key.clone())?);
    let mut plans = cache.lock().unwrap_or_else(|e| e.into_inner());
    if plans.len() >= MAX_PLANS {
        plans.clear();
    }
    plans.insert(key, plan.clone());
    Ok(Some(plan))
}

/// What decides a plan: the dtype group, each shape with its rank, each
/// attribute's bits (the op's tensors and attributes are fixed in number,
/// so the flat list tells every call apart).
fn call_key(group: usize, shapes: &[Vec<i64>], attrs: &[crate::attrs::AttrValue]) -> Vec<i64> {
    let mut key = vec![group as i64];
    for shape in shapes {
        key.push(shape.len() as i64);
        key.extend(shape);
    }
    key.extend(attrs.iter().map(|a| a.bits() as i64));
    key
}

fn new_plan(
    group: usize,
    shapes: Vec<Vec<i64>>,
    dims: Vec<(&'static str, i64)>,
    attrs: Vec<crate::attrs::AttrValue>,
    call_key: Vec<i64>,
) -> Result<Plan, Failure> {
    let call = Call { shapes, dims, attrs };
    let (call, pad) = match crate::pad::padded(group, &call) {
        Some(padded) => (padded.call, Some(padded.layouts)),
        None => (call, None),
    };
    let args = op_spec::kernel_args(&call);
    for (arg, label) in &args {
        if let LaunchArg::I32(v) = arg {
            if i32::try_from(*v).is_err() {
                return Err(Failure::Invalid(format!(
                    "{}: kernel argument `{label}` = {v} does not fit the kernel's 32-bit int",
                    op_spec::QUALIFIED
                )));
            }
        }
    }
    let (candidates, grids) = candidates(&call, group)?;
    Ok(Plan {
        group,
        call,
        args,
        candidates,
        grids,
        call_key,
        pad,
    })
}

/// Runs `plan` on `tensors` (host memory, inputs then outputs, already
/// allocated by ORT).
pub fn run(
    state: &KernelState,
    device: &Arc<Device>,
    plan: &Plan,
    tensors: &[HostTensor],
) -> Result<(), Failure> {
    let mut buffers = state.buffers.lock().unwrap_or_else(|e| e.into_inner());
    buffers.resize_with(tensors.len(), || None);
    for (slot, t) in buffers.iter_mut().zip(tensors) {
        if slot.as_ref().is_none_or(|b| b.len_bytes() < t.bytes) {
            *slot = None; // free the small one first
            *slot = Some(DeviceBuffer::alloc(device, t.bytes).map_err(cuda)?);
        }
    }
    let inputs = op_spec::INPUTS.len();
    for (buffer, t) in buffers.iter().zip(tensors).take(inputs) {
        let start = Instant::now();
        // SAFETY: ORT's input tensor holds `bytes` bytes.
        let host = unsafe { std::slice::from_raw_parts(t.data, t.bytes) };
        buffer.as_ref().map_or(Ok(()), |b| b.copy_from_host(host)).map_err(cuda)?;
        stats::add(stats::H2D_NS, start.elapsed().as_nanos() as u64);
        stats::add(stats::H2D_COPIES, 1);
        stats::add(stats::H2D_BYTES, t.bytes as u64);
    }
    let addrs: Vec<u64> = buffers
        .iter()
        .map(|b| b.as_ref().map_or(0, |b| b.addr()))
        .collect();
    launch_timed(device, plan, &addrs)?;
    for (buffer, t) in buffers.iter().zip(tensors).skip(inputs) {
        let start = Instant::now();
        // SAFETY: ORT allocated `bytes` bytes for this output.
        let host = unsafe { std::slice::from_raw_parts_mut(t.data, t.bytes) };
        buffer.as_ref().map_or(Ok(()), |b| b.copy_to_host(host)).map_err(cuda)?;
        stats::add(stats::D2H_NS, start.elapsed().as_nanos() as u64);
        stats::add(stats::D2H_COPIES, 1);
        stats::add(stats::D2H_BYTES, t.bytes as u64);
    }
    Ok(())
}

/// Launches `plan` on device memory on the default stream and waits for it:
/// `addrs` holds each tensor's device address (inputs, then outputs). Counts
/// the launch and its GPU time.
pub fn launch_timed(device: &Arc<Device>, plan: &Plan, addrs: &[u64]) -> Result<(), Failure> {
    let stream = Stream::default_stream(device);
    let mut timer = EventTimer::new(&stream).map_err(cuda)?;
    let ms = timer
        .time_ms(&mut || bridge_launch(device, plan, addrs, std::ptr::null_mut()))
        .map_err(cuda)?;
    stats::add(stats::LAUNCHES, 1);
    stats::add(stats::KERNEL_NS, (ms * 1e6) as u64);
    Ok(())
}

/// Launches `plan` on device memory on `stream` (a framework's), without
/// waiting for it.
pub fn launch_on(
    device: &Arc<Device>,
    plan: &Plan,
    addrs: &[u64],
    stream: *mut c_void,
) -> Result<(), Failure> {
    bridge_launch(device, plan, addrs, stream).map_err(cuda)?;
    stats::add(stats::LAUNCHES, 1);
    stats::add(stats::STREAM_LAUNCHES, 1);
    Ok(())
}

/// One launch through the bridge (which picks the config, autotuning a new
/// shape bucket on `stream`), on padded twins of the tensors where the
/// spec's `pad` line applies.
fn bridge_launch(
    device: &Arc<Device>,
    plan: &Plan,
    addrs: &[u64],
    stream: *mut c_void,
) -> Result<(), RuntimeError> {
    let Some(layouts) = &plan.pad else {
        return kernel_launch(device, plan, addrs, stream);
    };
    let inputs = op_spec::INPUTS.len();
    // SAFETY: `addrs` are the call's device tensors (ORT's, or the kernel
    // instance's buffers), each holding its layout's dense tensor.
    let ran = unsafe {
        opgen_runtime::pad::run_padded(device, stream.cast(), layouts, inputs, addrs, |twins| {
            kernel_launch(device, plan, twins, stream)
        })
    };
    if ran.is_ok() {
        stats::add(stats::PADDED_LAUNCHES, 1);
    }
    ran
}

/// The kernel's launch on the tensors at `addrs` (the plan's call's sizes).
fn kernel_launch(
    device: &Arc<Device>,
    plan: &Plan,
    addrs: &[u64],
    stream: *mut c_void,
) -> Result<(), RuntimeError> {
    let Plan {
        group,
        call,
        args,
        candidates,
        grids,
        call_key,
        pad: _,
    } = plan;
    let addr = |i: usize| addrs.get(i).copied().unwrap_or(0);
    let kernel_args: Vec<KernelArg> = args
        .iter()
        .map(|(arg, _)| match *arg {
            LaunchArg::Ptr(i) => KernelArg::Ptr(addr(i)),
            LaunchArg::I32(v) => KernelArg::I32(v as i32),
            LaunchArg::I64(v) => KernelArg::I64(v),
            LaunchArg::F32(v) => KernelArg::F32(v as f32),
            LaunchArg::F64(v) => KernelArg::F64(v),
        })
        .collect();
    let invalid = |reason| RuntimeError::InvalidLaunch {
        kernel: op_spec::QUALIFIED.to_string(),
        reason,
    };
    let ordinal = device.ordinal() as i32;
    if opgen_bridge::launch_known(op(), ordinal, stream, call_key, &kernel_args).map_err(invalid)? {
        return Ok(());
    }
    let key_dims: Vec<i64> = call.dims.iter().map(|&(_, v)| v).collect();
    let launch = opgen_bridge::Call {
        device: ordinal,
        stream,
        candidates,
        grids,
        args: &kernel_args,
        dtype_key: GROUP_VARIANTS[*group].0,
        dims: &key_dims,
        call_key,
    };
    opgen_bridge::launch(op(), &launch).map_err(invalid)
}

/// Zeroes a call's `outputs` where it launches nothing (an input is empty):
/// host memory in place, device memory in the stream's order (the default
/// stream's outside the CUDA EP).
pub fn zero_outputs(
    memory: crate::Memory<'_>,
    ordinal: usize,
    outputs: &[HostTensor],
) -> Result<(), Failure> {
    let stream = match memory {
        crate::Memory::Host(_) => {
            for t in outputs.iter().filter(|t| t.bytes > 0) {
                // SAFETY: ORT allocated each output, `bytes` long, in host memory.
                unsafe { std::ptr::write_bytes(t.data, 0, t.bytes) };
            }
            return Ok(());
        }
        crate::Memory::Device => std::ptr::null_mut(),
        crate::Memory::CudaEp(ep) => ep.stream,
    };
    let outputs: Vec<&HostTensor> = outputs.iter().filter(|t| t.bytes > 0).collect();
    if outputs.is_empty() {
        return Ok(());
    }
    let device = device(ordinal)?;
    for t in outputs {
        // SAFETY: ORT allocated each output on this device, `bytes` long.
        unsafe { opgen_runtime::memory::raw::zero_async(&device, t.data as u64, t.bytes, stream.cast()) }
            .map_err(cuda)?;
    }
    Ok(())
}

fn cuda(e: RuntimeError) -> Failure {
    Failure::Cuda(format!("{}: {e}", op_spec::QUALIFIED))
}

/// The group's variants that meet the spec's requirements, with their grids.
fn candidates(call: &Call, group: usize) -> Result<(Vec<u32>, Vec<LaunchGrid>), Failure> {
    let (_, first, count) = GROUP_VARIANTS[group];
    let mut picked = Vec::new();
    let mut grids = Vec::new();
    for (index, variant) in VARIANT_DATA.iter().enumerate().skip(first).take(count) {
        let cfg = variant.cfg;
        let m = |name: &str| {
            CFG_NAMES
                .iter()
                .position(|n| *n == name)
                .and_then(|i| cfg.get(i).copied())
                .unwrap_or(0)
        };
        if !op_spec::accepts(call, &m) {
            continue;
        }
        let g = op_spec::grid(call, &m);
        let mut axes = [0u32; 3];
        for (axis, (&v, out)) in g.iter().zip(axes.iter_mut()).enumerate() {
            *out = u32::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| {
                Failure::Invalid(format!(
                    "{}: grid axis {axis} is {v} for config `{}`, out of range",
                    op_spec::QUALIFIED,
                    variant.config
                ))
            })?;
        }
        picked.push(index as u32);
        grids.push(LaunchGrid {
            x: axes[0],
            y: axes[1],
            z: axes[2],
            persistent: op_spec::persistent(call, &m),
        });
    }
    if picked.is_empty() {
        let dims: Vec<String> = call.dims.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        return Err(Failure::Invalid(format!(
            "{}: no compiled config accepts these inputs (each needs {}); {}",
            op_spec::QUALIFIED,
            op_spec::REQUIRES_TEXT,
            dims.join(", ")
        )));
    }
    Ok((picked, grids))
}

/// One line per embedded variant: dtypes, config, kernel, PTX bytes.
pub fn variant_listing() -> String {
    let mut out = String::new();
    for &(label, first, count) in GROUP_VARIANTS {
        for v in &VARIANT_DATA[first..first + count] {
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                label,
                v.config,
                v.kernel,
                v.ptx.len()
            ));
        }
    }
    out
}
