#!/usr/bin/env python3
"""Where a padded call's time goes: the host time of `triton::dot_padall`
(dot.tc with `pad N, K to 8` unconditional: odd shapes run on zero-padded
twins written by the runtime's copy_fill kernel, the output cut back by it)
against the same op on an aligned shape, and torch's own pieces; the GPU
time of each copy_fill launch (pad a, pad b, cut c) against torch's
constant_pad_nd and slice copy of the same tensors, from the profiler.

    python3 scripts/gpu/copy_fill_probe.py OPS_DIR OUT_DIR [MxNxK ...]

OPS_DIR holds the built (or buildable) `dot_padall` op folder.
Writes OUT_DIR/copy_fill_probe.json and prints a table.
"""

import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from matmul_suite import load_op  # noqa: E402


def host_us(fn, calls=200):
    """Host time to issue one call, no sync inside (the queue does not fill)."""
    import torch

    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return round(t, 1)


def kernel_us(torch, fn, reps=20):
    """Each GPU kernel's median duration over `reps` calls of fn, by its
    position in the call (name#i), from the profiler's trace."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    per_call = len(kernels) // reps
    out = {}
    for i in range(per_call):
        durs = [kernels[r * per_call + i].device_time for r in range(reps)]
        out[f"{kernels[i].name[:40]}#{i}"] = round(statistics.median(durs), 1)
    cpu = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12)
    return out, cpu


def main():
    import torch
    import torch.nn.functional as F

    folder, out_dir = sys.argv[1], sys.argv[2]
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[3:]] or [(1025, 1025, 1025), (2049, 2049, 2049)]
    os.makedirs(out_dir, exist_ok=True)
    module, dot = load_op(folder, "dot_padall")
    last_config = module.last_config
    print(torch.cuda.get_device_name(), flush=True)
    results = []
    for m, n, k in shapes:
        dt = torch.float16
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        kp, np_ = -(-k // 8) * 8, -(-n // 8) * 8
        a8 = F.pad(a, (0, kp - k)).contiguous()
        b8 = F.pad(b, (0, np_ - n, 0, kp - k)).contiguous()
        want = a.float() @ b.float()
        err = ((dot(a, b).float() - want).norm() / want.norm()).item()
        c8 = dot(a8, b8)

        def torch_pad():
            x = F.pad(a, (0, kp - k))
            y = F.pad(b, (0, np_ - n, 0, kp - k))
            return x, y, c8[:, :n].contiguous()

        row = {
            "shape": [m, n, k],
            "rel_err": err,
            "config": last_config(),
            "host_us": {
                "padded call": host_us(lambda: dot(a, b)),
                "aligned call (same op)": host_us(lambda: dot(a8, b8)),
                "torch.empty x3": host_us(lambda: (torch.empty_like(a8), torch.empty_like(b8), torch.empty_like(c8))),
                "torch pad a, b and cut c": host_us(torch_pad),
            },
        }
        row["gpu_us"], cpu_table = kernel_us(torch, lambda: dot(a, b))
        row["gpu_us_torch_pad"], _ = kernel_us(torch, torch_pad)
        print(json.dumps(row, indent=1), flush=True)
        print(cpu_table, flush=True)
        results.append(row)
    with open(os.path.join(out_dir, "copy_fill_probe.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
