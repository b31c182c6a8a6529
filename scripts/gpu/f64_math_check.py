#!/usr/bin/env python3
"""float64 exp, exp2 and log as tritonc lowers them (software: PTX has no
f64 transcendentals), on the GPU, against torch's float64 in units in the
last place.

    target/release/tritonc tests/kernels/math64.tc --arch sm_90 -o out/math64.ptx   # here
    python3 scripts/gpu/f64_math_check.py out/math64.ptx RESULTS                     # on the GPU

Inputs: random over each function's whole range (exp: -750..750, exp2:
-1080..1030, log: 1e-320..1e308 log-uniform and 0.5..2 uniform) and the
edges (0, -0, subnormals, the overflow and underflow thresholds, +-inf,
NaN, negatives for log). Passes when every finite result is within 2 ulp
of torch's and every special value matches exactly. Writes
RESULTS/f64_math_check.json.
"""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(__file__))
from cuda_driver import Kernel  # noqa: E402

ptx, results_dir = sys.argv[1], sys.argv[2]
params = [{"name": n, "type": "f64*"} for n in ("X", "E", "E2", "L")] + [{"name": "n", "type": "i32"}]
kernel = Kernel(ptx, {"kernel": "math64", "shared_bytes": 0, "num_warps": 4, "params": params})
rng = np.random.default_rng(7)
special = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-310, 1.0, 2.0, 0.5, math.e, 709.78, 709.79, 710.0,
           -745.13, -745.2, -746.0, 1023.9, 1024.0, 1025.0, -1074.0, -1075.0, -1076.0, math.inf, -math.inf,
           math.nan, -1.0, -1e-300, 1e308, 1.7976931348623157e308]
groups = {
    "exp": np.concatenate([rng.uniform(-750, 750, 200000), rng.uniform(-1, 1, 100000)]),
    "exp2": np.concatenate([rng.uniform(-1080, 1030, 200000), rng.uniform(-1, 1, 100000)]),
    "log": np.concatenate([10 ** rng.uniform(-320, 308, 200000), rng.uniform(0.5, 2, 100000)]),
}
reference = {"exp": torch.exp, "exp2": torch.exp2, "log": torch.log}
output = {"exp": "E", "exp2": "E2", "log": "L"}
report = {"checks": []}
failed = 0
for name, xs in groups.items():
    x = torch.tensor(np.concatenate([xs, special]), dtype=torch.float64, device="cuda")
    n = x.numel()
    outs = {k: torch.full_like(x, float("nan")) for k in ("E", "E2", "L")}
    kernel(((n + 255) // 256,), X=x, n=n, **outs)
    torch.cuda.synchronize()
    got = outs[output[name]].cpu()
    want = reference[name](x.cpu())
    finite = torch.isfinite(want) & (want != 0)
    spacing = torch.from_numpy(np.spacing(np.abs(want.numpy())))
    ulp = ((got - want).abs() / spacing)[finite]
    specials_ok = bool(((got == want) | (torch.isnan(got) & torch.isnan(want)))[~finite].all())
    worst = float(ulp.max()) if ulp.numel() else 0.0
    ok = worst <= 2.0 and specials_ok and bool(torch.isfinite(got[finite]).all())
    failed += not ok
    at = int(torch.argmax(((got - want).abs() / spacing).nan_to_num(0))) if ulp.numel() else 0
    entry = {"function": name, "inputs": n, "max_ulp": worst, "mean_ulp": float(ulp.mean()),
             "specials_exact": specials_ok, "worst_input": float(x[at]), "ok": ok}
    report["checks"].append(entry)
    print(f"[{'ok' if ok else 'FAIL'}] {entry}", flush=True)
report["env"] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
os.makedirs(results_dir, exist_ok=True)
with open(os.path.join(results_dir, "f64_math_check.json"), "w") as f:
    json.dump(report, f, indent=1)
print(f"done: {failed} failed")
sys.exit(1 if failed else 0)
