#!/usr/bin/env python3
"""Host time of one call of the generated `triton::dot` op against
`torch.matmul`: what a loop of back-to-back calls costs on the CPU when the
GPU keeps up (no sync inside the loop), per shape; and, with --profile, a
torch.profiler table of where that time goes (aten ops, CUDA API calls).

    python3 scripts/gpu/host_overhead.py out/suite_op 1024x1024x1024 1025x1025x1025 \\
        [--profile] [--out DIR]

Each figure is the median over rounds of (wall time of N calls) / N, the
loop issuing only (the queue holds N launches: N is kept below its depth).
"""
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CALLS = 100
ROUNDS = 7


def host_us(fn):
    """Median host microseconds per call of `fn` over ROUNDS loops of CALLS."""
    import torch

    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        samples.append((time.perf_counter() - t0) / CALLS * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)


def gpu_us(fn):
    """Median GPU microseconds per call, back to back (CUDA events around CALLS calls)."""
    import torch

    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(ROUNDS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(CALLS):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / CALLS)
    return statistics.median(samples)


def rel_err(got, a, b):
    want = a.float() @ b.float()
    return ((got.float() - want).abs() / (1 + want.abs())).max().item()


def interleaved_check(op, shapes, dtype):
    """Values of calls that alternate between `shapes` (each call after the
    first of a shape takes the decided fast path): the worst relative error."""
    import torch

    inputs = []
    for spec in shapes:
        m, n, k = (int(x) for x in spec.split("x"))
        inputs.append((torch.randn(m, k, device="cuda", dtype=dtype), torch.randn(k, n, device="cuda", dtype=dtype)))
    worst = 0.0
    for _ in range(3):
        for a, b in inputs:
            worst = max(worst, rel_err(op(a, b), a, b))
    return worst


def profile_table(fn, rows=25):
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=rows)


def main():
    import torch
    from matmul_suite import load_op

    args = sys.argv[1:]
    profile = "--profile" in args
    args = [a for a in args if a != "--profile"]
    out = None
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    module, op = load_op(args[0])
    rows = []
    for spec in args[1:]:
        m, n, k = (int(x) for x in spec.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        module.pin_config(None)
        op(a, b)
        torch.cuda.synchronize()
        config = module.last_config()
        row = {
            "shape": spec,
            "config": config,
            "host_us": {
                "torch.matmul": round(host_us(lambda: torch.matmul(a, b)), 2),
                "triton::dot": round(host_us(lambda: op(a, b)), 2),
                "torch.empty": round(host_us(lambda: torch.empty(m, n, device="cuda", dtype=a.dtype)), 2),
            },
            "back_to_back_gpu_us": {
                "torch.matmul": round(gpu_us(lambda: torch.matmul(a, b)), 2),
                "triton::dot": round(gpu_us(lambda: op(a, b)), 2),
            },
        }
        module.pin_config(config)
        row["host_us"]["triton::dot pinned"] = round(host_us(lambda: op(a, b)), 2)
        row["rel_err_pinned"] = rel_err(op(a, b), a, b)
        module.pin_config(None)
        row["rel_err"] = rel_err(op(a, b), a, b)
        rows.append(row)
        print(json.dumps(row), flush=True)
        if profile:
            print(f"--- torch.profiler, triton::dot {spec} ({config})")
            print(profile_table(lambda: op(a, b)), flush=True)
            print(f"--- torch.profiler, torch.matmul {spec}")
            print(profile_table(lambda: torch.matmul(a, b), rows=12), flush=True)
    interleaved = {str(dt): interleaved_check(op, args[1:], dt) for dt in (torch.float16, torch.bfloat16)}
    print("interleaved shapes, worst relative error:", json.dumps(interleaved))
    bad = [r["shape"] for r in rows if max(r["rel_err"], r["rel_err_pinned"]) > 2e-2]
    bad += [dt for dt, e in interleaved.items() if e > 2e-2]
    print("values:", "WRONG " + ", ".join(bad) if bad else "all right")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "host_overhead.json"), "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows,
                       "interleaved_rel_err": interleaved, "wrong": bad}, f, indent=1)


if __name__ == "__main__":
    main()
