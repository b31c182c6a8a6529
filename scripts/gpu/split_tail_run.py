#!/usr/bin/env python3
"""One `triton::dot` call per config pinned, values checked against torch:
e.g. a split-K config on a shape whose tiles make more than a wave (the
unsplit sibling runs the full waves, the split variant the tail), or an
unaligned config on an odd shape. Small enough to run under
compute-sanitizer:

    compute-sanitizer --tool racecheck python3 scripts/gpu/split_tail_run.py out/torch \\
        "TM=128 TN=128 ALIGN=8 KX=1 SPLIT_K=2 TMA=0 num_warps=8 num_stages=3" 2304x2048x1024

Several configs are separated by `;`. With --cublas, one `torch.matmul` of
the same inputs runs first, for Nsight Compute to compare with cuBLAS's
kernel (what L2 is asked where rows are 128-byte aligned or not):

    ncu --kernel-name regex:"nvjet|dot" --metrics gpu__time_duration.sum,lts__t_requests.sum \\
        python3 scripts/gpu/split_tail_run.py out/torch "CONFIG;CONFIG" 3000x3000x3000 --cublas

Exit 1 if a result is wrong.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import torch
    from matmul_suite import load_op

    cublas = "--cublas" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "--cublas"]
    module, op = load_op(args[0])
    configs = [c.strip() for c in args[1].split(";") if c.strip()]
    m, n, k = (int(x) for x in args[2].split("x"))
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    if cublas:
        torch.matmul(a, b)
    wrong = 0
    for config in configs:
        module.pin_config(config)
        got = op(a, b)
        torch.cuda.synchronize()
        err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
        ok = err < 4e-3
        wrong += not ok
        print(f"{m}x{n}x{k} [{config}]: max rel err {err:.2e} {'ok' if ok else 'WRONG'}", flush=True)
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
