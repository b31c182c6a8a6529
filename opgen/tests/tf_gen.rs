//! Generating the TensorFlow op without building it (no TensorFlow needed):
//! the build folder's files, what op.cc registers and checks, the helper's
//! gradient, and the errors when TensorFlow or the spec is missing.

mod tf_support;

use std::path::Path;
use tf_support::{fake_bridge, options, repo};
use triton_opgen::tf::{generate, TfGenerated};

fn no_build(op: &str) -> (tempfile::TempDir, TfGenerated) {
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
    let (_tmp, done) = no_build("transpose");
    assert_eq!(done.variants, 8);
    assert!(done.library.is_none());
    assert_eq!(done.tf_name, "TritonTranspose");
    for f in [
        "op.cc",
        "kernels.cc",
        "triton_transpose_tf.py",
        "build.sh",
        "include/opgen_bridge.h",
        "lib/libopgen_bridge.a",
    ] {
        assert!(done.out_dir.join(f).is_file(), "{f} missing");
    }
    let kernels = read(&done.out_dir, "kernels.cc");
    assert_eq!(
        kernels.matches("static const unsigned char image_").count(),
        8
    );
    let build = read(&done.out_dir, "build.sh");
    assert!(build.contains("tf.sysconfig.get_compile_flags()"));
    assert!(build.contains("-o libtriton_transpose_tf.so"));
}

#[test]
fn op_registration_and_shape_function_follow_the_spec() {
    let (_tmp, done) = no_build("transpose");
    let cc = read(&done.out_dir, "op.cc");
    for needle in [
        "REGISTER_OP(\"TritonTranspose\")\n    .Input(\"x: T\")\n    .Output(\"y: T\")\n    .Attr(\"T: {float, half}\")\n    .SetShapeFn(opgen_infer_shapes)",
        // [R, C] -> [C, R]
        "DimensionHandle R = opgen_infer->Dim(x, 0);",
        "DimensionHandle C = opgen_infer->Dim(x, 1);",
        "opgen_infer->set_output(0, opgen_infer->MakeShape({ C, R }));",
        "allocate_output(0, tensorflow::TensorShape({ C, R }), &y_out)",
        "REGISTER_KERNEL_BUILDER(Name(\"TritonTranspose\").Device(tensorflow::DEVICE_GPU), TritonTransposeGpu);",
        "REGISTER_KERNEL_BUILDER(Name(\"TritonTranspose\").Device(tensorflow::DEVICE_CPU), TritonTransposeCpu);",
        "opgen_stream->platform_specific_handle().stream",
        // Kernel arguments: ldx = stride(x, 0) on TensorFlow's dense tensors.
        "static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(opgen_arg4))) },  // ldx",
        "const int64_t opgen_arg4 = x.stride(0);",
    ] {
        assert!(cc.contains(needle), "missing `{needle}` in:\n{cc}");
    }
}

#[test]
fn softmax_keeps_its_requirement_and_persistent_grid() {
    let (_tmp, done) = no_build("softmax");
    let cc = read(&done.out_dir, "op.cc");
    assert!(
        cc.contains("if (!((N * (int64_t(1) - LOOP)) <= TN)) continue;"),
        "{cc}"
    );
    assert!(cc.contains(", (PERSIST) != 0});"), "persistent flag");
    assert!(cc.contains(
        "no compiled config accepts these inputs (each needs N * (1 - LOOP) <= TN, LOOP * TN < N, "
    ));
    let py = read(&done.out_dir, "triton_softmax_tf.py");
    assert!(!py.contains("RegisterGradient"), "no backward, no gradient");
    assert!(py.contains("No gradient: the spec has no backward line."));
}

#[test]
fn helper_registers_the_gradient_from_the_backward_line() {
    let (_tmp, done) = no_build("dot");
    let py = read(&done.out_dir, "triton_dot_tf.py");
    for needle in [
        "OP_TYPE = \"TritonDot\"",
        "return load().triton_dot(a=a, b=b, name=name)",
        "a = _checked(\"a\", a, (\"float32\", \"float16\", \"bfloat16\",))",
        "return [_op(\"triton::dot_nt\")(dc, b), _op(\"triton::dot_tn\")(a, dc)]",
        "tf.RegisterGradient(OP_TYPE)(_gradient)",
        "It calls triton::dot_nt: generate it too (module triton_dot_nt_tf)",
    ] {
        assert!(py.contains(needle), "missing `{needle}` in:\n{py}");
    }
    let (_tmp, add) = no_build("add");
    let py = read(&add.out_dir, "triton_add_tf.py");
    assert!(py.contains("    return [dz, dz]\n"), "{py}");
}

#[test]
fn a_pre_tuned_table_is_embedded() {
    let tmp = tempfile::tempdir().unwrap();
    let tuned = tmp.path().join("tuned.json");
    std::fs::write(
        &tuned,
        r#"{"format_version": 3, "entries": {"triton::add|[1024]|T=float32|dev|cands=2:7d2ba1b1|code=0badf00d": {"config": "SIZE=256 num_warps=4"}}}"#,
    )
    .unwrap();
    let mut opts = options("add", tmp.path().join("out"), true, fake_bridge(tmp.path()));
    opts.tuned = Some(tuned);
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{}", e.0));
    let kernels = read(&done.out_dir, "kernels.cc");
    assert!(
        kernels.contains(r#"triton_add_tuned[] = "{\"format_version\": 3"#),
        "{kernels}"
    );
    assert!(read(&done.out_dir, "op.cc").contains("opgen::preload(*op, triton_add_tuned);"));
}

#[test]
fn missing_tensorflow_is_a_clear_error_before_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let bridge = fake_bridge(tmp.path());
    let mut opts = options("add", tmp.path().join("out"), false, bridge);
    opts.python = tmp.path().join("no-python").display().to_string();
    let e = generate(&opts, |_| {}).expect_err("no python").0;
    assert!(e.starts_with("TensorFlow not found"), "{e}");
    assert!(e.contains("--no-build"), "{e}");
    assert!(!tmp.path().join("out").exists(), "stopped before writing");
}

#[test]
fn a_file_without_spec_is_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let kernel = tmp.path().join("plain.tc");
    std::fs::write(&kernel, "__global__ void k(int N) {}\n").unwrap();
    let mut opts = options("add", tmp.path().join("out"), true, fake_bridge(tmp.path()));
    opts.input = kernel;
    let e = generate(&opts, |_| {}).expect_err("no spec").0;
    assert!(e.contains("no `#pragma opgen` lines"), "{e}");
    assert!(repo().join("tests/ops/add.tc").is_file());
}
