//! Generating the PyTorch op: rendered sources (snapshots), the --no-build
//! folder, errors when torch is missing or the args do not fit the kernel,
//! and (with OPGEN_TEST_TORCH_DIR set) a real build against torch's headers.

#[path = "python_support/mod.rs"]
mod python_support;

use python_support::fake_bridge;
use std::path::{Path, PathBuf};
use triton_opgen::{generate, GenerateOptions, Generated};
use tritonc::codegen::Arch;

fn op_path(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../tests/ops/{name}.tc",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn options(input: PathBuf, out: &Path, bridge: PathBuf) -> GenerateOptions {
    GenerateOptions {
        input,
        out_dir: Some(out.to_path_buf()),
        arch: Arch::Sm90,
        no_build: true,
        torch_dir: None,
        python: "python3".into(),
        bridge_lib: Some(bridge),
        include_dirs: Vec::new(),
        tuned: None,
    }
}

fn no_build(name: &str) -> (tempfile::TempDir, Generated) {
    no_build_file(&op_path(name))
}

fn no_build_file(input: &Path) -> (tempfile::TempDir, Generated) {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let out = tmp.path().join("out");
    let done = generate(&options(input.to_path_buf(), &out, bridge), |_| {})
        .unwrap_or_else(|e| panic!("{}", e.0));
    (tmp, done)
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn add_sources_snapshot() {
    let (_tmp, done) = no_build("add");
    assert_eq!(done.variants, 6);
    assert!(done.library.is_none());
    insta::assert_snapshot!("add_op_cpp", read(&done.out_dir, "op.cpp"));
    insta::assert_snapshot!("add_loader_py", read(&done.out_dir, "triton_add.py"));
    insta::assert_snapshot!("add_build_sh", read(&done.out_dir, "build.sh"));
}

#[test]
fn softmax_sources_snapshot() {
    let (_tmp, done) = no_build("softmax");
    // 4 TN x 2 ALIGN x 3 num_warps x 3 dtypes x (LOOP=0 at PERSIST 0 and 1,
    // LOOP=1 persistent only).
    assert_eq!(done.variants, 216);
    let cpp = read(&done.out_dir, "op.cpp");
    // A grid persistent where the variant's PERSIST says so, the one-tile
    // filter (LOOP=0 needs N <= TN), strided rows, no autograd.
    assert!(cpp.contains(", (PERSIST) != 0});"), "persistent flag");
    assert!(cpp.contains("if (!((N * (int64_t(1) - LOOP)) <= TN)) continue;"));
    assert!(cpp.contains("x.stride(0)"));
    assert!(!cpp.contains("Autograd"));
    insta::assert_snapshot!("softmax_op_cpp", cpp);
}

#[test]
fn no_build_folder_is_self_contained() {
    let (_tmp, done) = no_build("transpose");
    let dir = &done.out_dir;
    for f in [
        "op.cpp",
        "kernels.cpp",
        "triton_transpose.py",
        "build.sh",
        "include/opgen_bridge.h",
        "include/rust/cxx.h",
        "lib/libopgen_bridge.a",
        "variants.json",
        "ptx/0.ptx",
        "ptx/7.ptx",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("build.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert!(mode & 0o111 != 0, "build.sh is executable");
    }
    // Every variant's PTX is embedded as bytes and listed in the table.
    let kernels = read(dir, "kernels.cpp");
    assert_eq!(
        kernels.matches("static const unsigned char image_").count(),
        8
    );
    assert!(kernels.contains("triton_transpose_variant_count = 8;"));
    assert!(kernels.contains("\"TM=64 TN=32 num_warps=4\""));
    // ".version" of the first PTX, as decimal bytes: 46 = '.', 118 = 'v'.
    assert!(kernels.contains("46,118,101,114,115,105,111,110"));
    let list: serde_json::Value = serde_json::from_str(&read(dir, "variants.json")).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 8);
    assert_eq!(list[7]["dtypes"], "T=float16");
    assert_eq!(list[7]["config"], "TM=64 TN=64 num_warps=4");
    assert_eq!(list[7]["params"][0]["type"], "f16*");
    // The bridge's C++ API, generated from its #[cxx::bridge].
    let header = read(dir, "include/opgen_bridge.h");
    assert!(header.contains("#include \"rust/cxx.h\""), "{header}");
    assert!(
        header.contains("void launch(::opgen::Op const &op,"),
        "{header}"
    );
    assert!(read(dir, "include/rust/cxx.h").contains("class Error final : public std::exception"));
    let build = read(dir, "build.sh");
    assert!(build.contains("-D_GLIBCXX_USE_CXX11_ABI"));
    assert!(build.contains("-ltorch_cpu -lc10 -lstdc++ -ltorch"));
    assert!(build.contains("-o libtriton_transpose.so"));
    let cpp = read(dir, "op.cpp");
    assert!(cpp.contains("x = x.clone(at::MemoryFormat::Contiguous);"));
    assert!(cpp.contains(
        "opgen_grid_dim(opgen_cdiv(C, TM), \"first\"), opgen_grid_dim(opgen_cdiv(R, TN), \"second\")"
    ));
}

#[test]
fn missing_torch_is_a_clear_error_before_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    // A python that has no torch, whatever this machine has.
    let python = tmp.path().join("python-without-torch");
    std::fs::write(
        &python,
        "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut opts = options(op_path("add"), &tmp.path().join("out"), bridge);
    opts.no_build = false;
    opts.python = python.display().to_string();
    let mut started = false;
    let e = generate(&opts, |_| started = true).unwrap_err().0;
    assert!(e.contains("PyTorch not found"), "{e}");
    assert!(e.contains("No module named 'torch'"), "{e}");
    assert!(e.contains("--no-build"), "{e}");
    assert!(!started, "nothing is compiled without torch");

    opts.torch_dir = Some(tmp.path().to_path_buf());
    let e = generate(&opts, |_| {}).unwrap_err().0;
    assert!(
        e.contains("is not a PyTorch install with C++ headers"),
        "{e}"
    );
}

#[test]
fn a_pre_tuned_table_is_embedded() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let table = tmp.path().join("autotune.json");
    let current = r#"{"format_version": 3, "entries": {"triton::add|[1024]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"config": "SIZE=256 num_warps=4", "time_ms": 0.01}, "triton::add|[2048]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"time_ms": 0.01}}}"#;
    std::fs::write(&table, current).unwrap();
    let mut opts = options(op_path("add"), &tmp.path().join("out"), bridge);
    opts.tuned = Some(table.clone());
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    let kernels = read(&done.out_dir, "kernels.cpp");
    assert!(
        kernels.contains(r#"triton_add_tuned[] = "{\"format_version\": 3, \"entries\": {\"triton::add|[1024]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d\""#),
        "{}",
        kernels.lines().last().unwrap()
    );
    // An entry without a config is named.
    let said = done.warnings.join("\n");
    assert!(
        said.contains("tuned table entry ignored: triton::add|[2048]") && done.warnings.len() == 1,
        "{said}"
    );
    // Older formats do not name the code each choice was timed on: a
    // kernel edited or compiled otherwise since would reuse them.
    for old in [1, 2] {
        std::fs::write(
            &table,
            current.replace(
                "\"format_version\": 3",
                &format!("\"format_version\": {old}"),
            ),
        )
        .unwrap();
        let e = generate(&opts, |_| {}).unwrap_err().0;
        assert!(
            e.contains(&format!(
                "format version {old}: its keys do not name the code"
            )) && e.contains("empty $TRITON_OPGEN_CACHE to write version 3"),
            "{e}"
        );
    }
    std::fs::write(&table, "{\"format_version\": 3}").unwrap();
    let e = generate(&opts, |_| {}).unwrap_err().0;
    assert!(e.contains("no `entries` object"), "{e}");
    std::fs::write(&table, "{\"format_version\": 4, \"entries\": {}}").unwrap();
    let e = generate(&opts, |_| {}).unwrap_err().0;
    assert!(e.contains("format version 4; this runtime reads 3"), "{e}");
    // Without a table the string is empty.
    opts.tuned = None;
    let done = generate(&opts, |_| {}).unwrap();
    assert!(read(&done.out_dir, "kernels.cpp").contains("triton_add_tuned[] = \"\";"));
}

#[test]
fn missing_bridge_library_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(
        op_path("add"),
        &tmp.path().join("out"),
        tmp.path().join("nope/libopgen_bridge.a"),
    );
    let e = generate(&opts, |_| {}).unwrap_err().0;
    assert!(
        e.contains("nope/libopgen_bridge.a") && e.contains("built into triton-opgen"),
        "{e}"
    );
}

#[test]
fn args_that_do_not_fit_the_kernel_point_at_the_spec() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let text = std::fs::read_to_string(op_path("add")).unwrap();
    let cases = [
        (
            "args N, x, y, z",
            "args N, x, y",
            "the spec passes 3 arguments but kernel `add` takes 4",
        ),
        (
            "args N, x, y, z",
            "args x, N, y, z",
            "tensor `x` is passed to parameter `N` of type `i32`",
        ),
        (
            "args N, x, y, z",
            "args N, x, y, a = z",
            "argument `a` is at the position of the kernel's parameter `c`",
        ),
        (
            "args N, x, y, z",
            "args N, N, y, z",
            "parameter `a` is a pointer",
        ),
    ];
    for (from, to, want) in cases {
        let path = tmp.path().join("bad.tc");
        std::fs::write(&path, text.replace(from, to)).unwrap();
        let e = generate(
            &options(path, &tmp.path().join("out"), bridge.clone()),
            |_| {},
        )
        .unwrap_err()
        .0;
        assert!(e.contains(want), "{to}: {e}");
        assert!(e.contains("bad.tc:8:"), "{to}: {e}");
    }
    // A dtype whose pointer type differs from the kernel's parameter.
    let path = tmp.path().join("bad.tc");
    std::fs::write(
        &path,
        text.replace("float16: TYPE=half", "float16: TYPE=float"),
    )
    .unwrap();
    let e = generate(&options(path, &tmp.path().join("out"), bridge), |_| {})
        .unwrap_err()
        .0;
    assert!(
        e.contains("tensor `x` (float16, `f16*`) is passed to parameter `a` of type `f32*`"),
        "{e}"
    );
}

/// One argument list serves every dtype group: a parameter whose type
/// follows the dtype (a float attribute to `ACC alpha`, f32 in one group and
/// f64 in another) is an error at the `args` line, naming both groups.
#[test]
fn a_parameter_type_that_follows_the_dtype_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let text =
        std::fs::read_to_string(op_path("add").with_file_name("../../examples/scale_shift.tc"))
            .unwrap()
            .replace(
                "{float32: TYPE=float, float16: TYPE=half}",
                "{float32: TYPE=float ACC=float, float64: TYPE=double ACC=double}",
            )
            .replace("float alpha, float beta", "ACC alpha, float beta");
    let path = tmp.path().join("bad.tc");
    std::fs::write(&path, text).unwrap();
    let e = generate(&options(path, &tmp.path().join("out"), bridge), |_| {})
        .unwrap_err()
        .0;
    assert!(
        e.contains("parameter `alpha` is passed as f32 for T=float32 but as f64 for T=float64; give it one type in every variant"),
        "{e}"
    );
    assert!(e.contains("bad.tc:12:"), "{e}");
}

/// Builds add against real torch headers and libraries when
/// OPGEN_TEST_TORCH_DIR names a torch package folder (CI does not download
/// torch: see README), with the real bridge from `cargo build -p opgen-bridge`.
#[test]
#[ignore = "needs a torch wheel: OPGEN_TEST_TORCH_DIR (run with --ignored)"]
fn builds_against_real_torch_when_available() {
    let Some(torch_dir) = std::env::var_os("OPGEN_TEST_TORCH_DIR") else {
        eprintln!("skipped: set OPGEN_TEST_TORCH_DIR to a torch package folder");
        return;
    };
    let bridge = python_support::bridge_lib();
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(op_path("add"), &tmp.path().join("out"), bridge);
    opts.no_build = false;
    opts.torch_dir = Some(PathBuf::from(torch_dir));
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    let lib = done.library.expect("a library");
    let nm = std::process::Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
        .unwrap();
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(symbols.contains("triton_add_variants"));
    // The archive's symbols stay inside the library: the Rust functions, the
    // cxx shim (opgen::launch), cxx's runtime (rust::Error::what).
    for inner in [
        "cxxbridge1$",
        "_ZN5opgen6launch",
        "_ZNK4rust10cxxbridge15Error4what",
    ] {
        assert!(!symbols.contains(inner), "{inner} exported:\n{symbols}");
    }
}

/// Loads the add library into torch's CPU libraries (a C++ harness, no
/// Python, no GPU): CPU tensors raise the op's CUDA error, Meta tensors get
/// outputs, bad inputs the op's messages. Needs OPGEN_TEST_TORCH_DIR and
/// OPGEN_TEST_CUDA_LIBS (a folder with libcudart.so.13 and libcupti.so.13,
/// which torch_cpu links; from the nvidia-cuda-runtime/-cupti wheels).
#[test]
#[ignore = "needs a torch wheel and CUDA runtime libs: OPGEN_TEST_TORCH_DIR, OPGEN_TEST_CUDA_LIBS (run with --ignored)"]
fn library_loads_into_torch_cpu_and_checks_inputs() {
    let (Some(torch_dir), Some(cuda_libs)) = (
        std::env::var_os("OPGEN_TEST_TORCH_DIR"),
        std::env::var_os("OPGEN_TEST_CUDA_LIBS"),
    ) else {
        eprintln!("skipped: set OPGEN_TEST_TORCH_DIR and OPGEN_TEST_CUDA_LIBS");
        return;
    };
    let bridge = python_support::bridge_lib();
    let torch_dir = PathBuf::from(torch_dir);
    let cuda_libs = PathBuf::from(cuda_libs);
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(op_path("add"), &tmp.path().join("out"), bridge);
    opts.no_build = false;
    opts.torch_dir = Some(torch_dir.clone());
    let lib = generate(&opts, |_| {})
        .unwrap_or_else(|e| panic!("{}", e.0))
        .library
        .unwrap();
    let mut libs = vec![lib];
    for op in ["dot", "dot_nt", "dot_tn"] {
        let mut o = opts.clone();
        o.input = op_path(op);
        o.out_dir = Some(tmp.path().join(op));
        let built = generate(&o, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
        libs.push(built.library.unwrap());
    }
    let harness = tmp.path().join("harness");
    let cc = std::process::Command::new("g++")
        .args(["-std=c++17", "-O1", "-D_GLIBCXX_USE_CXX11_ABI=1"])
        .arg("-isystem")
        .arg(torch_dir.join("include"))
        .arg(format!(
            "{}/tests/torch_cpu_harness.cpp",
            env!("CARGO_MANIFEST_DIR")
        ))
        .arg(format!("-L{}", torch_dir.join("lib").display()))
        .arg(format!("-Wl,-rpath-link,{}", cuda_libs.display()))
        .args(["-Wl,--as-needed", "-ltorch_cpu", "-lc10", "-ldl", "-o"])
        .arg(&harness)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let run = std::process::Command::new(&harness)
        .args(&libs)
        .env(
            "LD_LIBRARY_PATH",
            format!(
                "{}:{}",
                torch_dir.join("lib").display(),
                cuda_libs.display()
            ),
        )
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let line = |case: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{case}: ")))
            .unwrap_or_else(|| panic!("no {case} in {out}"))
            .to_string()
    };
    assert_eq!(
        line("schema"),
        "schema: triton::add(Tensor x, Tensor y) -> Tensor"
    );
    assert!(
        line("cpu")
            .contains("triton::add: argument `x` must be a CUDA tensor, got a tensor on cpu"),
        "{out}"
    );
    assert_eq!(line("meta"), "meta: ok [1000003] meta Float");
    assert_eq!(line("meta_half"), "meta_half: ok Half");
    assert!(
        line("meta_shape")
            .contains("dimension N of argument `y` (axis 0) is 5 but argument `x` has N = 8"),
        "{out}"
    );
    assert!(
        line("meta_dtype").contains("argument `y` has dtype Half but `x` has Float"),
        "{out}"
    );
    assert!(
        line("meta_unsupported")
            .contains("unsupported dtype Double of argument `x`; supported: T=float32; T=float16"),
        "{out}"
    );
    assert!(
        line("meta_rank").contains("argument `x` must have 1 dimension(s) [N], got shape [2, 4]"),
        "{out}"
    );
    assert_eq!(
        line("pin_unknown"),
        "pin_unknown: 1 no variant has the config `SIZE=3`; the op's configs are: SIZE=256 num_warps=4, SIZE=1024 num_warps=4, SIZE=4096 num_warps=4"
    );
}

/// The user-written fused op in examples/ (TK = 32, 4 or 8 warps): on sm_90a
/// every aligned variant whose tile fits the warpgroups runs on wgmma, the
/// others on mma.sync; masked variants are never pipelined.
#[test]
fn example_linear_relu_runs_its_aligned_tiles_on_wgmma() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let out = tmp.path().join("out");
    let input = PathBuf::from(format!(
        "{}/../examples/linear_relu.tc",
        env!("CARGO_MANIFEST_DIR")
    ));
    let mut opts = options(input, &out, bridge);
    opts.arch = Arch::Sm90a;
    generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    let variants: Vec<serde_json::Value> =
        serde_json::from_str(&read(&out, "variants.json")).unwrap();
    assert_eq!(variants.len(), 48); // 2 dtypes x TM 2 x TN 3 x ALIGN 2 x warps 2
    let mut wgmma = 0;
    for v in &variants {
        let config = v["config"].as_str().unwrap();
        let ptx = read(&out, &format!("ptx/{}.ptx", v["index"]));
        let aligned = config.contains("ALIGN=8");
        // One warpgroup per 64 rows; 128x256 on 4 warps would need 256
        // accumulator registers a thread.
        let fits = (config.contains("num_warps=4") && !config.contains("TM=128 TN=256"))
            || (config.contains("num_warps=8") && config.contains("TM=128"));
        assert_eq!(ptx.contains("wgmma.mma_async"), aligned && fits, "{config}");
        assert_eq!(ptx.contains("cp.async"), aligned, "{config}");
        wgmma += usize::from(aligned && fits);
    }
    assert_eq!(wgmma, 16);
    // Its `pad N, K to 8 if ...`: the op checks each input against its
    // per-axis multiples, launches on the padded copies past the condition,
    // and cuts the output back to [M, N]; the unpadded launch otherwise.
    let op = read(&out, "op.cpp");
    let x = "{int64_t(1), int64_t(8)}";
    let w = "{int64_t(8), int64_t(8)}";
    let bias = "{int64_t(8)}";
    let condition = format!(
        "if ((opgen_pad_needed(x_arg, {x}) || opgen_pad_needed(w_arg, {w}) || \
         opgen_pad_needed(bias_arg, {bias})) && ((M >= int64_t(192)) && (N >= int64_t(192)) && \
         (((M * N) * K) >= (((int64_t(2) * int64_t(1000)) * int64_t(1000)) * int64_t(1000)))))"
    );
    assert!(op.contains(&condition), "{op}");
    let padded = format!(
        "linear_relu_launch(opgen_group, opgen_pad_input(x_arg, {x}), \
         opgen_pad_input(w_arg, {w}), opgen_pad_input(bias_arg, {bias}));"
    );
    assert!(op.contains(&padded), "{op}");
    assert!(
        op.contains("return opgen_crop(opgen_out, { M, N });"),
        "{op}"
    );
    assert!(
        op.contains("return linear_relu_launch(opgen_group, x_arg, w_arg, bias_arg);"),
        "{op}"
    );
}

/// A tuning point over the target's limits (a tile of 1,048,576 elements on
/// 4 warps) is dropped with a note naming it; the rest of the space is the op.
#[test]
fn configs_over_the_target_limits_are_dropped_from_the_space() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(op_path("add")).unwrap().replace(
        "#pragma opgen tune SIZE = [256, 1024, 4096]",
        "#pragma opgen tune SIZE = [1024, 1048576]",
    );
    assert!(
        spec.contains("[1024, 1048576]"),
        "add.tc's tune line changed"
    );
    let input = tmp.path().join("add.tc");
    std::fs::write(&input, spec).unwrap();
    let bridge = fake_bridge(tmp.path());
    let out = tmp.path().join("out");
    let done =
        generate(&options(input, &out, bridge), |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    let dropped: Vec<&String> = done
        .warnings
        .iter()
        .filter(|w| w.contains("dropped"))
        .collect();
    // Both dtypes lose their SIZE=1048576 point.
    assert_eq!(dropped.len(), 2, "{:?}", done.warnings);
    assert!(
        dropped[0].contains("SIZE=1048576 num_warps=4 dropped")
            && dropped[0].contains("8192 elements a thread"),
        "{}",
        dropped[0]
    );
    let variants: Vec<serde_json::Value> =
        serde_json::from_str(&read(&out, "variants.json")).unwrap();
    assert_eq!(variants.len(), 2);
    assert!(variants
        .iter()
        .all(|v| v["config"] == "SIZE=1024 num_warps=4"));
}

/// Attributes become schema arguments with their defaults and C++ parameters
/// that reach the kernel as float bits and ints.
#[test]
fn attributes_are_schema_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let input = op_path("add").with_file_name("../../examples/scale_shift.tc");
    let done = generate(&options(input, &tmp.path().join("out"), bridge), |_| {})
        .unwrap_or_else(|e| panic!("{}", e.0));
    let cpp = std::fs::read_to_string(done.out_dir.join("op.cpp")).unwrap();
    for needle in [
        "m.def(\"scale_shift(Tensor x, float alpha=1.0, float beta=0.0, bool relu=False) -> Tensor\");",
        "at::Tensor scale_shift_cuda(const at::Tensor& x_arg, double alpha, double beta, bool relu) {",
        "{ opgen::ArgKind::F32, opgen_f32_bits(alpha) },  // alpha",
        "const int64_t opgen_arg5 = relu;",
        "int opgen_check_inputs(const at::Tensor& x_arg) {",
    ] {
        assert!(cpp.contains(needle), "missing `{needle}` in:\n{cpp}");
    }
}

/// Layer norm: an `eps` attribute, three outputs (y and the row statistics
/// the backward reads), and a backward of three other ops.
#[test]
fn layer_norm_has_statistics_outputs_and_a_three_op_backward() {
    let (_tmp, done) = no_build("layer_norm");
    let cpp = read(&done.out_dir, "op.cpp");
    for needle in [
        "m.def(\"layer_norm(Tensor x, Tensor w, Tensor b, float eps=1e-5) -> (Tensor, Tensor, Tensor)\");",
        // float32 statistics for half inputs, float64 for float64 (`dtype S from T`).
        "const at::ScalarType dtype_S = (dtype_T == at::kFloat ? at::kFloat : dtype_T == at::kHalf ? at::kFloat : dtype_T == at::kBFloat16 ? at::kFloat : at::kDouble);",
        "    mean = at::empty({ M }, x.options().dtype(dtype_S));",
        "opgen_call(\"triton::layer_norm_dx\", {dy, x, w, mean, rstd})",
        "opgen_call(\"triton::layer_norm_dw\", {dy, x, mean, rstd})",
        "opgen_call(\"triton::col_sum\", {dy})",
        // eps gets no gradient.
        ", at::Tensor() };",
    ] {
        assert!(cpp.contains(needle), "missing `{needle}` in:\n{cpp}");
    }
}

/// The ops a gradient calls are loaded by `load()` when their modules can be
/// imported (an installed wheel of the op works with installed wheels of
/// them), and a missing one is named by backward, with what to do.
#[test]
fn load_brings_in_the_ops_the_gradient_calls() {
    let (_tmp, done) = no_build("layer_norm");
    let loader = read(&done.out_dir, "triton_layer_norm.py");
    for needle in [
        "    _load_gradient_ops()\n    return torch.ops.triton.layer_norm",
        "for module in (\"triton_layer_norm_dx\", \"triton_layer_norm_dw\", \"triton_col_sum\", ):",
        "importlib.import_module(module).load()",
        "if _GRADIENT_OPS_LOADED:",
    ] {
        assert!(loader.contains(needle), "missing `{needle}` in:\n{loader}");
    }
    let cpp = read(&done.out_dir, "op.cpp");
    assert!(
        cpp.contains("triton::layer_norm: its gradient calls \", name, \", which is not loaded"),
        "{cpp}"
    );
    // An op whose backward calls no other op loads nothing more.
    let (_tmp, add) = no_build("add");
    assert!(!read(&add.out_dir, "triton_add.py").contains("_load_gradient_ops"));
}

/// Cross-entropy: int64 targets checked as such, a float32 loss for half and
/// float32 logits (float64 for float64), and a gradient for the logits only.
#[test]
fn cross_entropy_takes_int64_targets() {
    let (_tmp, done) = no_build("cross_entropy");
    let cpp = read(&done.out_dir, "op.cpp");
    for needle in [
        "m.def(\"cross_entropy(Tensor logits, Tensor target) -> Tensor\");",
        "TORCH_CHECK(target_arg.scalar_type() == at::kLong",
        "    loss = at::empty({ M }, logits.options().dtype(dtype_S));",
        "if (opgen_group < 0 && (dtype_T == at::kDouble)) opgen_group = 3;",
        "return { opgen_call(\"triton::cross_entropy_dx\", {dloss, logits, target}), at::Tensor() };",
    ] {
        assert!(cpp.contains(needle), "missing `{needle}` in:\n{cpp}");
    }
}

/// Attention: a required float attribute (no default) before a defaulted
/// bool, rank-4 inputs in torch's [B, H, S, D] layout, a 2-D grid.
#[test]
fn attention_takes_a_required_scale() {
    let (_tmp, done) = no_build("attention");
    let cpp = read(&done.out_dir, "op.cpp");
    for needle in [
        "m.def(\"attention(Tensor q, Tensor k, Tensor v, float scale, bool causal=False) -> Tensor\");",
        "{ opgen::ArgKind::F32, opgen_f32_bits(scale) },  // scale",
        "if (!(HD == HEAD)) continue;",
    ] {
        assert!(cpp.contains(needle), "missing `{needle}` in:\n{cpp}");
    }
}

/// examples/row_center.tc: an output of the derived dtype is allocated with
/// it, and an input of it is checked against the dtype its source gives,
/// naming both arguments, once the group is known.
#[test]
fn derived_dtypes_type_outputs_and_check_inputs() {
    let input = op_path("add").with_file_name("../../examples/row_center.tc");
    let (_tmp, done) = no_build_file(&input);
    let cpp = read(&done.out_dir, "op.cpp");
    for needle in [
        "m.def(\"row_center(Tensor x, Tensor shift) -> (Tensor, Tensor)\");",
        "TORCH_CHECK(opgen_group >= 0, opgen_op_name, \": unsupported dtype \", x_arg.scalar_type(), \" of argument `x`; supported: T=float32; T=float16; T=float64\");\n  [[maybe_unused]] const at::ScalarType dtype_S = (dtype_T == at::kFloat ? at::kFloat : dtype_T == at::kHalf ? at::kFloat : at::kDouble);",
        "TORCH_CHECK(shift_arg.scalar_type() == dtype_S, opgen_op_name, \": argument `shift` has dtype \", shift_arg.scalar_type(),\n              \" but must be \", dtype_S, \" where `x` is \", dtype_T, \" (S follows T)\");",
        "    mean = at::empty({ M }, x.options().dtype(dtype_S));",
        "at::Tensor mean = at::empty_symint(std::vector<c10::SymInt>{ M }, x_arg.options().dtype(dtype_S));",
    ] {
        assert!(cpp.contains(needle), "missing `{needle}` in:\n{cpp}");
    }
    // No fixed-dtype check for `shift`: its dtype is S's.
    assert!(!cpp.contains("argument `shift` must have dtype"), "{cpp}");
}
