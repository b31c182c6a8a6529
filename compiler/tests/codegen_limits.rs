//! Configs that ask for more than the target gives one program are refused
//! with what they need (issue 20): shared memory per block over the arch's
//! limit, tiles past what a thread can hold (refused before lowering, so the
//! answer is fast). A tuning space drops such configs with a note.
mod common;

use common::compile_kernel;
use std::time::{Duration, Instant};
use tritonc::codegen::Arch;
use tritonc::driver::CompileError;

fn compile_file(
    file: &str,
    defs: &[(&str, &str)],
    arch: Arch,
    num_warps: u32,
) -> Result<usize, CompileError> {
    let defs: Vec<(String, String)> = defs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    compile_kernel(file, &defs, arch, num_warps, None)
        .map(|mut k| k.remove(0).compiled.shared_bytes)
}

fn refused(result: Result<usize, CompileError>) -> String {
    match result {
        Err(e) => {
            assert!(e.is_resource_limit(), "not a limit: {e}");
            let text = e.to_string();
            assert!(text.contains("exceeds the target's limits"), "{text}");
            assert!(text.contains(".tc:"), "no location: {text}");
            text
        }
        Ok(bytes) => panic!("compiled ({bytes} bytes of shared memory)"),
    }
}

#[test]
fn shared_memory_over_the_arch_limit_is_refused() {
    // A half 256x256x256 dot stages 256 KiB of operands: over both limits.
    let dot = [
        ("TYPE", "half"),
        ("TM", "256"),
        ("TN", "256"),
        ("TK", "256"),
    ];
    for (arch, limit) in [(Arch::Sm90a, "232448"), (Arch::Sm80, "166912")] {
        let text = refused(compile_file("dot.tc", &dot, arch, 8));
        assert!(text.contains("262144 bytes of shared memory"), "{text}");
        assert!(text.contains(&format!("allows {limit}")), "{text}");
    }
    // What fits compiles.
    let fits = compile_file(
        "dot.tc",
        &[("TYPE", "half"), ("TM", "128"), ("TN", "128"), ("TK", "64")],
        Arch::Sm90a,
        8,
    )
    .unwrap();
    assert!(fits <= 232448, "{fits}");
}

#[test]
fn tiles_no_thread_can_hold_are_refused_fast() {
    let started = Instant::now();
    // 1,048,576 elements on 4 warps: 8192 a thread.
    let text = refused(compile_file(
        "add.tc",
        &[("TYPE", "float"), ("SIZE", "1048576")],
        Arch::Sm90,
        4,
    ));
    assert!(
        text.contains("8192 elements a thread with 4 warps"),
        "{text}"
    );
    // A half 512x512 transpose: 2048 a thread.
    let text = refused(compile_file(
        "transpose.tc",
        &[("TYPE", "half"), ("TM", "512"), ("TN", "512")],
        Arch::Sm90,
        4,
    ));
    assert!(text.contains("2048 elements a thread"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // 1024 a thread is still a program.
    compile_file(
        "add.tc",
        &[("TYPE", "float"), ("SIZE", "131072")],
        Arch::Sm90,
        4,
    )
    .unwrap();
}

#[test]
fn a_tuning_space_drops_configs_over_the_limits_with_a_note() {
    let dir = std::env::temp_dir().join(format!("tritonc-limits-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .current_dir(common::root())
        .args([
            "tests/kernels/add.tc",
            "-DTYPE=float",
            "-DSIZE=[1024,1048576]",
            "--all-configs",
            "-o",
        ])
        .arg(&dir)
        .output()
        .expect("tritonc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note: config TYPE=float SIZE=1048576 dropped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(1 over the target's limits dropped)"),
        "{stderr}"
    );
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert_eq!(manifest.matches("\"file\"").count(), 1, "{manifest}");
    assert!(!manifest.contains("1048576"), "{manifest}");
    // A space with nothing left is an error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .current_dir(common::root())
        .args([
            "tests/kernels/add.tc",
            "-DTYPE=float",
            "-DSIZE=[1048576,2097152]",
            "--all-configs",
            "-o",
        ])
        .arg(dir.join("none"))
        .output()
        .expect("tritonc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("every config of the space exceeds the target's limits"),
        "{stderr}"
    );
}
