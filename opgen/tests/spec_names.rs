//! Names a spec gives become C++, Python and TensorFlow identifiers beside the
//! generator's own (issue 20): keywords, the generated code's names, reserved
//! prefixes and names no target accepts are errors at the spec, with a
//! location and a suggestion; every name accepted gives an op whose Python
//! compiles (and, where TensorFlow is installed, whose C++ builds).

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use triton_opgen::jax::{generate as generate_jax, JaxOptions};
use triton_opgen::ort::{generate as generate_ort, OrtOptions};
use triton_opgen::spec::parse_spec;
use triton_opgen::tf::{generate as generate_tf, TfOptions};
use triton_opgen::{generate, GenerateOptions};
use tritonc::codegen::Arch;
use tritonc::span::SourceMap;

#[path = "python_support/mod.rs"]
mod python_support;
use python_support::fake_bridge;

/// The add op with its input `x`, dim `N`, namespace and op name given.
fn add_spec(ns: &str, op: &str, x: &str, n: &str) -> String {
    format!(
        "#pragma opgen op {ns}::{op}
#pragma opgen dtype T in {{float32: TYPE=float, float16: TYPE=half}}
#pragma opgen input {x}: T[{n}] contiguous
#pragma opgen input y: T[{n}] contiguous
#pragma opgen output z: T[{n}]
#pragma opgen args {n}, {x}, y, z
#pragma opgen grid cdiv({n}, SIZE)
#pragma opgen tune SIZE = [256, 1024]
#pragma opgen num_warps 4
#pragma opgen backward d{x} = dz, dy = dz
__global__ void add(int N, TYPE* a, TYPE* b, TYPE* c) {{
  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);
  bool in[SIZE] = off < N;
  TYPE* pa[SIZE] = a + off;
  TYPE* pb[SIZE] = b + off;
  TYPE* pc[SIZE] = c + off;
  *?(in)pc = *?(in)pa + *?(in)pb;
}}
"
    )
}

fn parse(text: &str) -> Result<(), String> {
    let mut sources = SourceMap::new();
    let file = sources.add("k.tc", text);
    parse_spec(file, text)
        .map(|_| ())
        .map_err(|d| d.render(&sources))
}

#[test]
fn keywords_generated_names_and_bad_identifiers_are_errors() {
    // (namespace, op, input, dim, what the message says)
    let cases = [
        ("t", "add", "class", "N", "`class` is a C++ keyword"),
        ("t", "add", "lambda", "N", "`lambda` is a Python keyword"),
        ("t", "add", "None", "N", "`None` is a Python keyword"),
        ("t", "add", "x", "int", "dim `int` is a C++ keyword"),
        (
            "t",
            "add",
            "name",
            "N",
            "`name` is a name the generated code uses",
        ),
        (
            "t",
            "add",
            "x",
            "TORCH_CHECK",
            "dim `TORCH_CHECK` is a name the generated code uses",
        ),
        ("t", "add", "operation", "N", "uses"),
        ("t", "add", "int64_t", "N", "uses"),
        // the runtime bridge's C++ namespaces
        (
            "t",
            "add",
            "rust",
            "N",
            "`rust` is a name the generated code uses",
        ),
        (
            "t",
            "add",
            "x",
            "opgen",
            "dim `opgen` is a name the generated code uses",
        ),
        ("t", "add", "opgen_x", "N", "reserved prefixes"),
        ("t", "add", "OpgenView", "N", "reserved prefixes"),
        ("t", "add", "dtype_T", "N", "reserved prefixes"),
        ("t", "add", "__x", "N", "reserved in C++"),
        ("t", "add", "_X", "N", "reserved in C++"),
        ("t", "class", "x", "N", "op name `class` is a C++ keyword"),
        ("t", "def", "x", "N", "op name `def` is a Python keyword"),
        (
            "_1",
            "add",
            "x",
            "N",
            "namespace `_1` must start with a letter",
        ),
        (
            "_",
            "add",
            "x",
            "N",
            "namespace `_` must start with a letter",
        ),
    ];
    for (ns, op, x, n, want) in cases {
        let text = add_spec(ns, op, x, n);
        let err = parse(&text).expect_err(&format!("{ns}::{op} {x} {n} accepted"));
        assert!(err.contains(want), "{ns}::{op} {x} {n}: {err}");
        assert!(err.contains("k.tc:"), "no location: {err}");
        if want.contains("keyword") || want.contains("uses") {
            assert!(err.contains("rename it (e.g. `"), "no suggestion: {err}");
        }
    }
    // A tensor named like another tensor's generated local.
    let text = add_spec("t", "add", "x", "N").replace("input y: T[N]", "input x_arg: T[N]");
    let text = text
        .replace("args N, x, y, z", "args N, x, x_arg, z")
        .replace("dy = dz", "dx_arg = dz");
    let err = parse(&text).unwrap_err();
    assert!(
        err.contains("`x_arg` has the name the generated code gives a local of tensor `x`"),
        "{err}"
    );
    // A 10,000-character op name.
    let long = "a".repeat(10_000);
    let err = parse(&add_spec("t", &long, "x", "N")).unwrap_err();
    assert!(
        err.contains("has 10000 characters; at most 64"),
        "{}",
        &err[..err.len().min(300)]
    );
    // Plain names pass.
    parse(&add_spec("my_ns", "add2", "x_", "N")).unwrap();
}

/// Generates the torch, TensorFlow and JAX folders of `text` and
/// byte-compiles their Python; `build_tf` also builds the TensorFlow library.
fn generate_both(text: &str, dir: &Path, build_tf: bool) {
    let kernel = dir.join("k.tc");
    std::fs::write(&kernel, text).unwrap();
    let bridge = if build_tf {
        tf_bridge()
    } else {
        fake_bridge(dir)
    };
    let torch = generate(
        &GenerateOptions {
            input: kernel.clone(),
            out_dir: Some(dir.join("torch")),
            arch: Arch::Sm90,
            no_build: true,
            torch_dir: None,
            python: "python3".into(),
            bridge_lib: Some(bridge.clone()),
            include_dirs: Vec::new(),
            tuned: None,
        },
        |_| {},
    )
    .unwrap_or_else(|e| panic!("torch: {}", e.0));
    let tf = generate_tf(
        &TfOptions {
            input: kernel,
            out_dir: Some(dir.join("tf")),
            arch: Arch::Sm90,
            no_build: !build_tf,
            python: "python3".into(),
            bridge_lib: Some(bridge),
            include_dirs: Vec::new(),
            tuned: None,
        },
        |_| {},
    )
    .unwrap_or_else(|e| panic!("tf: {e}"));
    let jax = generate_jax(
        &JaxOptions {
            input: dir.join("k.tc"),
            out_dir: Some(dir.join("jax")),
            arch: Arch::Sm90,
            no_build: true,
            python: "python3".into(),
            bridge_lib: Some(fake_bridge(dir)),
            include_dirs: Vec::new(),
            tuned: None,
        },
        |_| {},
    )
    .unwrap_or_else(|e| panic!("jax: {e}"));
    let mut py: Vec<std::path::PathBuf> = Vec::new();
    for folder in [&torch.out_dir, &tf.out_dir, &jax.out_dir] {
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "py") {
                py.push(entry.path());
            }
        }
    }
    assert_eq!(py.len(), 3, "{py:?}");
    let out = std::process::Command::new("python3")
        .args(["-m", "py_compile"])
        .args(&py)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The generated sources of `text` for every framework parse as their
/// language: the TensorFlow op (g++ -fsyntax-only against the installed
/// TensorFlow's headers), the torch op (against `OPGEN_TEST_TORCH_DIR`'s
/// headers where set), and the ONNX Runtime crate's `op_spec.rs` (rustfmt
/// parses it; the spec's names are only string literals there).
fn check_sources_compile(text: &str, dir: &Path) {
    generate_both(text, dir, false);
    let spec_rs = ort_crate(dir).join("src/op_spec.rs");
    let out = std::process::Command::new("rustfmt")
        .args(["--edition", "2021", "--emit", "stdout"])
        .arg(&spec_rs)
        .output()
        .expect("rustfmt runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(flags) = tf_compile_flags() {
        syntax_check(&dir.join("tf/op.cc"), &dir.join("tf/include"), &flags);
    }
    if let Some(include) = jax_ffi_include() {
        let flags = vec!["-std=c++17".to_string(), format!("-I{include}")];
        syntax_check(&dir.join("jax/op.cc"), &dir.join("jax/include"), &flags);
    }
    if let Some(torch) = std::env::var_os("OPGEN_TEST_TORCH_DIR") {
        let torch = PathBuf::from(torch);
        let flags = vec![
            format!("-I{}", torch.join("include").display()),
            format!(
                "-I{}",
                torch.join("include/torch/csrc/api/include").display()
            ),
            "-std=c++17".to_string(),
            "-D_GLIBCXX_USE_CXX11_ABI=1".to_string(),
        ];
        syntax_check(
            &dir.join("torch/op.cpp"),
            &dir.join("torch/include"),
            &flags,
        );
    }
}

/// Writes the ONNX Runtime crate of `dir/k.tc` (not built) under `dir/ort`.
fn ort_crate(dir: &Path) -> PathBuf {
    generate_ort(
        &OrtOptions {
            input: dir.join("k.tc"),
            out_dir: Some(dir.join("ort")),
            arch: Arch::Sm90,
            include_dirs: Vec::new(),
            no_build: true,
            target_dir: None,
            tuned: None,
        },
        |_| {},
    )
    .unwrap_or_else(|e| panic!("ort: {}", e.0))
    .out_dir
}

fn syntax_check(file: &Path, include: &Path, flags: &[String]) {
    let out = std::process::Command::new("g++")
        .args(["-fsyntax-only", "-w"])
        .args(flags)
        .arg(format!("-I{}", include.display()))
        .arg(file)
        .output()
        .expect("g++ runs");
    assert!(
        out.status.success(),
        "{} does not compile:\n{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// TensorFlow's compile flags, where python3 imports it (CI installs it).
fn tf_compile_flags() -> Option<Vec<String>> {
    static FLAGS: std::sync::OnceLock<Option<Vec<String>>> = std::sync::OnceLock::new();
    FLAGS
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import tensorflow as tf; print(' '.join(tf.sysconfig.get_compile_flags()))",
                ])
                .env("TF_CPP_MIN_LOG_LEVEL", "2")
                .output()
                .ok()?;
            if !out.status.success() {
                assert!(std::env::var("CI").is_err(), "tensorflow missing under CI");
                return None;
            }
            Some(
                String::from_utf8_lossy(&out.stdout)
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
            )
        })
        .clone()
}

/// jaxlib's XLA FFI headers, where python3 imports jax (CI installs it).
fn jax_ffi_include() -> Option<String> {
    static DIR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import jax; print(jax.ffi.include_dir())"])
            .env("JAX_PLATFORMS", "cpu")
            .output()
            .ok()?;
        if !out.status.success() {
            assert!(std::env::var("CI").is_err(), "jax missing under CI");
            return None;
        }
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
    .clone()
}

fn tf_bridge() -> std::path::PathBuf {
    #[path = "tf_support/mod.rs"]
    mod tf_support;
    tf_support::bridge_lib()
}

/// Legal names that are also C++ library or Python builtin names, and names
/// the generated code used for its locals before they took the `opgen_`
/// prefix: the op still builds against TensorFlow's headers (when
/// TensorFlow is installed; `scripts/gpu/` builds the torch op on the GPU
/// machine, and `OPGEN_TEST_TORCH_DIR` lets torch_gen.rs build one here),
/// and its ONNX Runtime crate type-checks.
#[test]
fn legal_names_that_shadow_library_names_build() {
    let dir = tempfile::tempdir().unwrap();
    let text = add_spec("std_", "max", "size", "data");
    parse(&text).unwrap();
    let have_tf = std::process::Command::new("python3")
        .args(["-c", "import tensorflow"])
        .env("TF_CPP_MIN_LOG_LEVEL", "2")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_tf {
        assert!(std::env::var("CI").is_err(), "tensorflow missing under CI");
        eprintln!("notice: tensorflow missing, building only the generated Python");
    }
    generate_both(&text, dir.path(), have_tf);
    // Names the generated C++ once used for its own locals: now all its
    // locals carry the `opgen_` prefix, so these are the user's to take.
    let dir = tempfile::tempdir().unwrap();
    let text = add_spec("t", "group", "candidates", "i");
    parse(&text).unwrap();
    for name in [
        "g", "args", "stream", "err", "rc", "kctx", "infer", "ctx", "saved", "arg0", "OP",
        "kConfig",
    ] {
        parse(&add_spec("t", "add", name, "N")).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    generate_both(&text, dir.path(), have_tf);
    // And its ONNX Runtime crate type-checks (cargo check, with the target
    // folder the ORT tests fill, so the dependencies are built once).
    let ort_dir = ort_crate(dir.path());
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ort-ops");
    let out = std::process::Command::new(env!("CARGO"))
        .args(["check", "--release", "--quiet", "--manifest-path"])
        .arg(ort_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    /// A random name for the input and one for the dim: refused at the spec
    /// with the name in the message, or accepted and generating sources that
    /// compile for every framework (`check_sources_compile`).
    #[test]
    fn any_name_is_refused_or_gives_code_that_compiles(
        x in prop_oneof![
            "[a-zA-Z_][a-zA-Z0-9_]{0,6}",
            prop::sample::select(vec!["class", "def", "in", "g", "group", "stream", "err", "rc", "OP", "ctx", "grads", "saved", "infer", "name", "tf", "operation", "return", "None", "TORCH_CHECK"]).prop_map(String::from),
        ],
        n in "[A-Z][A-Z0-9_]{0,3}",
    ) {
        prop_assume!(x != n && x != "y" && x != "z" && n != "SIZE" && n != "T" && x != "T" && x != "SIZE");
        let text = add_spec("t", "add", &x, &n);
        match parse(&text) {
            Err(e) => prop_assert!(e.contains(&format!("`{x}`")) || e.contains(&format!("`{n}`")), "{e}"),
            Ok(()) => {
                let dir = tempfile::tempdir().unwrap();
                check_sources_compile(&text, dir.path());
            }
        }
    }
}
