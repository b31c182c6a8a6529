#!/usr/bin/env python3
"""One call each of cuBLAS and of pinned `triton::dot` configs on a shape,
for Nsight Compute to compare what they ask of L2 (rows 128-byte aligned
or not: 3008^3 against 3000^3):

    ncu --kernel-name regex:"nvjet|dot" --metrics gpu__time_duration.sum,... \\
        python3 scripts/gpu/misaligned_rows_probe.py out/torch 3000x3000x3000 "CONFIG;CONFIG"

Values are checked against torch.matmul in float32 (exit 1 if wrong).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import torch
    from matmul_suite import load_op

    module, op = load_op(sys.argv[1])
    m, n, k = (int(x) for x in sys.argv[2].split("x"))
    configs = [c.strip() for c in sys.argv[3].split(";") if c.strip()]
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    wrong = 0
    torch.matmul(a, b)
    for config in configs:
        module.pin_config(config)
        got = op(a, b)
        torch.cuda.synchronize()
        err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
        wrong += err > 4e-3
        print(f"{config}: max rel err {err:.2e}", flush=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
