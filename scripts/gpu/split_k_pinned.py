#!/usr/bin/env python3
"""Times every config of the generated `triton::dot` op pinned in turn on
chosen shapes (fp16), against cuBLAS: where split-K variants stand against
the others, whatever the autotuner picks.

    python3 scripts/gpu/split_k_pinned.py out/torch 16x4096x4096 128x4096x4096
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import torch
    import triton.testing
    from matmul_suite import load_op

    module, op = load_op(sys.argv[1])
    for spec in sys.argv[2:]:
        m, n, k = (int(x) for x in spec.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        cublas = triton.testing.do_bench(lambda: torch.matmul(a, b), return_mode="median")
        rows = []
        for config in module.configs():
            module.pin_config(config)
            try:
                op(a, b)
            except RuntimeError as e:
                if "does not accept these inputs" not in str(e):
                    print(f"   {config}: {str(e)[:300]}")
                continue
            ms = triton.testing.do_bench(lambda: op(a, b), warmup=10, rep=25, return_mode="median")
            rows.append((ms, config))
        module.pin_config(None)
        rows.sort()
        print(f"{spec}: cuBLAS {cublas*1e3:.1f} us")
        for ms, config in rows[:8]:
            print(f"   top {ms*1e3:7.1f} us  {cublas/ms:.3f}  {config}")
        split_of = lambda c: next((w for w in c.split() if w.startswith("SPLIT_K=")), "SPLIT_K=1")
        for split in sorted({split_of(c) for _, c in rows}):
            best = next(((ms, c) for ms, c in rows if split_of(c) == split), None)
            print(f"   best {split}: {best[0]*1e3:.1f} us {cublas/best[0]:.3f} {best[1]}")


if __name__ == "__main__":
    main()
