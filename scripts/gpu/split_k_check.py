#!/usr/bin/env python3
"""Split-K on the GPU through the generated `triton::dot` torch op.

    python3 scripts/gpu/split_k_check.py out/torch [--out DIR]

1. Every `SPLIT_K=` variant (S > 1) is pinned in turn and run on the odd,
   deep-K shapes its `require` lines admit (fp16 and bf16), checked against
   torch.matmul in float32: the cluster's sum and the last program's
   epilogue on the hardware.
2. The op autotuned (as users call it) on shapes with few output tiles,
   against cuBLAS in one process (the suite's interleaved, L2-flushed
   rounds); the picked config says whether split-K won.
Writes split_k_check.json (and prints a table).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Shapes dot.tc's `require` lines admit split-K variants for: few tiles
# (every tile split; odd M, N off the tiles, K off the cluster's stride),
# then more than a wave of 128x128 / 128x256 tiles (full waves whole, the
# last one split: the runtime's `split_from`).
CHECK_SHAPES = [(16, 4096, 4096), (257, 520, 4104), (64, 2048, 16384), (37, 136, 9000), (1, 8, 3080),
                (3000, 3000, 3000), (3008, 3008, 3008), (1544, 8200, 2312)]
# Deep K over few tiles (where split-K pays), then shapes it must not slow.
SPEED_SHAPES = [
    (64, 2048, 16384), (256, 1024, 16384), (128, 1024, 8192), (32, 4096, 16384),
    (512, 512, 8192), (64, 4096, 14336), (16, 4096, 11008), (1, 4096, 4096),
    (16, 4096, 4096), (128, 4096, 4096), (1000, 1000, 1000), (4096, 4096, 4096),
    (3000, 3000, 3000), (3008, 3008, 3008),
]


def main():
    import torch
    from matmul_suite import interleaved_ms, load_op

    ops_dir = sys.argv[1] if len(sys.argv) > 1 else "out/torch"
    out_dir = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else os.environ.get("OUT", ".")
    module, op = load_op(ops_dir)
    result = {"device": torch.cuda.get_device_name(), "checks": [], "speed": []}
    split_configs = [c for c in module.configs() if "SPLIT_K=" in c and "SPLIT_K=1" not in c.split()]
    print(f"{len(split_configs)} split-K configs of {len(module.configs())}")
    failures = 0
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in CHECK_SHAPES:
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            ref = (a.float() @ b.float())
            for config in split_configs:
                module.pin_config(config)
                try:
                    got = op(a, b)
                except RuntimeError as e:
                    # A pinned variant the shape's `require` lines refuse.
                    if "does not accept these inputs" in str(e):
                        continue
                    raise
                torch.cuda.synchronize()
                err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
                ok = err < (2e-2 if dtype == torch.bfloat16 else 4e-3)
                failures += not ok
                result["checks"].append({"shape": [m, n, k], "dtype": str(dtype), "config": config,
                                         "max_rel_err": err, "ok": ok})
                if not ok:
                    print(f"WRONG {m}x{n}x{k} {dtype} {config}: {err}")
            module.pin_config(None)
    print(f"checks: {len(result['checks'])}, wrong: {failures}")
    for m, n, k in SPEED_SHAPES:
        for dtype in (torch.float16, torch.bfloat16):
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            op(a, b)
            torch.cuda.synchronize()
            config = module.last_config()
            times = interleaved_ms({"ours": lambda: op(a, b), "cublas": lambda: torch.matmul(a, b)})
            ours, cublas = times["ours"][0], times["cublas"][0]
            row = {"shape": [m, n, k], "dtype": str(dtype), "ours_ms": ours, "cublas_ms": cublas,
                   "ratio": cublas / ours, "config": config}
            result["speed"].append(row)
            print(f"{m}x{n}x{k} {dtype}: ours {ours*1e3:.1f} us cuBLAS {cublas*1e3:.1f} us "
                  f"ratio {cublas/ours:.3f}  {config}")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "split_k_check.json"), "w") as f:
        json.dump(result, f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
