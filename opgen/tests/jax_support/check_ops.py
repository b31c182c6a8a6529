"""Checks generated JAX ops in the real jax/jaxlib (CPU package), on a
machine without a GPU: result shapes and dtypes from the spec (eval_shape,
jit tracing), the trace-time errors naming the argument, the C++ handler's
own checks (reached through jax.ffi.ffi_call on the CPU backend, where the
handler checks and then says the op needs a GPU), gradient wiring (dot's
vjp calls the dot_nt and dot_tn FFI targets), vmap, and loading.

Usage: check_ops.py FOLDER... (build folders of triton_add_jax,
triton_softmax_jax, triton_dot_jax, triton_dot_nt_jax, triton_dot_tn_jax).
Prints `ok: <section>: ...` per check and `FAIL: <section>: ...` per
failure, then `done: ...`; exits 1 if any failed.
"""
import importlib
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path[:0] = sys.argv[1:] + [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python_support")]

import checks  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import examples_row_center_jax  # noqa: E402
import examples_scale_shift_jax  # noqa: E402
import triton_add_jax  # noqa: E402
import triton_dot_jax  # noqa: E402
import triton_softmax_jax  # noqa: E402
from checks import fail, finish, ok  # noqa: E402



def expect_error(section, what, error_type, needle, fn):
    """`fn()`, waited for, must raise `error_type` with `needle` in its message."""
    checks.expect_error(section, what, error_type, needle, fn, settle=jax.block_until_ready)


def spec(shape, dtype):
    return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))


def shape_text(s):
    return f"{jnp.dtype(s.dtype).name}{list(s.shape)}"


# ---- result shapes and dtypes from the spec ----
section = "shapes"
for what, fn, args in [
    ("add", triton_add_jax.add, [spec((1000,), "float16")] * 2),
    ("dot", triton_dot_jax.dot, [spec((3, 5), "bfloat16"), spec((5, 7), "bfloat16")]),
    ("softmax", triton_softmax_jax.softmax, [spec((4, 33), "float32")]),
]:
    try:
        ok(section, f"{what}: {shape_text(jax.eval_shape(fn, *args))}")
    except Exception as e:  # noqa: BLE001
        fail(section, f"{what}: {type(e).__name__}: {e}")
try:
    jaxpr = jax.make_jaxpr(jax.jit(triton_dot_jax.dot))(jnp.zeros((64, 32), jnp.float16), jnp.zeros((32, 48), jnp.float16))
    text = str(jaxpr)
    if "target_name=triton_dot" in text and "f16[64,48]" in text:
        ok(section, "jit traces one ffi_call to triton_dot with result f16[64,48]")
    else:
        fail(section, f"jit trace: {text}")
except Exception as e:  # noqa: BLE001
    fail(section, f"jit trace: {type(e).__name__}: {e}")

# dot's `pad N, K to 8 if` (2e9 multiply-adds, M and N >= 192): odd N and K past it trace a pad
# of both inputs, the ffi_call on the padded sizes and a slice back; below
# it, the ffi_call on the inputs as they are.
try:
    big = jax.make_jaxpr(jax.jit(triton_dot_jax.dot))(jnp.zeros((1537, 1531), jnp.float16), jnp.zeros((1531, 1537), jnp.float16))
    small = str(jax.make_jaxpr(jax.jit(triton_dot_jax.dot))(jnp.zeros((100, 153), jnp.float16), jnp.zeros((153, 77), jnp.float16)))
    text = str(big)
    out = big.out_avals[0]
    if ("pad[" in text and "f16[1537,1544]" in text and "f16[1536,1544]" in text and "slice" in text
            and list(out.shape) == [1537, 1537] and "pad[" not in small and "f16[100,77]" in small):
        ok(section, "odd N, K past the pad condition: padded to [1537, 1536] @ [1536, 1544], cut to [1537, 1537]; small: as is")
    else:
        fail(section, f"pad trace: {text}\n{small}")
except Exception as e:  # noqa: BLE001
    fail(section, f"pad trace: {type(e).__name__}: {e}")

# ---- errors at trace time, naming the argument ----
section = "trace errors"
x = jnp.zeros((8,), jnp.float32)
expect_error(section, "add dims", ValueError, "triton::add: dimension N of argument `y` (axis 0) is 9 but argument `x` has N = 8",
             lambda: triton_add_jax.add(x, jnp.zeros((9,), jnp.float32)))
expect_error(section, "add dtypes", TypeError, "triton::add: argument `y` has dtype float16 but `x` has float32 (both are T)",
             lambda: triton_add_jax.add(x, x.astype(jnp.float16)))
expect_error(section, "add dtype", TypeError, "triton::add: unsupported dtype int32 of argument `x`; supported: T=float32; T=float16",
             lambda: triton_add_jax.add(x.astype(jnp.int32), x.astype(jnp.int32)))
expect_error(section, "dot rank", ValueError, "triton::dot: argument `b` must have 2 dimension(s) [K, N], got shape [8]",
             lambda: triton_dot_jax.dot(jnp.zeros((2, 8)), x))
expect_error(section, "dot under jit", ValueError, "triton::dot: dimension K of argument `b` (axis 0) is 6 but argument `a` has K = 5",
             lambda: jax.jit(triton_dot_jax.dot)(jnp.zeros((4, 5)), jnp.zeros((6, 7))))
expect_error(section, "arity", TypeError, "triton::add takes 2 arguments (x, y), got 3",
             lambda: triton_add_jax.result_types(x, x, x))

# ---- the C++ handler's checks, on the CPU backend ----
section = "handler"
expect_error(section, "valid call on the CPU", Exception, "UNIMPLEMENTED: triton::add runs only on a GPU",
             lambda: triton_add_jax.add(x, x))
expect_error(section, "dims", Exception, "INVALID_ARGUMENT: triton::add: dimension N of argument `y` (axis 0) is 9 but argument `x` has N = 8",
             lambda: jax.ffi.ffi_call("triton_add", spec((8,), "float32"))(x, jnp.zeros((9,), jnp.float32)))
expect_error(section, "rank", Exception, "INVALID_ARGUMENT: triton::dot: argument `a` must have 2 dimension(s) [M, K], got shape [8]",
             lambda: jax.ffi.ffi_call("triton_dot", spec((8, 8), "float32"))(x, jnp.zeros((8, 8), jnp.float32)))
expect_error(section, "dtypes", Exception, "INVALID_ARGUMENT: triton::add: argument `y` has dtype float16 but `x` has float32 (both are T)",
             lambda: jax.ffi.ffi_call("triton_add", spec((8,), "float32"))(x, x.astype(jnp.float16)))
expect_error(section, "unsupported dtype", Exception, "INVALID_ARGUMENT: triton::add: unsupported dtype int32 of argument `x`",
             lambda: jax.ffi.ffi_call("triton_add", spec((8,), "int32"))(x.astype(jnp.int32), x.astype(jnp.int32)))
expect_error(section, "result declared wrong", Exception,
             "INVALID_ARGUMENT: triton::dot: result `c` was declared with shape [3, 3] and dtype float32 but the op makes [2, 3] of float32",
             lambda: jax.ffi.ffi_call("triton_dot", spec((3, 3), "float32"))(jnp.zeros((2, 4)), jnp.zeros((4, 3))))

# ---- gradients: custom_vjp from the spec's backward ----
section = "grad"
try:
    a, b = jnp.zeros((6, 4), jnp.float16), jnp.zeros((4, 5), jnp.float16)
    text = str(jax.make_jaxpr(jax.grad(lambda a, b: jnp.sum(triton_dot_jax.dot(a, b)), argnums=(0, 1)))(a, b))
    targets = [t for t in ("triton_dot_nt", "triton_dot_tn") if f"target_name={t}" in text]
    if targets == ["triton_dot_nt", "triton_dot_tn"] and "f16[6,4]" in text and "f16[4,5]" in text:
        ok(section, "dot: da through triton_dot_nt f16[6,4], db through triton_dot_tn f16[4,5]")
    else:
        fail(section, f"dot gradient: {text}")
    ga = jax.eval_shape(jax.grad(lambda x, y: jnp.sum(triton_add_jax.add(x, y)), argnums=(0, 1)), x, x)
    ok(section, f"add: {shape_text(ga[0])}, {shape_text(ga[1])}")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "softmax", TypeError, "triton::softmax has no gradient: its spec has no `#pragma opgen backward` line",
             lambda: jax.make_jaxpr(jax.grad(lambda v: jnp.sum(triton_softmax_jax.softmax(v))))(jnp.zeros((2, 3))))

# ---- vmap: sequential ----
section = "vmap"
try:
    text = str(jax.make_jaxpr(jax.vmap(triton_add_jax.add))(jnp.zeros((3, 5)), jnp.zeros((3, 5))))
    if "scan" in text and "length=3" in text and "target_name=triton_add" in text:
        ok(section, "add over a batch of 3: a scan of 3 calls")
    else:
        fail(section, text)
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")

# ---- loading ----
section = "load"
try:
    importlib.reload(triton_add_jax)
    triton_add_jax.load()
    ok(section, "reloading the module keeps the registration")
except Exception as e:  # noqa: BLE001
    fail(section, f"reload: {type(e).__name__}: {e}")
expect_error(section, "missing library", FileNotFoundError, "does not exist; build it with build.sh in this folder",
             lambda: (setattr(triton_softmax_jax, "_library", None), triton_softmax_jax._shared().targets.pop("triton_softmax", None),
                      triton_softmax_jax.load("/nonexistent/libx.so")))

# ---- tools: the configs, pinning one (the shared tools partial) ----
section = "tools"
try:
    names = triton_dot_jax.configs()
    ok(section, f"dot has {len(names)} configs, first {names[0]!r}")
    triton_dot_jax.pin_config(names[-1])
    triton_dot_jax.pin_config(None)
    ok(section, "pinning a listed config and unpinning succeed")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "unknown config", ValueError, "no variant has the config `TM=7`; the op's configs are: TM=",
             lambda: triton_dot_jax.pin_config("TM=7"))

# ---- attributes: keyword arguments, FFI attributes the handlers decode ----
section = "attrs"
try:
    import functools
    import inspect

    ok(section, f"signature: scale_shift{inspect.signature(examples_scale_shift_jax.scale_shift)}")
    text = str(jax.make_jaxpr(jax.jit(functools.partial(examples_scale_shift_jax.scale_shift, alpha=2.5, relu=True)))(x))
    if "('alpha', np.float32(2.5))" in text and "('beta', np.float32(0.0))" in text and "('relu', True)" in text:
        ok(section, "jit with static attributes: ffi_call attributes alpha=2.5 beta=0.0 relu=True")
    else:
        fail(section, f"jit with static attributes: {text}")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "decoded by the CPU handler", Exception, "UNIMPLEMENTED: examples::scale_shift runs only on a GPU",
             lambda: examples_scale_shift_jax.scale_shift(x, alpha=2.0, beta=1.0, relu=True))
expect_error(section, "wrong type", TypeError, "examples::scale_shift: attribute `alpha` must be a Python float, got str",
             lambda: examples_scale_shift_jax.scale_shift(x, alpha="fast"))
expect_error(section, "bool for a float", TypeError, "attribute `alpha` must be a Python float, got bool",
             lambda: examples_scale_shift_jax.scale_shift(x, alpha=True))
expect_error(section, "traced under jit", TypeError, "under jax.jit pass it as a static argument",
             lambda: jax.jit(examples_scale_shift_jax.scale_shift)(x, 2.0))
expect_error(section, "wrong FFI attribute type (ffi_call direct)", Exception, "INVALID_ARGUMENT: [execute] Failed to decode all FFI handler operands",
             lambda: jax.ffi.ffi_call("examples_scale_shift", spec((8,), "float32"))(x, alpha=2, beta=np.float32(0), relu=False))

# ---- a derived dtype: `dtype S from T` (examples/row_center.tc) ----
section = "derived dtypes"
jax.config.update("jax_enable_x64", True)
try:
    for dt, st in (("float16", "float32"), ("float32", "float32"), ("float64", "float64")):
        out = jax.eval_shape(examples_row_center_jax.row_center, spec((4, 8), dt), spec((4,), st))
        ok(section, f"x {dt}: y, mean = {', '.join(shape_text(o) for o in out)}")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "float32 shift for float64 x", TypeError,
             "examples::row_center: argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
             lambda: examples_row_center_jax.row_center(jnp.ones((4, 8), jnp.float64), jnp.ones(4, jnp.float32)))
expect_error(section, "float64 call decoded by the CPU handler", Exception, "UNIMPLEMENTED: examples::row_center runs only on a GPU",
             lambda: examples_row_center_jax.row_center(jnp.ones((4, 8), jnp.float64), jnp.ones(4, jnp.float64)))
expect_error(section, "the handler checks shift (ffi_call direct)", Exception,
             "argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
             lambda: jax.ffi.ffi_call("examples_row_center", (spec((4, 8), "float64"), spec((4,), "float64")))(
                 jnp.ones((4, 8), jnp.float64), jnp.ones(4, jnp.float32)))

finish()
