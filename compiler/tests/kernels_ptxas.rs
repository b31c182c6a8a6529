//! Every kernel under `tests/kernels/` compiles for each macro set its
//! `// tritonc: ...` lines give (every point of list macros), for sm_80,
//! sm_90 and sm_90a, and ptxas accepts every PTX file.

mod common;
mod source_support;

use common::find_ptxas;
use std::path::{Path, PathBuf};
use std::process::Command;
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::space::{self, arch_name};
use tritonc::driver::{CompileOptions, Define, Source};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// (flags, num_warps) of each `// tritonc:` line.
fn check_lines(text: &str) -> Vec<(Vec<Define>, u32)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("// tritonc:"))
        .map(|args| {
            let words = shlex::split(args).expect("quoted `// tritonc:` line");
            let mut defines = Vec::new();
            let mut num_warps = 4;
            let mut it = words.iter();
            while let Some(w) = it.next() {
                if let Some(d) = w.strip_prefix("-D") {
                    defines.push(Define::parse(d).expect("valid -D"));
                } else if w == "--num-warps" {
                    num_warps = it
                        .next()
                        .and_then(|n| n.parse().ok())
                        .expect("--num-warps N");
                } else {
                    panic!("unknown flag `{w}` in a `// tritonc:` line");
                }
            }
            (defines, num_warps)
        })
        .collect()
}

#[test]
fn every_test_kernel_passes_ptxas() {
    let ptxas = match find_ptxas() {
        Some(p) => p,
        None if std::env::var_os("CI").is_some() => panic!("ptxas not found: run scripts/setup.sh"),
        None => {
            eprintln!("NOTE: ptxas not found; only compiling. Run scripts/setup.sh to install it.");
            PathBuf::new()
        }
    };
    let dir = workspace_root().join("tests/kernels");
    let kernels = source_support::tc_files(&dir);
    assert!(
        kernels.len() >= 5,
        "expected the seed kernels in {}",
        dir.display()
    );
    let out = std::env::temp_dir().join(format!("tritonc-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in &kernels {
        let source = Source::read(path).unwrap();
        let lines = check_lines(&source.text);
        assert!(
            !lines.is_empty(),
            "{} has no `// tritonc:` line",
            path.display()
        );
        for (defines, num_warps) in &lines {
            for arch in [Arch::Sm80, Arch::Sm90, Arch::Sm90a] {
                let options = CompileOptions {
                    include_dirs: vec![dir.clone()],
                    codegen: CodegenOptions {
                        arch,
                        num_warps: *num_warps,
                        num_stages: None,
                        split_k: None,
                        tma: false,
                        tma_multicast: false,
                        warp_specialize: false,
                        misaligned_runs: false,
                    },
                };
                for result in space::compile_all(&source, defines, &options, |_| {}) {
                    let kernels = match result.outcome {
                        Ok(k) => k,
                        Err(e) => {
                            failures.push(format!("{} [{}]: {}", path.display(), result.point, e));
                            continue;
                        }
                    };
                    for k in kernels {
                        checked += 1;
                        if ptxas.as_os_str().is_empty() {
                            continue;
                        }
                        let file = out.join(format!("k{checked}.ptx"));
                        std::fs::write(&file, &k.compiled.ptx).unwrap();
                        let run = Command::new(&ptxas)
                            .arg(format!("-arch={}", arch_name(arch)))
                            .arg(&file)
                            .arg("-o")
                            .arg(out.join("k.cubin"))
                            .output()
                            .expect("ptxas runs");
                        if !run.status.success() {
                            failures.push(format!(
                                "{} [{}] {} for {}: ptxas: {}",
                                path.display(),
                                result.point,
                                k.compiled.name,
                                arch_name(arch),
                                String::from_utf8_lossy(&run.stderr)
                            ));
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 0);
    eprintln!("ptxas accepted {checked} kernels");
}
