"""The triton-opgen ONNX Runtime libraries in CUDA EP sessions on two GPUs at
once (issue 18, part 3), with onnxruntime-gpu.

usage: python3 multi_device_check.py LIBDIR RESULTS_DIR
LIBDIR holds libopgen_ort_triton_{add,softmax,dot}.so (scripts/ort/build_gpu_bundle.sh).

For each op (float32 and float16): one session with the CUDA EP on
`device_id` 0 and one on `device_id` 1, run at the same time from two threads
(IO binding, inputs and outputs on each session's GPU), each run's values
against numpy; each node placed on the CUDA EP (profile); the autotune cache
keys name the device model only. Writes RESULTS_DIR/multi_device.json; exits 1 on a failure."""

import json
import os
import sys
import threading

import numpy as np

LIBDIR, RESULTS_DIR = sys.argv[1], sys.argv[2]
os.makedirs(RESULTS_DIR, exist_ok=True)
CACHE = os.path.join(RESULTS_DIR, "ort_multi_device_autotune.json")
os.environ["TRITON_OPGEN_CACHE"] = CACHE
if os.path.exists(CACHE):
    os.remove(CACHE)

import onnxruntime as ort  # noqa: E402
from ort_models import ELEM, OPS, Lib, error_of, feeds_for, make_model, reference  # noqa: E402

CUDA = "CUDAExecutionProvider"
REPORT = {"checks": [], "onnxruntime": ort.__version__}
DEVICES = (0, 1)
SHAPES = {
    "add": [(4097,), ((1 << 20) + 3,)],
    "softmax": [(257, 1000), (1000, 4096)],
    "dot": [(65, 33, 17), (1000, 777, 1531), (1024, 1024, 1024)],
}


def record(ok, line):
    REPORT["checks"].append({"ok": bool(ok), "line": line})
    print(("ok: " if ok else "FAIL: ") + line, flush=True)


def session(libs, model, device_id):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.enable_profiling = True
    for lib in libs:
        so.register_custom_ops_library(lib.path)
    return ort.InferenceSession(model, so, providers=[(CUDA, {"device_id": str(device_id)}), "CPUExecutionProvider"])


def run_on(sess, device_id, feeds, output):
    binding = sess.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(value), "cuda", device_id))
    binding.bind_output(output, "cuda", device_id)
    sess.run_with_iobinding(binding)
    (value,) = binding.get_outputs()
    return value.numpy()


def placements(sess):
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    return {e["args"]["provider"] for e in events if e.get("cat") == "Node" and "provider" in e.get("args", {})}


def both_at_once(op, dtype, libs):
    ins, outs = OPS[op]
    model = make_model([(op, [n for n, _ in ins], [n for n, _ in outs])], ins, [n for n, _ in outs], ELEM[dtype])
    sessions = {d: session([libs[op]], model, d) for d in DEVICES}
    failures, worst = [], {}

    def worker(d):
        rng = np.random.default_rng(d)
        try:
            for _ in range(3):
                for shape in SHAPES[op]:
                    feeds = feeds_for(op, shape, dtype, rng)
                    got = run_on(sessions[d], d, feeds, outs[0][0])
                    err, tol = error_of(op, got, reference(op, feeds), dtype)
                    worst[d] = max(worst.get(d, 0.0), err)
                    if err > tol:
                        failures.append(f"device {d} {shape}: err {err:.3g} (tol {tol:g})")
        except Exception as e:  # noqa: BLE001
            failures.append(f"device {d}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(d,)) for d in DEVICES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    placed = {d: placements(s) for d, s in sessions.items()}
    ok = not failures and all(p == {CUDA} for p in placed.values())
    record(ok, f"{op} {np.dtype(dtype).name}: sessions on device_id 0 and 1 at once, 3 rounds x {len(SHAPES[op])} "
               f"shapes each; max err {worst}; nodes on {dict((d, sorted(p)) for d, p in placed.items())}"
               + (f"; {failures[:3]}" if failures else ""))


def main():
    if CUDA not in ort.get_available_providers():
        sys.exit(f"FAIL: onnxruntime {ort.__version__} has no {CUDA}: {ort.get_available_providers()}")
    if hasattr(ort, "preload_dlls"):
        ort.preload_dlls()
    libs = {op: Lib(LIBDIR, op) for op in SHAPES}
    for op in SHAPES:
        for dtype in (np.float32, np.float16):
            both_at_once(op, dtype, libs)
    with open(CACHE) as f:
        keys = list(json.load(f)["entries"])
    import ctypes

    names = set()
    cuda = ctypes.CDLL("libcuda.so.1")
    cuda.cuInit(0)
    for d in DEVICES:
        buf = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(buf, 256, d)
        names.add(buf.value.decode())
    REPORT["devices"] = sorted(names)
    record(keys and all(any(nm in k for nm in names) for k in keys),
           f"autotune cache: {len(keys)} keys, each naming the device model {sorted(names)}")
    failed = [c["line"] for c in REPORT["checks"] if not c["ok"]]
    REPORT["summary"] = {"checks": len(REPORT["checks"]), "failed": len(failed)}
    with open(os.path.join(RESULTS_DIR, "multi_device.json"), "w") as f:
        json.dump(REPORT, f, indent=1)
    print(f"{len(REPORT['checks']) - len(failed)} of {len(REPORT['checks'])} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
