"""Checks a triton-opgen ONNX Runtime library for triton::add as a plugin
execution provider (`register_execution_provider_library`): the EP offers a
device, claims both nodes of an add -> add model, and (with a GPU) runs them
on device memory with no host round trip in between, shown by the library's
copy counters.

usage: python3 check_ep.py LIBRARY (--gpu | --no-gpu) [RESULTS.json]
--no-gpu (CI): sets OPGEN_ORT_EP_WITHOUT_GPU=1 so that the EP offers itself on
the CPU device entry, then checks registration, node placement and the
"no CUDA device" error. --gpu: checks values against numpy, the counters, the
errors, and times add -> add under the EP vs the custom-op path.
Prints `ok: ...` lines; exits non-zero on a failure."""

import ctypes
import json
import os
import sys

MODE = sys.argv[2] if len(sys.argv) > 2 else "--gpu"
if MODE == "--no-gpu":
    os.environ["OPGEN_ORT_EP_WITHOUT_GPU"] = "1"

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402
from timing import mean_us  # noqa: E402

EP = "opgen_triton_add"
failures = []
report = {"onnxruntime": ort.__version__, "mode": MODE}


def check(ok, line):
    print(("ok: " if ok else "FAIL: ") + line, flush=True)
    if not ok:
        failures.append(line)


def chain_model(elem):
    """z = (x + y) + y: two consecutive triton::add nodes."""
    nodes = [
        helper.make_node("add", ["x", "y"], ["t"], domain="triton"),
        helper.make_node("add", ["t", "y"], ["z"], domain="triton"),
    ]
    graph = helper.make_graph(
        nodes,
        "add_add",
        [helper.make_tensor_value_info(n, elem, ["N"]) for n in ("x", "y")],
        [helper.make_tensor_value_info("z", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)])
    model.ir_version = 8
    return model.SerializeToString()


class Counters:
    def __init__(self, lib):
        self.cdll = ctypes.CDLL(lib)
        self.cdll.opgen_ort_stat_names.restype = ctypes.c_char_p
        self.names = self.cdll.opgen_ort_stat_names().decode().split()

    def reset(self):
        self.cdll.opgen_ort_stats_reset()

    def read(self):
        buf = (ctypes.c_uint64 * len(self.names))()
        self.cdll.opgen_ort_stats(buf, len(self.names))
        return dict(zip(self.names, (int(v) for v in buf)))


def ep_session(lib, devices, elem):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.register_custom_ops_library(lib)  # the op's schema and shape inference
    opts.add_provider_for_devices(devices, {})
    return ort.InferenceSession(chain_model(elem), opts)


def custom_op_session(lib, elem):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.register_custom_ops_library(lib)
    return ort.InferenceSession(chain_model(elem), opts, providers=["CPUExecutionProvider"])


def expect_error(what, fn, needles):
    try:
        fn()
    except Exception as e:
        text = str(e)
        check(all(n in text for n in needles), f"{what}: {text.strip().splitlines()[-1][:220]}")
        return
    check(False, f"{what}: no error")


def main():
    lib = os.path.abspath(sys.argv[1])
    ort.register_execution_provider_library(EP, lib)
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP]
    report["ep_devices"] = [
        {"type": str(d.device.type), "vendor_id": d.device.vendor_id, "metadata": dict(d.ep_metadata)} for d in devices
    ]
    check(len(devices) == 1, f"EP {EP} registered: devices {report['ep_devices']}")
    if not devices:
        return
    sess = ep_session(lib, devices, TensorProto.FLOAT)
    check(sess.get_providers()[0] == EP, f"session providers {sess.get_providers()}")
    counters = Counters(lib)
    x = np.arange(8, dtype=np.float32)
    if MODE == "--no-gpu":
        expect_error("run without a GPU", lambda: sess.run(None, {"x": x, "y": x}), ["no CUDA device"])
        return
    rng = np.random.default_rng(3)
    for elem, dtype, tol in ((TensorProto.FLOAT, np.float32, 1e-6), (TensorProto.FLOAT16, np.float16, 1e-3)):
        s = ep_session(lib, devices, elem)
        for n in (1, 1000, (1 << 20) + 3):
            xs = rng.standard_normal(n).astype(dtype)
            ys = rng.standard_normal(n).astype(dtype)
            (z,) = s.run(None, {"x": xs, "y": ys})
            # numpy in the same dtype rounds after each add, like the kernels.
            want = ((xs + ys) + ys).astype(np.float64)
            err = float(np.abs(z.astype(np.float64) - want).max())
            check(z.dtype == dtype and err <= tol, f"EP add -> add {np.dtype(dtype).name} N={n}: max err {err:.3g}")
    # Copies per run: the EP vs the custom-op path, same model and inputs.
    n = 1 << 20
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.standard_normal(n).astype(np.float32)}
    paths = {"ep": ep_session(lib, devices, TensorProto.FLOAT), "custom_op": custom_op_session(lib, TensorProto.FLOAT)}
    report["counters"] = {}
    for name, s in paths.items():
        s.run(None, feeds)
        counters.reset()
        s.run(None, feeds)
        report["counters"][name] = counters.read()
    ep, co = report["counters"]["ep"], report["counters"]["custom_op"]
    print(f"counters per run of add -> add (2^20 float32): EP {ep}", flush=True)
    print(f"                                         custom op {co}", flush=True)
    check(
        ep["launches"] == 2 and ep["h2d_copies"] == 2 and ep["d2h_copies"] == 1,
        f"EP: 2 launches, {ep['h2d_copies']} host->device copies (x, y), {ep['d2h_copies']} device->host (z): "
        f"the intermediate t stays in GPU memory (custom-op path: {co['h2d_copies']} H2D, {co['d2h_copies']} D2H)",
    )
    # Errors under the EP name the argument.
    s = paths["ep"]
    expect_error("EP: mismatched lengths", lambda: s.run(None, {"x": x, "y": x[:5]}), ["input `y`", "N = 5"])
    # Time per run, EP vs custom op.
    report["timing_us"] = []
    for n in (1 << 10, 1 << 16, 1 << 20, 1 << 24):
        feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.standard_normal(n).astype(np.float32)}
        row = {"n": n}
        for name, s in paths.items():
            for _ in range(3):
                s.run(None, feeds)
            counters.reset()
            row[name] = mean_us(lambda: s.run(None, feeds), 20)
            c = counters.read()
            row[name + "_kernel_us"] = c["kernel_ns"] / 20 / 1000.0  # both launches of a run
            row[name + "_device_allocs"] = c["device_allocs"]
        report["timing_us"].append(row)
        print(
            f"  add -> add float32 N={n}: EP {row['ep']:.1f} us/run, custom op {row['custom_op']:.1f} us/run "
            f"(kernels {row['ep_kernel_us']:.1f} us; EP cuMemAllocs in 20 runs: {row['ep_device_allocs']})",
            flush=True,
        )


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        check(False, f"{type(e).__name__}: {e}")
    report["failures"] = failures
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            json.dump(report, f, indent=1)
    print("ep checks: " + ("all passed" if not failures else f"{len(failures)} FAILED"), flush=True)
    sys.exit(1 if failures else 0)
