"""Runs the triton-opgen ONNX Runtime libraries on a GPU machine (onnxruntime's
CPU package: the op copies its host tensors to the GPU and back).

usage: python3 gpu_check.py LIBDIR [RESULTS.json]
LIBDIR holds libopgen_ort_triton_{add,softmax,transpose,dot}.so (from
scripts/ort/build_gpu_bundle.sh). Checks, for models built with the `onnx`
package:
  1. correctness against numpy: every op, float32 and float16, several shapes
     including odd ones;
  2. two consecutive generated ops in one model (add -> add from one library,
     transpose -> softmax from two), with the library's copy counters, which
     show each intermediate going device -> host -> device;
  3. errors on the GPU: wrong dtype, rank, mismatched dims, a row too long for
     every softmax config: ORT status messages naming the argument;
  4. the matmuls' `pad` lines (dot, dot_nt, dot_tn): odd dims past 2e9
     multiply-adds, M and N at least 192, run on zero-padded copies (the
     library's padded_launches counter; large twins zeroed in strips only),
     elsewhere as is, values right;
  5. the cost of the host copies: time of sess.run vs the kernel alone (CUDA
     events in the library) vs the copies, for a few sizes.
Prints one line per check and writes everything to RESULTS.json; exits
non-zero if a correctness or error check failed."""

import json
import os
import subprocess
import sys

import numpy as np

# The autotuner's cache: one per run, next to the results.
RESULTS = sys.argv[2] if len(sys.argv) > 2 else "ort_gpu_results.json"
os.environ.setdefault(
    "TRITON_OPGEN_CACHE", os.path.join(os.path.dirname(os.path.abspath(RESULTS)), "ort_autotune.json")
)

import onnxruntime as ort  # noqa: E402
from onnx import TensorProto  # noqa: E402
from ort_models import ELEM, OPS, Lib, error_of, feeds_for, make_model, reference  # noqa: E402
from timing import mean_us  # noqa: E402


def session(libs, model):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4  # errors are checked, not logged
    for lib in libs:
        opts.register_custom_ops_library(lib.path)
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def single_op_session(lib, op, dtype):
    ins, outs = OPS[op]
    model = make_model(
        [(op, [n for n, _ in ins], [n for n, _ in outs])], ins, [n for n, _ in outs], ELEM[dtype]
    )
    return session([lib], model)


CORRECTNESS = {
    "add": [(1,), (1000,), (4097,), ((1 << 20) + 3,)],
    "softmax": [(1, 1), (3, 5), (257, 1000), (1000, 4096)],
    "transpose": [(1, 1), (33, 65), (1000, 3001), (2048, 64)],
    "dot": [(1, 1, 1), (65, 33, 17), (257, 511, 129), (1024, 1024, 1024)],  # M, N, K
}


def check_correctness(libs, report, failures):
    rng = np.random.default_rng(0)
    for op, shapes in CORRECTNESS.items():
        for dtype in (np.float32, np.float16):
            sess = single_op_session(libs[op], op, dtype)
            out_name = OPS[op][1][0][0]
            for shape in shapes:
                feeds = feeds_for(op, shape, dtype, rng)
                (got,) = sess.run([out_name], feeds)
                want = reference(op, feeds)
                err, tol = error_of(op, got, want, dtype)
                ok = got.dtype == dtype and got.shape == want.shape and err <= tol
                line = f"{op} {np.dtype(dtype).name} {shape}: max err {err:.3g} (tol {tol:g})"
                print(("ok: " if ok else "FAIL: ") + line, flush=True)
                report["correctness"].append(
                    {"op": op, "dtype": np.dtype(dtype).name, "shape": list(shape), "err": err, "tol": tol, "ok": ok}
                )
                if not ok:
                    failures.append(line)


# The `pad` lines (dot: N, K; dot_nt: K; dot_tn: M, N; to 8 past 2e9
# multiply-adds with M and N at least 192): op, (M, N, K), whether the
# call must run on zero-padded copies.
PAD_CASES = [
    ("dot", (2049, 2049, 2049), True),
    ("dot", (1537, 2049, 1031), True),
    ("dot", (3001, 1000, 1000), False),  # N, K multiples of 8: nothing to pad
    ("dot", (1000, 777, 1531), False),  # below the condition: the unaligned variants
    ("dot", (128, 4097, 8192), False),  # past 2e9 but 128 rows: copying b costs more
    ("dot", (1024, 4097, 4096), True),  # b's twin past 8M elements: zeroed in strips only
    ("dot_nt", (1537, 2049, 1031), True),
    ("dot_nt", (2049, 2048, 4097), True),  # both twins in strips
    ("dot_tn", (2049, 1031, 1537), True),
    ("dot_tn", (4097, 2049, 2048), True),
]


def check_pad(libs, report, failures):
    """The matmuls' `pad` lines: odd dims past the condition run on
    zero-padded twins (the library's padded_launches counter), elsewhere as
    is; values against numpy either way."""
    rng = np.random.default_rng(3)
    sessions = {}
    for op, shape, padded in PAD_CASES:
        if op not in libs:
            continue
        lib = libs[op]
        if op not in sessions:
            sessions[op] = single_op_session(lib, op, np.float16)
        feeds = feeds_for(op, shape, np.float16, rng)
        lib.reset()
        (got,) = sessions[op].run(None, feeds)
        ran_padded = lib.stats()["padded_launches"] > 0
        want = reference(op, feeds)
        err, tol = error_of(op, got, want, np.float16)
        ok = got.shape == want.shape and err <= tol and ran_padded == padded
        line = f"pad: {op} float16 {shape}: {'padded' if ran_padded else 'as is'} (want {'padded' if padded else 'as is'}), max err {err:.3g} (tol {tol:g})"
        print(("ok: " if ok else "FAIL: ") + line, flush=True)
        report.setdefault("pad", []).append(
            {"op": op, "shape": list(shape), "padded": ran_padded, "want_padded": padded, "err": err, "tol": tol, "ok": ok}
        )
        if not ok:
            failures.append(line)


def check_chains(libs, report, failures):
    rng = np.random.default_rng(1)
    # add -> add: one library, two nodes.
    n = 1 << 20
    model = make_model(
        [("add", ["x", "y"], ["t"]), ("add", ["t", "y"], ["z"])], [("x", ["N"]), ("y", ["N"])], ["z"], TensorProto.FLOAT
    )
    sess = session([libs["add"]], model)
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.standard_normal(n).astype(np.float32)}
    sess.run(None, feeds)  # tune and warm up
    libs["add"].reset()
    (z,) = sess.run(None, feeds)
    stats = libs["add"].stats()
    err = float(np.abs(z - (feeds["x"] + 2 * feeds["y"])).max())
    ok = err <= 1e-5
    line = (
        f"add -> add (2^20 float32): max err {err:.3g}; per run {stats['h2d_copies']} host->device copies "
        f"({stats['h2d_bytes']} B), {stats['d2h_copies']} device->host ({stats['d2h_bytes']} B), "
        f"{stats['launches']} launches: the intermediate makes a host round trip"
    )
    print(("ok: " if ok else "FAIL: ") + line, flush=True)
    report["chains"].append({"model": "add->add", "n": n, "err": err, "stats": stats, "ok": ok})
    if not ok:
        failures.append(line)
    # transpose -> softmax: two libraries in one session, sharing the domain `triton`.
    r, c = 300, 1000
    model = make_model(
        [("transpose", ["x"], ["t"]), ("softmax", ["t"], ["y"])], [("x", ["R", "C"])], ["y"], TensorProto.FLOAT
    )
    try:
        sess = session([libs["transpose"], libs["softmax"]], model)
    except Exception as e:
        msg = str(e).strip().splitlines()[-1][:200]
        print(f"FAIL: transpose -> softmax from two libraries: {msg}", flush=True)
        report["chains"].append({"model": "transpose->softmax", "error": msg, "ok": False})
        failures.append(msg)
        return
    x = rng.standard_normal((r, c)).astype(np.float32)
    (y,) = sess.run(None, {"x": x})
    want = reference("softmax", {"x": x.T})
    err = float(np.abs(y - want).max())
    ok = err <= 1e-6 and y.shape == (c, r)
    line = f"transpose -> softmax ({r}x{c} float32, two libraries): max err {err:.3g}"
    print(("ok: " if ok else "FAIL: ") + line, flush=True)
    report["chains"].append({"model": "transpose->softmax", "shape": [r, c], "err": err, "ok": ok})
    if not ok:
        failures.append(line)


def expect_error(what, fn, needles, report, failures):
    try:
        fn()
    except Exception as e:  # onnxruntime's own exception classes
        text = str(e)
        ok = all(n in text for n in needles)
        msg = text.strip().splitlines()[-1][:240]
        print(("ok: " if ok else "FAIL: ") + f"{what}: {msg}", flush=True)
        report["errors"].append({"case": what, "message": msg, "ok": ok})
        if not ok:
            failures.append(f"{what}: {msg}")
        return
    print(f"FAIL: {what}: no error", flush=True)
    report["errors"].append({"case": what, "message": None, "ok": False})
    failures.append(f"{what}: no error")


def check_errors(libs, report, failures):
    x = np.ones(8, dtype=np.float32)
    add = single_op_session(libs["add"], "add", np.float32)
    expect_error("add: mismatched lengths", lambda: add.run(None, {"x": x, "y": x[:5]}), ["input `y`", "N = 5"], report, failures)
    x64 = x.astype(np.float64)
    add64 = session(
        [libs["add"]],
        make_model([("add", ["x", "y"], ["z"])], [("x", ["N"]), ("y", ["N"])], ["z"], TensorProto.DOUBLE),
    )
    expect_error("add: float64 input", lambda: add64.run(None, {"x": x64, "y": x64}), ["input `x`", "float64"], report, failures)
    dot = single_op_session(libs["dot"], "dot", np.float32)
    a = np.ones((4, 3), dtype=np.float32)
    expect_error("dot: inner dims differ", lambda: dot.run(None, {"a": a, "b": a}), ["input `b`", "K = 4"], report, failures)
    softmax = single_op_session(libs["softmax"], "softmax", np.float32)
    # Rows past every one-tile config run the looping ones.
    wide = np.random.default_rng(0).standard_normal((2, 40003)).astype(np.float32)
    (got,) = softmax.run(None, {"x": wide})
    want = np.exp(wide - wide.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    err = float(np.abs(got - want).max())
    report.setdefault("checks", []).append({"softmax 2x40003": err})
    if err > 1e-6:
        failures.append(f"softmax 2x40003: max error {err}")


TIMING = [
    ("add", np.float32, (1 << 10,)),
    ("add", np.float32, (1 << 16,)),
    ("add", np.float32, (1 << 20,)),
    ("add", np.float32, (1 << 24,)),
    ("softmax", np.float32, (4096, 4096)),
    ("transpose", np.float16, (4096, 4096)),
    ("dot", np.float16, (1024, 1024, 1024)),
    ("dot", np.float16, (4096, 4096, 4096)),
    ("dot", np.float16, (2048, 2048, 2048)),
    ("dot", np.float16, (2049, 2049, 2049)),  # on padded copies (`pad`)
]


def measure_copies(libs, report):
    rng = np.random.default_rng(2)
    print("host-copy cost (mean per sess.run; kernel = CUDA events around the launch):", flush=True)
    for op, dtype, shape in TIMING:
        lib = libs[op]
        sess = single_op_session(lib, op, dtype)
        feeds = feeds_for(op, shape, dtype, rng)
        for _ in range(3):
            sess.run(None, feeds)  # autotune, allocate, warm up
        reps = 20 if np.prod(shape) <= (1 << 24) else 10
        lib.reset()
        run_us = mean_us(lambda: sess.run(None, feeds), reps)
        s = lib.stats()
        calls = max(s["calls"], 1)
        per = {k: s[k] / calls / 1000.0 for k in ("h2d_ns", "d2h_ns", "kernel_ns", "compute_ns")}
        copy_bytes = (s["h2d_bytes"] + s["d2h_bytes"]) / calls
        row = {
            "op": op,
            "dtype": np.dtype(dtype).name,
            "shape": list(shape),
            "run_us": run_us,
            "kernel_us": per["kernel_ns"],
            "h2d_us": per["h2d_ns"],
            "d2h_us": per["d2h_ns"],
            "compute_us": per["compute_ns"],
            "copy_bytes": copy_bytes,
            "copy_gbps": copy_bytes / max(per["h2d_ns"] + per["d2h_ns"], 1e-9) / 1e3,
            "kernel_share": per["kernel_ns"] / run_us if run_us else 0.0,
        }
        report["copy_cost"].append(row)
        print(
            f"  {op} {row['dtype']} {shape}: run {run_us:.1f} us = kernel {row['kernel_us']:.1f} + H2D {row['h2d_us']:.1f}"
            f" + D2H {row['d2h_us']:.1f} + other {run_us - row['kernel_us'] - row['h2d_us'] - row['d2h_us']:.1f}"
            f" ({copy_bytes / 1e6:.1f} MB copied at {row['copy_gbps']:.1f} GB/s; kernel {100 * row['kernel_share']:.1f}% of the run)",
            flush=True,
        )


def main():
    libdir = sys.argv[1]
    report = {"onnxruntime": ort.__version__, "correctness": [], "chains": [], "errors": [], "copy_cost": []}
    try:
        report["device"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        report["device"] = "unknown"
    print(f"onnxruntime {ort.__version__}, device {report['device']}", flush=True)
    libs = {op: Lib(libdir, op) for op in OPS}
    for op, lib in libs.items():
        v = lib.variants()
        report.setdefault("variants", {})[op] = v
        print(f"ok: {op}: library loads, {len(v)} embedded PTX variants", flush=True)
    failures = []
    for step in (check_correctness, check_pad, check_chains, check_errors):
        try:
            step(libs, report, failures)
        except Exception as e:  # report and go on: one broken op must not hide the rest
            print(f"FAIL: {step.__name__}: {e}", flush=True)
            failures.append(f"{step.__name__}: {e}")
    try:
        measure_copies(libs, report)
    except Exception as e:
        print(f"FAIL: measure_copies: {e}", flush=True)
        failures.append(f"measure_copies: {e}")
    report["failures"] = failures
    with open(RESULTS, "w") as f:
        json.dump(report, f, indent=1)
    print(f"{'all passed' if not failures else f'{len(failures)} FAILED'}; results in {RESULTS}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
