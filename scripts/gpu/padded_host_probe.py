#!/usr/bin/env python3
"""Why a padded call is slow back to back: time in a row (CUDA events around
20 calls, host-bound where issuing a call outlasts its kernels) of the
`dot_padall` op (dot.tc with `pad N, K to 8` unconditional) on an odd shape
and on its aligned twin shape, each with the autotuner's pick and with
configs pinned in turn (a TMA and split-K pick against a plain cp.async
one), beside torch's allocations alone.

    python3 scripts/gpu/padded_host_probe.py OPS_DIR OUT_DIR [MxNxK ...]

OPS_DIR holds the built (or buildable) `dot_padall` op folder. Writes
OUT_DIR/padded_host_probe.json and prints each row.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from host_overhead import gpu_us  # noqa: E402
from matmul_suite import load_op  # noqa: E402

PINNED = [
    "",  # the autotuner's pick
    "TM=128 TN=128 ALIGN=8 KX=1 SPLIT_K=1 TMA=0 num_warps=8 num_stages=3",
    "TM=128 TN=128 ALIGN=8 KX=1 SPLIT_K=1 TMA=1 num_warps=8 num_stages=3",
    "TM=128 TN=128 ALIGN=8 KX=1 SPLIT_K=2 TMA=1 num_warps=8 num_stages=8",
]


def main():
    import torch

    folder, out_dir = sys.argv[1], sys.argv[2]
    shapes = [tuple(int(x) for x in s.split("x")) for s in sys.argv[3:]] or [(1025, 1025, 1025)]
    os.makedirs(out_dir, exist_ok=True)
    module, dot = load_op(folder, "dot_padall")
    known = set(module.configs())
    print(torch.cuda.get_device_name(), flush=True)
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        kp, np_ = -(-k // 8) * 8, -(-n // 8) * 8
        a8 = torch.randn(m, kp, device="cuda", dtype=torch.float16)
        b8 = torch.randn(kp, np_, device="cuda", dtype=torch.float16)
        want = a.float() @ b.float()
        row = {"shape": [m, n, k], "in_a_row_us": {}}
        row["in_a_row_us"]["torch.empty x4"] = round(gpu_us(lambda: [torch.empty_like(a8) for _ in range(4)]), 1)
        row["in_a_row_us"]["torch.matmul"] = round(gpu_us(lambda: torch.matmul(a, b)), 1)
        for config in PINNED:
            if config and config not in known:
                row["in_a_row_us"][config] = "not a config of this op"
                continue
            module.pin_config(config)
            got = dot(a, b)
            err = ((got.float() - want).norm() / want.norm()).item()
            label = config or f"autotuned ({module.last_config()})"
            row["in_a_row_us"][label] = {
                "padded": round(gpu_us(lambda: dot(a, b)), 1),
                "aligned": round(gpu_us(lambda: dot(a8, b8)), 1),
                "rel_err": err,
            }
        module.pin_config("")
        print(json.dumps(row, indent=1), flush=True)
        rows.append(row)
    with open(os.path.join(out_dir, "padded_host_probe.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
