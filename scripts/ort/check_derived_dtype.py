"""Checks an op with a derived dtype (examples/row_center.tc: `dtype S from
T`, float32 statistics for float16/float32 inputs and float64 ones for
float64) in onnxruntime, on any machine: sessions open with the output types
the group gives (mean is S, y is T), an input of dtype S that disagrees with
x fails the run with a status naming both (`S` follows `T`), and the run reaches the
kernel launch (no CUDA device here, or the values on a GPU machine: pass
`custom-op`).

usage: python3 check_derived_dtype.py LIB [MODE]
MODE: `no-gpu` (default: runs report no CUDA device) or `custom-op` (the
custom op on ORT's CPU provider, on a GPU machine: values).
Prints `ok: ...` lines; exits non-zero on failure."""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

LIB = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "no-gpu"
GPU = MODE != "no-gpu"
ONNX = {"float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE}
failures = []


def model(x_dtype, shift_dtype):
    node = helper.make_node("row_center", ["x", "shift"], ["y", "mean"], domain="examples")
    graph = helper.make_graph(
        [node],
        "row_center",
        [helper.make_tensor_value_info("x", ONNX[x_dtype], ["M", "N"]),
         helper.make_tensor_value_info("shift", ONNX[shift_dtype], ["M"])],
        # Outputs without a type: the op's shape inference gives them.
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("mean")],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("examples", 1)])
    m.ir_version = 8
    return m.SerializeToString()


def session(x_dtype, shift_dtype):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.register_custom_ops_library(LIB)
    return ort.InferenceSession(model(x_dtype, shift_dtype), opts, providers=["CPUExecutionProvider"])


def report(ok, text):
    print(f"{'ok' if ok else 'FAIL'}: {text}", flush=True)
    if not ok:
        failures.append(text)


for x_dtype, s_dtype in (("float16", "float32"), ("float32", "float32"), ("float64", "float64")):
    try:
        s = session(x_dtype, s_dtype)
        types = [o.type for o in s.get_outputs()]
        report(True, f"x {x_dtype}: session opens, outputs {types}")
        x = (np.arange(3 * 77).reshape(3, 77) % 11).astype(x_dtype)
        shift = np.array([0.5, -1.0, 2.0], dtype=s_dtype)
        try:
            y, mean = s.run(None, {"x": x, "shift": shift})
            want_mean = x.astype(np.float64).mean(-1)
            want_y = x.astype(np.float64) - want_mean[:, None] + shift[:, None]
            tol = 1e-12 if x_dtype == "float64" else 1e-5 if x_dtype == "float32" else 1e-2
            err = max(float(np.max(np.abs(mean - want_mean))), float(np.max(np.abs(y - want_y))))
            report(GPU and mean.dtype == np.dtype(s_dtype) and err <= tol,
                   f"x {x_dtype}: values on the GPU, mean {mean.dtype}, max error {err:.1e}")
        except Exception as e:  # noqa: BLE001
            report(not GPU and "no CUDA device" in str(e), f"x {x_dtype}: run reports no CUDA device")
    except Exception as e:  # noqa: BLE001
        report(False, f"x {x_dtype}: {type(e).__name__}: {e}")

for x_dtype, s_dtype in (("float64", "float32"), ("float16", "float16")):
    # ORT logs a failed shape inference of a custom op and goes on; the run
    # checks again and fails with the op's status.
    try:
        s = session(x_dtype, s_dtype)
        s.run(None, {"x": np.ones((2, 8), dtype=x_dtype), "shift": np.ones(2, dtype=s_dtype)})
        report(False, f"x {x_dtype}, shift {s_dtype}: ran")
    except Exception as e:  # noqa: BLE001
        text = str(e)
        at = text.find("examples::row_center")
        report(at >= 0 and "`shift`" in text, f"x {x_dtype}, shift {s_dtype}: refused: {text[at:].strip()}")

sys.exit(1 if failures else 0)
