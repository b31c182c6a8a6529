"""What the ONNX Runtime GPU check scripts share: the bundled ops' ONNX
signatures, one-node models, numpy references and tolerances, and a handle
on a library's counters (read with ctypes from the mapping onnxruntime
loaded)."""

import ctypes
import os

import numpy as np
from onnx import TensorProto, helper

OPS = {
    "add": ([("x", ["N"]), ("y", ["N"])], [("z", ["N"])]),
    "softmax": ([("x", ["M", "N"])], [("y", ["M", "N"])]),
    "transpose": ([("x", ["R", "C"])], [("y", ["C", "R"])]),
    "dot": ([("a", ["M", "K"]), ("b", ["K", "N"])], [("c", ["M", "N"])]),
    "dot_nt": ([("a", ["M", "K"]), ("b", ["N", "K"])], [("c", ["M", "N"])]),
    "dot_tn": ([("a", ["K", "M"]), ("b", ["K", "N"])], [("c", ["M", "N"])]),
}
# The matmuls: a @ b with either operand stored transposed.
DOTS = ("dot", "dot_nt", "dot_tn")
ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}
STAT_COUNT = 16


class Lib:
    """One op library: its path and its counters (read with ctypes from the
    same mapping onnxruntime loaded)."""

    def __init__(self, libdir, op):
        self.path = os.path.join(libdir, f"libopgen_ort_triton_{op}.so")
        self.cdll = ctypes.CDLL(self.path)
        self.cdll.opgen_ort_stat_names.restype = ctypes.c_char_p
        self.names = self.cdll.opgen_ort_stat_names().decode().split()

    def reset(self):
        self.cdll.opgen_ort_stats_reset()

    def stats(self):
        buf = (ctypes.c_uint64 * STAT_COUNT)()
        n = self.cdll.opgen_ort_stats(buf, STAT_COUNT)
        return {name: int(buf[i]) for i, name in enumerate(self.names[:n])}

    def variants(self):
        buf = ctypes.create_string_buffer(1 << 16)
        self.cdll.opgen_ort_variants(buf, len(buf))
        return buf.value.decode().strip().splitlines()


def make_model(nodes, graph_inputs, graph_outputs, elem):
    """nodes: [(op, [inputs], [outputs])]; graph_inputs: [(name, dims)]."""
    graph = helper.make_graph(
        [helper.make_node(op, ins, outs, domain="triton") for op, ins, outs in nodes],
        "opgen_gpu_check",
        [helper.make_tensor_value_info(n, elem, dims) for n, dims in graph_inputs],
        [helper.make_tensor_value_info(n, elem, None) for n in graph_outputs],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)]
    )
    model.ir_version = 8
    return model.SerializeToString()


def reference(op, feeds):
    f64 = {k: v.astype(np.float64) for k, v in feeds.items()}
    if op == "add":
        return f64["x"] + f64["y"]
    if op == "softmax":
        e = np.exp(f64["x"] - f64["x"].max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    if op == "transpose":
        return f64["x"].T
    if op == "dot":
        return f64["a"] @ f64["b"]
    if op == "dot_nt":
        return f64["a"] @ f64["b"].T
    if op == "dot_tn":
        return f64["a"].T @ f64["b"]
    raise ValueError(op)


def feeds_for(op, shape, dtype, rng):
    if op == "add":
        (n,) = shape
        return {"x": rng.standard_normal(n).astype(dtype), "y": rng.standard_normal(n).astype(dtype)}
    if op in ("softmax", "transpose"):
        return {"x": rng.standard_normal(shape).astype(dtype)}
    m, n, k = shape
    a_shape = (k, m) if op == "dot_tn" else (m, k)
    b_shape = (n, k) if op == "dot_nt" else (k, n)
    return {"a": rng.standard_normal(a_shape).astype(dtype), "b": rng.standard_normal(b_shape).astype(dtype)}


def error_of(op, got, want, dtype):
    """Max abs error (add, softmax, transpose) or max error relative to the
    largest |value| (dot), and the tolerance it must meet."""
    diff = np.abs(got.astype(np.float64) - want)
    if op in DOTS:
        scale = max(np.abs(want).max(), 1e-30)
        return float(diff.max() / scale), (2e-5 if dtype == np.float32 else 2e-3)
    tol = {
        ("add", np.float32): 1e-6,
        ("add", np.float16): 2e-3,
        ("softmax", np.float32): 1e-6,
        ("softmax", np.float16): 1e-3,
        ("transpose", np.float32): 0.0,
        ("transpose", np.float16): 0.0,
    }[(op, dtype)]
    return float(diff.max()) if diff.size else 0.0, tol
