#!/usr/bin/env python3
"""triton::attention (fused attention forward) through its torch op, on the GPU.

    target/release/triton-opgen tests/ops/attention.tc --framework torch --arch sm_90a --no-build -o out/attn/attention
    tar -C out -cJf out/attn.tar.xz attn
    python3 scripts/gpu/attention_check.py out/attn.tar.xz RESULTS      # on the GPU machine

Checks values against torch's scaled_dot_product_attention (fp16/bf16, head
dims 64 and 128, causal and not, sequence lengths 1, 77, 1000, 4096) and
times the op against SDPA's flash backend at batch 4, 32 heads, sequence
4096, in one process. Writes RESULTS/attention_check.json.
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

from op_bundle import unpack_and_build  # noqa: E402
from ratio_plot import plot_after  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
unpack_and_build(bundle, "attn", ["attention"])
import triton_attention  # noqa: E402

attn = triton_attention.load()
results = {"checks": [], "perf": []}
failed = 0
for dtype in (torch.float16, torch.bfloat16):
    for d in (64, 128):
        for b, h, s in ((1, 2, 1), (2, 3, 77), (1, 4, 1000), (1, 2, 4096)):
            for causal in (False, True):
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
                scale = 1 / math.sqrt(d)
                got = attn(q, k, v, scale=scale, causal=causal)
                want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal, scale=scale)
                err = (got.float() - want).abs().max().item()
                tol = 1e-2 if dtype == torch.float16 else 3e-2
                ok = err <= tol
                failed += not ok
                name = f"{str(dtype).split('.')[-1]} d={d} {b}x{h}x{s} causal={causal}"
                results["checks"].append({"name": name, "ok": ok, "max_err": err, "config": triton_attention.last_config()})
                print(f"[{'ok' if ok else 'FAIL'}] {name}: max error {err:.1e} ({triton_attention.last_config()})", flush=True)

for dtype in (torch.float16, torch.bfloat16):
    for d in (64, 128):
        for causal in (False, True):
            b, h, s = 4, 32, 4096
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
            scale = 1 / math.sqrt(d)
            attn(q, k, v, scale=scale, causal=causal)
            t_ours = triton.testing.do_bench(lambda: attn(q, k, v, scale=scale, causal=causal), warmup=10, rep=100)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                t_flash = triton.testing.do_bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale), warmup=10, rep=100)
            flops = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
            entry = {"dtype": str(dtype).split(".")[-1], "head_dim": d, "causal": causal, "shape": [b, h, s, d], "ours_ms": round(t_ours, 4),
                     "flash_ms": round(t_flash, 4), "ours_vs_flash": round(t_flash / t_ours, 3), "ours_tflops": round(flops / t_ours / 1e9, 1),
                     "flash_tflops": round(flops / t_flash / 1e9, 1), "config": triton_attention.last_config()}
            results["perf"].append(entry)
            print(f"[perf] {entry}", flush=True)

results["env"] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
os.makedirs(results_dir, exist_ok=True)
with open(os.path.join(results_dir, "attention_check.json"), "w") as f:
    json.dump(results, f, indent=1)
plot_after(os.path.join(results_dir, "attention_check.json"))
print(f"done: {failed} failed")
sys.exit(1 if failed else 0)
