#!/usr/bin/env python3
"""Checks the triton-opgen PyTorch ops on a GPU machine (torch + g++, no Rust).

    bash scripts/gpu/torch_ops_prepare.sh              # on the Rust machine: out/torch/
    python3 scripts/gpu/torch_ops_check.py out/torch   # on the GPU machine

Builds each --no-build folder with its build.sh, loads the ops, and checks:
correctness against torch (fp32/fp16, odd shapes, non-contiguous views),
RuntimeError messages for wrong device/dtype/shape, add's autograd,
torch.compile(fullgraph=True), op time vs the raw kernel (same PTX, same
config, launched through the driver with ctypes) at large sizes, and the
host overhead of a tiny call. Results go to $OUT/torch_ops_check.json (or
./torch_ops_check.json) and a summary is printed. Exit status 1 if a check
failed.
"""

import argparse
import ctypes
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

OPS = ["add", "softmax", "transpose", "dot", "dot_nt", "dot_tn"]
results = {"builds": {}, "checks": [], "errors": [], "perf": {}, "overhead_us": {}, "compile": {}}


def record(section, name, ok, detail):
    entry = {"name": name, "ok": bool(ok), "detail": detail}
    results[section].append(entry)
    print(f"[{'ok' if ok else 'FAIL'}] {section}: {name}: {str(detail)[:300]}", flush=True)


def check(name, fn):
    try:
        detail = fn()
        record("checks", name, True, detail if detail is not None else "")
    except Exception as e:  # noqa: BLE001 - every failure is a result
        record("checks", name, False, f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")


def expect_error(name, call, must_contain):
    try:
        call()
    except RuntimeError as e:
        text = str(e)
        first = text.strip().splitlines()[0] if text.strip() else text
        missing = [s for s in must_contain if s not in text]
        record("errors", name, not missing, first if not missing else f"missing {missing} in: {first}")
        return
    except Exception as e:  # noqa: BLE001
        record("errors", name, False, f"{type(e).__name__} instead of RuntimeError: {e}")
        return
    record("errors", name, False, "no error raised")


def start_build(ops_dir, op):
    """Starts build.sh of one op folder (all ops build in parallel)."""
    folder = os.path.join(ops_dir, op)
    env = dict(os.environ)
    shared = os.path.join(ops_dir, "lib", "libopgen_bridge.a")
    if not os.path.exists(os.path.join(folder, "lib", "libopgen_bridge.a")) and os.path.exists(shared):
        env["BRIDGE_LIB"] = os.path.abspath(shared)
    proc = subprocess.Popen(["bash", "build.sh"], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    return proc, time.time()


def finish_build(ops_dir, op, proc, start, module=None):
    """Waits for the build; imports its loader (`triton_<op>`, or `module`)."""
    folder = os.path.join(ops_dir, op)
    output, _ = proc.communicate()
    results["builds"][op] = {
        "rc": proc.returncode,
        "seconds": round(time.time() - start, 1),
        "output_tail": output[-3000:],
    }
    print(f"build {op}: rc={proc.returncode} in {time.time() - start:.1f}s", flush=True)
    if proc.returncode != 0:
        print(output[-3000:], flush=True)
        return None
    sys.path.insert(0, os.path.abspath(folder))
    return importlib.import_module(module or f"triton_{op}")


def variant_for(ops_dir, op, config, dtypes):
    import cuda_driver

    return cuda_driver.variant_for(os.path.join(ops_dir, op), config, dtypes)


def cuda_time_ms(fn, iters):
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def occupancy_grid(kernel, work):
    import torch

    blocks = ctypes.c_int()
    import cuda_driver

    cuda_driver._check(
        cuda_driver._driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), kernel.func, kernel.threads, kernel.shared
        ),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor",
    )
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return max(1, min(work, sms * max(1, blocks.value)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ops_dir", nargs="?", default="out/torch")
    parser.add_argument("--quick", action="store_true", help="smaller perf sizes")
    args = parser.parse_args()
    out_dir = os.environ.get("OUT", ".")
    cache_dir = tempfile.mkdtemp(prefix="opgen-cache-")
    os.environ["TRITON_OPGEN_CACHE"] = os.path.join(cache_dir, "autotune.json")

    import torch

    results["torch"] = torch.__version__
    results["device"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    ops_present = [op for op in OPS if os.path.isdir(os.path.join(args.ops_dir, op))]
    started = {op: start_build(args.ops_dir, op) for op in ops_present}
    mods = {op: None for op in OPS}
    for op, (proc, start) in started.items():
        mods[op] = finish_build(args.ops_dir, op, proc, start)
    ops = {op: (m.load() if m else None) for op, m in mods.items()}
    dev = "cuda"
    torch.manual_seed(0)

    def close(a, b, dtype):
        tol = {torch.float32: (1e-5, 1e-6), torch.float16: (2e-3, 1e-3)}[dtype]
        torch.testing.assert_close(a, b, rtol=tol[0], atol=tol[1])

    add, softmax, transpose = ops["add"], ops["softmax"], ops["transpose"]
    dot, dot_nt, dot_tn = ops["dot"], ops["dot_nt"], ops["dot_tn"]
    dtypes = [torch.float32, torch.float16]

    # --- correctness ---------------------------------------------------------
    if add:
        for dt in dtypes:
            for n in [1, 7, 1000, 4097, 1000003]:
                def run(n=n, dt=dt):
                    x, y = torch.randn(n, device=dev, dtype=dt), torch.randn(n, device=dev, dtype=dt)
                    close(add(x, y), x + y, dt)
                    return mods["add"].last_config()
                check(f"add {dt} n={n}", run)

            def views(dt=dt):
                base = torch.randn(20001, device=dev, dtype=dt)
                other = torch.randn(20001, device=dev, dtype=dt)
                close(add(base[::2], other[::2]), base[::2] + other[::2], dt)  # strided: copied
                close(add(base[1:], other[1:]), base[1:] + other[1:], dt)  # misaligned offset: copied
                return "strided and offset views"
            check(f"add {dt} non-contiguous", views)
        check("add empty", lambda: tuple(add(torch.empty(0, device=dev), torch.empty(0, device=dev)).shape))

    if softmax:
        for dt in dtypes:
            # Rows past every one-tile config (32768) run the looping configs.
            for shape in [(1, 1), (37, 1000), (128, 1024), (3, 1025), (64, 3000), (1000, 17), (4, 5000), (3, 40003)]:
                def run(shape=shape, dt=dt):
                    a = torch.randn(*shape, device=dev, dtype=dt)
                    close(softmax(a), torch.softmax(a.float(), -1).to(dt), dt)
                    return mods["softmax"].last_config()
                check(f"softmax {dt} {shape}", run)

            def rows(dt=dt):
                a = torch.randn(300, 2000, device=dev, dtype=dt)[:, :700]  # row stride 2000
                close(softmax(a), torch.softmax(a.float(), -1).to(dt), dt)
                return "row-strided view passed with ldx"
            check(f"softmax {dt} row-strided view", rows)

    if transpose:
        for dt in dtypes:
            for shape in [(1, 1), (77, 130), (513, 257), (64, 64), (1, 1000)]:
                def run(shape=shape, dt=dt):
                    a = torch.randn(*shape, device=dev, dtype=dt)
                    torch.testing.assert_close(transpose(a), a.t().contiguous(), rtol=0, atol=0)
                    return mods["transpose"].last_config()
                check(f"transpose {dt} {shape}", run)

            def noncontig(dt=dt):
                a = torch.randn(300, 200, device=dev, dtype=dt)
                torch.testing.assert_close(transpose(a.t()), a, rtol=0, atol=0)
                torch.testing.assert_close(transpose(a[::3, 1:]), a[::3, 1:].t(), rtol=0, atol=0)
                return "transposed and sliced views copied"
            check(f"transpose {dt} non-contiguous", noncontig)

    def mm_close(got, want, dt):
        tol = {torch.float32: 1e-4, torch.float16: 5e-3}[dt]
        torch.testing.assert_close(got.double(), want, rtol=tol, atol=tol)
        return f"max abs err {(got.double() - want).abs().max().item():.2e}, config {mods['dot'].last_config()}"

    if dot and dot_nt and dot_tn:
        for dt in dtypes:
            shapes = [(1, 1, 1), (37, 45, 29), (128, 128, 128), (300, 200, 513), (1000, 17, 64), (256, 512, 1088)]
            for (m, n, k) in shapes:
                def run(m=m, n=n, k=k, dt=dt):
                    s = k ** -0.5
                    a = (torch.randn(m, k, device=dev) * s).to(dt)
                    b = (torch.randn(k, n, device=dev) * s).to(dt)
                    want = a.double() @ b.double()
                    mm_close(dot_nt(a, b.t().contiguous()), want, dt)
                    mm_close(dot_tn(a.t().contiguous(), b), want, dt)
                    detail = mm_close(dot(a, b), want, dt)
                    # dot's ALIGN=8 configs promise N, K multiples of 8: only those shapes may pick them.
                    aligned = all(x % 8 == 0 for x in (n, k))
                    config = mods["dot"].last_config()
                    assert aligned or "ALIGN=1 " in config + " ", f"{m}x{n}x{k} picked {config}"
                    return detail
                check(f"dot/dot_nt/dot_tn {dt} {m}x{n}x{k}", run)

            def views(dt=dt):
                a = torch.randn(96, 80, device=dev).to(dt) / 9
                b = torch.randn(64, 120, device=dev).to(dt) / 9
                # transposed and sliced views are copied (`contiguous` in the spec)
                return mm_close(dot(a.t()[:, :64], b), a.t()[:, :64].double() @ b.double(), dt)
            check(f"dot {dt} non-contiguous", views)

            def backward(dt=dt):
                m, n, k = 67, 45, 129
                a = (torch.randn(m, k, device=dev) / 11).to(dt).requires_grad_()
                b = (torch.randn(k, n, device=dev) / 11).to(dt).requires_grad_()
                w = torch.randn(m, n, device=dev).to(dt)
                (dot(a, b).float() * w.float()).sum().backward()
                a2 = a.detach().double().requires_grad_()
                b2 = b.detach().double().requires_grad_()
                ((a2 @ b2) * w.double()).sum().backward()
                tol = {torch.float32: 1e-4, torch.float16: 1e-2}[dt]
                torch.testing.assert_close(a.grad.double(), a2.grad, rtol=tol, atol=tol)
                torch.testing.assert_close(b.grad.double(), b2.grad, rtol=tol, atol=tol)
                return (f"da err {(a.grad.double() - a2.grad).abs().max().item():.2e}, "
                        f"db err {(b.grad.double() - b2.grad).abs().max().item():.2e}")
            check(f"dot {dt} backward vs torch autograd", backward)

        def cuda_graph():
            # A shape the op never ran: capture must fail with the op's own error
            # (tuning would wait on the GPU); after one plain call, capture and
            # replay work and see new input data.
            a, b = torch.randn(200, 72, device=dev) / 9, torch.randn(72, 104, device=dev) / 9
            graph = torch.cuda.CUDAGraph()
            message = ""
            try:
                with torch.cuda.graph(graph):
                    dot(a, b)
            except RuntimeError as e:
                message = str(e)
            if "CUDA graph" not in message or "--tuned" not in message:
                raise AssertionError(f"capture of an untuned shape: {message or 'no error'}")
            torch.cuda.synchronize()
            dot(a, b)  # tunes outside capture
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = dot(a, b)
            a.copy_(torch.randn_like(a) / 9)
            graph.replay()
            torch.cuda.synchronize()
            mm_close(out, a.double() @ b.double(), torch.float32)
            return f"untuned capture refused ({message.splitlines()[0][:120]}...); tuned capture replayed right"
        check("dot under CUDA graph capture", cuda_graph)

        def compiled_dot():
            g = torch.compile(lambda a, b: torch.relu(dot(a, b)) + 1.0, fullgraph=True)
            a, b = torch.randn(64, 48, device=dev) / 7, torch.randn(48, 80, device=dev) / 7
            mm_close(g(a, b) - 1.0, torch.relu(a.double() @ b.double()), torch.float32)
            return "fullgraph compile of dot ran and matched"
        check("torch.compile fullgraph dot", compiled_dot)

    # --- errors -----------------------------------------------------------------
    if add:
        x = torch.randn(100, device=dev)
        y = torch.randn(100, device=dev)
        expect_error("add cpu inputs", lambda: add(x.cpu(), y.cpu()), ["`x`", "CUDA"])
        expect_error("add mixed devices", lambda: add(x, y.cpu()), ["`y`", "cpu"])
        expect_error("add dtype mismatch", lambda: add(x, y.half()), ["`y`", "dtype"])
        expect_error("add shape mismatch", lambda: add(x, y[:5]), ["`y`", "dimension N"])
        expect_error("add rank", lambda: add(x.view(10, 10), y.view(10, 10)), ["`x`", "dimension"])
        expect_error("add unsupported dtype", lambda: add(x.double(), y.double()), ["unsupported dtype", "`x`"])
    if softmax:
        a = torch.randn(64, 64, device=dev)
        expect_error("softmax column-strided view", lambda: softmax(a.t()), ["`x`", "strides"])
        expect_error("softmax rank", lambda: softmax(torch.randn(8, device=dev)), ["`x`", "2 dimension"])
    if dot:
        a = torch.randn(8, 16, device=dev)
        expect_error("dot inner dims", lambda: dot(a, torch.randn(15, 4, device=dev)), ["`b`", "dimension K"])
        expect_error("dot dtype mismatch", lambda: dot(a, torch.randn(16, 4, device=dev).half()), ["`b`", "dtype"])
    if transpose:
        expect_error("transpose rank", lambda: transpose(torch.randn(2, 3, 4, device=dev)), ["`x`"])
    check("process alive after errors", lambda: float(torch.ones(1, device=dev).sum()))

    # --- autograd and torch.compile ----------------------------------------------
    if add:
        def grads():
            x = torch.randn(1000, device=dev, requires_grad=True)
            y = torch.randn(1000, device=dev, requires_grad=True)
            w = torch.randn(1000, device=dev)
            (add(x, y) * w).sum().backward()
            torch.testing.assert_close(x.grad, w)
            torch.testing.assert_close(y.grad, w)
            return "dx = dy = upstream gradient"
        check("add autograd", grads)

    if add and softmax and transpose:
        def compiled():
            def f(a, b):
                s = add(a.reshape(-1), b.reshape(-1)).reshape(a.shape)
                return transpose(softmax(s)) * 2.0

            a = torch.randn(96, 300, device=dev)
            b = torch.randn(96, 300, device=dev)
            want = torch.softmax(a + b, -1).t() * 2.0
            g = torch.compile(f, fullgraph=True)
            torch.testing.assert_close(g(a, b), want, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(g(a * 2, b), torch.softmax(a * 2 + b, -1).t() * 2.0, rtol=1e-5, atol=1e-6)
            return "fullgraph compile ran and matched"
        check("torch.compile fullgraph", compiled)

    # --- performance ----------------------------------------------------------------
    try:
        import cuda_driver
    except Exception as e:  # noqa: BLE001
        cuda_driver = None
        results["perf"]["error"] = f"cuda_driver unavailable: {e}"
    iters = 20 if args.quick else 100

    def perf(name, op, op_name, inputs, dtypes_key, raw_call):
        try:
            op(*inputs)  # tunes
            torch.cuda.synchronize()
            config = mods[op_name].last_config()
            op_ms = cuda_time_ms(lambda: op(*inputs), iters)
            entry = {"config": config, "op_ms": op_ms}
            if cuda_driver is not None:
                variant, ptx = variant_for(args.ops_dir, op_name, config, dtypes_key)
                kernel = cuda_driver.Kernel(ptx, variant)
                try:
                    raw_ms = cuda_time_ms(lambda: raw_call(kernel, variant), iters)
                    entry["raw_ms"] = raw_ms
                    entry["op_over_raw"] = op_ms / raw_ms
                    entry["within_5pct"] = op_ms <= raw_ms * 1.05
                except ValueError as e:  # a variant the raw launcher cannot launch (TMA, persistent)
                    entry["raw_error"] = str(e)
            results["perf"][name] = entry
            print(f"perf {name}: {entry}", flush=True)
        except Exception as e:  # noqa: BLE001
            results["perf"][name] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1500:]}
            print(f"perf {name}: {results['perf'][name]}", flush=True)

    big = 1 << (24 if args.quick else 26)
    if add:
        for dt, key in [(torch.float32, "T=float32"), (torch.float16, "T=float16")]:
            x, y = torch.randn(big, device=dev, dtype=dt), torch.randn(big, device=dev, dtype=dt)
            z = torch.empty_like(x)

            def raw(k, v, x=x, y=y, z=z):
                size = int(v["macros"]["SIZE"])
                k(((big + size - 1) // size,), N=big, a=x, b=y, c=z)
            perf(f"add {key} n={big}", add, "add", (x, y), key, raw)
            results["perf"][f"add {key} n={big}"]["torch_ms"] = cuda_time_ms(lambda: x + y, iters)
    if softmax:
        for dt, key in [(torch.float32, "T=float32"), (torch.float16, "T=float16")]:
            m, n = (8192, 4000) if not args.quick else (2048, 4000)
            a = torch.randn(m, n, device=dev, dtype=dt)
            out = torch.empty_like(a)

            def raw(k, v, a=a, out=out, m=m, n=n):
                k((occupancy_grid(k, m),), Y=out, X=a, ldx=n, ldy=n, M=m, N=n)
            perf(f"softmax {key} {m}x{n}", softmax, "softmax", (a,), key, raw)
            results["perf"][f"softmax {key} {m}x{n}"]["torch_ms"] = cuda_time_ms(lambda: torch.softmax(a, -1), iters)
    if transpose:
        for dt, key in [(torch.float32, "T=float32"), (torch.float16, "T=float16")]:
            r, c = (8192, 8192) if not args.quick else (4096, 4096)
            a = torch.randn(r, c, device=dev, dtype=dt)
            out = torch.empty(c, r, device=dev, dtype=dt)

            def raw(k, v, a=a, out=out, r=r, c=c):
                tm, tn = int(v["macros"]["TM"]), int(v["macros"]["TN"])
                k(((c + tm - 1) // tm, (r + tn - 1) // tn), X=a, Y=out, M=c, N=r, ldx=c, ldy=r)
            perf(f"transpose {key} {r}x{c}", transpose, "transpose", (a,), key, raw)
            results["perf"][f"transpose {key} {r}x{c}"]["torch_ms"] = cuda_time_ms(
                lambda: a.t().contiguous(), iters)

    if dot:
        for dt, key in [(torch.float16, "T=float16"), (torch.float32, "T=float32")]:
            # fp16 4096^3 (multiples of 16: the aligned, wgmma configs on sm_90a) even with --quick.
            size = 2048 if args.quick and dt == torch.float32 else 4096
            a = torch.randn(size, size, device=dev, dtype=dt)
            b = torch.randn(size, size, device=dev, dtype=dt)
            c = torch.empty(size, size, device=dev, dtype=dt)

            def raw(k, v, a=a, b=b, c=c, size=size):
                tm, tn = int(v["macros"]["TM"]), int(v["macros"]["TN"])
                k(((size + tm - 1) // tm, (size + tn - 1) // tn), A=a, B=b, C=c, M=size, N=size, K=size,
                  lda=size, ldb=size, ldc=size)
            name = f"dot {key} {size}^3"
            perf(name, dot, "dot", (a, b), key, raw)
            results["perf"][name]["torch_ms"] = cuda_time_ms(lambda: a @ b, max(10, iters // 5))
            entry = results["perf"][name]
            entry["torch_tflops"] = 2 * size ** 3 / entry["torch_ms"] / 1e9
            if "op_ms" in entry:
                entry["tflops"] = 2 * size ** 3 / entry["op_ms"] / 1e9
                entry["over_torch"] = entry["tflops"] / entry["torch_tflops"]
                print(f"perf {name}: triton::dot {entry['tflops']:.1f} TFLOP/s ({entry['config']}), "
                      f"torch.matmul {entry['torch_tflops']:.1f} TFLOP/s, ratio {entry['over_torch']:.2f}", flush=True)

    # Host overhead of a tiny call: wall time per call, the GPU work being ~nothing.
    def per_call_us(fn, n=5000):
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / n * 1e6

    try:
        t1 = torch.randn(1, device=dev)
        t2 = torch.randn(1, device=dev)
        if add:
            results["overhead_us"]["triton::add n=1"] = per_call_us(lambda: add(t1, t2))
        results["overhead_us"]["torch.add n=1"] = per_call_us(lambda: torch.add(t1, t2))
        if softmax:
            s = torch.randn(1, 8, device=dev)
            results["overhead_us"]["triton::softmax 1x8"] = per_call_us(lambda: softmax(s))
            results["overhead_us"]["torch.softmax 1x8"] = per_call_us(lambda: torch.softmax(s, -1))
        if cuda_driver is not None and add:
            variant, ptx = variant_for(args.ops_dir, "add", mods["add"].last_config(), "T=float32")
            k = cuda_driver.Kernel(ptx, variant)
            results["overhead_us"]["raw ctypes launch n=1"] = per_call_us(lambda: k((1,), N=1, a=t1, b=t2, c=t1))
        print(f"overhead (us per call): {results['overhead_us']}", flush=True)
    except Exception as e:  # noqa: BLE001
        results["overhead_us"]["error"] = f"{type(e).__name__}: {e}"

    cache = os.environ["TRITON_OPGEN_CACHE"]
    if os.path.exists(cache):
        with open(cache) as f:
            results["autotune_cache"] = json.load(f)

    failed = [c["name"] for c in results["checks"] + results["errors"] if not c["ok"]]
    failed += [n for n, b in results["builds"].items() if b["rc"] != 0]
    results["failed"] = failed
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "torch_ops_check.json")
    with open(path, "w") as f:
        json.dump(results, f, indent=2, default=str)
    shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"\n{len(results['checks']) + len(results['errors'])} checks, {len(failed)} failed: {failed}")
    print(f"results: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
