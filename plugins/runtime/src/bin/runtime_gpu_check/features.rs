//! Runtime features the add kernel does not reach: dynamic shared memory
//! above 48 KiB (opt-in), a persistent grid sized from occupancy, a
//! borrowed (framework) stream, cubin loading, and CUDA errors as values.

use crate::Report;
use opgen_runtime::{
    Device, DeviceBuffer, ElemType, Kernel, KernelArg, ModuleImage, Param, ParamType, RuntimeError,
    Stream, Variant,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

const PROBE_PTX: &str = include_str!("probe.ptx");

fn param(name: &str, ty: ParamType) -> Param {
    Param {
        name: name.to_string(),
        ty,
        multiple_of: None,
        aligned: None,
        readonly: false,
        writeonly: false,
        noalias: false,
    }
}

fn variant(kernel: &str, num_warps: u32, shared_bytes: u32) -> Variant {
    Variant {
        file: "probe.ptx".to_string(),
        kernel: kernel.to_string(),
        macros: Default::default(),
        num_warps,
        shared_bytes,
        cluster_splits: 1,
        cluster_x: 1,
        producer_warps: 0,
        persistent: false,
        params: vec![
            param("n", ParamType::Scalar(ElemType::I32)),
            param("out", ParamType::Pointer(ElemType::I32)),
        ],
        tensor_maps: Vec::new(),
        image_digest: None,
    }
}

pub fn check(device: &Arc<Device>, stream: &Stream, cubin: Option<&Path>, report: &mut Report) {
    let image = ModuleImage::Ptx(PROBE_PTX.to_string());
    let mut step = |name: &str, outcome: Result<String, String>| {
        match &outcome {
            Ok(detail) => println!("feature {name}: ok, {detail}"),
            Err(e) => report.error(&format!("feature {name}"), e),
        }
        report.features.push(json!({
            "feature": name,
            "ok": outcome.is_ok(),
            "detail": outcome.unwrap_or_else(|e| e),
        }));
    };
    step(
        "large dynamic shared memory",
        large_shared(device, stream, &image).map_err(|e| e.to_string()),
    );
    step(
        "persistent grid",
        persistent(device, stream, &image).map_err(|e| e.to_string()),
    );
    step(
        "borrowed stream",
        borrowed_stream(device, stream, &image).map_err(|e| e.to_string()),
    );
    step(
        "errors are values",
        errors_are_values(device, stream, &image),
    );
    if let Some(path) = cubin {
        step(
            "cubin",
            load_cubin(device, stream, path).map_err(|e| e.to_string()),
        );
    }
}

/// 96 KiB of dynamic shared memory (above the 48 KiB default) on 256 threads.
fn large_shared(
    device: &Arc<Device>,
    stream: &Stream,
    image: &ModuleImage,
) -> Result<String, RuntimeError> {
    let bytes = 96 * 1024;
    let kernel = Kernel::from_image(
        device,
        image,
        "probe.ptx",
        variant("shared_probe", 8, bytes),
    )?;
    let threads = kernel.block_threads() as usize;
    let out = DeviceBuffer::alloc(device, threads * 4)?;
    kernel.launch(stream, 1, &[KernelArg::I32((bytes / 4) as i32), out.arg()])?;
    stream.synchronize()?;
    let mut host = vec![0i32; threads];
    out.copy_to_host(&mut host)?;
    let wrong = (0..threads)
        .filter(|&t| host[t] != 3 * t as i32 + 1)
        .count();
    if wrong > 0 {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "shared_probe".into(),
            reason: format!("{wrong} of {threads} threads read back a wrong value"),
        });
    }
    Ok(format!(
        "{bytes} B dynamic shared, {threads} threads read back their values"
    ))
}

/// Grid = NUM_SM x occupancy for 2^24 elements; every element written.
fn persistent(
    device: &Arc<Device>,
    stream: &Stream,
    image: &ModuleImage,
) -> Result<String, RuntimeError> {
    let kernel = Kernel::from_image(device, image, "probe.ptx", variant("persistent_fill", 8, 0))?;
    let n: usize = 1 << 24;
    let per_sm = kernel.max_active_blocks_per_sm()?;
    let blocks_needed = (n as u32).div_ceil(kernel.block_threads());
    let grid = kernel.persistent_grid(blocks_needed)?;
    let expected = (device.properties().sm_count * per_sm.max(1)).min(blocks_needed);
    if grid != expected || grid >= blocks_needed {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "persistent_fill".into(),
            reason: format!("persistent grid {grid}, expected {expected} (< {blocks_needed})"),
        });
    }
    let out = DeviceBuffer::alloc(device, n * 4)?;
    out.fill_bytes(0)?;
    kernel.launch(stream, grid, &[KernelArg::I32(n as i32), out.arg()])?;
    stream.synchronize()?;
    let mut host = vec![0i32; n];
    out.copy_to_host(&mut host)?;
    let wrong = host
        .iter()
        .enumerate()
        .filter(|(i, &v)| v != *i as i32 + 7)
        .count();
    if wrong > 0 {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "persistent_fill".into(),
            reason: format!("{wrong} of {n} elements wrong"),
        });
    }
    let regs = kernel.attributes().registers_per_thread;
    Ok(format!(
        "{grid} programs = {} SMs x {per_sm} blocks/SM ({regs} regs/thread) covered {n} elements",
        device.properties().sm_count
    ))
}

/// A stream handed over as a raw handle, as a framework would.
fn borrowed_stream(
    device: &Arc<Device>,
    owner: &Stream,
    image: &ModuleImage,
) -> Result<String, RuntimeError> {
    let kernel = Kernel::from_image(device, image, "probe.ptx", variant("persistent_fill", 4, 0))?;
    // SAFETY: `owner` outlives `borrowed`, and is a stream of this device.
    let borrowed = unsafe { Stream::from_raw(device, owner.raw().cast()) };
    let out = DeviceBuffer::alloc(device, 1024 * 4)?;
    kernel.launch(&borrowed, 2, &[KernelArg::I32(1024), out.arg()])?;
    borrowed.synchronize()?;
    drop(borrowed);
    owner.synchronize()?; // still alive: the borrowed wrapper did not destroy it
    let mut host = vec![0i32; 1024];
    out.copy_to_host(&mut host)?;
    if host.iter().enumerate().any(|(i, &v)| v != i as i32 + 7) {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "persistent_fill".into(),
            reason: "wrong values through the borrowed stream".into(),
        });
    }
    Ok(format!(
        "launched on raw stream {:?}; modules loaded once: {} in cache",
        owner.raw(),
        device.module_cache().len()
    ))
}

/// Each mistake must come back as an error value that names what failed.
fn errors_are_values(
    device: &Arc<Device>,
    stream: &Stream,
    image: &ModuleImage,
) -> Result<String, String> {
    let mut seen = Vec::new();
    let mut expect = |what: &str, result: Result<(), RuntimeError>, needle: &str| match result {
        Err(e) if e.to_string().contains(needle) => {
            println!("  {what}: {e}");
            seen.push(what.to_string());
            Ok(())
        }
        Err(e) => Err(format!("{what}: error does not mention `{needle}`: {e}")),
        Ok(()) => Err(format!("{what}: succeeded, expected an error")),
    };
    let broken =
        ModuleImage::Ptx(".version 8.0\n.target sm_80\n.address_size 64\nthis is not ptx\n".into());
    expect(
        "bad PTX",
        Kernel::from_image(device, &broken, "broken.ptx", variant("x", 4, 0)).map(|_| ()),
        "cuModuleLoadDataEx failed (loading broken.ptx)",
    )?;
    expect(
        "missing kernel",
        Kernel::from_image(device, image, "probe.ptx", variant("no_such_kernel", 4, 0)).map(|_| ()),
        "cuModuleGetFunction failed (kernel `no_such_kernel` in probe.ptx)",
    )?;
    let too_much = device.properties().max_shared_per_block_optin + 1024;
    expect(
        "too much shared memory",
        Kernel::from_image(
            device,
            image,
            "probe.ptx",
            variant("shared_probe", 4, too_much),
        )
        .map(|_| ()),
        "exceeds the device's",
    )?;
    let kernel = Kernel::from_image(device, image, "probe.ptx", variant("persistent_fill", 4, 0))
        .map_err(|e| e.to_string())?;
    expect(
        "zero grid",
        kernel.launch(stream, 0, &[KernelArg::I32(1), KernelArg::Ptr(0)]),
        "grid x = 0",
    )?;
    expect(
        "wrong argument type",
        kernel.launch(stream, 1, &[KernelArg::I64(1), KernelArg::Ptr(0)]),
        "parameter 0 `n`: expected i32, got i64 1",
    )?;
    Ok(format!("{} mistakes reported as errors", seen.len()))
}

/// The probe kernels from a cubin (ptxas output for this device).
fn load_cubin(device: &Arc<Device>, stream: &Stream, path: &Path) -> Result<String, RuntimeError> {
    let image = ModuleImage::from_file(path)?;
    if !matches!(image, ModuleImage::Cubin(_)) {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "persistent_fill".into(),
            reason: format!("{} is not a cubin (no ELF header)", path.display()),
        });
    }
    let label = path.display().to_string();
    let kernel = Kernel::from_image(device, &image, &label, variant("persistent_fill", 4, 0))?;
    let out = DeviceBuffer::alloc(device, 4096 * 4)?;
    kernel.launch(stream, 4, &[KernelArg::I32(4096), out.arg()])?;
    stream.synchronize()?;
    let mut host = vec![0i32; 4096];
    out.copy_to_host(&mut host)?;
    if host.iter().enumerate().any(|(i, &v)| v != i as i32 + 7) {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "persistent_fill".into(),
            reason: "wrong values from the cubin kernel".into(),
        });
    }
    Ok(format!(
        "{label}: {} regs/thread, SASS version {}",
        kernel.attributes().registers_per_thread,
        kernel.attributes().binary_version
    ))
}
