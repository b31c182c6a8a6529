#!/usr/bin/env python3
"""Where the small shapes' time goes for `triton::dot` and its gradient ops
(`dot_nt` = A B^T, `dot_tn` = A^T B): per shape and op, the autotuned call
against cuBLAS in the same layout, every config of the op pinned in turn
(the five fastest listed), and cuBLAS's kernel name (torch profiler).

    python3 scripts/gpu/small_shape_probe.py out/grad1.tar.xz RESULTS [--ops dot,dot_nt] [MxNxK ...]

The bundle holds dot, dot_nt and dot_tn --no-build folders (as
dot_grad_bench.py's), or those `--ops` names. Values of every pinned config are checked against
torch in float32; writes RESULTS/small_shape_probe.json and .md, exit 1 on a
wrong value.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dot_grad_bench import OPS, TOL, max_rel_err, operands  # noqa: E402
from op_bundle import unpack_and_build  # noqa: E402

SHAPES = [(1000, 776, 1528), (1024, 1024, 1024), (1000, 1000, 1000)]


def cublas_kernels(ref):
    """Names of the CUDA kernels `ref` runs (cuBLAS's choice for the layout)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    ref()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        ref()
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})


def main():
    bundle, results, *rest = sys.argv[1:]
    ops = OPS
    if "--ops" in rest:
        i = rest.index("--ops")
        ops = rest[i + 1].split(",")
        del rest[i:i + 2]
    shapes = [tuple(int(x) for x in s.split("x")) for s in rest] or SHAPES
    unpack_and_build(bundle, os.path.basename(bundle).split(".")[0], ops)
    import torch
    import triton

    mods = {op: __import__(f"triton_{op}") for op in ops}
    for m in mods.values():
        m.load()
    t = torch.ops.triton
    torch.manual_seed(0)
    bench = lambda f, rep=100: triton.testing.do_bench(f, warmup=20, rep=rep)  # noqa: E731
    rows, wrong = [], 0
    for m, n, k in shapes:
        for op in ops:
            a, b, ref = operands(op, m, n, k, torch.float16)
            call = lambda: getattr(t, op)(a, b)  # noqa: E731
            mod = mods[op]
            mod.pin_config(None)
            call()
            picked = str(mod.last_config())
            want = ref().float()
            pinned = []
            for config in mod.configs():
                mod.pin_config(config)
                try:
                    got = call().float()
                except RuntimeError:
                    continue
                err = max_rel_err(got, want)
                if err > TOL:
                    wrong += 1
                    print(f"WRONG {op} {m}x{n}x{k} {config}: {err:.2e}", flush=True)
                pinned.append((bench(call, 30), str(config)))
            mod.pin_config(None)
            ours, cublas = bench(call), bench(ref)
            pinned.sort()
            row = {"op": op, "shape": [m, n, k], "us": ours * 1e3, "cublas_us": cublas * 1e3,
                   "ratio": cublas / ours, "picked": picked, "configs_qualifying": len(pinned),
                   "fastest_pinned": [{"us": ms * 1e3, "config": c} for ms, c in pinned[:5]],
                   "cublas_kernels": cublas_kernels(ref)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "command": " ".join(["python3", "scripts/gpu/small_shape_probe.py"] + sys.argv[1:])}
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "small_shape_probe.json"), "w") as f:
        json.dump({"env": env, "rows": rows, "wrong": wrong}, f, indent=1)
    with open(os.path.join(results, "small_shape_probe.md"), "w") as f:
        f.write(f"{env['device']}, torch {env['torch']}, {env['date']}, fp16; µs with L2 flushed (do_bench)\n\n")
        f.write("| op | M x N x K | ours | cuBLAS | ratio | picked | fastest pinned | cuBLAS kernel |\n")
        f.write("| --- | --- | ---: | ---: | ---: | --- | --- | --- |\n")
        for r in rows:
            best = r["fastest_pinned"][0] if r["fastest_pinned"] else {"us": float("nan"), "config": "-"}
            f.write(f"| {r['op']} | {'x'.join(map(str, r['shape']))} | {r['us']:.1f} | {r['cublas_us']:.1f} | "
                    f"{r['ratio']:.3f} | {r['picked']} | {best['us']:.1f} ({best['config']}) | "
                    f"{', '.join(r['cublas_kernels'])} |\n")
        f.write(f"\nwrong values: {wrong}\n")
    print(open(os.path.join(results, "small_shape_probe.md")).read())
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
