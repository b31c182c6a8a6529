"""The triton-opgen ONNX Runtime libraries inside onnxruntime-gpu's CUDA
execution provider, on a GPU machine: device tensors, ORT's stream, no copies.

usage: python3 cuda_ep_check.py LIBDIR RESULTS_DIR [--tuned-only]
LIBDIR holds libopgen_ort_triton_{add,softmax,transpose,dot}.so (from
scripts/ort/build_gpu_bundle.sh) and, optionally, LIBDIR/tuned/ with the
softmax and dot libraries built with `--tuned` (then checked in a second
process, with an empty autotune cache: nothing may be benchmarked).

Checks, each printed as `ok:`/`FAIL:` and written to RESULTS_DIR/cuda_ep.json:
  1. every op, float32 and float16, odd shapes, through IO binding with GPU
     OrtValues: values against numpy, every node on the CUDA EP, the
     library's counters show 0 host copies and launches on ORT's stream;
  2. the graph x -> MatMul(w) -> softmax -> MatMul(w) (4096 x 4096): ORT's own
     Softmax vs triton::softmax, ms per run side by side, Memcpy nodes (ORT's
     warning, the optimized model, the profile) for both;
  3. CUDA graph capture (`enable_cuda_graph`): the triton graph captured and
     replayed with new input data, values checked, time per replay;
  4. several sessions and threads at once (values checked);
  5. dynamic shapes: one session, several shapes, each right; the autotune
     cache ($TRITON_OPGEN_CACHE) holds an entry per shape bucket;
  6. errors on the GPU: wrong dtype, mismatched dims, too long a row.
Exits non-zero if a check failed."""

import json
import os
import subprocess
import sys
import tempfile
import threading

import numpy as np

LIBDIR, RESULTS_DIR = sys.argv[1], sys.argv[2]
TUNED_ONLY = "--tuned-only" in sys.argv[3:]
os.makedirs(RESULTS_DIR, exist_ok=True)
os.environ.setdefault("TRITON_OPGEN_CACHE", os.path.join(RESULTS_DIR, "ort_cuda_autotune.json"))

import onnxruntime as ort  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from ort_models import ELEM, OPS, Lib, error_of, feeds_for, make_model, reference  # noqa: E402
from timing import interleaved_ms, mean_us  # noqa: E402

CUDA = "CUDAExecutionProvider"
FAILURES = []
REPORT = {"checks": []}


def record(ok, line, **data):
    print(("ok: " if ok else "FAIL: ") + line, flush=True)
    REPORT["checks"].append({"ok": bool(ok), "line": line, **data})
    if not ok:
        FAILURES.append(line)


def capture_stderr(fn):
    """Runs fn with file descriptor 2 sent to a file (ORT's C++ logger writes
    there); returns (fn's result, what was written)."""
    with tempfile.TemporaryFile() as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            result = fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return result, tmp.read().decode(errors="replace")


def session(libs, model, provider_options=None, log_level=3, optimized=None, profile=False):
    so = ort.SessionOptions()
    so.log_severity_level = log_level
    if optimized:
        so.optimized_model_filepath = optimized
    so.enable_profiling = profile
    for lib in libs:
        so.register_custom_ops_library(lib.path)
    providers = [(CUDA, provider_options or {}), "CPUExecutionProvider"]
    return ort.InferenceSession(model, so, providers=providers)


def on_gpu(array):
    return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array), "cuda", 0)


def run_bound(sess, feeds, outputs):
    """One run with every input and output on the GPU (IO binding)."""
    binding = sess.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, on_gpu(value))
    for name in outputs:
        binding.bind_output(name, "cuda", 0)
    sess.run_with_iobinding(binding)
    return [v.numpy() for v in binding.get_outputs()]


def profile_nodes(sess):
    """(op_name, provider) of every node run, from the session's profile."""
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    return [
        (e["args"].get("op_name", ""), e["args"].get("provider", ""))
        for e in events
        if e.get("cat") == "Node" and "op_name" in e.get("args", {})
    ]


# ---- 1. every op on the CUDA EP ----

SHAPES = {
    "add": [(1,), (4097,), ((1 << 20) + 3,)],
    "softmax": [(1, 1), (257, 1000), (1000, 4096)],
    "transpose": [(1, 1), (1000, 3001), (2048, 64)],
    "dot": [(1, 1, 1), (65, 33, 17), (1000, 777, 1531), (1024, 1024, 1024)],
}


def check_ops(libs):
    rng = np.random.default_rng(0)
    for op, shapes in SHAPES.items():
        lib = libs[op]
        for dtype in (np.float32, np.float16):
            ins, outs = OPS[op]
            model = make_model([(op, [n for n, _ in ins], [n for n, _ in outs])], ins, [n for n, _ in outs], ELEM[dtype])
            sess = session([lib], model, profile=True)
            for shape in shapes:
                lib.reset()
                feeds = feeds_for(op, shape, dtype, rng)
                (got,) = run_bound(sess, feeds, [outs[0][0]])
                want = reference(op, feeds)
                err, tol = error_of(op, got, want, dtype)
                s = lib.stats()
                copies = s["h2d_copies"] + s["d2h_copies"]
                ok = got.shape == want.shape and err <= tol and copies == 0 and s["stream_launches"] == 1
                record(
                    ok,
                    f"CUDA EP {op} {np.dtype(dtype).name} {shape}: max err {err:.3g} (tol {tol:g}), "
                    f"{copies} host copies, {s['stream_launches']} launch on ORT's stream",
                    section="ops",
                )
            placed = {p for name, p in profile_nodes(sess) if name == op}
            record(placed == {CUDA}, f"{op} {np.dtype(dtype).name}: nodes ran on {sorted(placed)}", section="ops")


# ---- 2. the serving graph: ORT's Softmax vs triton::softmax ----


def serving_graph(softmax_domain, n, elem, w):
    """x[n, n] -> MatMul(w) -> softmax -> MatMul(w)."""
    softmax = (
        helper.make_node("Softmax", ["h"], ["p"], axis=-1)
        if softmax_domain == ""
        else helper.make_node("softmax", ["h"], ["p"], domain="triton")
    )
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["h"]), softmax, helper.make_node("MatMul", ["p", "w"], ["y"])],
        "serving",
        [helper.make_tensor_value_info("x", elem, [n, n])],
        [helper.make_tensor_value_info("y", elem, [n, n])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)])
    model.ir_version = 8
    return model.SerializeToString()


ROUNDS = 7


def serving_times(libs, n, dtype, w, x_gpu, reps):
    """Ms per run of both serving graphs (sessions without profiling), the
    median over ROUNDS rounds in which the two take turns."""
    runs = {}
    for kind in ("native", "triton"):
        sess = session([libs["softmax"]], serving_graph("" if kind == "native" else "triton", n, ELEM[dtype], w))
        binding = sess.io_binding()
        binding.bind_ortvalue_input("x", x_gpu)
        binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_shape_and_type([n, n], dtype, "cuda", 0))
        sess.run_with_iobinding(binding)
        runs[kind] = lambda s=sess, b=binding: s.run_with_iobinding(b)
    return interleaved_ms(runs, ROUNDS, reps)


def memcpy_count(path):
    import onnx

    return sum(1 for node in onnx.load(path).graph.node if node.op_type.startswith("Memcpy"))


def check_serving_graph(libs, n=4096, reps=30):
    rng = np.random.default_rng(1)
    rows = []
    for dtype in (np.float32, np.float16):
        w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)
        x = rng.standard_normal((n, n)).astype(dtype)
        x_gpu = on_gpu(x)
        results = {}
        for kind in ("native", "triton"):
            opt = os.path.join(RESULTS_DIR, f"serving_{kind}_{np.dtype(dtype).name}.optimized.onnx")
            model = serving_graph("" if kind == "native" else "triton", n, ELEM[dtype], w)
            sess, log = capture_stderr(lambda: session([libs["softmax"]], model, log_level=2, optimized=opt, profile=True))
            binding = sess.io_binding()
            binding.bind_ortvalue_input("x", x_gpu)
            y_gpu = ort.OrtValue.ortvalue_from_shape_and_type([n, n], dtype, "cuda", 0)
            binding.bind_ortvalue_output("y", y_gpu)
            libs["softmax"].reset()
            sess.run_with_iobinding(binding)  # autotunes a new shape once
            stats = libs["softmax"].stats()
            nodes = profile_nodes(sess)
            results[kind] = {
                "y": y_gpu.numpy(),
                "warning": "Memcpy" in log and "added" in log,
                "memcpy_nodes_optimized_model": memcpy_count(opt),
                "memcpy_nodes_profiled": sum(1 for name, _ in nodes if name.startswith("Memcpy")),
                "softmax_provider": sorted({p for name, p in nodes if name.lower() == "softmax"}),
                "host_copies": stats["h2d_copies"] + stats["d2h_copies"],
            }
            os.remove(opt)
        timed = serving_times(libs, n, dtype, w, x_gpu, reps)
        for kind, ms in timed.items():
            results[kind]["ms"] = ms
        h = x.astype(np.float32) @ w.astype(np.float32)
        want = reference("softmax", {"x": h}) @ w.astype(np.float32)
        scale = np.abs(want).max()
        errs = {k: float(np.abs(r["y"].astype(np.float32) - want).max() / scale) for k, r in results.items()}
        nat, tri = results["native"], results["triton"]
        ratio = tri["ms"] / nat["ms"]
        tol = 2e-2 if dtype == np.float16 else 5e-3  # ORT's MatMul may use TF32
        name = np.dtype(dtype).name
        record(errs["triton"] <= tol, f"serving graph {name}: triton vs float32 reference rel err {errs['triton']:.3g} "
               f"(native {errs['native']:.3g}, tol {tol})", section="serving")
        memcpys = tri["memcpy_nodes_optimized_model"] + tri["memcpy_nodes_profiled"]
        record(
            memcpys == 0 and not tri["warning"] and tri["host_copies"] == 0 and tri["softmax_provider"] == [CUDA],
            f"serving graph {name}: triton::softmax on {tri['softmax_provider']}, Memcpy nodes: "
            f"{tri['memcpy_nodes_optimized_model']} in the optimized model, {tri['memcpy_nodes_profiled']} profiled, "
            f"ORT warning {'shown' if tri['warning'] else 'absent'}; {tri['host_copies']} host copies",
            section="serving",
        )
        record(ratio <= 1.05, f"serving graph {name} {n}x{n}: native {nat['ms']:.3f} ms, triton::softmax "
               f"{tri['ms']:.3f} ms per run = {ratio:.3f}x (target <= 1.05; median of {ROUNDS} interleaved rounds "
               f"of {reps} runs)", section="serving", timing=True)
        rows.append({"dtype": name, "native_ms": nat["ms"], "triton_ms": tri["ms"], "ratio": ratio,
                     "memcpy_nodes": memcpys, "err": errs})
    REPORT["serving_graph"] = rows


# ---- 3. CUDA graph capture ----


def check_cuda_graph(libs, n=4096, reps=50):
    rng = np.random.default_rng(2)
    dtype = np.float16
    w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(dtype)
    timings = {}
    for kind in ("native", "triton"):
        model = serving_graph("" if kind == "native" else "triton", n, ELEM[dtype], w)
        try:
            sess = session([libs["softmax"]], model, provider_options={"enable_cuda_graph": "1"})
            x = rng.standard_normal((n, n)).astype(dtype)
            x_gpu = on_gpu(x)
            y_gpu = ort.OrtValue.ortvalue_from_shape_and_type([n, n], dtype, "cuda", 0)
            binding = sess.io_binding()
            binding.bind_ortvalue_input("x", x_gpu)
            binding.bind_ortvalue_output("y", y_gpu)
            sess.run_with_iobinding(binding)  # regular run(s), then capture
            sess.run_with_iobinding(binding)  # replay
            x2 = rng.standard_normal((n, n)).astype(dtype)
            x_gpu.update_inplace(x2)
            sess.run_with_iobinding(binding)  # replay on new data
            want = reference("softmax", {"x": x2.astype(np.float32) @ w.astype(np.float32)}) @ w.astype(np.float32)
            err = float(np.abs(y_gpu.numpy().astype(np.float32) - want).max() / np.abs(want).max())
            timings[kind] = mean_us(lambda: sess.run_with_iobinding(binding), reps) / 1e3
            record(err <= 2e-2, f"CUDA graph ({kind}): captured, replayed on new input data, rel err {err:.3g}; "
                   f"{timings[kind]:.3f} ms per replay", section="cuda_graph")
        except Exception as e:  # onnxruntime's own exception types
            record(False, f"CUDA graph ({kind}): {str(e).strip()[:400]}", section="cuda_graph")
    REPORT["cuda_graph_ms"] = timings


# ---- 4. sessions and threads at once ----


def check_threads(libs, threads=6, iters=15):
    errors = []
    softmax_model = make_model([("softmax", ["x"], ["y"])], OPS["softmax"][0], ["y"], ELEM[np.float32])
    dot_model = make_model([("dot", ["a", "b"], ["c"])], OPS["dot"][0], ["c"], ELEM[np.float16])
    shared = session([libs["softmax"]], softmax_model)

    def worker(t):
        rng = np.random.default_rng(100 + t)
        own = session([libs["dot"]], dot_model) if t % 2 else None
        for i in range(iters):
            if own is not None:
                m, n, k = 64 + 37 * t + i, 200 + t, 96 + 5 * i
                feeds = feeds_for("dot", (m, n, k), np.float16, rng)
                (got,) = run_bound(own, feeds, ["c"])
                err, tol = error_of("dot", got, reference("dot", feeds), np.float16)
            else:
                feeds = feeds_for("softmax", (33 + t * 7 + i, 500 + 3 * i), np.float32, rng)
                (got,) = run_bound(shared, feeds, ["y"])
                err, tol = error_of("softmax", got, reference("softmax", feeds), np.float32)
            if not err <= tol:
                errors.append(f"thread {t} iteration {i}: err {err}")

    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    record(not errors, f"{threads} threads x {iters} runs (one shared softmax session, {threads // 2} dot sessions), "
           f"every result checked: {len(errors)} wrong {errors[:3]}", section="threads")


# ---- 5. dynamic shapes and the autotune cache ----


def check_dynamic_shapes(libs):
    rng = np.random.default_rng(3)
    model = make_model([("softmax", ["x"], ["y"])], OPS["softmax"][0], ["y"], ELEM[np.float16])
    sess = session([libs["softmax"]], model)
    shapes = [(1000, 777), (4096, 1024), (37, 4096), (8, 2)]
    bad = []
    for shape in shapes:
        feeds = feeds_for("softmax", shape, np.float16, rng)
        (got,) = run_bound(sess, feeds, ["y"])
        err, tol = error_of("softmax", got, reference("softmax", feeds), np.float16)
        if not err <= tol:
            bad.append((shape, err))
    cache = os.environ["TRITON_OPGEN_CACHE"]
    with open(cache) as f:
        entries = [k for k in json.load(f)["entries"] if k.startswith("triton::softmax|")]
    record(not bad and len(entries) >= len(shapes) - 1,
           f"dynamic shapes {shapes} in one session: {len(bad)} wrong; {len(entries)} softmax entries in {cache}",
           section="dynamic", cache_entries=entries)


# ---- 6. errors ----


def check_errors(libs):
    rng = np.random.default_rng(4)
    dot_model = make_model([("dot", ["a", "b"], ["c"])], OPS["dot"][0], ["c"], ELEM[np.float32])
    cases = [
        ("dot: mismatched K", "dot", dot_model,
         {"a": rng.standard_normal((8, 5)).astype(np.float32), "b": rng.standard_normal((6, 4)).astype(np.float32)},
         ["input `b`", "K"]),
        ("softmax: a row longer than every config", "softmax",
         make_model([("softmax", ["x"], ["y"])], OPS["softmax"][0], ["y"], ELEM[np.float32]),
         {"x": rng.standard_normal((2, 70000)).astype(np.float32)}, ["no compiled config accepts these inputs"]),
    ]
    for what, op, model, feeds, needles in cases:
        sess = session([libs[op]], model)
        try:
            run_bound(sess, feeds, [sess.get_outputs()[0].name])
            record(False, f"error on the GPU, {what}: no error", section="errors")
        except Exception as e:  # onnxruntime's own exception types
            text = str(e)
            record(all(n in text for n in needles), f"error on the GPU, {what}: {text.strip()[-200:]}", section="errors")


# ---- host cost of a node ----


def host_overhead(libs, nodes=16, reps=300):
    """Microseconds a run spends per node on a chain of `nodes` one-element
    adds (the GPU work is nil, so this is each node's host cost on the CUDA
    EP): triton::add against ORT's own Add."""
    out = {}
    for kind, domain in (("ORT Add", ""), ("triton::add", "triton")):
        names = [f"v{i}" for i in range(nodes + 1)]
        graph = helper.make_graph(
            [helper.make_node("Add" if domain == "" else "add", [names[i], "one"], [names[i + 1]], domain=domain)
             for i in range(nodes)],
            "chain",
            [helper.make_tensor_value_info("v0", ELEM[np.float32], [1]),
             helper.make_tensor_value_info("one", ELEM[np.float32], [1])],
            [helper.make_tensor_value_info(names[-1], ELEM[np.float32], [1])],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("triton", 1)])
        model.ir_version = 8
        sess = session([libs["add"]], model.SerializeToString())
        binding = sess.io_binding()
        binding.bind_ortvalue_input("v0", on_gpu(np.zeros(1, np.float32)))
        binding.bind_ortvalue_input("one", on_gpu(np.ones(1, np.float32)))
        binding.bind_output(names[-1], "cuda", 0)
        sess.run_with_iobinding(binding)
        if float(binding.get_outputs()[0].numpy()[0]) != nodes:
            record(False, f"host overhead chain ({kind}): wrong sum", section="overhead")
        out[kind] = mean_us(lambda: sess.run_with_iobinding(binding), reps) / nodes
    REPORT["host_us_per_node"] = out
    print(f"host cost per node, chain of {nodes} one-element adds: "
          + ", ".join(f"{k} {v:.1f} us" for k, v in out.items()), flush=True)


# ---- 7. a pre-tuned library benchmarks nothing ----


def check_tuned(libdir):
    """In this process (started with an empty cache): the tuned libraries
    run the shapes of their table without benchmarking."""
    libs = {op: Lib(libdir, op) for op in ("softmax", "dot")}
    rng = np.random.default_rng(5)
    taken = {op: lib.cdll.opgen_ort_tuned_entries() for op, lib in libs.items()}
    shapes = {"softmax": (4096, 4096), "dot": (1024, 1024, 1024)}
    for op, shape in shapes.items():
        for dtype in (np.float32, np.float16):
            ins, outs = OPS[op]
            model = make_model([(op, [n for n, _ in ins], [n for n, _ in outs])], ins, [n for n, _ in outs], ELEM[dtype])
            sess = session([libs[op]], model)
            feeds = feeds_for(op, shape, dtype, rng)
            (got,) = run_bound(sess, feeds, [outs[0][0]])
            err, tol = error_of(op, got, reference(op, feeds), dtype)
            bench = libs[op].stats()["tune_benchmarks"]
            record(err <= tol and bench == 0 and taken[op] > 0,
                   f"pre-tuned {op} {np.dtype(dtype).name} {shape}: {taken[op]} table entries, "
                   f"{bench} configs benchmarked (empty cache), err {err:.3g}", section="tuned")


def main():
    ort.preload_dlls()
    if CUDA not in ort.get_available_providers():
        sys.exit(f"FAIL: onnxruntime {ort.__version__} has no {CUDA}: {ort.get_available_providers()}")
    REPORT["onnxruntime"] = ort.__version__
    if TUNED_ONLY:
        check_tuned(LIBDIR)
        out = os.path.join(RESULTS_DIR, "cuda_ep_tuned.json")
    else:
        libs = {op: Lib(LIBDIR, op) for op in OPS}
        check_ops(libs)
        check_errors(libs)
        check_serving_graph(libs)
        check_cuda_graph(libs)
        check_threads(libs)
        check_dynamic_shapes(libs)
        host_overhead(libs)
        out = os.path.join(RESULTS_DIR, "cuda_ep.json")
        tuned = os.path.join(LIBDIR, "tuned")
        if os.path.isdir(tuned):
            env = dict(os.environ, TRITON_OPGEN_CACHE=os.path.join(RESULTS_DIR, "empty_cache.json"))
            rc = subprocess.run([sys.executable, __file__, tuned, RESULTS_DIR, "--tuned-only"], env=env).returncode
            record(rc == 0, f"pre-tuned libraries in a fresh process: exit {rc}", section="tuned")
    REPORT["failures"] = FAILURES
    with open(out, "w") as f:
        json.dump(REPORT, f, indent=1, default=str)
    print(f"{len(REPORT['checks']) - len(FAILURES)} passed, {len(FAILURES)} failed")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
