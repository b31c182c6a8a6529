"""Checks generated TensorFlow ops in the real tensorflow(-cpu) package, on a
machine without a GPU: registration, shape inference in tf.function graphs,
errors naming the argument, gradient wiring, and the error of a CPU run.

Usage: check_ops.py FOLDER... (build folders of triton_add_tf, triton_dot_tf,
triton_dot_nt_tf, triton_dot_tn_tf). Prints `ok: <section>: ...` per check
and `FAIL: <section>: ...` per failure; exits 1 if any failed. One process
for all checks: importing TensorFlow takes seconds.
"""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path[:0] = sys.argv[1:] + [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python_support")]

import tensorflow as tf  # noqa: E402
from checks import expect_error, fail, finish, ok  # noqa: E402
from tensorflow.python.framework import kernels, op_def_registry  # noqa: E402

import examples_row_center_tf  # noqa: E402
import examples_scale_shift_tf  # noqa: E402
import triton_add_tf  # noqa: E402
import triton_dot_nt_tf  # noqa: E402
import triton_dot_tf  # noqa: E402
import triton_dot_tn_tf  # noqa: E402

def spec(shape, dtype=tf.float32):
    return tf.TensorSpec(shape, dtype)


def shapes(tensors):
    return [tuple(t.shape.as_list()) if t.shape.rank is not None else None for t in tensors]


# --- registration -------------------------------------------------------------
for module in (triton_add_tf, triton_dot_tf, triton_dot_nt_tf, triton_dot_tn_tf):
    module.load()
    op_def = op_def_registry.get(module.OP_TYPE)
    if op_def is None:
        fail("registration", f"{module.OP_TYPE} is not registered after loading")
        continue
    ins = " ".join(f"{a.name}:{a.type_attr}" for a in op_def.input_arg)
    outs = " ".join(f"{a.name}:{a.type_attr}" for a in op_def.output_arg)
    attrs = " ".join(
        f"{a.name} in [{', '.join(tf.dtypes.as_dtype(t).name for t in a.allowed_values.list.type)}]"
        for a in op_def.attr
    )
    ok("registration", f"{module.OP_TYPE}({ins}) -> {outs}; {attrs}")
    devices = sorted({k.device_type for k in kernels.get_registered_kernels_for_op(module.OP_TYPE).kernel})
    ok("registration", f"{module.OP_TYPE} kernels: {', '.join(devices)}")
ok("registration", f"GPUs visible to TensorFlow: {len(tf.config.list_physical_devices('GPU'))}")


# --- shape inference ----------------------------------------------------------
def inferred(fn, *specs):
    """Output shapes of `fn` traced (not run) as a tf.function over `specs`."""
    return shapes(tf.nest.flatten(tf.function(fn).get_concrete_function(*specs).structured_outputs))


for name, fn, specs in [
    ("add [None] + [7]", triton_add_tf.add, ([None], [7])),
    ("add [None] + [None]", triton_add_tf.add, ([None], [None])),
    ("dot [32,64] x [64,16]", triton_dot_tf.dot, ([32, 64], [64, 16])),
    ("dot [None,64] x [64,None]", triton_dot_tf.dot, ([None, 64], [64, None])),
    ("dot [32,None] x [None,16]", triton_dot_tf.dot, ([32, None], [None, 16])),
    ("dot unknown rank x [None,16]", triton_dot_tf.dot, (None, [None, 16])),
    ("dot_nt [32,64] x [16,64]", triton_dot_nt_tf.dot_nt, ([32, 64], [16, 64])),
    ("dot_tn [64,32] x [64,16]", triton_dot_tn_tf.dot_tn, ([64, 32], [64, 16])),
]:
    ok("shapes", f"{name} -> {inferred(fn, *(spec(s) for s in specs))}")
ok("shapes", f"dot float16 dtype -> {tf.function(triton_dot_tf.dot).get_concrete_function(spec([8, 8], tf.float16), spec([8, 8], tf.float16)).structured_outputs.dtype.name}")


# --- bad inputs -----------------------------------------------------------------
def traced(fn, *specs):
    return lambda: tf.function(fn).get_concrete_function(*specs)


expect_error("errors", "graph: dot inner dims", ValueError,
             "dimension K of argument `b` (axis 0) is 65 but K = 64 (argument `a`, axis 1)",
             traced(triton_dot_tf.dot, spec([32, 64]), spec([65, 16])))
expect_error("errors", "graph: add rank", ValueError,
             "argument `x` must have 1 dimension(s) [N], got shape [3,3]",
             traced(triton_add_tf.add, spec([3, 3]), spec([3])))
expect_error("errors", "graph: dot rank", ValueError,
             "argument `b` must have 2 dimension(s) [K, N], got shape [64]",
             traced(triton_dot_tf.dot, spec([32, 64]), spec([64])))
expect_error("errors", "graph: dtype not in the list", TypeError,
             "argument `a` has dtype float64; supported: float32, float16, bfloat16",
             traced(triton_dot_tf.dot, spec([4, 4], tf.float64), spec([4, 4], tf.float64)))
expect_error("errors", "graph: mixed dtypes", TypeError, "'y'",
             traced(triton_add_tf.add, spec([4], tf.float32), spec([4], tf.float16)))
expect_error("errors", "eager: add lengths", tf.errors.InvalidArgumentError,
             "dimension N of argument `y` (axis 0) is 5 but argument `x` has N = 4",
             lambda: triton_add_tf.add(tf.ones([4]), tf.ones([5])))
expect_error("errors", "eager: dot rank", tf.errors.InvalidArgumentError,
             "argument `a` must have 2 dimension(s) [M, K], got shape [2,3,4]",
             lambda: triton_dot_tf.dot(tf.ones([2, 3, 4]), tf.ones([4, 5])))
expect_error("errors", "eager: dtype not in the list", TypeError,
             "argument `x` has dtype int32; supported: float32, float16",
             lambda: triton_add_tf.add(tf.constant([1, 2]), tf.constant([3, 4])))


# --- gradient wiring ------------------------------------------------------------
def dot_gradient(a, b):
    with tf.GradientTape() as tape:
        tape.watch([a, b])
        c = triton_dot_tf.dot(a, b)
    da, db = tape.gradient(c, [a, b])
    gradient_ops.append((da.op.type, db.op.type))
    return da, db


for a_shape, b_shape, dtype in [([32, 64], [64, 16], tf.float32), ([None, 64], [64, None], tf.float16)]:
    gradient_ops = []
    graph_fn = tf.function(dot_gradient).get_concrete_function(spec(a_shape, dtype), spec(b_shape, dtype))
    da, db = graph_fn.structured_outputs
    types = sorted({op.type for op in graph_fn.graph.get_operations() if op.type.startswith("Triton")})
    ok("gradient", f"dot {a_shape} x {b_shape} {dtype.name}: da {shapes([da])[0]} db {shapes([db])[0]} "
       f"from {gradient_ops[0][0]}, {gradient_ops[0][1]}; graph ops {', '.join(types)}")


# A gradient finds the ops it calls through their helper modules.
registry = sys.modules["_triton_opgen_tf_ops"].ops
registry.pop("triton::dot_nt")
found = triton_dot_tf._op("triton::dot_nt")
ok("gradient", f"triton::dot_nt found again through its module: {found is triton_dot_nt_tf.dot_nt}")
expect_error("gradient", "an op without a helper module", LookupError,
             "calls triton::missing, which is not loaded and whose helper module `triton_missing_tf` cannot be imported",
             lambda: triton_dot_tf._op("triton::missing"))


def add_gradient(x, y):
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        z = triton_add_tf.add(x, y)
    return tape.gradient(z, [x, y])


ok("gradient", f"add [None] + [None]: {shapes(tf.function(add_gradient).get_concrete_function(spec([None]), spec([None])).structured_outputs)}")


# --- running without a GPU ------------------------------------------------------
expect_error("eager", "add on CPU", tf.errors.UnimplementedError,
             "triton::add (TritonAdd) runs only on a GPU",
             lambda: triton_add_tf.add(tf.ones([4]), tf.ones([4])))
expect_error("eager", "dot on CPU", tf.errors.UnimplementedError,
             "this TensorFlow has no GPU device",
             lambda: triton_dot_tf.dot(tf.ones([4, 8]), tf.ones([8, 2])))
expect_error("eager", "dot in a tf.function run on CPU", tf.errors.UnimplementedError,
             "runs only on a GPU",
             lambda: tf.function(triton_dot_tf.dot)(tf.ones([4, 8]), tf.ones([8, 2])))

# --- attributes ------------------------------------------------------------------
section = "attrs"
try:
    import inspect

    examples_scale_shift_tf.load()
    op_def = op_def_registry.get("ExamplesScaleShift")
    attrs = []
    for a in op_def.attr:
        if a.name == "T":
            continue
        value = a.default_value
        default = value.f if a.type == "float" else bool(value.b) if a.type == "bool" else value.i
        attrs.append(f"{a.name}: {a.type} = {default}")
    ok(section, f"ExamplesScaleShift attrs: {', '.join(attrs)}")
    ok(section, f"helper: scale_shift{inspect.signature(examples_scale_shift_tf.scale_shift)}")

    @tf.function
    def scaled(v):
        return examples_scale_shift_tf.scale_shift(v, alpha=2.5, relu=True)

    graph = scaled.get_concrete_function(tf.TensorSpec([None])).graph
    node = [o for o in graph.get_operations() if o.type == "ExamplesScaleShift"][0]
    ok(section, f"graph: alpha={node.get_attr('alpha')} relu={node.get_attr('relu')}")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "wrong type", TypeError, "Expected float for argument 'alpha' not 'fast'",
             lambda: examples_scale_shift_tf.scale_shift(tf.ones([4]), alpha="fast"))
try:
    examples_scale_shift_tf.scale_shift(tf.ones([4]), alpha=2.0)
    fail(section, "CPU run: no error")
except tf.errors.UnimplementedError as e:
    ok(section, "CPU run: UnimplementedError: runs only on a GPU" if "runs only on a GPU" in str(e) else f"CPU run: {e}")

section = "derived dtypes"
try:
    examples_row_center_tf.load()
    op_def = op_def_registry.get("ExamplesRowCenter")
    (attr,) = [a for a in op_def.attr if a.name == "S"]
    allowed = ", ".join(tf.as_dtype(t).name for t in attr.allowed_values.list.type)
    ok(section, f"ExamplesRowCenter attr S in [{allowed}] = {tf.as_dtype(attr.default_value.type).name}")

    @tf.autograph.experimental.do_not_convert
    def centered(x, shift):
        return examples_row_center_tf.row_center(x, shift)

    for dt, st in ((tf.float16, tf.float32), (tf.float32, tf.float32), (tf.float64, tf.float64)):
        outs = tf.function(centered).get_concrete_function(spec([None, 8], dt), spec([None], st)).structured_outputs
        ok(section, f"graph: x {dt.name}: y, mean = {', '.join(o.dtype.name for o in outs)}")
except Exception as e:  # noqa: BLE001
    fail(section, f"{type(e).__name__}: {e}")
expect_error(section, "float32 shift for float64 x", TypeError,
             "argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)",
             lambda: examples_row_center_tf.row_center(tf.ones([2, 8], tf.float64), tf.ones([2], tf.float32)))
expect_error(section, "raw op, S from a float32 shift", tf.errors.InvalidArgumentError,
             "examples::row_center: `S` is float but must be double where `x` is double (S follows T)",
             lambda: examples_row_center_tf.load().examples_row_center(x=tf.ones([2, 8], tf.float64), shift=tf.ones([2], tf.float32)))
try:
    examples_row_center_tf.row_center(tf.ones([2, 8], tf.float64), tf.ones([2], tf.float64))
    fail(section, "float64 CPU run: no error")
except tf.errors.UnimplementedError as e:
    ok(section, "float64 CPU run: UnimplementedError: runs only on a GPU" if "runs only on a GPU" in str(e) else f"float64 CPU run: {e}")

finish()
