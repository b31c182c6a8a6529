//! Persistent row softmax (seed 002) from `tritonc --all-configs
//! tests/kernels/softmax.tc -DTYPE=float '-DTN=[...]'`: grid = NUM_SM x
//! occupancy (at most one program per row), checked against a CPU softmax.

use crate::Report;
use opgen_runtime::autotune::median;
use opgen_runtime::{
    Device, DeviceBuffer, EventTimer, Kernel, KernelArg, KernelTimer, Manifest, Result,
    RuntimeError, Stream,
};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

const ROWS: usize = 4096;
const COLUMNS: [usize; 4] = [781, 1024, 4096, 16384];
/// exp is approximate on the GPU (ex2.approx): relative error well under this.
const MAX_RELATIVE_ERROR: f64 = 1e-4;

pub fn check(
    dir: &Path,
    device: &Arc<Device>,
    stream: &Stream,
    runs: u32,
    report: &mut Report,
) -> Result<()> {
    let manifest = Manifest::load(dir)?;
    let mut kernels = Vec::new();
    for variant in manifest.variants_of("softmax") {
        let Some(tn) = variant
            .macros
            .get("TN")
            .and_then(|v| v.parse::<usize>().ok())
        else {
            continue;
        };
        match Kernel::load(device, &manifest, variant) {
            Ok(k) => kernels.push((tn, k)),
            Err(e) => report.error(&format!("softmax load TN={tn}"), e),
        }
    }
    kernels.sort_by_key(|(tn, _)| *tn);
    let max_n = COLUMNS.iter().copied().max().unwrap_or(0);
    let x_host: Vec<f32> = (0..ROWS * max_n)
        .map(|i| ((i * 7919 % 10007) as f32 / 10007.0 - 0.5) * 10.0)
        .collect();
    let x = DeviceBuffer::from_slice(device, &x_host)?;
    let y = DeviceBuffer::alloc(device, ROWS * max_n * 4)?;
    let mut timer = EventTimer::new(stream)?;
    for n in COLUMNS {
        // The smallest tile that holds a row.
        let Some((tn, kernel)) = kernels.iter().find(|(tn, _)| *tn >= n) else {
            report.error(
                &format!("softmax {ROWS}x{n}"),
                "no variant with TN >= N in the manifest",
            );
            continue;
        };
        let result = run_one(kernel, stream, &x, &y, &x_host, n, runs, &mut timer);
        match result {
            Ok((grid, ms, error)) => {
                let gbps = (2 * ROWS * n * 4) as f64 / (ms * 1e-3) / 1e9;
                let ok = error <= MAX_RELATIVE_ERROR;
                let a = kernel.attributes();
                println!(
                    "softmax {ROWS}x{n} [TN={tn}]: persistent grid {grid}, {} regs, {} B local, \
                     max rel error {error:.2e} ({}), {ms:.4} ms, {gbps:.0} GB/s",
                    a.registers_per_thread,
                    a.local_bytes_per_thread,
                    if ok { "ok" } else { "WRONG" }
                );
                report.softmax.push(json!({
                    "rows": ROWS, "cols": n, "tn": tn, "grid": grid, "ok": ok,
                    "max_relative_error": error, "time_ms": ms, "gbps": gbps,
                    "registers_per_thread": a.registers_per_thread,
                    "local_bytes_per_thread": a.local_bytes_per_thread,
                }));
                if !ok {
                    report.error(
                        &format!("softmax {ROWS}x{n}"),
                        format!("max relative error {error:.3e} > {MAX_RELATIVE_ERROR:e}"),
                    );
                }
            }
            Err(e) => report.error(&format!("softmax {ROWS}x{n} [TN={tn}]"), e),
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    kernel: &Kernel,
    stream: &Stream,
    x: &DeviceBuffer,
    y: &DeviceBuffer,
    x_host: &[f32],
    n: usize,
    runs: u32,
    timer: &mut EventTimer,
) -> Result<(u32, f64, f64)> {
    let grid = kernel.persistent_grid(ROWS as u32)?;
    let ld = KernelArg::I32(n as i32);
    let args = [
        y.arg(),
        x.arg(),
        ld,
        ld,
        KernelArg::I32(ROWS as i32),
        KernelArg::I32(n as i32),
    ];
    y.fill_bytes(0xff)?;
    kernel.launch(stream, grid, &args)?;
    stream.synchronize()?;
    let mut got = vec![0f32; ROWS * n];
    y.copy_to_host(&mut got)?;
    let error = max_relative_error(&x_host[..ROWS * n], &got, n);
    let mut times = Vec::new();
    for i in 0..runs.max(1) + 2 {
        let ms = timer.time_ms(&mut || kernel.launch(stream, grid, &args))?;
        if i >= 2 {
            times.push(ms); // the first two are warm-up
        }
    }
    if error.is_nan() {
        return Err(RuntimeError::InvalidLaunch {
            kernel: "softmax".into(),
            reason: "NaN in the output".into(),
        });
    }
    Ok((grid, median(&mut times), error))
}

/// Row-wise softmax in f64 against the GPU's, as max |got - want| / want.
fn max_relative_error(x: &[f32], got: &[f32], n: usize) -> f64 {
    let mut worst: f64 = 0.0;
    for (row_x, row_y) in x.chunks(n).zip(got.chunks(n)) {
        let max = row_x.iter().fold(f64::MIN, |m, &v| m.max(v as f64));
        let exps: Vec<f64> = row_x.iter().map(|&v| (v as f64 - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        for (e, &y) in exps.iter().zip(row_y) {
            let want = e / sum;
            let err = ((y as f64) - want).abs() / want;
            if err.is_nan() {
                return f64::NAN;
            }
            worst = worst.max(err);
        }
    }
    worst
}
