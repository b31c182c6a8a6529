#!/usr/bin/env python3
"""C = C0 + A^T B through the op of `scripts/gpu/kernels/dot_tn_accumulate_op.tc`
(the M-major `a` on wgmma), or C = C0 + A B through the op of
`scripts/gpu/kernels/dot_accumulate_op.tc` (two warpgroups splitting N),
with an initial accumulator that is not one constant: it moves into the
loop's order before the loop and back after it
(`compiler/src/codegen/tensor_cores/native_order.rs`).

    python3 scripts/gpu/dot_tn_accumulate_check.py out/acc/op RESULTS

Every variant pinned in turn, fp16 and bf16, on shapes off the tiles
(multiples of 8, as the op requires), K below one tile and many tiles,
against C0 + A^T B (or C0 + A B) in float32. Writes
RESULTS/<op>.json; exit 1 on a wrong value.
"""
import glob
import importlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from op_bundle import Results  # noqa: E402

SHAPES = [(192, 64, 64), (384, 128, 1000), (1000, 784, 512), (200, 136, 4104), (8, 8, 8), (1024, 1024, 1024),
          (600, 400, 136)]


def main():
    folder, results_dir = sys.argv[1:3]
    subprocess.run(["bash", os.path.join(folder, "build.sh")], check=True, stdout=subprocess.DEVNULL)
    sys.path.insert(0, os.path.abspath(folder))
    (path,) = glob.glob(os.path.join(folder, "triton_*.py"))
    name = os.path.basename(path)[:-3]
    transposed_a = name == "triton_dot_tn_accumulate"
    module = importlib.import_module(name)
    op = module.load()
    import torch

    torch.manual_seed(0)
    res = Results()
    for config in sorted(set(module.configs())):
        for dt, tol in ((torch.float16, 4e-3), (torch.bfloat16, 2e-2)):
            for m, n, k in SHAPES:
                a = torch.randn(*((k, m) if transposed_a else (m, k)), device="cuda", dtype=dt)
                b = torch.randn(k, n, device="cuda", dtype=dt)
                c0 = 4 * torch.randn(m, n, device="cuda", dtype=dt)
                module.pin_config(config)
                try:
                    c = op(a, b, c0)
                except RuntimeError as e:
                    print(f"skip {config} {dt} {m}x{n}x{k}: {str(e)[:100]}")
                    continue
                ref = c0.float() + (a.float().t() if transposed_a else a.float()) @ b.float()
                err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
                res.record(f"{config} {dt} {m}x{n}x{k}", err < tol, f"max rel err {err:.2e}")
    res.finish(results_dir, name[len("triton_"):] + ".json",
               {"device": torch.cuda.get_device_name(), "torch": torch.__version__})


if __name__ == "__main__":
    main()
