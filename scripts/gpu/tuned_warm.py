# Warms an autotune cache with the dot op at two shapes (fp32, fp16), in a fresh process.
import os, sys, importlib
sys.path.insert(0, sys.argv[1])
import torch
mod = importlib.import_module("triton_dot")
dot = mod.load()
for dt in (torch.float32, torch.float16):
    a = torch.randn(200, 72, device="cuda", dtype=dt); b = torch.randn(72, 104, device="cuda", dtype=dt)
    dot(a, b)
torch.cuda.synchronize()
print("warmed:", mod.benchmark_calls(), "configs benchmarked; cache", os.environ["TRITON_OPGEN_CACHE"])
