//! `tritonc`: compile a Triton-C kernel to Triton-IR, LLVM IR or PTX, for one
//! set of macro values or for a whole tuning space (`--all-configs`).

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tritonc::codegen::{Arch, CodegenOptions, CompiledKernel};
use tritonc::diagnostics::Diagnostic;
use tritonc::driver::space::{self, PointResult};
use tritonc::driver::{self, CompileError, CompileOptions, Define, KernelOutput, Source};
use tritonc::passes::{PassEvent, PassManager, PassSelection};
use tritonc::span::{SourceMap, Span};
use tritonc::timings::PhaseTimes;

#[derive(Parser, Debug)]
#[command(
    name = "tritonc",
    version,
    about = "Triton-C -> Triton-IR -> LLVM IR -> PTX"
)]
struct Cli {
    /// The kernel source (`.tc`).
    #[arg(required_unless_present = "print_passes")]
    file: Option<PathBuf>,
    /// Macro definition: `-DNAME=VALUE`; VALUE may be code (`-DUSE_A=^a`) or a
    /// list (`-DTM=[32,64,128]`), which makes a tuning space (see --all-configs).
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    defines: Vec<String>,
    /// Folder searched by `#include "..."`.
    #[arg(short = 'I', value_name = "DIR")]
    include_dirs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Arch::Sm90)]
    arch: Arch,
    /// Warps per program (threads = 32 x this).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=32))]
    num_warps: u32,
    /// Most buffers a pipelined loop keeps (default: on sm_90a's wgmma as
    /// many as fit the shared memory, up to 8; on mma.sync 2 or 3).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=8))]
    num_stages: Option<u32>,
    /// Split-K: this many programs (a cluster along grid axis 2, sm_90+)
    /// share the kernel's dot loop and sum their accumulators; launch with
    /// the grid's z multiplied by it (the manifest's `cluster_splits`) and
    /// one argument more, `split_tile`: the tile of program 0 (the runtime's
    /// `split_launch`).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=8))]
    split_k: Option<u32>,
    /// sm_90a: copy the operand tiles of pipelined wgmma loops with the
    /// tensor memory accelerator where each is a box of a tensor; launch
    /// with one 128-byte tensor map per copied tensor after the arguments
    /// (the manifest's `tensor_maps`, encoded by the runtime).
    #[arg(long)]
    tma: bool,
    /// With --tma: the two programs of a cluster along grid x share each
    /// stage's `b` box (TMA multicast) where the compiler proves both run
    /// the loop alike; launch with an even grid x (the manifest's
    /// `cluster_x`).
    #[arg(long, requires = "tma")]
    tma_multicast: bool,
    /// With --tma: a warpgroup of its own issues the copies (producer) while
    /// the kernel's warps multiply (consumers), on barriers per stage, where
    /// the compiler can compute every copy's origin from scalars; launch
    /// with the manifest's `producer_warps` more warps than `num_warps`.
    /// With --tma-multicast too, each producer copies half of `b` into both
    /// programs of its cluster where their tiles share it (an even grid x).
    #[arg(long, requires = "tma", conflicts_with = "split_k")]
    warp_specialize: bool,
    /// Loads whose rows are contiguous but only element-aligned (an odd N,
    /// K or leading stride) read each thread's 16-byte runs as two aligned
    /// loads and a funnel shift instead of element by element (off by
    /// default until checked on a GPU).
    #[arg(long)]
    misaligned_runs: bool,
    /// What to write.
    #[arg(long, value_enum, default_value_t = Emit::Ptx)]
    emit: Emit,
    /// Output file (default: standard output); with --all-configs, the output folder.
    #[arg(short = 'o', value_name = "PATH")]
    output: Option<PathBuf>,
    /// Compile every point of the tuning space into `-o DIR`: one PTX file per
    /// point and kernel, plus `manifest.json`.
    #[arg(long)]
    all_configs: bool,
    /// Most points a tuning space may have (each is a compile); a larger one
    /// is an error naming its size.
    #[arg(long, value_name = "N", default_value_t = driver::tuning::DEFAULT_MAX_POINTS)]
    max_configs: u64,
    /// Only this kernel, when the file defines several.
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Print the wall time of each compile phase to standard error.
    #[arg(long)]
    timings: bool,
    /// Print the Triton-IR after these IR passes to standard error (names
    /// separated by commas, or `all`; see --print-passes).
    #[arg(long, value_name = "PASS|all", value_delimiter = ',')]
    print_after: Vec<String>,
    /// List the IR passes in the order they run, and exit.
    #[arg(long)]
    print_passes: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum Emit {
    Ir,
    Llvm,
    Ptx,
}

fn main() -> ExitCode {
    let started = Instant::now();
    let cli = Cli::parse();
    let mut times = PhaseTimes::new();
    let outcome = run(&cli, &mut times);
    if cli.timings {
        eprintln!("{}", timings_report(&times, started.elapsed()));
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{}", message.trim_end());
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli, times: &mut PhaseTimes) -> Result<(), String> {
    let codegen = CodegenOptions {
        arch: cli.arch,
        num_warps: cli.num_warps,
        num_stages: cli.num_stages,
        split_k: cli.split_k,
        tma: cli.tma,
        tma_multicast: cli.tma_multicast,
        warp_specialize: cli.warp_specialize,
        misaligned_runs: cli.misaligned_runs,
    };
    if cli.print_passes {
        return write_stdout(&PassManager::standard(driver::pass_options(&codegen)).describe());
    }
    let print_after = PassSelection::parse(&cli.print_after).map_err(|e| format!("error: {e}"))?;
    let file = cli.file.as_deref().ok_or("error: no kernel file given")?;
    let defines = cli
        .defines
        .iter()
        .map(|d| Define::parse(d).map_err(|e| format!("error: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    driver::tuning::check_space(&driver::tuning::list_factors(&defines), cli.max_configs)
        .map_err(|e| format!("error: {e}"))?;
    let source = Source::read(file).map_err(|e| format!("error: {e}"))?;
    let options = CompileOptions {
        include_dirs: cli.include_dirs.clone(),
        codegen,
    };
    if cli.all_configs {
        let dir = cli
            .output
            .as_deref()
            .ok_or("error: --all-configs needs an output folder: -o DIR")?;
        if cli.emit != Emit::Ptx {
            return Err("error: --all-configs writes PTX; drop --emit or use --emit ptx".into());
        }
        if print_after != PassSelection::None {
            return Err(
                "error: --print-after shows one point; give one value per macro \
                 instead of --all-configs"
                    .into(),
            );
        }
        return compile_space(file, &source, &defines, &options, dir, times);
    }
    if let Some(list) = defines.iter().find(|d| d.is_list()) {
        return Err(format!(
            "error: `{}` has a list of values, which makes a tuning space; compile it with \
             `--all-configs -o DIR`, or give one value",
            list.name
        ));
    }
    let point = driver::tuning::expand(&defines).remove(0);
    // The IR after the selected passes goes to standard error, as with LLVM's
    // -print-after; the output proper stays on standard output.
    let mut print_ir_after = |event: &PassEvent<'_>| {
        let wanted_kernel = cli
            .kernel
            .as_ref()
            .is_none_or(|k| k == &event.function.name);
        if wanted_kernel && print_after.contains(event.pass) {
            eprintln!("{}", event.dump());
        }
    };
    let text = if cli.emit == Emit::Ir {
        let lowered = driver::lower_for_codegen(
            &source,
            &point.defines,
            &options.include_dirs,
            &options.codegen,
            times,
            &mut print_ir_after,
        )
        .map_err(|e| render(&e))?;
        lowered
            .module
            .functions
            .iter()
            .filter(|f| cli.kernel.as_ref().is_none_or(|k| k == &f.name))
            .map(tritonc::ir::printer::print_function)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        let keep_llvm_ir = cli.emit == Emit::Llvm;
        // With --kernel only that kernel goes through codegen.
        let wanted = cli.kernel.as_deref();
        let kernels = driver::compile_selected(
            &source,
            &point.defines,
            &options,
            keep_llvm_ir,
            times,
            &mut print_ir_after,
            &|name| wanted.is_none_or(|w| w == name),
        )
        .map_err(|e| render(&e))?;
        let names = match (kernels.is_empty(), wanted) {
            // Nothing matched: name the file's kernels in the error.
            (true, Some(_)) => driver::lower(&source, &point.defines, &options.include_dirs)
                .map(|l| l.module.functions.iter().map(|f| f.name.clone()).collect())
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let kernel = pick_kernel(kernels, wanted, &names, &source)?;
        if let Some(note) = switch_not_taken(&options.codegen, &kernel.compiled) {
            eprintln!("note: {note}");
        }
        match cli.emit {
            Emit::Llvm => kernel.compiled.llvm_ir,
            _ => kernel.compiled.ptx,
        }
    };
    match &cli.output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("error: cannot write {}: {e}", path.display())),
        None => write_stdout(&text),
    }
}

/// A TMA switch asked for that the kernel did not take (each is applied
/// only where the compiler proves it safe), for a note on standard error.
fn switch_not_taken(codegen: &CodegenOptions, kernel: &CompiledKernel) -> Option<String> {
    let name = &kernel.name;
    if codegen.tma && kernel.tensor_maps.is_empty() {
        Some(format!(
            "--tma: no loop of `{name}` copies by TMA (it needs a pipelined wgmma loop on \
             sm_90a whose loads are boxes of row-major tensors); compiled with cp.async"
        ))
    } else if codegen.tma_multicast && kernel.cluster_x == 1 {
        Some(format!(
            "--tma-multicast: `{name}`'s programs are not proven to run its loop alike; \
             each copies its own tiles"
        ))
    } else if codegen.warp_specialize && kernel.producer_warps == 0 {
        Some(format!(
            "--warp-specialize: no loop of `{name}` takes a producer warpgroup (it needs the \
             loop in the kernel's top region, no `return`, and its bound and copy origins \
             computed from scalars); thread 0 issues the copies"
        ))
    } else {
        None
    }
}

/// The phases, then what the process spent elsewhere (arguments, files, output).
fn timings_report(times: &PhaseTimes, since_main: Duration) -> String {
    let other = since_main.saturating_sub(times.total());
    format!(
        "tritonc timings (wall):\n{times}\n{:>9.2} ms  other (arguments, files)\n{:>9.2} ms  since main",
        other.as_secs_f64() * 1e3,
        since_main.as_secs_f64() * 1e3
    )
}

/// Writes the result to stdout: a reader that went away (`| head`) ends the
/// output quietly; another failure (a full disk) is an error, not a panic.
fn write_stdout(text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("error: cannot write the output to stdout: {e}")),
    }
}

fn render(e: &CompileError) -> String {
    match e {
        CompileError::Source { rendered, .. } | CompileError::ResourceLimit { rendered, .. } => {
            rendered.clone()
        }
        other => format!("error: {other}"),
    }
}

/// LLVM and PTX are one module per kernel: a file with several needs --kernel.
/// `all_names`: the file's kernels, for the error when none is `wanted`.
fn pick_kernel(
    kernels: Vec<KernelOutput>,
    wanted: Option<&str>,
    all_names: &[String],
    source: &Source,
) -> Result<KernelOutput, String> {
    let mut names: Vec<String> = kernels.iter().map(|k| k.compiled.name.clone()).collect();
    if names.is_empty() {
        names = all_names.to_vec();
    }
    let mut matching: Vec<KernelOutput> = kernels
        .into_iter()
        .filter(|k| wanted.is_none_or(|w| w == k.compiled.name))
        .collect();
    match (matching.len(), wanted) {
        (1, _) => Ok(matching.remove(0)),
        (0, Some(w)) => Err(format!("error: no kernel named `{w}`; the file defines: {}", names.join(", "))),
        // At the file's start, where a kernel would be (an empty or cut file).
        (0, None) => {
            let mut sources = SourceMap::new();
            let file = sources.add(source.path.display().to_string(), source.text.clone());
            Err(Diagnostic::error(Span::new(file, 0, 0), "the file defines no kernel")
                .with_note("a kernel is `__global__ void name(params) { ... }`")
                .render(&sources))
        }
        _ => Err(format!(
            "error: the file defines several kernels ({}); pick one with --kernel NAME, or use --all-configs -o DIR",
            names.join(", ")
        )),
    }
}

fn compile_space(
    file: &Path,
    source: &Source,
    defines: &[Define],
    options: &CompileOptions,
    dir: &Path,
    times: &mut PhaseTimes,
) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("error: cannot create {}: {e}", dir.display()))?;
    let total = driver::tuning::expand(defines).len() as u64;
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} configs {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let mut failures = Vec::new();
    let results = space::compile_all(source, defines, options, |r: &PointResult| {
        times.merge(&r.times);
        bar.set_message(r.point.to_string());
        bar.inc(1);
        match &r.outcome {
            Err(e) if e.is_resource_limit() => {
                bar.suspend(|| eprintln!("note: config {} dropped: {}", r.point, e.summary()))
            }
            Err(e) => bar.suspend(|| eprintln!("config {} failed:\n{}", r.point, render(e))),
            Ok(_) => {}
        }
    });
    bar.finish_and_clear();
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kernel".into());
    let manifest = space::manifest(source, &stem, defines, options, &results);
    let mut written = 0usize;
    let mut dropped = 0usize;
    let mut variant = manifest.variants.iter();
    for result in &results {
        match &result.outcome {
            Ok(kernels) => {
                for k in kernels {
                    let entry = variant.next().expect("one manifest entry per kernel");
                    let path = dir.join(&entry.file);
                    std::fs::write(&path, &k.compiled.ptx)
                        .map_err(|e| format!("error: cannot write {}: {e}", path.display()))?;
                    written += 1;
                }
            }
            Err(e) if e.is_resource_limit() => dropped += 1,
            Err(e) => failures.push(format!("{}: {}", result.point, e.summary())),
        }
    }
    let manifest_path = dir.join("manifest.json");
    let json = serde_json::to_string_pretty(&manifest).map_err(|e| format!("error: {e}"))?;
    std::fs::write(&manifest_path, json + "\n")
        .map_err(|e| format!("error: cannot write {}: {e}", manifest_path.display()))?;
    eprintln!(
        "compiled {} of {} configs{}: {} PTX files in {} (manifest: {})",
        total as usize - failures.len() - dropped,
        total,
        if dropped > 0 {
            format!(" ({dropped} over the target's limits dropped)")
        } else {
            String::new()
        },
        written,
        dir.display(),
        manifest_path.display()
    );
    if written == 0 && failures.is_empty() {
        return Err("error: every config of the space exceeds the target's limits".to_string());
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "error: {} configs failed:\n  {}",
            failures.len(),
            failures.join("\n  ")
        ))
    }
}
