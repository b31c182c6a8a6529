#!/usr/bin/env python3
"""Where padding pays: the op generated from tests/ops/dot.tc without a
`pad` line (`dot`, its unaligned ALIGN=1 variants) against the same kernel
with `pad N, K to 8` and no condition (`dot_pad`, aligned variants on
zero-padded copies) and cuBLAS, on odd shapes, in one process (do_bench:
CUDA events, L2 flushed, three interleaved rounds). Values checked against
an fp32 matmul. Picks the `pad` condition of tests/ops/dot.tc.

    python3 scripts/gpu/pad_experiment.py out/pad0.tar.xz out/pad1.tar.xz [--bf16] SHAPE...
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    import torch
    import triton.testing
    from op_bundle import unpack_and_build

    args = sys.argv[1:]
    dtypes = [torch.float16]
    if "--bf16" in args:
        args.remove("--bf16")
        dtypes.append(torch.bfloat16)
    unpack_and_build(args[0], "dot", [""])
    unpack_and_build(args[1], "dot_pad", [""])
    import triton_dot
    import triton_dot_pad

    direct, padded = triton_dot.load(), triton_dot_pad.load()
    out = os.environ.get("OUT", "/tmp")
    rows = []
    for spec in args[2:]:
        m, n, k = (int(x) for x in spec.split("x"))
        for dt in dtypes:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            ref = a.float() @ b.float()
            fns = {"cublas": lambda: torch.matmul(a, b), "direct": lambda: direct(a, b),
                   "padded": lambda: padded(a, b)}
            errs, cfg = {}, {}
            for name, fn in fns.items():
                c = fn()
                torch.cuda.synchronize()
                assert c.shape == ref.shape and c.is_contiguous()
                errs[name] = ((c.float() - ref).norm() / ref.norm()).item()
            cfg = {"direct": triton_dot.last_config(), "padded": triton_dot_pad.last_config()}
            times = {name: [] for name in fns}
            for _ in range(3):
                for name, fn in fns.items():
                    times[name].append(triton.testing.do_bench(fn, warmup=10, rep=30, return_mode="median"))
            med = {name: sorted(t)[1] for name, t in times.items()}
            row = {"shape": spec, "dtype": str(dt).split(".")[-1], "us": {x: round(v * 1e3, 1) for x, v in med.items()},
                   "vs_cublas": {x: round(med["cublas"] / v, 3) for x, v in med.items()},
                   "err": errs, "config": cfg}
            rows.append(row)
            print(f"{spec:>18} {row['dtype']:>8}  cublas {row['us']['cublas']:8.1f}  direct {row['us']['direct']:8.1f} "
                  f"({row['vs_cublas']['direct']:.2f})  padded {row['us']['padded']:8.1f} ({row['vs_cublas']['padded']:.2f})  "
                  f"err {max(errs.values()):.1e}  {cfg['padded']}", flush=True)
    with open(os.path.join(out, "pad_experiment.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
