//! `--framework tf` end to end on a machine without a GPU: generates and
//! builds the TensorFlow op libraries of add, dot, dot_nt and dot_tn against
//! the installed tensorflow(-cpu), then tf_support/check_ops.py loads them
//! into the real TensorFlow and checks registration, shape inference in
//! tf.function graphs, errors naming the argument, gradient wiring (the
//! dot's gradient is dot_nt and dot_tn) and the error of running on a CPU.
//! The libraries are built and the checks run once for all tests here.
//! Skipped with a notice when tensorflow cannot be imported, except in CI
//! (env CI set), where that fails.

mod tf_support;

use tf_support::{assert_section, built_ops, require_tensorflow};

#[test]
fn tf_libraries_build_with_every_variant() {
    if !require_tensorflow("tf_libraries_build_with_every_variant") {
        return;
    }
    let built = built_ops().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let summary: Vec<(String, &str, usize)> = built
        .iter()
        .map(|g| (g.tf_name.clone(), g.module.as_str(), g.variants))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("TritonAdd".to_string(), "triton_add_tf", 6),
            ("TritonDot".to_string(), "triton_dot_tf", 237),
            ("TritonDotNt".to_string(), "triton_dot_nt_tf", 114),
            ("TritonDotTn".to_string(), "triton_dot_tn_tf", 114),
            (
                "ExamplesScaleShift".to_string(),
                "examples_scale_shift_tf",
                4
            ),
            ("ExamplesRowCenter".to_string(), "examples_row_center_tf", 6),
        ]
    );
    for g in built {
        let lib = g.library.as_ref().expect("built");
        assert!(lib.is_file(), "{}", lib.display());
        assert!(g.out_dir.join(format!("{}.py", g.module)).is_file());
    }
}

#[test]
fn tf_registers_ops_attrs_and_kernels() {
    if !require_tensorflow("tf_registers_ops_attrs_and_kernels") {
        return;
    }
    assert_section(
        "registration",
        &[
            "TritonAdd(x:T y:T) -> z:T; T in [float32, float16]",
            "TritonAdd kernels: CPU, GPU",
            "TritonDot(a:T b:T) -> c:T; T in [float32, float16, bfloat16]",
            "TritonDotNt(a:T b:T) -> c:T; T in [float32, float16, bfloat16]",
            "TritonDotTn kernels: CPU, GPU",
            "GPUs visible to TensorFlow: 0",
        ],
    );
}

#[test]
fn tf_infers_shapes_in_graphs() {
    if !require_tensorflow("tf_infers_shapes_in_graphs") {
        return;
    }
    assert_section(
        "shapes",
        &[
            "add [None] + [7] -> [(7,)]",
            "add [None] + [None] -> [(None,)]",
            "dot [32,64] x [64,16] -> [(32, 16)]",
            "dot [None,64] x [64,None] -> [(None, None)]",
            "dot [32,None] x [None,16] -> [(32, 16)]",
            "dot unknown rank x [None,16] -> [(None, 16)]",
            "dot_nt [32,64] x [16,64] -> [(32, 16)]",
            "dot_tn [64,32] x [64,16] -> [(32, 16)]",
            "dot float16 dtype -> float16",
        ],
    );
}

#[test]
fn tf_bad_inputs_name_the_argument() {
    if !require_tensorflow("tf_bad_inputs_name_the_argument") {
        return;
    }
    assert_section(
        "errors",
        &[
            "graph: dot inner dims: ValueError: dimension K of argument `b` (axis 0) is 65 but K = 64 (argument `a`, axis 1)",
            "graph: add rank: ValueError: argument `x` must have 1 dimension(s) [N], got shape [3,3]",
            "graph: dot rank: ValueError: argument `b` must have 2 dimension(s) [K, N], got shape [64]",
            "graph: dtype not in the list: TypeError: argument `a` has dtype float64; supported: float32, float16, bfloat16",
            "graph: mixed dtypes: TypeError: 'y'",
            "eager: add lengths: InvalidArgumentError: dimension N of argument `y` (axis 0) is 5 but argument `x` has N = 4",
            "eager: dot rank: InvalidArgumentError: argument `a` must have 2 dimension(s) [M, K], got shape [2,3,4]",
            "eager: dtype not in the list: TypeError: argument `x` has dtype int32; supported: float32, float16",
        ],
    );
}

#[test]
fn tf_gradient_comes_from_the_spec_backward() {
    if !require_tensorflow("tf_gradient_comes_from_the_spec_backward") {
        return;
    }
    assert_section(
        "gradient",
        &[
            "dot [32, 64] x [64, 16] float32: da (32, 64) db (64, 16) from TritonDotNt, TritonDotTn; graph ops TritonDot, TritonDotNt, TritonDotTn",
            "dot [None, 64] x [64, None] float16: da (None, 64) db (64, None) from TritonDotNt, TritonDotTn; graph ops TritonDot, TritonDotNt, TritonDotTn",
            "add [None] + [None]: [(None,), (None,)]",
            "triton::dot_nt found again through its module: True",
            "an op without a helper module: LookupError: calls triton::missing, which is not loaded and whose helper module `triton_missing_tf` cannot be imported",
        ],
    );
}

#[test]
fn tf_running_without_a_gpu_is_a_clear_error() {
    if !require_tensorflow("tf_running_without_a_gpu_is_a_clear_error") {
        return;
    }
    assert_section(
        "eager",
        &[
            "add on CPU: UnimplementedError: triton::add (TritonAdd) runs only on a GPU",
            "dot on CPU: UnimplementedError: this TensorFlow has no GPU device",
            "dot in a tf.function run on CPU: UnimplementedError: runs only on a GPU",
        ],
    );
}

#[test]
fn tf_attributes_are_op_attrs() {
    if !require_tensorflow("tf_attributes_are_op_attrs") {
        return;
    }
    assert_section(
        "attrs",
        &[
            "ExamplesScaleShift attrs: alpha: float = 1.0, beta: float = 0.0, relu: bool = False",
            "helper: scale_shift(x, alpha=1.0, beta=0.0, relu=False, name=None)",
            "graph: alpha=2.5 relu=True",
            "wrong type: TypeError: Expected float for argument 'alpha' not 'fast'",
            "CPU run: UnimplementedError: runs only on a GPU",
        ],
    );
}

#[test]
fn tf_derived_dtypes_are_type_attrs_the_helper_sets() {
    if !require_tensorflow("tf_derived_dtypes_are_type_attrs_the_helper_sets") {
        return;
    }
    assert_section(
        "derived dtypes",
        &[
            "ExamplesRowCenter attr S in [float32, float64] = float32",
            "graph: x float16: y, mean = float16, float32",
            "graph: x float32: y, mean = float32, float32",
            "graph: x float64: y, mean = float64, float64",
            "float32 shift for float64 x: TypeError: argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
            "raw op, S from a float32 shift: InvalidArgumentError: examples::row_center: `S` is float but must be double where `x` is double (S follows T)",
            "float64 CPU run: UnimplementedError: runs only on a GPU",
        ],
    );
}

#[test]
fn tf_wheel_installs_and_loads() {
    if !require_tensorflow("tf_wheel_installs_and_loads") {
        return;
    }
    let built = built_ops().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let add = built
        .iter()
        .find(|g| g.module == "triton_add_tf")
        .expect("add");
    let dist = tempfile::tempdir().unwrap();
    let spec = triton_opgen::tf::wheel_spec(add).unwrap();
    let wheel = triton_opgen::wheel::write_wheel(dist.path(), &spec).unwrap();
    let out = tf_support::install_wheel_and_run(
        &wheel,
        "import triton_add_tf, tensorflow as tf\n\
         lib = triton_add_tf.load()\n\
         print('site-packages' in triton_add_tf.__file__, callable(lib.triton_add))\n\
         try:\n    triton_add_tf.add(tf.ones([4]), tf.ones([4]))\n\
         except tf.errors.UnimplementedError as e:\n    print('runs only on a GPU' in str(e))",
        &[("TF_CPP_MIN_LOG_LEVEL", "3")],
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["True True", "True"],
        "{out}"
    );
}
