#!/usr/bin/env python3
"""Times the bundled ops built by two compilers (A and B) on the GPU, to show
that a compiler change that alters PTX leaves the speed as it was.

    # here: for each compiler, target/release/triton-opgen tests/ops/OP.tc --framework torch \\
    #           --arch sm_90a --no-build -o out/ab_X/OP   (X = a, b), then
    #       tar -C out -cJf out/ab_X.tar.xz ab_X
    python3 scripts/gpu/ab_timing.py out/ab_a.tar.xz out/ab_b.tar.xz RESULTS [OP ...]

Both builds of an op register the same torch op name, so each timing runs in
its own process: A, B, A, B (ROUNDS pairs, default 3), each process checking
the result against torch first and timing every shape with
triton.testing.do_bench (the autotuner warmed first). Reports the median over
rounds of each side, B/A, and writes RESULTS/ab_timing.json and .md; exit 1 on
a wrong value.
"""
import json
import os
import statistics
import subprocess
import sys
import time

# op -> (shapes, dtype): each shape is the inputs' sizes the op call below takes.
CASES = {
    "softmax": [(4096, 1024), (4096, 4096), (4096, 16384)],
    "transpose": [(4096, 4096), (1000, 3000)],
    "col_sum": [(4096, 4096), (8192, 1000)],
    "layer_norm": [(4096, 1024), (4096, 4096)],
    "layer_norm_dx": [(4096, 1024), (4096, 4096)],
    "layer_norm_dw": [(4096, 1024), (4096, 4096)],
    "cross_entropy": [(4096, 32000)],
    "cross_entropy_dx": [(4096, 32000)],
    "dot": [(4096, 4096, 4096), (1000, 777, 1531), (8192, 8192, 128), (4096, 4096, 64)],
    "dot_nt": [(4096, 4096, 4096), (1000, 777, 1531)],
    "dot_tn": [(4096, 4096, 4096), (1000, 777, 1531)],
    "attention": [(4, 32, 4096, 64), (4, 32, 1000, 128)],
}


def call_and_reference(op, shape):
    """The op's call on random fp16 inputs of `shape`, and torch's answer."""
    import torch

    t = torch.ops.triton
    h = dict(device="cuda", dtype=torch.float16)
    if op == "softmax":
        x = torch.randn(*shape, **h)
        return (lambda: t.softmax(x)), (lambda: torch.softmax(x.float(), -1).half())
    if op == "transpose":
        x = torch.randn(*shape, **h)
        return (lambda: t.transpose(x)), (lambda: x.t().contiguous())
    if op == "col_sum":
        x = torch.randn(*shape, **h)
        return (lambda: t.col_sum(x)), (lambda: x.float().sum(0).half())
    m, n = shape[0], shape[-1]
    if op.startswith("layer_norm"):
        x, dy = torch.randn(m, n, **h), torch.randn(m, n, **h)
        w, b = torch.randn(n, **h), torch.randn(n, **h)
        xf = x.float()
        mean = xf.mean(1)
        rstd = torch.rsqrt(xf.var(1, unbiased=False) + 1e-5)
        xhat = (xf - mean[:, None]) * rstd[:, None]
        if op == "layer_norm":
            return (lambda: t.layer_norm(x, w, b)[0]), (lambda: (xhat * w.float() + b.float()).half())
        if op == "layer_norm_dw":
            return (lambda: t.layer_norm_dw(dy, x, mean, rstd)), (lambda: (dy.float() * xhat).sum(0).half())
        g = dy.float() * w.float()
        dx = rstd[:, None] * (g - xhat * (g * xhat).mean(1, keepdim=True) - g.mean(1, keepdim=True))
        return (lambda: t.layer_norm_dx(dy, x, w, mean, rstd)), (lambda: dx.half())
    if op.startswith("cross_entropy"):
        logits = torch.randn(m, n, **h)
        target = torch.randint(0, n, (m,), device="cuda")
        lse = torch.logsumexp(logits.float(), 1)
        if op == "cross_entropy":
            loss = lse - logits.float().gather(1, target[:, None])[:, 0]
            return (lambda: t.cross_entropy(logits, target)), (lambda: loss)
        dloss = torch.randn(m, device="cuda")
        p = torch.softmax(logits.float(), 1)
        p[torch.arange(m, device="cuda"), target] -= 1
        return (lambda: t.cross_entropy_dx(dloss, logits, target)), (lambda: (p * dloss[:, None]).half())
    if op.startswith("dot"):
        mm, nn, kk = shape
        a = torch.randn(mm, kk, **h) if op != "dot_tn" else torch.randn(kk, mm, **h)
        b = torch.randn(kk, nn, **h) if op != "dot_nt" else torch.randn(nn, kk, **h)
        ref = {"dot": lambda: a @ b, "dot_nt": lambda: a @ b.t(), "dot_tn": lambda: a.t() @ b}[op]
        return (lambda: getattr(t, op)(a, b)), ref
    if op == "attention":
        q, k, v = (torch.randn(*shape, **h) for _ in range(3))
        scale = shape[-1] ** -0.5
        ref = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale)  # noqa: E731
        return (lambda: t.attention(q, k, v, scale)), ref
    raise ValueError(op)


def run_one(root, op):
    """In this process: load ROOT/OP, check it, time each shape; print JSON."""
    import torch
    import triton

    sys.path.insert(0, os.path.join(root, op))
    module = __import__(f"triton_{op}")
    module.load()
    torch.manual_seed(0)
    out = {}
    for shape in CASES[op]:
        ours, ref = call_and_reference(op, shape)
        got, want = ours().float(), ref().float()
        err = ((got - want).abs().max() / want.abs().max().clamp(min=1e-3)).item()
        ms = triton.testing.do_bench(ours, warmup=50, rep=200)
        out["x".join(map(str, shape))] = {"ms": ms, "rel_err": err, "config": str(module.last_config())}
    print("RESULT " + json.dumps(out), flush=True)


def main():
    if sys.argv[1] == "--run":
        run_one(sys.argv[2], sys.argv[3])
        return
    bundle_a, bundle_b, results = sys.argv[1:4]
    ops = sys.argv[4:] or list(CASES)
    rounds = int(os.environ.get("ROUNDS", "3"))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from op_bundle import unpack_and_build

    roots = {}
    for side, bundle in (("a", bundle_a), ("b", bundle_b)):
        name = os.path.basename(bundle).split(".")[0]
        roots[side] = unpack_and_build(bundle, name, ops)
        sys.path[:] = [p for p in sys.path if not p.startswith(roots[side])]
    times = {op: {"a": {}, "b": {}} for op in ops}
    configs = {op: {"a": {}, "b": {}} for op in ops}
    failed = 0
    for op in ops:
        for _ in range(rounds):
            for side in ("a", "b"):
                # Each side tunes into its own cache (kept across its rounds).
                env = dict(os.environ, TRITON_OPGEN_CACHE=os.path.join(roots[side], "tune-cache"))
                proc = subprocess.run(
                    [sys.executable, __file__, "--run", roots[side], op], capture_output=True, text=True, env=env
                )
                line = next((l for l in proc.stdout.splitlines() if l.startswith("RESULT ")), None)
                if proc.returncode != 0 or line is None:
                    print(f"[FAIL] {op} ({side}): {proc.stderr[-1500:]}", flush=True)
                    failed += 1
                    break
                for shape, r in json.loads(line[7:]).items():
                    times[op][side].setdefault(shape, []).append(r["ms"])
                    configs[op][side].setdefault(shape, set()).add(r["config"])
                    if r["rel_err"] > 2e-2:
                        print(f"[FAIL] {op} {shape} ({side}): relative error {r['rel_err']:.2e}", flush=True)
                        failed += 1
    rows = []
    for op in ops:
        for shape, a in times[op]["a"].items():
            b = times[op]["b"].get(shape, [])
            if not b:
                continue
            ma, mb = statistics.median(a), statistics.median(b)
            ca, cb = sorted(configs[op]["a"][shape]), sorted(configs[op]["b"].get(shape, []))
            same = "same" if ca == cb else f"A {ca} B {cb}"
            rows.append({"op": op, "shape": shape, "a_ms": ma, "b_ms": mb, "b_over_a": mb / ma, "a_runs": a, "b_runs": b,
                         "configs": same})
            print(f"{op:17} {shape:16} A {ma:.4f} ms  B {mb:.4f} ms  B/A {mb / ma:.3f}  configs {same}", flush=True)
    os.makedirs(results, exist_ok=True)
    env = {"device": __import__("torch").cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "rounds": rounds, "command": " ".join(["python3", "scripts/gpu/ab_timing.py"] + sys.argv[1:])}
    with open(os.path.join(results, "ab_timing.json"), "w") as f:
        json.dump({"env": env, "rows": rows, "failed": failed}, f, indent=1)
    with open(os.path.join(results, "ab_timing.md"), "w") as f:
        f.write(f"{env['device']}, {env['date']}, median of {rounds} processes per side (A, B alternating)\n\n")
        f.write("| op | shape | A ms | B ms | B/A | tuned configs |\n| --- | --- | --- | --- | --- | --- |\n")
        for r in rows:
            f.write(f"| {r['op']} | {r['shape']} | {r['a_ms']:.4f} | {r['b_ms']:.4f} | {r['b_over_a']:.3f} | {r['configs']} |\n")
        ratios = [r["b_over_a"] for r in rows]
        if ratios:
            geo = statistics.geometric_mean(ratios)
            f.write(f"\ngeomean B/A {geo:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; {failed} failures\n")
            print(f"geomean B/A {geo:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; {failed} failures")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
