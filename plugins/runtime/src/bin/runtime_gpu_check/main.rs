//! GPU check of the runtime, carried as a release binary to the GPU machine.
//!
//! Given the folder that `tritonc --all-configs tests/kernels/add.tc
//! -DTYPE=float '-DSIZE=[128,256,512,1024]' -o DIR` writes, it loads every
//! variant, checks each against a CPU reference (exact for f32 add),
//! autotunes SIZE for a few input sizes with a persisted cache, and prints
//! human-readable lines plus one final JSON summary line.
//!
//! ```text
//! runtime_gpu_check --ptx-dir DIR [--cache FILE] [--corrupt-cache]
//!                   [--expect-cached] [--sizes 65536,1048576,67108864]
//!                   [--device 0] [--warmup 3] [--runs 20] [--cubin PROBE.cubin]
//!                   [--softmax-dir DIR]
//! ```
//! With `--softmax-dir` (tritonc --all-configs of tests/kernels/softmax.tc,
//! `-DTYPE=float '-DTN=[1024,4096,16384]'`) it also runs the persistent
//! softmax of seed 002 on 4096 x {781, 1024, 4096, 16384}.
//! It also checks runtime features on hand-written kernels (`probe.ptx`):
//! dynamic shared memory above 48 KiB, a persistent grid from occupancy, a
//! borrowed stream, errors as values, and (with `--cubin`, that PTX compiled
//! by `ptxas -arch=sm_90`) loading a cubin.
//! Exit status: 0 all good, 1 a check failed, 2 no GPU/driver, 3 bad usage.

mod features;
mod softmax;

use opgen_runtime::{
    Autotuner, BenchSettings, CacheLoad, Device, DeviceBuffer, EventTimer, Kernel, KernelArg,
    KernelSet, KernelTimer, Manifest, Result, RuntimeError, Stream, TuneCache, TuneKey,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

struct Options {
    ptx_dir: PathBuf,
    cache: Option<PathBuf>,
    corrupt_cache: bool,
    expect_cached: bool,
    sizes: Vec<usize>,
    device: usize,
    warmup: u32,
    runs: u32,
    cubin: Option<PathBuf>,
    softmax_dir: Option<PathBuf>,
}

const USAGE: &str = "usage: runtime_gpu_check --ptx-dir DIR [--cache FILE] [--corrupt-cache] \
[--expect-cached] [--sizes N,N,..] [--device I] [--warmup K] [--runs K] [--cubin FILE] [--softmax-dir DIR]";

fn parse_options() -> std::result::Result<Options, String> {
    let mut options = Options {
        ptx_dir: PathBuf::new(),
        cache: None,
        corrupt_cache: false,
        expect_cached: false,
        sizes: vec![1 << 16, 1 << 20, 1 << 26],
        device: 0,
        warmup: 3,
        runs: 20,
        cubin: None,
        softmax_dir: None,
    };
    let mut args = std::env::args().skip(1);
    let mut have_dir = false;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--ptx-dir" => {
                options.ptx_dir = value("--ptx-dir")?.into();
                have_dir = true;
            }
            "--cache" => options.cache = Some(value("--cache")?.into()),
            "--cubin" => options.cubin = Some(value("--cubin")?.into()),
            "--softmax-dir" => options.softmax_dir = Some(value("--softmax-dir")?.into()),
            "--corrupt-cache" => options.corrupt_cache = true,
            "--expect-cached" => options.expect_cached = true,
            "--sizes" => {
                options.sizes = value("--sizes")?
                    .split(',')
                    .map(|s| {
                        s.trim()
                            .parse::<usize>()
                            .map_err(|e| format!("--sizes {s}: {e}"))
                    })
                    .collect::<std::result::Result<_, _>>()?;
            }
            "--device" => options.device = number(&value("--device")?)?,
            "--warmup" => options.warmup = number(&value("--warmup")?)?,
            "--runs" => options.runs = number(&value("--runs")?)?,
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    if !have_dir {
        return Err(format!("--ptx-dir is required\n{USAGE}"));
    }
    if let Some(bad) = options
        .sizes
        .iter()
        .find(|&&n| n == 0 || n % 1024 != 0 || n > i32::MAX as usize)
    {
        return Err(format!(
            "--sizes: {bad} is not a positive multiple of 1024 below 2^31"
        ));
    }
    Ok(options)
}

fn number<T: std::str::FromStr>(text: &str) -> std::result::Result<T, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a number"))
}

/// Everything the run found, printed as the final JSON line.
#[derive(Default)]
struct Report {
    device: Value,
    kernels: Vec<Value>,
    correctness: Vec<Value>,
    features: Vec<Value>,
    softmax: Vec<Value>,
    autotune: Vec<Value>,
    errors: Vec<String>,
    warnings: Vec<String>,
    cache: Value,
    benchmark_calls: u64,
    no_device: bool,
}

impl Report {
    fn error(&mut self, step: &str, err: impl std::fmt::Display) {
        let line = format!("{step}: {err}");
        println!("ERROR {line}");
        self.errors.push(line);
    }
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(o) => o,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(3);
        }
    };
    let mut report = Report::default();
    if let Err(e) = run(&options, &mut report) {
        report.no_device = matches!(e, RuntimeError::NoDevice(_));
        report.error("stopped", e);
    }
    let ok = report.errors.is_empty() && !(options.expect_cached && report.benchmark_calls > 0);
    if options.expect_cached && report.benchmark_calls > 0 {
        println!(
            "FAIL expected every size from the cache, but {} configs were benchmarked",
            report.benchmark_calls
        );
    }
    let summary = json!({
        "ok": ok,
        "device": report.device,
        "kernels": report.kernels,
        "correctness": report.correctness,
        "features": report.features,
        "softmax": report.softmax,
        "autotune": report.autotune,
        "cache": report.cache,
        "benchmark_calls": report.benchmark_calls,
        "expect_cached": options.expect_cached,
        "warnings": report.warnings,
        "errors": report.errors,
    });
    println!("{}", if ok { "RESULT ok" } else { "RESULT FAILED" });
    println!("{summary}");
    match (ok, report.no_device) {
        (true, _) => ExitCode::SUCCESS,
        (false, true) => ExitCode::from(2),
        (false, false) => ExitCode::from(1),
    }
}

fn run(options: &Options, report: &mut Report) -> Result<()> {
    let driver = opgen_runtime::driver::init()?;
    let device = Device::open(options.device)?;
    let props = device.properties().clone();
    println!(
        "device {}: {} (sm_{}{}, {} SMs), driver {}.{}",
        options.device,
        props.name,
        props.compute_capability.0,
        props.compute_capability.1,
        props.sm_count,
        driver.version / 1000,
        driver.version % 1000 / 10
    );
    report.device = json!({
        "ordinal": options.device,
        "name": props.name,
        "compute_capability": format!("{}.{}", props.compute_capability.0, props.compute_capability.1),
        "sm_count": props.sm_count,
        "driver_version": driver.version,
    });

    let manifest = Manifest::load(&options.ptx_dir)?;
    let variants: Vec<_> = manifest.variants_of("add").cloned().collect();
    if variants.is_empty() {
        return Err(RuntimeError::Manifest {
            path: options.ptx_dir.join("manifest.json"),
            message: "no variant of kernel `add`".to_string(),
        });
    }
    let mut kernels = Vec::new();
    for variant in &variants {
        let id = variant.config_id(&manifest.tuning_macros);
        let kernel = match Kernel::load(&device, &manifest, variant) {
            Ok(k) => k,
            Err(e) => {
                report.error(&format!("load {id}"), e);
                continue;
            }
        };
        let Some(size) = variant
            .macros
            .get("SIZE")
            .and_then(|s| s.parse::<usize>().ok())
        else {
            report.error(
                &format!("load {id}"),
                "manifest variant has no numeric SIZE macro",
            );
            continue;
        };
        describe_kernel(&kernel, &id, report);
        kernels.push((id, size, kernel));
    }
    println!(
        "modules loaded: {} (cache holds {})",
        device.module_cache().loads(),
        device.module_cache().len()
    );
    let stream = Stream::new(&device)?;
    if let Some(dir) = &options.softmax_dir {
        if let Err(e) = softmax::check(dir, &device, &stream, options.runs, report) {
            report.error("softmax", e);
        }
    }
    if kernels.is_empty() {
        return Ok(());
    }
    check_argument_errors(&kernels[0].2, &stream, report);
    features::check(&device, &stream, options.cubin.as_deref(), report);

    let max_n = options
        .sizes
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(1 << 20);
    let buffers = Buffers::new(&device, max_n)?;
    for (id, size, kernel) in &kernels {
        check_add(&buffers, &stream, kernel, id, *size, 1 << 20, report);
    }
    autotune(options, &device, &stream, &buffers, &manifest, report)
}

fn describe_kernel(kernel: &Kernel, id: &str, report: &mut Report) {
    let a = kernel.attributes();
    let occupancy = kernel.max_active_blocks_per_sm();
    let grid = kernel.persistent_grid(u32::MAX);
    println!(
        "kernel add [{id}]: {} regs/thread, {} B static shared, max {} threads/block, {} B local, \
         occupancy {} blocks/SM, persistent grid {}",
        a.registers_per_thread,
        a.static_shared_bytes,
        a.max_threads_per_block,
        a.local_bytes_per_thread,
        show(&occupancy),
        show(&grid)
    );
    report.kernels.push(json!({
        "config": id,
        "registers_per_thread": a.registers_per_thread,
        "static_shared_bytes": a.static_shared_bytes,
        "max_threads_per_block": a.max_threads_per_block,
        "local_bytes_per_thread": a.local_bytes_per_thread,
        "blocks_per_sm": occupancy.as_ref().ok(),
        "persistent_grid": grid.as_ref().ok(),
    }));
    if let Err(e) = occupancy.and(grid) {
        report.error(&format!("occupancy {id}"), e);
    }
}

fn show<T: std::fmt::Display>(r: &Result<T>) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(_) => "error".to_string(),
    }
}

/// Wrong arguments must come back as errors naming kernel and parameter.
fn check_argument_errors(kernel: &Kernel, stream: &Stream, report: &mut Report) {
    let wrong = [
        KernelArg::F32(1.0),
        KernelArg::Ptr(0),
        KernelArg::Ptr(0),
        KernelArg::Ptr(0),
    ];
    match kernel.launch(stream, 1, &wrong) {
        Err(e @ RuntimeError::ArgType { .. }) => println!("bad argument rejected: {e}"),
        other => report.error(
            "argument check",
            format!("expected a type error, got {other:?}"),
        ),
    }
}

/// Inputs with known values; `c` is overwritten by every launch.
struct Buffers {
    a: DeviceBuffer,
    b: DeviceBuffer,
    c: DeviceBuffer,
    a_host: Vec<f32>,
    b_host: Vec<f32>,
}

impl Buffers {
    fn new(device: &Arc<Device>, n: usize) -> Result<Buffers> {
        // Small integers and halves: every sum is exact in f32.
        let a_host: Vec<f32> = (0..n).map(|i| (i % 4099) as f32 * 0.5).collect();
        let b_host: Vec<f32> = (0..n).map(|i| (i % 1013) as f32 - 300.25).collect();
        Ok(Buffers {
            a: DeviceBuffer::from_slice(device, &a_host)?,
            b: DeviceBuffer::from_slice(device, &b_host)?,
            c: DeviceBuffer::alloc(device, n * 4)?,
            a_host,
            b_host,
        })
    }

    fn args(&self, n: usize) -> [KernelArg; 4] {
        [
            KernelArg::I32(n as i32),
            self.a.arg(),
            self.b.arg(),
            self.c.arg(),
        ]
    }
}

fn launch_add(
    kernel: &Kernel,
    stream: &Stream,
    buffers: &Buffers,
    size: usize,
    n: usize,
) -> Result<()> {
    kernel.launch(stream, (n / size) as u32, &buffers.args(n))
}

/// Runs one variant on the first `n` elements and compares with the CPU.
fn check_add(
    buffers: &Buffers,
    stream: &Stream,
    kernel: &Kernel,
    id: &str,
    size: usize,
    n: usize,
    report: &mut Report,
) {
    let outcome = (|| -> Result<(usize, Option<usize>)> {
        buffers.c.fill_bytes(0xff)?; // NaN everywhere: unwritten elements show
        launch_add(kernel, stream, buffers, size, n)?;
        stream.synchronize()?;
        let mut got = vec![0f32; n];
        buffers.c.copy_to_host(&mut got)?;
        let mut mismatches = 0;
        let mut first = None;
        let inputs = buffers.a_host.iter().zip(&buffers.b_host);
        for (i, (value, (a, b))) in got.iter().zip(inputs).enumerate() {
            if value.to_bits() != (a + b).to_bits() {
                mismatches += 1;
                first.get_or_insert(i);
            }
        }
        Ok((mismatches, first))
    })();
    match outcome {
        Ok((0, _)) => {
            println!("correct: add [{id}] n={n}, all elements equal the CPU sum");
            report
                .correctness
                .push(json!({"config": id, "n": n, "ok": true, "mismatches": 0}));
        }
        Ok((count, first)) => {
            let i = first.unwrap_or(0);
            report.error(
                &format!("correctness add [{id}] n={n}"),
                format!(
                    "{count} elements differ; first at {i}: {} + {} should be {}",
                    buffers.a_host[i],
                    buffers.b_host[i],
                    buffers.a_host[i] + buffers.b_host[i]
                ),
            );
            report
                .correctness
                .push(json!({"config": id, "n": n, "ok": false, "mismatches": count}));
        }
        Err(e) => {
            report
                .correctness
                .push(json!({"config": id, "n": n, "ok": false, "error": e.to_string()}));
            report.error(&format!("correctness add [{id}] n={n}"), e);
        }
    }
}

fn autotune(
    options: &Options,
    device: &Arc<Device>,
    stream: &Stream,
    buffers: &Buffers,
    manifest: &Manifest,
    report: &mut Report,
) -> Result<()> {
    // The variants again, as a plugin holds them: served from the module cache.
    let loads_before = device.module_cache().loads();
    let set = KernelSet::load(device, manifest, "add")?;
    let reloaded = device.module_cache().loads() - loads_before;
    println!(
        "kernel set: {} variants of add, {reloaded} modules loaded again (0: cache hits)",
        set.kernels().len()
    );
    if reloaded != 0 {
        report.error("module cache", format!("{reloaded} modules loaded twice"));
    }
    let size_of = |kernel: &Kernel| -> Result<usize> {
        kernel
            .variant()
            .macros
            .get("SIZE")
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| RuntimeError::Manifest {
                path: manifest.dir.join("manifest.json"),
                message: format!("variant {} has no numeric SIZE", kernel.variant().file),
            })
    };
    let cache_path = options
        .cache
        .clone()
        .or_else(opgen_runtime::default_cache_path)
        .unwrap_or_else(|| PathBuf::from("autotune.json"));
    if options.corrupt_cache {
        std::fs::write(&cache_path, b"\x00\xffthis is not JSON {{{").map_err(|source| {
            RuntimeError::Io {
                path: cache_path.clone(),
                source,
            }
        })?;
        println!("cache {}: overwritten with garbage", cache_path.display());
    }
    let cache = TuneCache::open(&cache_path);
    let load = match cache.load_status() {
        CacheLoad::Missing => "missing".to_string(),
        CacheLoad::Loaded { entries } => format!("loaded {entries} entries"),
        CacheLoad::Corrupt(why) => format!("corrupt, ignored ({why})"),
        CacheLoad::OtherVersion(v) => format!("format version {v}, ignored"),
        CacheLoad::Unreadable(why) => format!("unreadable, ignored ({why})"),
    };
    println!("cache {}: {load}", cache_path.display());
    let settings = BenchSettings {
        warmup: options.warmup,
        runs: options.runs,
    };
    let mut tuner = Autotuner::new(cache).with_settings(settings);
    let mut timer = EventTimer::new(stream)?;
    for &n in &options.sizes {
        let key = TuneKey::new(
            "add",
            &[&[n as u64]],
            &["f32"],
            device.name(),
            set.configs(),
        );
        let tuned = set.tune(&mut tuner, &key, stream, |kernel| {
            launch_add(kernel, stream, buffers, size_of(kernel)?, n)
        });
        let (kernel, choice) = match tuned {
            Ok(t) => t,
            Err(e) => {
                report.error(&format!("autotune n={n}"), e);
                continue;
            }
        };
        let size = &size_of(kernel)?;
        // Bandwidth of the pick, measured now whether it came from the cache or not.
        let mut times = Vec::new();
        let measured = (|| -> Result<f64> {
            for _ in 0..options.warmup {
                timer.time_ms(&mut || launch_add(kernel, stream, buffers, *size, n))?;
            }
            for _ in 0..options.runs.max(1) {
                times.push(timer.time_ms(&mut || launch_add(kernel, stream, buffers, *size, n))?);
            }
            Ok(opgen_runtime::autotune::median(&mut times))
        })();
        let ms = match measured {
            Ok(ms) => ms,
            Err(e) => {
                report.error(&format!("timing n={n}"), e);
                continue;
            }
        };
        let gbps = (3 * n * 4) as f64 / (ms * 1e-3) / 1e9;
        println!(
            "autotune add n={n}: picked {} ({}), {:.4} ms, {:.0} GB/s",
            choice.config,
            if choice.from_cache {
                "from cache"
            } else {
                "benchmarked"
            },
            ms,
            gbps
        );
        report.autotune.push(json!({
            "n": n,
            "picked": choice.config,
            "size": size,
            "from_cache": choice.from_cache,
            "time_ms": ms,
            "gbps": gbps,
        }));
        check_add(buffers, stream, kernel, &choice.config, *size, n, report);
    }
    report.benchmark_calls = tuner.benchmark_calls();
    for w in tuner.warnings() {
        println!("WARNING {w}");
        report.warnings.push(w.clone());
    }
    println!(
        "autotune: {} configs benchmarked; cache {} holds {} entries",
        tuner.benchmark_calls(),
        cache_path.display(),
        tuner.cache().len()
    );
    let reread = TuneCache::open(&cache_path);
    report.cache = json!({
        "path": cache_path.display().to_string(),
        "on_open": load,
        "entries_after": tuner.cache().len(),
        "rereads_cleanly": matches!(reread.load_status(), CacheLoad::Loaded { .. }),
    });
    if !matches!(reread.load_status(), CacheLoad::Loaded { .. }) {
        report.error(
            "cache",
            format!(
                "after saving, reading it back gives {:?}",
                reread.load_status()
            ),
        );
    }
    Ok(())
}
