"""Checks a triton-opgen ONNX Runtime library for triton::add on a machine
without a GPU: it loads and registers, shape/type inference gives the output
its dtype and symbolic dim, running reports the missing CUDA device, and a
wrong dtype is refused with a message naming the argument.

usage: python3 check_add.py LIBRARY [TUNED_ENTRIES]
TUNED_ENTRIES: how many entries of a pre-tuned table (`triton-opgen --tuned`)
the library must have taken (default 0).
Prints one `ok: ...` line per check; exits non-zero on the first failure."""

import ctypes
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def add_model(elem_type, out_type=None, dims=("N",)):
    node = helper.make_node("add", ["x", "y"], ["z"], domain="triton")
    graph = helper.make_graph(
        [node],
        "triton_add",
        [
            helper.make_tensor_value_info("x", elem_type, list(dims)),
            helper.make_tensor_value_info("y", elem_type, list(dims)),
        ],
        # The output's type is left to the op's inference.
        [helper.make_tensor_value_info("z", out_type or elem_type, None)],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)],
    )
    model.ir_version = 8
    return model.SerializeToString()


def session(lib, model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # the checks print the errors they expect
    opts.register_custom_ops_library(lib)
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def expect_error(what, fn, *needles):
    try:
        fn()
    except Exception as e:  # onnxruntime raises its own exception classes
        text = str(e)
        missing = [n for n in needles if n not in text]
        if missing:
            sys.exit(f"FAIL {what}: the error lacks {missing}: {text}")
        print(f"ok: {what}: {text.strip().splitlines()[-1][:200]}")
        return
    sys.exit(f"FAIL {what}: no error")


def main():
    lib = sys.argv[1]
    sess = session(lib, add_model(TensorProto.FLOAT))
    print("ok: library loaded, triton::add registered, float32 session created")
    out = sess.get_outputs()[0]
    if out.type != "tensor(float)":
        sys.exit(f"FAIL inference: output type {out.type}")
    print(f"ok: output z inferred as {out.type} {out.shape}")
    sess16 = session(lib, add_model(TensorProto.FLOAT16))
    if sess16.get_outputs()[0].type != "tensor(float16)":
        sys.exit(f"FAIL inference: float16 output {sess16.get_outputs()[0].type}")
    print("ok: float16 variant group accepted, output float16")
    x = np.arange(8, dtype=np.float32)
    expect_error(
        "run without a GPU",
        lambda: sess.run(None, {"x": x, "y": x}),
        "triton::add",
        "no CUDA device",
    )
    # float64 is not among the spec's dtypes. The op's inference rejects it
    # too, but onnxruntime 1.31 drops the status InferOutputShapeFn returns,
    # so the error surfaces when the kernel runs.
    x64 = x.astype(np.float64)
    expect_error(
        "float64 inputs at run time",
        lambda: session(lib, add_model(TensorProto.DOUBLE)).run(None, {"x": x64, "y": x64}),
        "input `x`",
        "float64",
    )
    # Shapes that disagree reach the op at run time (N is symbolic in the model).
    expect_error(
        "mismatched lengths",
        lambda: sess.run(None, {"x": x, "y": np.zeros(5, dtype=np.float32)}),
        "input `y`",
        "N = 5",
    )
    x2 = np.zeros((2, 4), dtype=np.float32)
    expect_error(
        "rank 2 inputs",
        lambda: session(lib, add_model(TensorProto.FLOAT, dims=("A", "B"))).run(
            None, {"x": x2, "y": x2}
        ),
        "input `x` must have rank 1",
    )
    tuned = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    check_embedded(lib, tuned)
    print("ort checks: all passed")


def check_embedded(lib, tuned):
    """The PTX of every variant is inside the library, the library lists its
    variants, is registered for the CPU and the CUDA execution providers, and
    took `tuned` entries of its pre-tuned table (ctypes, same mapping as
    onnxruntime's)."""
    cdll = ctypes.CDLL(lib)
    buf = ctypes.create_string_buffer(256)
    cdll.opgen_ort_providers(buf, len(buf))
    if buf.value.decode().split() != ["CPUExecutionProvider", "CUDAExecutionProvider"]:
        sys.exit(f"FAIL providers: {buf.value!r}")
    print(f"ok: registered for {buf.value.decode()}")
    taken = cdll.opgen_ort_tuned_entries()
    if taken != tuned:
        sys.exit(f"FAIL pre-tuned table: the op took {taken} entries, want {tuned}")
    print(f"ok: {taken} pre-tuned entries taken")
    buf = ctypes.create_string_buffer(1 << 14)
    cdll.opgen_ort_variants(buf, len(buf))
    rows = [line.split("\t") for line in buf.value.decode().splitlines()]
    want = [
        (dtype, f"SIZE={size} num_warps=4") for dtype in ("T=float32", "T=float16") for size in (256, 1024, 4096)
    ]
    if [(r[0], r[1]) for r in rows] != want or any(r[2] != "add" or int(r[3]) < 500 for r in rows):
        sys.exit(f"FAIL variants: {rows}")
    print(f"ok: {len(rows)} variants listed: {', '.join(r[0] + ' ' + r[1] for r in rows[:3])}, ...")
    data = open(lib, "rb").read()
    entries = data.count(b".visible .entry add(")
    if entries != len(rows) or b".target sm_90" not in data:
        sys.exit(f"FAIL embedded PTX: {entries} `.entry add` in the library, want {len(rows)}")
    print(f"ok: the library embeds {entries} PTX modules (.target sm_90)")
    cdll.opgen_ort_stat_names.restype = ctypes.c_char_p
    names = cdll.opgen_ort_stat_names().decode().split()
    counters = (ctypes.c_uint64 * len(names))()
    cdll.opgen_ort_stats(counters, len(names))
    stats = dict(zip(names, counters))
    if stats["launches"] != 0 or stats["h2d_copies"] != 0:
        sys.exit(f"FAIL stats without a GPU: {stats}")
    print(f"ok: copy/launch counters readable, all zero without a GPU ({len(names)} counters)")


if __name__ == "__main__":
    main()
