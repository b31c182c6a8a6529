//! The `tritonc` binary end to end: tuning spaces, emitted PTX, errors.

mod common;

use common::tritonc;
use std::path::PathBuf;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tritonc-cli-{}-{}", name, std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn all_configs_writes_one_ptx_per_point_and_a_manifest() {
    let dir = temp_dir("space");
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=[32,64,128,256]",
        "--all-configs",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut ptx: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ptx"))
        .collect();
    ptx.sort();
    assert_eq!(
        ptx,
        [
            "add_SIZE-128.ptx",
            "add_SIZE-256.ptx",
            "add_SIZE-32.ptx",
            "add_SIZE-64.ptx"
        ]
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["tuning_macros"], serde_json::json!(["SIZE"]));
    let variants = manifest["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 4);
    let sizes: Vec<&str> = variants
        .iter()
        .map(|v| v["macros"]["SIZE"].as_str().unwrap())
        .collect();
    assert_eq!(sizes, ["32", "64", "128", "256"]);
    for v in variants {
        assert_eq!(v["kernel"], "add");
        assert_eq!(v["macros"]["TYPE"], "float");
        assert_eq!(v["num_warps"], 4);
        let params: Vec<String> = v["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p["type"].as_str().unwrap(),
                    p["name"].as_str().unwrap()
                )
            })
            .collect();
        assert!(params.iter().any(|p| p.starts_with("f32* ")), "{params:?}");
        assert!(params.iter().any(|p| p.starts_with("i32 ")), "{params:?}");
        let text = std::fs::read_to_string(dir.join(v["file"].as_str().unwrap())).unwrap();
        assert!(
            text.contains(".entry add"),
            "PTX of {} has no entry",
            v["file"]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn add_with_1024_f32_uses_128_bit_loads() {
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=1024",
        "--emit",
        "ptx",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ptx = String::from_utf8(out.stdout).unwrap();
    assert!(ptx.contains("ld.global.v4"), "no 128-bit loads in:\n{ptx}");
    assert!(ptx.contains("st.global.v4"), "no 128-bit stores in:\n{ptx}");
}

#[test]
fn emit_ir_prints_triton_ir() {
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=128",
        "--emit",
        "ir",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ir = String::from_utf8(out.stdout).unwrap();
    assert!(ir.contains("add"), "{ir}");
    assert!(ir.contains("f32*"), "{ir}");
}

#[test]
fn a_list_without_all_configs_is_a_clear_error() {
    let out = tritonc(&["tests/kernels/add.tc", "-DTYPE=float", "-DSIZE=[32,64]"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("`SIZE` has a list of values"), "{err}");
    assert!(err.contains("--all-configs"), "{err}");
}

#[test]
fn a_shape_error_points_at_the_line_with_a_caret() {
    let dir = temp_dir("shape");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.tc");
    std::fs::write(
        &file,
        "__global__ void f(float* p) {\n  float x[16, 8] = 1;\n  float y[16, 8] = 2;\n  float z[8, 8] = x + y;\n}\n",
    )
    .unwrap();
    let out = tritonc(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("bad.tc:4:"), "{err}");
    assert!(err.contains("[16, 8]") && err.contains("[8, 8]"), "{err}");
    assert!(err.contains('^'), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_file_and_bad_define_are_errors_not_panics() {
    let out = tritonc(&["tests/kernels/nope.tc"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let out = tritonc(&["tests/kernels/add.tc", "-D1X=2"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("macro name"), "{}", stderr(&out));
}

#[test]
fn transpose_stages_through_shared_memory() {
    let out = tritonc(&[
        "tests/kernels/transpose.tc",
        "-DTYPE=half",
        "-DTM=64",
        "-DTN=64",
        "--emit",
        "ptx",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ptx = String::from_utf8(out.stdout).unwrap();
    assert!(
        ptx.contains("st.shared"),
        "no shared-memory stores in:\n{ptx}"
    );
    assert!(
        ptx.contains("ld.shared"),
        "no shared-memory loads in:\n{ptx}"
    );
    assert!(ptx.contains("bar.sync"), "no barrier in:\n{ptx}");
}

const PREFETCH: [&str; 5] = [
    "tests/kernels/dot_prefetch.tc",
    "-DTYPE=half",
    "-DTM=64",
    "-DTN=64",
    "-DTK=16",
];

/// `tritonc PREFETCH... extra...` with `TRITONC_NO_PIPELINE` set to `no_pipeline`.
fn prefetch_with(extra: &[&str], no_pipeline: &str) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .current_dir(common::root())
        .args(PREFETCH)
        .args(extra)
        .env("TRITONC_NO_PIPELINE", no_pipeline)
        .output()
        .expect("tritonc runs")
}

#[test]
fn print_passes_lists_the_order_without_a_file() {
    let out = tritonc(&["--print-passes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listing = String::from_utf8(out.stdout).unwrap();
    let order: Vec<&str> = listing
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap_or(""))
        .collect();
    // The order itself is pinned by the pass manager's unit test.
    let standard: Vec<&str> = tritonc::passes::manager::STANDARD
        .iter()
        .map(|p| p.name())
        .collect();
    assert_eq!(order, standard, "{listing}");
    // The target comes from --arch and --num-warps (defaults included), so
    // the target-aware passes are not listed as skipped; widen-dot-k and
    // swap-ab are on the default sm_90, and split-k and tma-loads until
    // --split-k and --tma ask for them.
    let skipped: Vec<&str> = listing.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 4, "{listing}");
    assert!(
        skipped[0].contains("widen-dot-k") && skipped[0].contains("not sm_90a"),
        "{listing}"
    );
    assert!(
        skipped[1].contains("swap-ab") && skipped[1].contains("not sm_90a"),
        "{listing}"
    );
    assert!(
        skipped[2].contains("split-k") && skipped[2].contains("no split asked (--split-k)"),
        "{listing}"
    );
    assert!(
        skipped[3].contains("tma-loads") && skipped[3].contains("not asked for (--tma)"),
        "{listing}"
    );
    let asked = tritonc(&[
        "--print-passes",
        "--split-k",
        "4",
        "--tma",
        "--arch",
        "sm_90a",
    ]);
    assert!(!String::from_utf8(asked.stdout).unwrap().contains("skipped"));
}

#[test]
fn print_after_the_pipeline_pass_shows_its_decision() {
    let decision = |arch: &str, warps: &str| {
        let args = [
            "--emit",
            "ir",
            "--print-after",
            "pipeline-dot-loops",
            "--arch",
            arch,
            "--num-warps",
            warps,
        ];
        let out = prefetch_with(&args, "0");
        assert!(out.status.success(), "{}", stderr(&out));
        let dump = stderr(&out);
        assert!(
            dump.starts_with("// IR after pipeline-dot-loops on @dot (changed)\n"),
            "{dump}"
        );
        let line = dump
            .lines()
            .find(|l| l.contains(" = while"))
            .unwrap()
            .to_string();
        line[line.find("pipeline(").unwrap()..].to_string()
    };
    assert_eq!(
        decision("sm_80", "4"),
        "pipeline(stages 3, mma.sync warps 2x2, dot %c.3, cp.async %a x8 %b x8, acc #1, smem 12288 bytes)"
    );
    assert_eq!(
        decision("sm_90a", "4"),
        "pipeline(stages 8, wgmma warpgroups 1, dot %c.3, cp.async %a x8 %b x8, acc #1, smem 32768 bytes)"
    );
}

#[test]
fn print_after_shows_the_ir_after_the_pass_on_stderr() {
    let out = prefetch_with(&["--emit", "ir", "--print-after", "all"], "0");
    assert!(out.status.success(), "{}", stderr(&out));
    let dump = stderr(&out);
    assert!(
        dump.starts_with("// IR after fold-dot-accumulator on @dot (unchanged)\nfunc @dot("),
        "{dump}"
    );
    // After assign-layouts every tile type carries its layout's alias,
    // defined above the function.
    assert!(
        dump.contains("// IR after pipeline-dot-loops on @dot (changed)\n#L0 = "),
        "{dump}"
    );
    assert!(dump.contains(" : i32[64] #L"), "{dump}");
    // `--emit ir` prints the IR codegen gets: the same as after the last pass.
    let emitted = String::from_utf8(out.stdout).unwrap();
    assert!(
        dump.ends_with(&format!("{emitted}\n")),
        "{dump}\n---\n{emitted}"
    );
    // The pre-fetched operands are no longer carried: k, c, pa, pb.
    assert!(
        emitted.contains("%k.3, %c.4, %pa.4, %pb.4 = while"),
        "{emitted}"
    );
}

#[test]
fn print_after_all_works_with_ptx_and_reports_skipped_passes() {
    let on = prefetch_with(&["--print-after", "all"], "0");
    assert!(on.status.success(), "{}", stderr(&on));
    assert!(String::from_utf8_lossy(&on.stdout).contains(".entry dot("));
    let off = prefetch_with(&["--print-after", "all"], "1");
    let dump = stderr(&off);
    assert!(
        dump.contains(
            "\n// IR after unrotate-prefetch on @dot (skipped: TRITONC_NO_PIPELINE=1 is set)\n"
        ),
        "{dump}"
    );
    // Skipped: the pre-fetched a and b are still carried.
    assert!(dump.contains("%a.4, %b.4 = while"), "{dump}");
}

#[test]
fn an_unknown_pass_is_an_error_listing_the_passes() {
    let out = prefetch_with(&["--emit", "ir", "--print-after", "unroll"], "0");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: unknown pass `unroll`; the passes are: fold-dot-accumulator, eliminate-dead-code, unrotate-prefetch, \
         widen-dot-k, swap-ab, split-k, assign-layouts, pipeline-dot-loops, tma-loads, narrow-before-convert, insert-layout-conversions, \
         prefetch-dot-operands, allocate-shared-memory, place-barriers, \
         or `all`\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn print_after_needs_one_point() {
    let dir = temp_dir("print-after");
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=[32,64]",
        "--all-configs",
        "-o",
        dir.to_str().unwrap(),
        "--print-after",
        "all",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--print-after shows one point"),
        "{}",
        stderr(&out)
    );
}

/// `--kernel NAME` generates code for that kernel only: another kernel of
/// the file that could not be compiled (a tile over the limits) is not
/// compiled at all; an unknown name lists the file's kernels.
#[test]
fn kernel_flag_compiles_only_the_named_kernel() {
    let dir = temp_dir("kernel-flag");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two.tc");
    std::fs::write(
        &file,
        "__global__ void huge(float* p) {\n  int i[1048576] = 0 ... 1048576;\n  float* q[1048576] = p + i;\n  *q = 1.0;\n}\n\
         __global__ void small(float* p) {\n  int i[128] = 0 ... 128;\n  float* q[128] = p + i;\n  *q = 2.0;\n}\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let started = std::time::Instant::now();
    let out = tritonc(&[path, "--kernel", "small", "--emit", "ptx"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(".entry small"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Without --kernel both are compiled, and `huge` is over the limits.
    let out = tritonc(&[path, "--emit", "ptx"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("exceeds the target's limits"),
        "{}",
        stderr(&out)
    );
    let out = tritonc(&[path, "--kernel", "nope", "--emit", "ptx"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no kernel named `nope`; the file defines: huge, small"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Output errors are reported quietly, never a panic: a reader that went
/// away ends the output with success, a full disk is an error.
#[test]
fn stdout_closed_or_full_is_not_a_panic() {
    use std::process::{Command, Stdio};
    let args = [
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=128",
        "--emit",
        "ptx",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_tritonc"))
        .current_dir(common::root())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader leaves before any output
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = Command::new(env!("CARGO_BIN_EXE_tritonc"))
            .current_dir(common::root())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot write the output to stdout"),
            "{}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

/// Writes `text` as `name` in a fresh folder; returns its path.
fn source_file(name: &str, text: &str) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.tc"));
    std::fs::write(&file, text).unwrap();
    file
}

/// A kernel storing `expr` (a 16-element float tile) to `a`.
fn kernel_storing(expr: &str) -> String {
    format!("__global__ void k(int N, float* a) {{\n  int off[16] = 0 ... 16;\n  float v[16] = {expr};\n  *(a + off) = v;\n}}\n")
}

#[test]
fn a_tuning_space_over_the_limit_is_an_error_naming_its_size() {
    let list = format!(
        "[{}]",
        (1..=256)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let out_dir = temp_dir("space_out");
    let started = std::time::Instant::now();
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=128",
        &format!("-DA={list}"),
        &format!("-DB={list}"),
        &format!("-DC={list}"),
        "--all-configs",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the tuning space has 16777216 points (A: 256 x B: 256 x C: 256)")
            && err.contains("--max-configs"),
        "{err}"
    );
    assert!(started.elapsed().as_secs() < 5, "refused before expanding");
    // The limit is the flag's: 3 points over --max-configs 2.
    let out = tritonc(&[
        "tests/kernels/add.tc",
        "-DTYPE=float",
        "-DSIZE=[32,64,128]",
        "--max-configs",
        "2",
        "--all-configs",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("has 3 points (SIZE: 3), more than the 2"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn flat_chains_compile_up_to_the_depth_limit_and_are_located_past_it() {
    let ok = source_file(
        "chain_ok",
        &kernel_storing(&vec!["1.0"; 10_000].join(" + ")),
    );
    let out = tritonc(&[ok.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let deep = source_file(
        "chain_deep",
        &kernel_storing(&vec!["1.0"; 40_000].join(" + ")),
    );
    let out = tritonc(&[deep.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("more than 16384 operators deep") && err.contains("chain_deep.tc:3:"),
        "{err}"
    );
}

#[test]
fn macro_arguments_nested_100000_deep_end_in_a_diagnostic_quickly() {
    let text = format!(
        "#define F(x) (x)\n{}",
        kernel_storing(&format!(
            "{}1.0{}",
            "F(".repeat(100_000),
            ")".repeat(100_000)
        ))
    );
    let file = source_file("macro_nest", &text);
    let started = std::time::Instant::now();
    let out = tritonc(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("macro expansion is too large") && err.contains("macro_nest.tc:4:"),
        "{err}"
    );
    assert!(started.elapsed().as_secs() < 10);
}

#[test]
fn a_float_tile_is_not_a_mask() {
    let file = source_file(
        "float_mask",
        "__global__ void k(float* a) {\n  int off[16] = 0 ... 16;\n  float m[16] = 1.0;\n  *?(m)(a + off) = 1.0;\n}\n",
    );
    let out = tritonc(&[file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("is not a mask") && err.contains("float_mask.tc:4:"),
        "{err}"
    );
}

#[test]
fn an_empty_file_a_fifo_and_an_empty_list_item_are_errors() {
    let empty = source_file("empty", "");
    let out = tritonc(&[empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("the file defines no kernel")
            && stderr(&out).contains("empty.tc:1:1"),
        "{}",
        stderr(&out)
    );
    let fifo = temp_dir("fifo").with_extension("pipe");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // Opening a FIFO for reading would block until a writer comes.
        let out = tritonc(&[fifo.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{}",
            stderr(&out)
        );
    }
    let out = tritonc(&["tests/kernels/add.tc", "-DTYPE=float", "-DSIZE=[128,,256]"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("an empty item in the list"),
        "{}",
        stderr(&out)
    );
}
