import os, sys, json
sys.path.insert(0, "scripts/gpu")
os.environ.setdefault("ROUNDS", "3")
from matmul_suite import load_op, interleaved_ms
import torch
d = sys.argv[1]
mode = sys.argv[2] if len(sys.argv) > 2 else "time"
module, op = load_op(d, "dot_tn")
configs = [c for c in module.configs() if "TMA" in c]
print(d, configs, flush=True)
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (1024, 1024, 1024)]
if mode == "ncu":
    shapes = [(4096, 4096, 4096)]
out = []
for (m, n, k) in shapes:
    for dt in (torch.float16,):
        a = torch.randn(k, m, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        ref = a.t().float() @ b.float()
        fns = {"cublas": lambda: a.t() @ b}
        for c in sorted(set(module.configs())):
            if "T=float16" not in c and "float16" not in c:
                pass
            module.pin_config(c)
            try:
                y = op(a, b)
            except Exception as e:
                continue
            torch.cuda.synchronize()
            err = ((y.float() - ref).abs().max() / ref.abs().max()).item()
            print(f"{m}x{n}x{k} {c}: rel err {err:.2e}", flush=True)
            if mode == "ncu":
                for _ in range(3):
                    op(a, b)
                torch.cuda.synchronize()
                continue
            fns[c] = (lambda c=c: (module.pin_config(c), op(a, b)))
        if mode == "ncu":
            continue
        t = interleaved_ms(fns)
        cb = t["cublas"][0]
        for name, (ms, _) in t.items():
            line = f"{m}x{n}x{k} {name}: {ms*1000:.1f} us  ratio {cb/ms:.3f}"
            print(line, flush=True)
            out.append(line)
