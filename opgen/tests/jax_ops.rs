//! `--framework jax` end to end on a machine without a GPU: generates and
//! builds the XLA FFI handler libraries of add, softmax, dot, dot_nt and
//! dot_tn against the installed jaxlib's headers, then
//! jax_support/check_ops.py loads them into the real JAX (CPU backend) and
//! checks result shapes, the trace-time errors, the handler's own checks and
//! its "needs a GPU" error, gradient wiring (dot's vjp is dot_nt and dot_tn),
//! vmap and loading. Built and checked once for all tests here. Skipped with
//! a notice when jax cannot be imported, except in CI (env CI set).

mod jax_support;

use jax_support::{assert_section, built_ops, require_jax};

#[test]
fn jax_libraries_build_with_every_variant() {
    if !require_jax("jax_libraries_build_with_every_variant") {
        return;
    }
    let built = built_ops().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let summary: Vec<(&str, &str, usize)> = built
        .iter()
        .map(|g| (g.target.as_str(), g.module.as_str(), g.variants))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("triton_add", "triton_add_jax", 6),
            ("triton_softmax", "triton_softmax_jax", 216),
            ("triton_dot", "triton_dot_jax", 237),
            ("triton_dot_nt", "triton_dot_nt_jax", 114),
            ("triton_dot_tn", "triton_dot_tn_jax", 114),
            ("examples_scale_shift", "examples_scale_shift_jax", 4),
            ("examples_row_center", "examples_row_center_jax", 6),
        ]
    );
    for g in built {
        let lib = g.library.as_ref().expect("built");
        assert!(lib.is_file(), "{}", lib.display());
    }
}

#[test]
fn jax_results_take_their_shapes_from_the_spec() {
    if !require_jax("jax_results_take_their_shapes_from_the_spec") {
        return;
    }
    assert_section(
        "shapes",
        &[
            "add: float16[1000]",
            "dot: bfloat16[3, 7]",
            "softmax: float32[4, 33]",
            "jit traces one ffi_call to triton_dot with result f16[64,48]",
            "odd N, K past the pad condition: padded to [1537, 1536] @ [1536, 1544], cut to [1537, 1537]; small: as is",
        ],
    );
}

#[test]
fn jax_trace_errors_name_the_argument() {
    if !require_jax("jax_trace_errors_name_the_argument") {
        return;
    }
    assert_section(
        "trace errors",
        &[
            "add dims: ValueError: triton::add: dimension N of argument `y` (axis 0) is 9 but argument `x` has N = 8",
            "add dtypes: TypeError: triton::add: argument `y` has dtype float16 but `x` has float32 (both are T)",
            "add dtype: TypeError: triton::add: unsupported dtype int32 of argument `x`; supported: T=float32; T=float16",
            "dot rank: ValueError: triton::dot: argument `b` must have 2 dimension(s) [K, N], got shape [8]",
            "dot under jit: ValueError: triton::dot: dimension K of argument `b` (axis 0) is 6 but argument `a` has K = 5",
            "arity: TypeError: triton::add takes 2 arguments (x, y), got 3",
        ],
    );
}

#[test]
fn jax_handler_checks_its_buffers_and_needs_a_gpu() {
    if !require_jax("jax_handler_checks_its_buffers_and_needs_a_gpu") {
        return;
    }
    assert_section(
        "handler",
        &[
            "valid call on the CPU: Exception: UNIMPLEMENTED: triton::add runs only on a GPU",
            "dims: Exception: INVALID_ARGUMENT: triton::add: dimension N of argument `y` (axis 0) is 9 but argument `x` has N = 8",
            "rank: Exception: INVALID_ARGUMENT: triton::dot: argument `a` must have 2 dimension(s) [M, K], got shape [8]",
            "dtypes: Exception: INVALID_ARGUMENT: triton::add: argument `y` has dtype float16 but `x` has float32 (both are T)",
            "unsupported dtype: Exception: INVALID_ARGUMENT: triton::add: unsupported dtype int32 of argument `x`",
            "result declared wrong: Exception: INVALID_ARGUMENT: triton::dot: result `c` was declared with shape [3, 3] and dtype float32 but the op makes [2, 3] of float32",
        ],
    );
}

#[test]
fn jax_gradients_follow_the_backward_line() {
    if !require_jax("jax_gradients_follow_the_backward_line") {
        return;
    }
    assert_section(
        "grad",
        &[
            "dot: da through triton_dot_nt f16[6,4], db through triton_dot_tn f16[4,5]",
            "add: float32[8], float32[8]",
            "softmax: TypeError: triton::softmax has no gradient: its spec has no `#pragma opgen backward` line",
        ],
    );
}

#[test]
fn jax_vmap_and_loading() {
    if !require_jax("jax_vmap_and_loading") {
        return;
    }
    assert_section("vmap", &["add over a batch of 3: a scan of 3 calls"]);
    assert_section(
        "load",
        &[
            "reloading the module keeps the registration",
            "missing library: FileNotFoundError: does not exist; build it with build.sh in this folder",
        ],
    );
}

#[test]
fn jax_modules_list_and_pin_their_configs() {
    if !require_jax("jax_modules_list_and_pin_their_configs") {
        return;
    }
    assert_section(
        "tools",
        &[
            "dot has 79 configs, first 'TM=64 TN=32 ALIGN=1 KX=1 SPLIT_K=1 TMA=0 num_warps=4 num_stages=3'",
            "pinning a listed config and unpinning succeed",
            "unknown config: ValueError: no variant has the config `TM=7`; the op's configs are: TM=",
        ],
    );
}

#[test]
fn jax_attributes_reach_the_handler() {
    if !require_jax("jax_attributes_reach_the_handler") {
        return;
    }
    assert_section(
        "attrs",
        &[
            "signature: scale_shift(x, alpha=1.0, beta=0.0, relu=False)",
            "decoded by the CPU handler: Exception: UNIMPLEMENTED: examples::scale_shift runs only on a GPU",
            "jit with static attributes: ffi_call attributes alpha=2.5 beta=0.0 relu=True",
            "wrong type: TypeError: examples::scale_shift: attribute `alpha` must be a Python float, got str",
            "bool for a float: TypeError: attribute `alpha` must be a Python float, got bool",
            "traced under jit: TypeError: under jax.jit pass it as a static argument",
            "wrong FFI attribute type (ffi_call direct): Exception: INVALID_ARGUMENT: [execute] Failed to decode all FFI handler operands",
        ],
    );
}

#[test]
fn jax_derived_dtypes_type_results_and_check_inputs() {
    if !require_jax("jax_derived_dtypes_type_results_and_check_inputs") {
        return;
    }
    assert_section(
        "derived dtypes",
        &[
            "x float16: y, mean = float16[4, 8], float32[4]",
            "x float32: y, mean = float32[4, 8], float32[4]",
            "x float64: y, mean = float64[4, 8], float64[4]",
            "float32 shift for float64 x: TypeError: examples::row_center: argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
            "float64 call decoded by the CPU handler: Exception: UNIMPLEMENTED: examples::row_center runs only on a GPU",
            "the handler checks shift (ffi_call direct): Exception: argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
        ],
    );
}

#[test]
fn jax_wheel_installs_and_registers() {
    if !require_jax("jax_wheel_installs_and_registers") {
        return;
    }
    let built = built_ops().as_ref().unwrap_or_else(|e| panic!("{e}"));
    let add = built
        .iter()
        .find(|g| g.module == "triton_add_jax")
        .expect("add");
    let dist = tempfile::tempdir().unwrap();
    let wheel =
        triton_opgen::wheel::write_wheel(dist.path(), &triton_opgen::jax::wheel_spec(add).unwrap())
            .unwrap();
    let out = jax_support::install_wheel_and_run(
        &wheel,
        "import triton_add_jax, jax, jax.numpy as jnp\n\
         print('site-packages' in triton_add_jax.__file__)\n\
         print(jax.eval_shape(triton_add_jax.add, jnp.zeros(3), jnp.zeros(3)).shape)\n\
         try:\n    triton_add_jax.add(jnp.zeros(3), jnp.zeros(3)).block_until_ready()\n\
         except Exception as e:\n    print('runs only on a GPU' in str(e))",
        &[("JAX_PLATFORMS", "cpu")],
    );
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        ["True", "(3,)", "True"],
        "{out}"
    );
}
