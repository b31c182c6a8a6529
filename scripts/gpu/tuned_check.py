# A dot op generated with --tuned (a cache its own build warmed): in a fresh process with an
# empty cache, a warmed shape is captured into a CUDA graph with no call before (the embedded
# choice decides), an unwarmed one is refused; values checked against fp64 torch.
import os, sys, importlib, tempfile
from tuned_warm import WARMED
sys.path.insert(0, sys.argv[1])
os.environ["TRITON_OPGEN_CACHE"] = os.path.join(tempfile.mkdtemp(), "autotune.json")
import torch
mod = importlib.import_module("triton_dot")
dot = mod.load()
ok = True
for dt in (torch.float32, torch.float16):
    m, k, n = WARMED
    a = torch.randn(m, k, device="cuda", dtype=dt) / 9; b = torch.randn(k, n, device="cuda", dtype=dt) / 9
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            out = dot(a, b)
        a.copy_(torch.randn_like(a) / 9); g.replay(); torch.cuda.synchronize()
        err = (out.double() - a.double() @ b.double()).abs().max().item()
        good = err < (1e-2 if dt == torch.float16 else 1e-4)
        print(f"{dt} warmed shape captured with no call before: err {err:.2e}, config {mod.last_config()}, "
              f"benchmarked {mod.benchmark_calls()}", "ok" if good else "WRONG")
        ok &= good
    except RuntimeError as e:
        print(f"{dt} warmed shape: capture refused: {str(e)[:300]}"); ok = False
# Another M: a key the warm run never tuned.
a = torch.randn(WARMED[0] + 100, WARMED[1], device="cuda"); b = torch.randn(WARMED[1], WARMED[2], device="cuda")
try:
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        dot(a, b)
    print("unwarmed shape captured: WRONG (it should need tuning)"); ok = False
except RuntimeError as e:
    print("unwarmed shape refused:", "ok" if "--tuned" in str(e) else "WRONG", str(e).splitlines()[0][:160])
    ok &= "--tuned" in str(e)
ok &= mod.benchmark_calls() == 0
print("benchmark_calls", mod.benchmark_calls())
print("TUNED CHECK", "PASSED" if ok else "FAILED")
