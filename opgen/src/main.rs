//! `triton-opgen KERNEL.tc --framework torch [-o DIR] [--arch sm_80|sm_90|sm_90a] [--no-build] [--torch-dir DIR]`
//! `triton-opgen KERNEL.tc --framework ort [-o DIR] [--arch sm_80|sm_90|sm_90a] [--no-build] [--target-dir DIR]`
//! `triton-opgen KERNEL.tc --framework tf [-o DIR] [--arch sm_80|sm_90|sm_90a] [--no-build] [--python PYTHON]`
//! `triton-opgen KERNEL.tc --framework jax [-o DIR] [--arch sm_80|sm_90|sm_90a] [--no-build] [--python PYTHON]`

use clap::{Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use triton_opgen::generate::FolderOptions;
use triton_opgen::wheel::{write_wheel, WheelSpec};
use triton_opgen::{generate, jax, ort, tf, GenerateError, GenerateOptions, Progress};
use tritonc::codegen::Arch;

#[derive(Parser)]
#[command(
    name = "triton-opgen",
    version,
    about = "Generate a framework op from a Triton-C kernel and its `#pragma opgen` spec"
)]
struct Cli {
    /// The kernel file with `#pragma opgen` lines.
    kernel: PathBuf,
    #[arg(long, value_enum, default_value = "torch")]
    framework: Framework,
    /// Output folder (default: out/<namespace>_<op>).
    #[arg(short = 'o', long = "out")]
    out: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "sm_90")]
    arch: Arch,
    /// Only write the build folder (sources, prebuilt runtime, build.sh); no torch needed.
    #[arg(long)]
    no_build: bool,
    /// The torch package folder to build against (default: the one `python3` imports).
    #[arg(long)]
    torch_dir: Option<PathBuf>,
    /// The Python that finds torch (tensorflow for --framework tf, jax for --framework jax).
    #[arg(long, default_value = "python3")]
    python: String,
    /// The prebuilt runtime bridge (default: the one built into triton-opgen).
    #[arg(long)]
    bridge_lib: Option<PathBuf>,
    /// A pre-tuned table to embed: an autotune cache file written where this build of the op ran
    /// (its keys name the code they timed: a table from another build of the kernel is not used).
    #[arg(long)]
    tuned: Option<PathBuf>,
    /// `--framework ort`: cargo's target folder for the op library (default: OUT/target).
    #[arg(long)]
    target_dir: Option<PathBuf>,
    /// Include folders for the kernel's #include lines.
    #[arg(short = 'I')]
    include_dirs: Vec<PathBuf>,
    /// Variants compiled at once (default: one per core). Compiled points
    /// are cached in $TRITON_OPGEN_COMPILE_CACHE (default: the user cache
    /// folder's triton-opgen/compile; `off` turns it off).
    #[arg(short = 'j', long = "jobs", default_value_t = 0)]
    jobs: usize,
    /// Compile every variant with `tritonc --misaligned-runs`: loads whose
    /// rows are contiguous but only element-aligned (an odd N, K or leading
    /// stride) read 16-byte runs instead of elements. Off by default until
    /// checked on a GPU.
    #[arg(long)]
    misaligned_runs: bool,
    /// Most variants (dtypes x tune points x launch options) an op may
    /// compile; a larger space is an error at its `tune` line naming its size.
    #[arg(long, value_name = "N", default_value_t = tritonc::driver::tuning::DEFAULT_MAX_POINTS)]
    max_configs: u64,
    /// Also write a pip-installable wheel of the built op into OUT/dist/
    /// (torch, tf and jax: the module and its library; ort: a package whose
    /// get_library_path() gives the library).
    #[arg(long, conflicts_with = "no_build")]
    wheel: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Framework {
    Torch,
    /// ONNX Runtime custom-op library.
    Ort,
    /// TensorFlow custom-op library (tf.load_op_library) and Python helper.
    Tf,
    /// JAX: XLA FFI handlers and a Python module (jax.ffi.ffi_call, custom_vjp).
    Jax,
}

fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

fn report(bar: &ProgressBar, kernel: &std::path::Path, event: Progress) {
    match event {
        Progress::Start { total } => {
            bar.set_length(total);
            bar.println(format!(
                "compiling {total} variants of {}",
                kernel.display()
            ));
        }
        Progress::Compiled(label) => {
            bar.inc(1);
            bar.set_message(label.to_string());
        }
        Progress::Step(step) => bar.println(step),
    }
}

/// What a generator's success prints: a summary line, then the library line
/// or, when not built, `not built (--no-build): run ...`.
struct Outcome {
    summary: String,
    library: Option<String>,
    build_hint: String,
}

/// Runs one framework's generator under a progress bar and prints its
/// warnings and outcome (or its error).
fn run_generator<T>(
    cli: &Cli,
    generate: impl FnOnce(&mut dyn FnMut(Progress)) -> Result<T, GenerateError>,
    warnings: impl FnOnce(&T) -> &[String],
    outcome: impl FnOnce(&T) -> Outcome,
    wheel: impl FnOnce(&T) -> Result<(WheelSpec, PathBuf), String>,
) -> ExitCode {
    let bar = progress_bar();
    let result = generate(&mut |event| report(&bar, &cli.kernel, event));
    bar.finish_and_clear();
    match result {
        Ok(done) => {
            for w in warnings(&done) {
                eprintln!("warning: {w}");
            }
            let Outcome {
                summary,
                library,
                build_hint,
            } = outcome(&done);
            eprintln!("{summary}");
            match library {
                Some(lib) => eprintln!("library: {lib}"),
                None => eprintln!("not built (--no-build): run {build_hint}"),
            }
            if !cli.wheel {
                return ExitCode::SUCCESS;
            }
            let written =
                wheel(&done).and_then(|(spec, out_dir)| write_wheel(&out_dir.join("dist"), &spec));
            match written {
                Ok(path) => {
                    eprintln!("wheel: {} (pip install it)", path.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: the wheel was not written: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("{}", e.0.trim_end());
            ExitCode::FAILURE
        }
    }
}

fn main_ort(cli: &Cli) -> ExitCode {
    let opts = ort::OrtOptions {
        input: cli.kernel.clone(),
        out_dir: cli.out.clone(),
        arch: cli.arch,
        include_dirs: cli.include_dirs.clone(),
        no_build: cli.no_build,
        target_dir: cli.target_dir.clone(),
        tuned: cli.tuned.clone(),
    };
    run_generator(
        cli,
        |progress| ort::generate(&opts, progress),
        |done| &done.warnings,
        |done| Outcome {
            summary: format!(
                "{}: {} variants compiled; crate {}",
                done.context.qualified,
                done.variants,
                done.out_dir.display()
            ),
            library: done.library.as_ref().map(|lib| lib.display().to_string()),
            build_hint: format!(
                "`cargo build --release --manifest-path {}/Cargo.toml`",
                done.out_dir.display()
            ),
        },
        |done| Ok((ort::wheel_spec(done)?, done.out_dir.clone())),
    )
}

/// The options of the generators built with g++ against a framework that
/// `--python` finds (tf, jax).
fn folder_options(cli: &Cli) -> FolderOptions {
    FolderOptions {
        input: cli.kernel.clone(),
        out_dir: cli.out.clone(),
        arch: cli.arch,
        no_build: cli.no_build,
        python: cli.python.clone(),
        bridge_lib: cli.bridge_lib.clone(),
        include_dirs: cli.include_dirs.clone(),
        tuned: cli.tuned.clone(),
    }
}

/// The library line of a framework whose op is a Python module beside it.
fn library_and_import(lib: &Path, out_dir: &Path, module: &str) -> String {
    format!(
        "{}\nuse: sys.path.insert(0, \"{}\"); import {module}",
        lib.display(),
        out_dir.display()
    )
}

fn main_tf(cli: &Cli) -> ExitCode {
    let opts = folder_options(cli);
    run_generator(
        cli,
        |progress| tf::generate(&opts, progress),
        |done| &done.warnings,
        |done| Outcome {
            summary: format!(
                "{} (TensorFlow op {}): {} variants compiled; build folder {}",
                done.qualified,
                done.tf_name,
                done.variants,
                done.out_dir.display()
            ),
            library: done
                .library
                .as_ref()
                .map(|lib| library_and_import(lib, &done.out_dir, &done.module)),
            build_hint: format!(
                "`bash {}/build.sh` on a machine with TensorFlow and g++",
                done.out_dir.display()
            ),
        },
        |done| Ok((tf::wheel_spec(done)?, done.out_dir.clone())),
    )
}

fn main_jax(cli: &Cli) -> ExitCode {
    let opts = folder_options(cli);
    run_generator(
        cli,
        |progress| jax::generate(&opts, progress),
        |done| &done.warnings,
        |done| Outcome {
            summary: format!(
                "{} (JAX, XLA FFI target {}): {} variants compiled; build folder {}",
                done.qualified,
                done.target,
                done.variants,
                done.out_dir.display()
            ),
            library: done
                .library
                .as_ref()
                .map(|lib| library_and_import(lib, &done.out_dir, &done.module)),
            build_hint: format!(
                "`bash {}/build.sh` on a machine with jax and g++",
                done.out_dir.display()
            ),
        },
        |done| Ok((jax::wheel_spec(done)?, done.out_dir.clone())),
    )
}

fn main_torch(cli: &Cli) -> ExitCode {
    let opts = GenerateOptions {
        input: cli.kernel.clone(),
        out_dir: cli.out.clone(),
        arch: cli.arch,
        no_build: cli.no_build,
        torch_dir: cli.torch_dir.clone(),
        python: cli.python.clone(),
        bridge_lib: cli.bridge_lib.clone(),
        include_dirs: cli.include_dirs.clone(),
        tuned: cli.tuned.clone(),
    };
    run_generator(
        cli,
        |progress| generate(&opts, progress),
        |done| &done.warnings,
        |done| Outcome {
            summary: format!(
                "{}: {} variants compiled; build folder {}",
                done.spec.qualified_name(),
                done.variants,
                done.out_dir.display()
            ),
            library: done.library.as_ref().map(|lib| lib.display().to_string()),
            build_hint: format!(
                "`bash {}/build.sh` on a machine with torch and g++",
                done.out_dir.display()
            ),
        },
        |done| Ok((triton_opgen::torch::wheel_spec(done)?, done.out_dir.clone())),
    )
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    triton_opgen::variants::set_jobs(cli.jobs);
    triton_opgen::variants::set_misaligned_runs(cli.misaligned_runs);
    triton_opgen::variants::set_max_points(cli.max_configs);
    match cli.framework {
        Framework::Ort => main_ort(&cli),
        Framework::Tf => main_tf(&cli),
        Framework::Jax => main_jax(&cli),
        Framework::Torch => main_torch(&cli),
    }
}
