#!/usr/bin/env python3
"""The bundled torch ops on two GPUs of one host, in one process (issue 18, part 1).

    bash scripts/gpu/torch_ops_prepare.sh                 # on the Rust machine: out/torch/
    python3 scripts/gpu/multi_gpu_check.py out/torch      # on a machine with >= 2 GPUs

Builds the op folders (as torch_ops_check.py does), then checks:
  - every op on cuda:0 and cuda:1, alternating, fp32/fp16, odd shapes: values
    against torch on the same device, outputs on the inputs' device;
  - the current device set to the other GPU, and a side stream of cuda:1;
  - two threads, one per GPU, calling at once;
  - the autotune cache: a shape tuned on cuda:0 benchmarks nothing on cuda:1
    (same model), nor in a second process on cuda:1 reading the same cache
    file; the file's keys name the device model, not an ordinal;
  - inputs on different GPUs: the op's RuntimeError naming both devices.
Results go to $OUT/multi_gpu_check.json; exit status 1 if a check failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch_ops_check  # noqa: E402  (build helpers)

results = {"checks": []}


def record(name, ok, detail):
    results["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
    print(f"[{'ok' if ok else 'FAIL'}] {name}: {str(detail)[:300]}", flush=True)


def check(name, fn):
    try:
        detail = fn()
        record(name, True, detail if detail is not None else "")
    except Exception as e:  # noqa: BLE001 - every failure is a result
        record(name, False, f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1500:]}")


def close(got, want, dt):
    import torch

    tol = {torch.float32: 2e-4, torch.float16: 5e-3}[dt]
    torch.testing.assert_close(got.double(), want.double(), rtol=tol, atol=tol)


def references(torch):
    """Per op: (make inputs on a device, torch reference, shapes to try)."""
    def mm_inputs(shape, dt, dev, gen):
        m, n, k = shape
        s = k ** -0.5
        return ((torch.randn(m, k, generator=gen) * s).to(dev, dt), (torch.randn(k, n, generator=gen) * s).to(dev, dt))

    return {
        "add": (lambda shape, dt, dev, gen: tuple(torch.randn(*shape, generator=gen).to(dev, dt) for _ in range(2)),
                lambda x, y: x.double() + y.double(), [(1,), (4097,), (1000003,)]),
        "softmax": (lambda shape, dt, dev, gen: (torch.randn(*shape, generator=gen).to(dev, dt),),
                    lambda x: torch.softmax(x.double(), -1), [(1, 1), (37, 1000), (64, 3000)]),
        "transpose": (lambda shape, dt, dev, gen: (torch.randn(*shape, generator=gen).to(dev, dt),),
                      lambda x: x.double().t(), [(1, 1), (77, 130), (513, 257)]),
        "dot": (mm_inputs, lambda a, b: a.double() @ b.double(), [(1, 1, 1), (37, 45, 29), (300, 200, 513), (1024, 1024, 1024)]),
        "dot_nt": (lambda shape, dt, dev, gen: (lambda a, b: (a, b.t().contiguous()))(*mm_inputs(shape, dt, dev, gen)),
                   lambda a, b: a.double() @ b.double().t(), [(37, 45, 29), (256, 512, 1088)]),
        "dot_tn": (lambda shape, dt, dev, gen: (lambda a, b: (a.t().contiguous(), b))(*mm_inputs(shape, dt, dev, gen)),
                   lambda a, b: a.double().t() @ b.double(), [(37, 45, 29), (256, 512, 1088)]),
    }


def child_reuse(ops_dir, shape):
    """Second process (like torchrun's rank 1): dot on cuda:1 with the cache
    file the parent wrote; prints the configs it benchmarked."""
    import torch

    sys.path.insert(0, os.path.join(ops_dir, "dot"))
    import triton_dot

    dot = triton_dot.load()
    m, n, k = shape
    a = torch.randn(m, k, device="cuda:1", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda:1", dtype=torch.float16)
    dot(a, b)
    torch.cuda.synchronize(1)
    print(json.dumps({"benchmark_calls": triton_dot.benchmark_calls(), "config": triton_dot.last_config()}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ops_dir", nargs="?", default="out/torch")
    parser.add_argument("--child-reuse", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_reuse:
        child_reuse(args.ops_dir, tuple(int(v) for v in args.child_reuse.split("x")))
        return 0
    out_dir = os.environ.get("OUT", ".")
    cache = os.path.join(tempfile.mkdtemp(prefix="opgen-cache-"), "autotune.json")
    os.environ["TRITON_OPGEN_CACHE"] = cache

    import torch

    count = torch.cuda.device_count()
    results["devices"] = [torch.cuda.get_device_name(i) for i in range(count)]
    results["torch"] = torch.__version__
    if count < 2:
        record("two GPUs", False, f"this machine has {count} CUDA device(s); the check needs 2")
        return finish(out_dir)
    ops = [op for op in torch_ops_check.OPS if os.path.isdir(os.path.join(args.ops_dir, op))]
    started = {op: torch_ops_check.start_build(args.ops_dir, op) for op in ops}
    mods = {op: torch_ops_check.finish_build(args.ops_dir, op, *started[op]) for op in ops}
    results["builds"] = torch_ops_check.results["builds"]
    fns = {op: m.load() for op, m in mods.items() if m}
    refs = references(torch)
    dtypes = [torch.float32, torch.float16]
    devices = ["cuda:0", "cuda:1"]

    # Every op, alternating devices call by call.
    for op, (make, want_fn, shapes) in refs.items():
        if op not in fns:
            record(f"{op} built", False, "no module")
            continue
        for dt in dtypes:
            def alternate(op=op, dt=dt, make=make, want_fn=want_fn, shapes=shapes):
                seen = []
                for shape in shapes:
                    for rnd in range(2):
                        for dev in devices:
                            gen = torch.Generator().manual_seed(hash((shape, rnd)) & 0xFFFF)
                            ins = make(shape, dt, dev, gen)
                            got = fns[op](*ins)
                            assert got.device == torch.device(dev), f"{op} output on {got.device}, inputs on {dev}"
                            close(got, want_fn(*ins), dt)
                            seen.append(mods[op].last_config())
                return f"{len(shapes)} shapes x 2 rounds x {devices}; configs {sorted(set(seen))[:3]}"
            check(f"{op} {str(dt)[6:]} alternating cuda:0/cuda:1", alternate)

    dot = fns.get("dot")
    if dot:
        def current_device_elsewhere():
            torch.cuda.set_device(1)
            a, b = torch.randn(200, 72, device="cuda:0") / 9, torch.randn(72, 104, device="cuda:0") / 9
            c = dot(a, b)
            close(c, a.double() @ b.double(), torch.float32)
            assert torch.cuda.current_device() == 1, "the op changed the current device"
            torch.cuda.set_device(0)
            return "cuda:0 inputs with cuda:1 current: right values, current device kept"
        check("dot with another current device", current_device_elsewhere)

        def side_stream():
            s = torch.cuda.Stream(device="cuda:1")
            a = torch.randn(512, 256, device="cuda:1") / 9
            b = torch.randn(256, 384, device="cuda:1") / 9
            with torch.cuda.stream(s):
                c = dot(a, b)
                d = dot(c, b.t().contiguous())
            s.synchronize()
            close(d, (a.double() @ b.double()) @ b.double().t(), torch.float32)
            return "two dependent calls on a side stream of cuda:1"
        check("dot on a side stream of cuda:1", side_stream)

        def threads():
            errors = []

            def worker(dev):
                try:
                    for i in range(20):
                        m = 64 + 17 * i
                        a = torch.randn(m, 96, device=dev, dtype=torch.float16) / 9
                        b = torch.randn(96, 160, device=dev, dtype=torch.float16) / 9
                        close(dot(a, b), a.double() @ b.double(), torch.float16)
                except Exception as e:  # noqa: BLE001
                    errors.append(f"{dev}: {e}")
            ts = [threading.Thread(target=worker, args=(d,)) for d in devices]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert not errors, errors
            return "2 threads x 20 shapes, one per GPU"
        check("dot from two threads on two GPUs", threads)

        def cache_reuse():
            shape = (1536, 1536, 1536)
            m, n, k = shape
            before = mods["dot"].benchmark_calls()
            a0 = torch.randn(m, k, device="cuda:0", dtype=torch.float16)
            b0 = torch.randn(k, n, device="cuda:0", dtype=torch.float16)
            dot(a0, b0)
            tuned0 = mods["dot"].benchmark_calls() - before
            config0 = mods["dot"].last_config()
            a1, b1 = a0.to("cuda:1"), b0.to("cuda:1")
            dot(a1, b1)
            tuned1 = mods["dot"].benchmark_calls() - before - tuned0
            config1 = mods["dot"].last_config()
            torch.cuda.synchronize(0)
            torch.cuda.synchronize(1)
            assert tuned0 > 1, f"cuda:0 benchmarked {tuned0} configs (expected the candidates)"
            assert tuned1 == 0 and config1 == config0, f"cuda:1 benchmarked {tuned1}, picked {config1} vs {config0}"
            with open(cache) as f:
                keys = list(json.load(f)["entries"])
            name = torch.cuda.get_device_name(1)
            assert keys and all(name in key for key in keys), f"keys without '{name}': {keys[:3]}"
            child = subprocess.run([sys.executable, __file__, args.ops_dir, "--child-reuse", f"{m}x{n}x{k}"],
                                   capture_output=True, text=True, timeout=300)
            assert child.returncode == 0, child.stderr[-2000:]
            reuse = json.loads(child.stdout.strip().splitlines()[-1])
            assert reuse["benchmark_calls"] == 0 and reuse["config"] == config0, reuse
            return (f"cuda:0 benchmarked {tuned0} configs, cuda:1 then 0 (same pick {config0}); a second process "
                    f"on cuda:1 with the cache file: 0; {len(keys)} cache keys, each naming '{name}'")
        check("autotune cache shared by GPUs of one model", cache_reuse)

    def mixed(op, *ins):
        try:
            fns[op](*ins)
        except RuntimeError as e:
            text = str(e).strip().splitlines()[0]
            assert "cuda:1" in text and "cuda:0" in text, text
            return text
        raise AssertionError("no error for inputs on two GPUs")
    if "add" in fns:
        check("add with inputs on two GPUs: error",
              lambda: mixed("add", torch.ones(8, device="cuda:0"), torch.ones(8, device="cuda:1")))
    if dot:
        check("dot with inputs on two GPUs: error",
              lambda: mixed("dot", torch.ones(8, 8, device="cuda:1"), torch.ones(8, 8, device="cuda:0")))
    check("both GPUs usable after the errors",
          lambda: [float(torch.ones(1, device=d).sum()) for d in devices])
    return finish(out_dir)


def finish(out_dir):
    failed = [c["name"] for c in results["checks"] if not c["ok"]]
    results["summary"] = {"checks": len(results["checks"]), "failed": failed}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "multi_gpu_check.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"{len(results['checks']) - len(failed)} of {len(results['checks'])} checks passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
