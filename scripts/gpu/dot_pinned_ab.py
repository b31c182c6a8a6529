#!/usr/bin/env python3
"""Chosen configs of the generated `triton::dot` op pinned in turn, timed in
interleaved rounds (each round times every config once: L2 flushed, median
of do_bench) against cuBLAS, values checked; then the op as users call it
(autotuned) on the same inputs, and the timings its autotuner measured.

    python3 scripts/gpu/dot_pinned_ab.py out/torch 3008x3008x3008 4096x4096x4096 \\
        --configs "TM=128 TN=256 ALIGN=8 KX=1 SPLIT_K=1 TMA=1 num_warps=8 num_stages=8;..."

Without --configs: the autotuner's pick and every TM=128 split-K config the
shape admits. With TRITON_OPGEN_CACHE set, the autotuner's six fastest
timings of each key follow.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROUNDS = int(os.environ.get("ROUNDS", "5"))


def main():
    import torch
    import triton.testing
    from matmul_suite import load_op

    args = sys.argv[1:]
    configs = None
    if "--configs" in args:
        i = args.index("--configs")
        configs = [c.strip() for c in args[i + 1].split(";") if c.strip()]
        del args[i:i + 2]
    module, op = load_op(args[0])
    cache = os.environ.get("TRITON_OPGEN_CACHE")
    for spec in args[1:]:
        m, n, k = (int(x) for x in spec.split("x"))
        for dtype in (torch.float16, torch.bfloat16):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ref = a.float() @ b.float()
            module.pin_config(None)
            op(a, b)
            torch.cuda.synchronize()
            picked = module.last_config()
            chosen = configs or [picked] + [
                c for c in module.configs()
                if "TM=128" in c and "SPLIT_K=1" not in c and c != picked]
            usable = []
            for config in chosen:
                module.pin_config(config)
                try:
                    got = op(a, b)
                except RuntimeError:
                    continue
                torch.cuda.synchronize()
                err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
                if err > (2e-2 if dtype == torch.bfloat16 else 4e-3):
                    print(f"WRONG {spec} {dtype} {config}: {err}")
                usable.append(config)
            times = {c: [] for c in usable + ["cublas"]}
            for _ in range(ROUNDS):
                for config in usable:
                    module.pin_config(config)
                    times[config].append(triton.testing.do_bench(lambda: op(a, b), warmup=10, rep=25,
                                                                 return_mode="median"))
                times["cublas"].append(triton.testing.do_bench(lambda: torch.matmul(a, b), warmup=10,
                                                               rep=25, return_mode="median"))
            module.pin_config(None)
            med = {c: sorted(t)[len(t) // 2] for c, t in times.items()}
            print(f"{spec} {str(dtype)[6:]}: cuBLAS {med['cublas']*1e3:.1f} us; autotuner picked {picked}")
            for config in sorted(usable, key=med.get):
                mark = " <- picked" if config == picked else ""
                print(f"   {med[config]*1e3:7.1f} us  {med['cublas']/med[config]:.3f}x  {config}{mark}")
    if cache and os.path.exists(cache):
        with open(cache) as f:
            entries = json.load(f).get("entries", {})
        for key, entry in entries.items():
            best = sorted(entry.get("timings_ms", {}).items(), key=lambda kv: kv[1])[:6]
            print(f"autotuner {key}: " + "; ".join(f"{c} {ms*1e3:.1f} us" for c, ms in best))


if __name__ == "__main__":
    main()
