//! `difftest --count N [--first-seed S] -o DIR [-j JOBS]`: generates kernels
//! for seeds S..S+N, compiles and interprets each, and writes
//! `DIR/cases.jsonl` (kernel, launch, PTX, expected outputs) for the GPU
//! check and `DIR/findings.jsonl` (kernels the compiler or the interpreter
//! failed on). Exit status 1 when there are findings.

use base64::Engine;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tritonc_difftest::case::{build, Outcome};
use tritonc_difftest::kernel::generate;

#[derive(Parser)]
#[command(
    name = "difftest",
    version,
    about = "Random Triton-C kernels: PTX and interpreter results for differential testing"
)]
struct Cli {
    /// How many kernels.
    #[arg(long, default_value_t = 1000)]
    count: u64,
    /// The first seed (kernels use seeds first..first+count).
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Output folder.
    #[arg(short = 'o', long = "out")]
    out: PathBuf,
    /// Threads (default: one per core).
    #[arg(short = 'j', long = "jobs", default_value_t = 0)]
    jobs: usize,
}

struct Sink {
    cases: std::fs::File,
    findings: std::fs::File,
    counts: [u64; 3],
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if let Err(e) = std::fs::create_dir_all(&cli.out) {
        eprintln!("error: cannot create {}: {e}", cli.out.display());
        return std::process::ExitCode::from(2);
    }
    let open = |name: &str| {
        std::fs::File::create(cli.out.join(name))
            .unwrap_or_else(|e| panic!("cannot create {name}: {e}"))
    };
    let sink = Mutex::new(Sink {
        cases: open("cases.jsonl"),
        findings: open("findings.jsonl"),
        counts: [0; 3],
    });
    let jobs = if cli.jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cli.jobs
    };
    let bar = ProgressBar::new(cli.count);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} kernels, {elapsed} ({eta} left)")
            .unwrap(),
    );
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= cli.count {
                    break;
                }
                let seed = cli.first_seed + i;
                let outcome = build(seed, generate(seed));
                record(&sink, seed, outcome);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let sink = sink.into_inner().unwrap();
    let [cases, over, failed] = sink.counts;
    println!(
        "{} kernels: {cases} cases written, {over} over the target's limits, {failed} findings -> {}",
        cli.count,
        cli.out.display()
    );
    if failed > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

fn record(sink: &Mutex<Sink>, seed: u64, outcome: Outcome) {
    let mut sink = sink.lock().unwrap();
    match outcome {
        Outcome::Case(case) => {
            let mut json = serde_json::to_value(&case).unwrap();
            let expected: serde_json::Map<String, serde_json::Value> = case
                .expected
                .iter()
                .map(|(name, bytes)| {
                    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
                    (name.clone(), b64.into())
                })
                .collect();
            json["expected"] = expected.into();
            writeln!(sink.cases, "{json}").unwrap();
            sink.counts[0] += 1;
        }
        Outcome::OverLimit => sink.counts[1] += 1,
        Outcome::Failed {
            stage,
            message,
            kernel,
        } => {
            let json = serde_json::json!({
                "seed": seed, "stage": stage, "message": message, "source": kernel.source,
                "arch": kernel.arch, "num_warps": kernel.num_warps,
            });
            writeln!(sink.findings, "{json}").unwrap();
            sink.counts[2] += 1;
        }
    }
}
