"""The generated TensorFlow ops on the GPU (TensorFlow 2.21, GPU:0).

    bash scripts/gpu/tf_ops_prepare.sh                          # here: out/tf/
    source /tmp/tf-env.sh                                       # there: TensorFlow, see
    python3 scripts/gpu/tf_ops_check.py out/tf RESULTS_DIR      #   ../shared/tools/tf-gpu-bundle.sh

Builds every op folder (build.sh, g++ against the TensorFlow imported), then:
  1. values on GPU:0 against numpy (float64) on odd shapes, float32 and float16:
     add, softmax, transpose, dot;
  1b. dot's `pad` line: odd N or K past its condition run the aligned
     variants on zero-padded twins (the picked config says ALIGN=8), values
     against numpy, one of them in a tf.function with unknown dims; below
     the condition the unaligned variants (ALIGN=1);
  2. dot's gradient through tf.GradientTape (it calls the generated dot_nt and
     dot_tn) against numpy;
  3. tf.function with unknown dims (input_signature [None, ...]), called with
     two shapes;
  4. errors on GPU inputs: wrong dtype, rank, mismatched dims, no config:
     exceptions naming the argument;
  5. ordering on TensorFlow's stream: a tf.function chaining the ops many times
     on large GPU tensors, every result consumed on the GPU by the next op and
     the end value checked (a launch on another stream, without a
     device-wide wait, would race);
  6. tf.function(jit_compile=True) around an op: the outcome is recorded;
  7. timings: each op, 50 chained calls in one tf.function, against its
     picked kernel launched directly (same PTX, same data, CUDA events) and
     against TensorFlow's own add / softmax / transpose chained the same way,
     in this process; the host time of a tiny eager call against tf.add.
TensorFlow's matmul needs cuBLAS 12, which the bundle stubs out: the dot is
timed against its raw kernel only (its cuBLAS comparison is the torch check's).
Writes RESULTS_DIR/tf_ops_check.json; exits 1 if a check failed."""

import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OPS_DIR, RESULTS_DIR = os.path.abspath(sys.argv[1]), sys.argv[2]
os.makedirs(RESULTS_DIR, exist_ok=True)
os.environ.setdefault("TRITON_OPGEN_CACHE", os.path.join(RESULTS_DIR, "tf_autotune.json"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import cuda_driver  # noqa: E402

OPS = ["add", "softmax", "transpose", "dot", "dot_nt", "dot_tn"]
results = {"builds": {}, "checks": [], "perf": {}}
failures = []


def record(section, name, ok, detail):
    results["checks"].append({"section": section, "name": name, "ok": bool(ok), "detail": str(detail)})
    print(f"[{'ok' if ok else 'FAIL'}] {section}: {name}: {str(detail)[:300]}", flush=True)
    if not ok:
        failures.append(f"{section}: {name}")


def check(section, name, fn):
    try:
        record(section, name, True, fn())
    except Exception as e:  # noqa: BLE001 - every failure is recorded, the run goes on
        record(section, name, False, f"{type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}")


def build_all():
    """Builds every op folder in parallel; returns the imported helper modules."""
    env = dict(os.environ, BRIDGE_LIB=os.path.join(OPS_DIR, "lib", "libopgen_bridge.a"))
    procs = {}
    for op in OPS:
        procs[op] = (subprocess.Popen(["bash", "build.sh"], cwd=os.path.join(OPS_DIR, op), env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True), time.time())
    mods = {}
    for op, (proc, start) in procs.items():
        out, _ = proc.communicate()
        results["builds"][op] = {"rc": proc.returncode, "seconds": round(time.time() - start, 1), "tail": out[-2000:]}
        print(f"build {op}: rc={proc.returncode} in {time.time() - start:.1f}s", flush=True)
        if proc.returncode != 0:
            print(out[-2000:], flush=True)
            continue
        sys.path.insert(0, os.path.join(OPS_DIR, op))
        module = __import__(f"triton_{op}_tf")
        module.load()
        mods[op] = module
    return mods


def rng_array(rng, shape, dtype):
    return (rng.standard_normal(shape) / 2).astype(dtype)


def close(got, want, dtype, what):
    got = np.asarray(got, dtype=np.float64)
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    err = float(np.abs(got - want).max() / scale) if want.size else 0.0
    tol = 1e-5 if dtype == np.float32 else 2e-3
    if got.shape != want.shape or not err <= tol:
        raise AssertionError(f"{what}: shape {got.shape} vs {want.shape}, rel err {err:.3g} > {tol}")
    return err


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_values(mods, rng):
    cases = {
        "add": [(1,), (1000,), ((1 << 20) + 3,)],
        "softmax": [(1, 1), (257, 3000), (1000, 4096), (2, 70000)],
        "transpose": [(1, 1), (1000, 777), (2048, 64)],
        "dot": [(1, 1, 1), (65, 33, 17), (1000, 777, 1531), (1024, 1024, 1024)],
    }
    for dtype in (np.float32, np.float16):
        for op, shapes in cases.items():
            for shape in shapes:
                def run(op=op, shape=shape):
                    with tf.device("/GPU:0"):
                        if op == "add":
                            x, y = rng_array(rng, shape, dtype), rng_array(rng, shape, dtype)
                            got, want = mods["add"].add(x, y), x.astype(np.float64) + y
                        elif op == "softmax":
                            x = rng_array(rng, shape, dtype)
                            got, want = mods["softmax"].softmax(x), softmax_ref(x)
                        elif op == "transpose":
                            x = rng_array(rng, shape, dtype)
                            got, want = mods["transpose"].transpose(x), x.astype(np.float64).T
                        else:
                            m, n, k = shape
                            a, b = rng_array(rng, (m, k), dtype), rng_array(rng, (k, n), dtype)
                            got, want = mods["dot"].dot(a, b), a.astype(np.float64) @ b
                    device = got.device
                    err = close(got.numpy(), want, dtype, op)
                    if "GPU:0" not in device:
                        raise AssertionError(f"ran on {device}")
                    return f"rel err {err:.2e} on {device.split('/')[-1]}, config {mods[op].last_config()}"
                check("values", f"{op} {np.dtype(dtype).name} {shape}", run)


def check_pad(mods, rng):
    # (M, N, K): odd N and K, odd N only (a's twin is a itself), odd K only
    # (c is its own twin), N = 4 mod 8; then one below the condition.
    padded = [(2049, 2049, 2049), (1000, 777, 3001), (4096, 4096, 129), (300, 4100, 2049), (2048, 2051, 1024)]
    below = [(1000, 777, 1531)]
    for dtype in (np.float16, np.float32):
        for shape in padded + below:
            def run(shape=shape, dtype=dtype):
                m, n, k = shape
                a, b = rng_array(rng, (m, k), dtype), rng_array(rng, (k, n), dtype)
                with tf.device("/GPU:0"):
                    got = mods["dot"].dot(a, b)
                err = close(got.numpy(), a.astype(np.float64) @ b, dtype, "dot")
                config = mods["dot"].last_config()
                want = "ALIGN=8" if shape in padded else "ALIGN=1"
                if want not in config.split():
                    raise AssertionError(f"config {config} lacks {want}")
                return f"rel err {err:.2e}, config {config}"
            check("pad", f"dot {np.dtype(dtype).name} {shape}", run)

    def unknown_dims():
        spec = [tf.TensorSpec([None, None], tf.float16)] * 2
        fn = tf.function(lambda x, y: mods["dot"].dot(x, y), input_signature=spec)
        out = []
        for m, n, k in [(2049, 2049, 2049), (1000, 777, 1531)]:
            a, b = rng_array(rng, (m, k), np.float16), rng_array(rng, (k, n), np.float16)
            with tf.device("/GPU:0"):
                got = fn(a, b)
            err = close(got.numpy(), a.astype(np.float64) @ b, np.float16, "dot")
            out.append(f"{m}x{n}x{k}: rel err {err:.2e}, {mods['dot'].last_config()}")
        return "; ".join(out)
    check("pad", "dot in a tf.function with input_signature [None, None], padded then not", unknown_dims)


def check_gradient(mods, rng):
    for dtype in (np.float32, np.float16):
        for m, n, k in [(65, 33, 17), (300, 200, 513)]:
            def run(m=m, n=n, k=k, dtype=dtype):
                a, b = rng_array(rng, (m, k), dtype), rng_array(rng, (k, n), dtype)
                dc = rng_array(rng, (m, n), dtype)
                with tf.device("/GPU:0"):
                    ta, tb = tf.constant(a), tf.constant(b)
                    with tf.GradientTape() as tape:
                        tape.watch([ta, tb])
                        c = mods["dot"].dot(ta, tb)
                    da, db = tape.gradient(c, [ta, tb], output_gradients=tf.constant(dc))
                e1 = close(da.numpy(), dc.astype(np.float64) @ b.astype(np.float64).T, dtype, "da")
                e2 = close(db.numpy(), a.astype(np.float64).T @ dc.astype(np.float64), dtype, "db")
                return f"da rel err {e1:.2e}, db {e2:.2e} (dot_nt {mods['dot_nt'].last_config()}, dot_tn {mods['dot_tn'].last_config()})"
            check("gradient", f"dot {np.dtype(dtype).name} {m}x{n}x{k}", run)


def check_unknown_dims(mods, rng):
    def run():
        f = tf.function(lambda a, b: mods["softmax"].softmax(mods["dot"].dot(a, b)),
                        input_signature=[tf.TensorSpec([None, None], tf.float32)] * 2)
        out = []
        for m, n, k in [(37, 45, 29), (300, 1000, 64)]:
            a, b = rng_array(rng, (m, k), np.float32), rng_array(rng, (k, n), np.float32)
            with tf.device("/GPU:0"):
                got = f(a, b)
            close(got.numpy(), softmax_ref(a.astype(np.float64) @ b), np.float32, f"{m}x{n}x{k}")
            out.append(f"{m}x{n}x{k} ok")
        traced = f.get_concrete_function().structured_outputs
        return f"{', '.join(out)}; one trace, output {traced.shape}"
    check("tf.function", "softmax(dot(a, b)) with input_signature [None, None]", run)


def expect_error(name, fn, needles):
    def run():
        try:
            with tf.device("/GPU:0"):
                fn()
        except Exception as e:  # noqa: BLE001 - TF raises several kinds
            text = f"{type(e).__name__}: {e}"
            missing = [n for n in needles if n not in text]
            if missing:
                raise AssertionError(f"the error lacks {missing}: {text[:400]}")
            return text.strip().splitlines()[0][:240]
        raise AssertionError("no error raised")
    check("errors", name, run)


def check_errors(mods):
    f32 = np.ones((8, 5), np.float32)
    expect_error("dot: float64 input", lambda: mods["dot"].dot(f32.astype(np.float64), f32.T), ["`a`", "float64"])
    expect_error("dot: rank 3", lambda: mods["dot"].dot(np.ones((2, 8, 5), np.float32), f32.T), ["`a`"])
    expect_error("dot: mismatched K", lambda: mods["dot"].dot(f32, np.ones((6, 4), np.float32)), ["`b`", "K"])
    expect_error("add: mismatched lengths", lambda: mods["add"].add(np.ones(8, np.float32), np.ones(5, np.float32)),
                 ["`y`", "N"])
    expect_error("softmax: rank 1", lambda: mods["softmax"].softmax(np.ones(8, np.float32)), ["`x`"])


def check_stream_order(mods, rng):
    def run():
        n = 4096
        x = rng_array(rng, (n, n), np.float32)
        y = rng_array(rng, (n, n), np.float32)

        @tf.function
        def chain(x, y):
            # Each op reads the previous op's output on the GPU: transposes and
            # adds, 16 launches, then a softmax; no host round trip between them.
            for _ in range(8):
                x = mods["add"].add(tf.reshape(mods["transpose"].transpose(x), [-1]), tf.reshape(y, [-1]))
                x = tf.reshape(x, [n, n])
            return mods["softmax"].softmax(x)

        with tf.device("/GPU:0"):
            got = chain(tf.constant(x), tf.constant(y)).numpy()
        want = x.astype(np.float64)
        for _ in range(8):
            want = want.T + y
        close(got, softmax_ref(want), np.float32, "chain")
        return "17 launches in one tf.function, each consuming the last on the GPU: end value matches numpy"
    check("stream", "transpose/add x8 then softmax on TensorFlow's stream", run)


def check_xla(mods, rng):
    x, y = rng_array(rng, (1000,), np.float32), rng_array(rng, (1000,), np.float32)

    @tf.function(jit_compile=True)
    def jitted(x, y):
        return mods["add"].add(x, y) * 2.0

    try:
        with tf.device("/GPU:0"):
            got = jitted(x, y).numpy()
        close(got, (x.astype(np.float64) + y) * 2.0, np.float32, "xla")
        outcome = "runs: the op is compiled around (kept outside the XLA cluster)"
    except Exception as e:  # noqa: BLE001 - the outcome is what we record
        outcome = f"refused: {type(e).__name__}: {str(e).strip().splitlines()[0][:300]}"
    results["xla"] = outcome
    record("xla", "tf.function(jit_compile=True) around add", True, outcome)


def chain_time_ms(step, first, iters=50):
    """Mean ms per step of `iters` chained steps (`v = step(v)`) inside one
    tf.function: each step consumes the last, so TensorFlow can neither prune
    nor merge them; one element comes back to the host at the end."""
    @tf.function(autograph=False)
    def loop(v):
        for _ in range(iters):
            v = step(v)
        return tf.reshape(v, [-1])[0]

    loop(first).numpy()  # trace, tune, warm up
    start = time.perf_counter()
    loop(first).numpy()
    return (time.perf_counter() - start) * 1e3 / iters


def raw_time_ms(op, config, dtypes, grid, args, iters=50):
    """The picked config's kernel launched directly (same PTX), CUDA events."""
    entry, ptx = cuda_driver.variant_for(os.path.join(OPS_DIR, op, "raw"), config, dtypes)
    cuda_driver.bind_primary_context(0)
    kernel = cuda_driver.Kernel(ptx, entry, torch_stream=False)
    macros = {k: int(v) for k, v in entry["macros"].items() if v.isdigit()}
    launch_args = {p["name"]: args[p["name"]] for p in entry["params"]}
    return cuda_driver.time_ms(lambda: kernel(grid(macros), **launch_args), iters)


def cdiv(a, b):
    return (a + b - 1) // b


def check_perf(mods, rng):
    # Grappler would rewrite TensorFlow's own chains (transpose pairs cancel,
    # add chains fold into one AddN); timed graphs run as written.
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})

    def perf(name, op, step, own_step, first, raw):
        try:
            with tf.device("/GPU:0"):
                op_ms = chain_time_ms(step, first)
                entry = {"config": mods[op].last_config(), "op_ms": op_ms}
                if own_step is not None:
                    entry["tensorflow_ms"] = chain_time_ms(own_step, first)
                    entry["op_over_tensorflow"] = op_ms / entry["tensorflow_ms"]
            try:
                entry["raw_ms"] = raw(entry["config"])
                entry["op_over_raw"] = op_ms / entry["raw_ms"]
            except ValueError as e:  # a config the raw launcher cannot run (TMA maps, clusters)
                entry["raw_skipped"] = str(e)
            results["perf"][name] = entry
            print(f"perf {name}: {entry}", flush=True)
        except Exception as e:  # noqa: BLE001
            results["perf"][name] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1200:]}
            print(f"perf {name}: {results['perf'][name]}", flush=True)

    buf = cuda_driver.Buffer
    big = 1 << 26
    for dt, key in [(np.float32, "T=float32"), (np.float16, "T=float16")]:
        xs, ys = rng_array(rng, (big,), dt), rng_array(rng, (big,), dt) / 64
        with tf.device("/GPU:0"):
            y = tf.constant(ys)
            first = tf.constant(xs)
        perf(f"add {key} n=2^26", "add", lambda v: mods["add"].add(v, y), lambda v: tf.add(v, y), first,
             lambda cfg: raw_time_ms("add", cfg, key, lambda m: (cdiv(big, m["SIZE"]),),
                                     {"N": big, "a": buf(0, xs), "b": buf(0, ys), "c": buf(xs.nbytes)}))
        m, n = 4096, 4096
        ss = rng_array(rng, (m, n), dt)
        with tf.device("/GPU:0"):
            first = tf.constant(ss)
        # persistent(M) grid: the op launches at most the resident programs; here one per row.
        perf(f"softmax {key} {m}x{n}", "softmax", lambda v: mods["softmax"].softmax(v), lambda v: tf.nn.softmax(v),
             first, lambda cfg: raw_time_ms("softmax", cfg, key, lambda mac: (m,),
                                            {"Y": buf(ss.nbytes), "X": buf(0, ss), "ldx": n, "ldy": n, "M": m, "N": n}))
        r = 8192
        ts = rng_array(rng, (r, r), dt)
        with tf.device("/GPU:0"):
            first = tf.constant(ts)
        perf(f"transpose {key} {r}x{r}", "transpose", lambda v: mods["transpose"].transpose(v),
             lambda v: tf.transpose(v), first,
             lambda cfg: raw_time_ms("transpose", cfg, key, lambda mac: (cdiv(r, mac["TM"]), cdiv(r, mac["TN"])),
                                     {"X": buf(0, ts), "Y": buf(ts.nbytes), "M": r, "N": r, "ldx": r, "ldy": r}))
    # The pad line's cost: 2049^3 runs on padded twins (three copy_fill
    # launches a call); 2048^3, aligned, is the same work without them.
    for mm in (2048, 2049):
        b_host = (np.eye(mm) + rng_array(rng, (mm, mm), np.float32) / mm).astype(np.float16)
        with tf.device("/GPU:0"):
            b = tf.constant(b_host)
            first = tf.constant(rng_array(rng, (mm, mm), np.float16) / 8)
            op_ms = chain_time_ms(lambda v: mods["dot"].dot(v, b), first)
        results["perf"][f"dot T=float16 {mm}^3 (pad)"] = {
            "config": mods["dot"].last_config(), "op_ms": op_ms, "tflops": 2 * mm**3 / op_ms / 1e9}
        print(f"perf dot {mm}^3: {results['perf'][f'dot T=float16 {mm}^3 (pad)']}", flush=True)
    for mm in (4096, 8192):
        key = "T=float16"
        a_host = rng_array(rng, (mm, mm), np.float16) / 8
        b_host = (np.eye(mm) + rng_array(rng, (mm, mm), np.float32) / mm).astype(np.float16)
        with tf.device("/GPU:0"):
            b = tf.constant(b_host)
            first = tf.constant(a_host)
        name = f"dot {key} {mm}^3"
        # c = dot(c, b) with b near the identity keeps the values finite.
        perf(name, "dot", lambda v: mods["dot"].dot(v, b), None, first,
             lambda cfg: raw_time_ms("dot", cfg, key, lambda mac: (cdiv(mm, mac["TM"]) * cdiv(mm, mac["TN"]),),
                                     {"A": buf(0, a_host), "B": buf(0, b_host), "C": buf(a_host.nbytes),
                                      "M": mm, "N": mm, "K": mm, "lda": mm, "ldb": mm, "ldc": mm}))
        entry = results["perf"].get(name, {})
        if "op_ms" in entry:
            entry["tflops"] = 2 * mm**3 / entry["op_ms"] / 1e9
            if "raw_ms" in entry:
                entry["raw_tflops"] = 2 * mm**3 / entry["raw_ms"] / 1e9

    # Host time of a tiny eager call, against tf.add.
    with tf.device("/GPU:0"):
        one_a, one_b = tf.constant([1.0]), tf.constant([2.0])
        for fn, label in [(lambda: mods["add"].add(one_a, one_b), "triton add"), (lambda: tf.add(one_a, one_b), "tf.add")]:
            for _ in range(50):
                fn()
            start = time.perf_counter()
            for _ in range(1000):
                fn()
            fn().numpy()
            results["perf"][f"tiny call host us: {label}"] = (time.perf_counter() - start) * 1e6 / 1000
    print(f"tiny call: {results['perf']['tiny call host us: triton add']:.1f} us vs tf.add "
          f"{results['perf']['tiny call host us: tf.add']:.1f} us", flush=True)


def main():
    gpus = tf.config.list_physical_devices("GPU")
    results["tensorflow"] = tf.__version__
    results["gpus"] = [g.name for g in gpus]
    print(f"TensorFlow {tf.__version__}, GPUs {results['gpus']}", flush=True)
    if not gpus:
        print("FAIL: TensorFlow sees no GPU", flush=True)
        return 1
    mods = build_all()
    if len(mods) != len(OPS):
        failures.append("builds")
    else:
        rng = np.random.default_rng(0)
        check_values(mods, rng)
        check_pad(mods, rng)
        check_gradient(mods, rng)
        check_unknown_dims(mods, rng)
        check_errors(mods)
        check_stream_order(mods, rng)
        check_xla(mods, rng)
        check_perf(mods, rng)
    results["failures"] = failures
    with open(os.path.join(RESULTS_DIR, "tf_ops_check.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    print(f"{len(results['checks']) - len(failures)} passed, {len(failures)} failed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
