//! Generating the JAX op without building it (no JAX needed): the build
//! folder's files, the handlers' bindings, the module's spec data and
//! gradient (snapshots of add's sources), and the error when JAX is missing.

mod jax_support;

use jax_support::{fake_bridge, options};
use std::path::Path;
use triton_opgen::jax::{generate, JaxGenerated};

fn no_build(op: &str) -> (tempfile::TempDir, JaxGenerated) {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let opts = options(op, tmp.path().join("out"), true, bridge);
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    (tmp, done)
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn build_folder_is_self_contained() {
    let (_tmp, done) = no_build("add");
    assert_eq!(
        (done.variants, done.target.as_str(), done.module.as_str()),
        (6, "triton_add", "triton_add_jax")
    );
    assert!(done.library.is_none());
    for f in [
        "op.cc",
        "kernels.cc",
        "triton_add_jax.py",
        "build.sh",
        "include/opgen_bridge.h",
        "lib/libopgen_bridge.a",
    ] {
        assert!(done.out_dir.join(f).is_file(), "{f} missing");
    }
    assert_eq!(
        read(&done.out_dir, "kernels.cc")
            .matches("static const unsigned char image_")
            .count(),
        6
    );
    insta::assert_snapshot!("add_op_cc", read(&done.out_dir, "op.cc"));
    insta::assert_snapshot!("add_module_py", read(&done.out_dir, "triton_add_jax.py"));
    insta::assert_snapshot!("add_build_sh", read(&done.out_dir, "build.sh"));
}

#[test]
fn handlers_bind_one_buffer_per_tensor() {
    let (_tmp, done) = no_build("dot");
    let cc = read(&done.out_dir, "op.cc");
    for needle in [
        "XLA_FFI_DEFINE_HANDLER_SYMBOL(triton_dot_cuda, opgen_cuda,",
        ".Ctx<ffi::PlatformStream<void*>>()\n                                  .Ctx<ffi::DeviceOrdinal>()\n                                  .Arg<ffi::AnyBuffer>()\n                                  .Arg<ffi::AnyBuffer>()\n                                  .Ret<ffi::AnyBuffer>());",
        "XLA_FFI_DEFINE_HANDLER_SYMBOL(triton_dot_cpu, opgen_cpu,",
        // dtype groups in XLA's names
        "if (*opgen_group < 0 && (dtype_T == xla::ffi::DataType::BF16)) *opgen_group = 2;",
        // kernel arguments over the dense views: lda = stride(a, 0)
        "const int64_t opgen_arg6 = a.stride(0);",
        // the requirements pick the candidates, as in the other frameworks
        "if (!(((N / ALIGN) * ALIGN) == N)) continue;",
        "opgen::launch(opgen_this_op(), opgen_device, reinterpret_cast<size_t>(opgen_stream),",
    ] {
        assert!(cc.contains(needle), "missing `{needle}` in:\n{cc}");
    }
}

#[test]
fn module_has_the_spec_and_its_gradient() {
    let (_tmp, done) = no_build("dot");
    let py = read(&done.out_dir, "triton_dot_jax.py");
    for needle in [
        "INPUTS = [[\"a\",[\"M\",\"K\"],\"T\"],[\"b\",[\"K\",\"N\"],\"T\"]]",
        "OUTPUTS = [[\"c\",[\"M\",\"N\"],\"T\"]]",
        "DTYPE_GROUPS = [{\"T\":\"float32\"},{\"T\":\"float16\"},{\"T\":\"bfloat16\"}]",
        "The gradient calls triton::dot_nt: generate it too (module triton_dot_nt_jax)",
        "    a, b, c, = opgen_saved\n",
        "    return (_op(\"triton::dot_nt\")(dc, b), _op(\"triton::dot_tn\")(a, dc), )",
    ] {
        assert!(py.contains(needle), "missing `{needle}` in:\n{py}");
    }
    let (_tmp, softmax) = no_build("softmax");
    let py = read(&softmax.out_dir, "triton_softmax_jax.py");
    assert!(py.contains("but not under jax.grad: the spec has no backward line."));
    assert!(py.contains("raise TypeError(f\"{QUALIFIED} has no gradient"));
}

#[test]
fn missing_jax_is_a_clear_error_before_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(
        "add",
        tmp.path().join("out"),
        false,
        fake_bridge(tmp.path()),
    );
    opts.python = "/nonexistent/python3".into();
    let err = generate(&opts, |_| {}).unwrap_err().0;
    assert!(
        err.starts_with("JAX not found: cannot run `/nonexistent/python3`"),
        "{err}"
    );
    assert!(err.contains("--no-build"), "{err}");
    assert!(!tmp.path().join("out").exists());
}
