# Warms an autotune cache with the dot op at one shape (fp32, fp16), in a fresh process;
# tuned_check.py checks that same shape (WARMED) after the cache is embedded.
import os, sys, importlib

# (M, K, N) of the warmed calls.
WARMED = (200, 72, 104)

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    import torch
    mod = importlib.import_module("triton_dot")
    dot = mod.load()
    m, k, n = WARMED
    for dt in (torch.float32, torch.float16):
        a = torch.randn(m, k, device="cuda", dtype=dt); b = torch.randn(k, n, device="cuda", dtype=dt)
        dot(a, b)
    torch.cuda.synchronize()
    print("warmed:", mod.benchmark_calls(), "configs benchmarked; cache", os.environ["TRITON_OPGEN_CACHE"])
