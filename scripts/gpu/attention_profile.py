#!/usr/bin/env python3
"""Profiles the generated `triton::attention` op with Nsight Compute: the op is
autotuned outside the profiled range, then one call (and one SDPA flash call,
for comparison) runs inside it.

    ncu --profile-from-start off --section SpeedOfLight --section WarpStateStats \
        python3 scripts/gpu/attention_profile.py out/attn/attention 4x32x4096x64

Shapes are BxHxSxD (fp16; append `:bf16`, `:causal`). Without ncu it prints the
picked config and both times.
"""
import importlib
import math
import os
import sys

import torch
import torch.nn.functional as F
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    folder, specs = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, os.path.abspath(folder))
    module = importlib.import_module("triton_attention")
    attn = module.load()
    cases = []
    for spec in specs:
        dims, *flags = spec.split(":")
        b, h, s, d = (int(x) for x in dims.split("x"))
        dtype = torch.bfloat16 if "bf16" in flags else torch.float16
        causal = "causal" in flags
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
        scale = 1 / math.sqrt(d)
        ours = lambda: attn(q, k, v, scale=scale, causal=causal)  # noqa: E731
        ours()
        def flash():
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
        t_ours = triton.testing.do_bench(ours, warmup=10, rep=50)
        t_flash = triton.testing.do_bench(flash, warmup=10, rep=50)
        flops = 4 * b * h * s * s * d * (0.5 if causal else 1.0)
        print(f"{spec}: ours {flops / t_ours / 1e9:.1f} TFLOP/s, flash {flops / t_flash / 1e9:.1f} "
              f"({t_flash / t_ours:.2f}x) config {module.last_config()}", flush=True)
        cases.append((ours, flash))
    torch.cuda.cudart().cudaProfilerStart()
    for ours, flash in cases:
        ours()
        flash()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    main()
