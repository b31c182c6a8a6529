#!/usr/bin/env python3
"""examples::linear_relu under compute-sanitizer: shapes whose K is off 64, so
the widened loop's last step is masked; every candidate variant runs while
the op tunes (bench/results/2026-11-27-h100-linear-relu-widen).

    compute-sanitizer --tool memcheck python3 scripts/gpu/linear_relu_memcheck.py FOLDER/linear_relu
"""
import sys
sys.path.insert(0, sys.argv[1])
import torch
import examples_linear_relu as m
op = m.load()
torch.manual_seed(0)
for mm, nn, kk in ((100, 256, 40), (129, 64, 8), (264, 136, 96)):
    x = torch.randn(mm, kk, device="cuda", dtype=torch.half)
    w = torch.randn(kk, nn, device="cuda", dtype=torch.half)
    b = torch.randn(nn, device="cuda", dtype=torch.half)
    y = op(x, w, b)
    err = (y.float() - torch.relu(torch.addmm(b.float(), x.float(), w.float()))).abs().max().item()
    print(f"{mm}x{nn}x{kk}: {m.last_config()} max err {err:.3e}", flush=True)
torch.cuda.synchronize()
