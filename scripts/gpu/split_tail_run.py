#!/usr/bin/env python3
"""One `triton::dot` call with one config pinned, values checked against
torch: e.g. a split-K config on a shape whose tiles make more than a wave
(the unsplit sibling runs the full waves, the split variant the tail), or
an unaligned config on an odd shape. Small enough to run under
compute-sanitizer:

    compute-sanitizer --tool racecheck python3 scripts/gpu/split_tail_run.py out/torch \\
        "TM=128 TN=128 ALIGN=8 SPLIT_K=2 TMA=0 num_warps=8 num_stages=3" 2304x2048x1024
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import torch
    from matmul_suite import load_op

    module, op = load_op(sys.argv[1])
    config = sys.argv[2]
    m, n, k = (int(x) for x in sys.argv[3].split("x"))
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    module.pin_config(config)
    got = op(a, b)
    torch.cuda.synchronize()
    ref = a.float() @ b.float()
    err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
    ok = err < 4e-3
    print(f"{m}x{n}x{k} [{config}]: max rel err {err:.2e} {'ok' if ok else 'WRONG'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
