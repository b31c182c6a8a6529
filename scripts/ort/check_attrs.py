"""Checks the node attributes of an op library with `attr` lines
(examples/scale_shift.tc: alpha: float = 1.0, beta: float = 0.0,
relu: bool = false) in onnxruntime, on any machine: sessions with and
without the attributes open and infer the output's dims, the run reaches the
kernel launch (no CUDA device here, or the values on a GPU machine with
onnxruntime-gpu: pass `cuda`), and a wrong attribute fails the session with
a status naming it.

usage: python3 check_attrs.py LIB [MODE]
MODE: `no-gpu` (default: runs report no CUDA device), `custom-op` (the
custom op on ORT's CPU provider, on a GPU machine: values), `cuda-ep`
(onnxruntime-gpu's CUDA EP: values), `plugin-ep` (the library as a plugin
execution provider: values; the attributes come from the graph's node).
Prints `ok: ...` lines; exits non-zero on failure."""

import sys

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

LIB = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "no-gpu"
GPU = MODE != "no-gpu"
EP = "opgen_examples_scale_shift"
if MODE == "plugin-ep":
    ort.register_execution_provider_library(EP, LIB)
failures = []


def model(**attrs):
    node = helper.make_node("scale_shift", ["x"], ["y"], domain="examples", **attrs)
    graph = helper.make_graph(
        [node],
        "scale_shift",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("examples", 1)])
    m.ir_version = 8
    return m.SerializeToString()


def session(**attrs):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    opts.register_custom_ops_library(LIB)
    if MODE == "plugin-ep":
        opts.add_provider_for_devices([d for d in ort.get_ep_devices() if d.ep_name == EP], {})
        s = ort.InferenceSession(model(**attrs), opts)
    else:
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if MODE == "cuda-ep" else ["CPUExecutionProvider"]
        s = ort.InferenceSession(model(**attrs), opts, providers=providers)
    if GPU and MODE != "custom-op":
        assert s.get_providers()[0] == ("CUDAExecutionProvider" if MODE == "cuda-ep" else EP), s.get_providers()
    return s


def report(ok, text):
    print(f"{'ok' if ok else 'FAIL'}: {text}", flush=True)
    if not ok:
        failures.append(text)


x = np.linspace(-2, 2, 1001, dtype=np.float32)
for attrs in ({}, {"alpha": 2.5, "beta": -1.0}, {"alpha": -3.0, "relu": 1}):
    try:
        s = session(**attrs)
        shape = s.get_outputs()[0].shape
        report(shape == ["N"], f"{attrs or 'defaults'}: session opens, output dims {shape}")
        try:
            (y,) = s.run(None, {"x": x})
            a, b, r = attrs.get("alpha", 1.0), attrs.get("beta", 0.0), attrs.get("relu", 0)
            want = a * x + b
            want = np.maximum(want, 0) if r else want
            err = float(np.max(np.abs(y - want)))
            report(GPU and err <= 1e-6, f"{attrs or 'defaults'}: {MODE}: values on the GPU, max error {err:.1e}")
        except Exception as e:  # noqa: BLE001
            report(not GPU and "no CUDA device" in str(e), f"{attrs or 'defaults'}: run reports no CUDA device")
    except Exception as e:  # noqa: BLE001
        report(False, f"{attrs}: {type(e).__name__}: {e}")

for attrs, needle in (
    ({"alpha": 2}, "examples::scale_shift: attribute `alpha` must be a float (ONNX FLOAT)"),
    ({"relu": 5}, "examples::scale_shift: attribute `relu` is a bool (ONNX INT, 0 or 1), got 5"),
    ({"beta": "x"}, "examples::scale_shift: attribute `beta` must be a float (ONNX FLOAT)"),
):
    try:
        session(**attrs)
        report(False, f"{attrs}: the session opened")
    except Exception as e:  # noqa: BLE001
        report(needle in str(e), f"{attrs}: session refused: {needle}" if needle in str(e) else f"{attrs}: {e}")
print(f"done: {len(failures)} failed")
sys.exit(1 if failures else 0)
