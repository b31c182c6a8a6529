#!/usr/bin/env python3
"""Profiles the generated `triton::dot` op on chosen shapes with Nsight Compute:
the op is autotuned outside the profiled range, then one call per shape (and
one torch.matmul, for cuBLAS's kernel) runs inside it.

    ncu --profile-from-start off --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        python3 scripts/gpu/dot_profile.py out/torch 8192x8192x128 3000x3000x3000

Shapes are MxNxK (fp16, or append `:bf16` or `:fp32`). Without ncu it prints the picked
config and the op's and cuBLAS's time per shape (the suite's interleaved do_bench rounds).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse(spec):
    dims, _, dtype = spec.partition(":")
    m, n, k = (int(x) for x in dims.split("x"))
    return m, n, k, {"": "float16", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[dtype]


def main():
    import torch
    from matmul_suite import interleaved_ms, load_op

    ops_dir, specs = sys.argv[1], sys.argv[2:]
    module, op = load_op(ops_dir)
    cases = []
    for spec in specs:
        m, n, k, dtype = parse(spec)
        dt = getattr(torch, dtype)
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        op(a, b)  # autotunes
        torch.cuda.synchronize()
        times = interleaved_ms({"ours": lambda: op(a, b), "cublas": lambda: torch.matmul(a, b)})
        ours, cublas = times["ours"][0], times["cublas"][0]
        flops = 2.0 * m * n * k
        config = module.last_config()
        print(f"{spec}: ours {flops / ours / 1e9:.1f} TFLOP/s, cuBLAS {flops / cublas / 1e9:.1f} "
              f"({cublas / ours:.2f}x) config {config}", flush=True)
        cases.append((a, b))
    torch.cuda.cudart().cudaProfilerStart()
    for a, b in cases:
        op(a, b)
        torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
