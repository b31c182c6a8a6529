#!/usr/bin/env python3
"""triton::dot's gradients (`dot_nt` = A B^T, `dot_tn` = A^T B) and a whole
training step of `triton::dot`, through the generated torch ops, against
cuBLAS in the same process.

    # here: for op in dot dot_nt dot_tn: target/release/triton-opgen tests/ops/$op.tc \\
    #           --framework torch --arch sm_90a --no-build -o out/grad/$op
    #       tar -C out -cJf out/grad.tar.xz grad
    python3 scripts/gpu/dot_grad_bench.py out/grad.tar.xz RESULTS

1. Values: every op, fp16 and bf16, on aligned shapes (the pipelined
   ALIGN = 8 variants) and odd ones (ALIGN = 1), against torch in float32.
2. Timings (triton.testing.do_bench, the autotuner warmed first): each
   gradient op against `a @ b.t()` / `a.t() @ b`, and forward + backward
   of `triton::dot` (autograd: one dot, one dot_nt, one dot_tn) against
   `torch.matmul`'s, on squares and the LLM shapes of a linear layer
   (x [tokens, K] @ W [K, N]).
Writes RESULTS/dot_grad.json and .md; exit 1 on a wrong value.
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_bundle import unpack_and_build  # noqa: E402

OPS = ["dot", "dot_nt", "dot_tn"]
# (M, N, K) of the product the op computes.
VALUE_SHAPES = [(4096, 4096, 4096), (1024, 1536, 2048), (1000, 776, 1528), (1000, 777, 1531), (129, 64, 4104), (8, 4096, 512)]
# Gradient ops alone: (M, N, K).
GRAD_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 11008), (4096, 11008, 4096), (1024, 1024, 1024), (1000, 776, 1528)]
# A linear layer's training step: x [tokens, K] @ W [K, N].
STEP_SHAPES = [(4096, 4096, 4096), (4096, 11008, 4096), (4096, 4096, 11008), (8192, 8192, 8192)]
# Largest error over the reference's largest magnitude, and the bound a value passes under.
TOL = 2e-2


def max_rel_err(got, want):
    """max |got - want| / max |want| (both float32 tensors), a float."""
    return ((got - want).abs().max() / want.abs().max()).item()


def operands(op, m, n, k, dtype):
    import torch

    h = dict(device="cuda", dtype=dtype)
    a = torch.randn(k, m, **h) if op == "dot_tn" else torch.randn(m, k, **h)
    b = torch.randn(n, k, **h) if op == "dot_nt" else torch.randn(k, n, **h)
    ref = {"dot": lambda: a @ b, "dot_nt": lambda: a @ b.t(), "dot_tn": lambda: a.t() @ b}[op]
    return a, b, ref


def main():
    bundle, results = sys.argv[1:3]
    unpack_and_build(bundle, os.path.basename(bundle).split(".")[0], OPS)
    import torch
    import triton

    mods = {}
    for op in OPS:
        mods[op] = __import__(f"triton_{op}")
        mods[op].load()
    t = torch.ops.triton
    torch.manual_seed(0)
    out = {"values": [], "grads": [], "steps": []}
    failed = 0
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    for dname, dtype in dtypes.items():
        for op in OPS:
            for m, n, k in VALUE_SHAPES:
                a, b, ref = operands(op, m, n, k, dtype)
                got = getattr(t, op)(a, b).float()
                want = ref().float()
                err = max_rel_err(got, want)
                ok = err < TOL
                failed += not ok
                cfg = str(mods[op].last_config())
                out["values"].append({"op": op, "dtype": dname, "shape": [m, n, k], "rel_err": err, "ok": ok, "config": cfg})
                print(f"[{'ok' if ok else 'FAIL'}] {op} {dname} {m}x{n}x{k}: rel err {err:.2e} ({cfg})", flush=True)
    bench = lambda f: triton.testing.do_bench(f, warmup=50, rep=200)  # noqa: E731
    for dname, dtype in dtypes.items():
        for op in ("dot_nt", "dot_tn"):
            for m, n, k in GRAD_SHAPES:
                a, b, ref = operands(op, m, n, k, dtype)
                ours = lambda: getattr(t, op)(a, b)  # noqa: E731
                ours()
                ms, ref_ms = bench(ours), bench(ref)
                row = {"op": op, "dtype": dname, "shape": [m, n, k], "ms": ms, "cublas_ms": ref_ms,
                       "ratio": ref_ms / ms, "config": str(mods[op].last_config())}
                out["grads"].append(row)
                print(f"{op} {dname} {m}x{n}x{k}: {ms:.4f} ms, cuBLAS {ref_ms:.4f} ms, ratio {row['ratio']:.3f} ({row['config']})", flush=True)
        for tokens, n, k in STEP_SHAPES:
            x = torch.randn(tokens, k, device="cuda", dtype=dtype, requires_grad=True)
            w = torch.randn(k, n, device="cuda", dtype=dtype, requires_grad=True) / k**0.5
            w = w.detach().requires_grad_()
            dy = torch.randn(tokens, n, device="cuda", dtype=dtype)

            def step(mm):
                x.grad = w.grad = None
                mm(x, w).backward(dy)

            ours = lambda: step(t.dot)  # noqa: E731
            ref = lambda: step(torch.matmul)  # noqa: E731
            ours()
            gx, gw = x.grad.float(), w.grad.float()
            ref()
            err = max(max_rel_err(gx, x.grad.float()), max_rel_err(gw, w.grad.float()))
            ok = err < TOL
            failed += not ok
            ms, ref_ms = bench(ours), bench(ref)
            row = {"dtype": dname, "shape": [tokens, n, k], "ms": ms, "torch_ms": ref_ms, "ratio": ref_ms / ms,
                   "grad_rel_err": err, "ok": ok}
            out["steps"].append(row)
            print(f"[{'ok' if ok else 'FAIL'}] step {dname} x[{tokens},{k}] @ W[{k},{n}]: {ms:.4f} ms, torch {ref_ms:.4f} ms, "
                  f"ratio {row['ratio']:.3f}, grad rel err {err:.2e}", flush=True)
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "command": " ".join(["python3", "scripts/gpu/dot_grad_bench.py"] + sys.argv[1:])}
    out["env"], out["failed"] = env, failed
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "dot_grad.json"), "w") as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(results, "dot_grad.md"), "w") as f:
        f.write(f"{env['device']}, torch {env['torch']}, {env['date']}; ratio = cuBLAS (torch) time / ours\n\n")
        f.write("| op | dtype | M x N x K | ours ms | cuBLAS ms | ratio | config |\n| --- | --- | --- | --- | --- | --- | --- |\n")
        for r in out["grads"]:
            f.write(f"| {r['op']} | {r['dtype']} | {'x'.join(map(str, r['shape']))} | {r['ms']:.4f} | {r['cublas_ms']:.4f} "
                    f"| {r['ratio']:.3f} | {r['config']} |\n")
        f.write("\nTraining step (forward + backward of one linear layer):\n\n")
        f.write("| dtype | tokens x N x K | triton::dot ms | torch.matmul ms | ratio |\n| --- | --- | --- | --- | --- |\n")
        for r in out["steps"]:
            f.write(f"| {r['dtype']} | {'x'.join(map(str, r['shape']))} | {r['ms']:.4f} | {r['torch_ms']:.4f} | {r['ratio']:.3f} |\n")
        for key in ("grads", "steps"):
            ratios = [r["ratio"] for r in out[key]]
            f.write(f"\n{key}: geomean {statistics.geometric_mean(ratios):.3f}, min {min(ratios):.3f}\n")
        f.write(f"\nvalues: {len(out['values'])} checked, {failed} failures\n")
    print(open(os.path.join(results, "dot_grad.md")).read())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
