"""GPU checks and benchmarks of tritonc's PTX, run on the device machine.

Usage (on the GPU machine, from the repository root, after scripts/gpu/build.sh
ran on the build machine and out/gpu was carried):
    python3 scripts/gpu/check.py [--quick] [--out DIR]

Correctness: every variant of every kernel against PyTorch on fresh random
inputs, outputs poisoned with NaN before each launch. Benchmarks: our best
variant, PyTorch and OpenAI Triton (the tutorials' kernels) timed in the same
run with triton.testing.do_bench (median). Writes results.json and
results.md to --out (default $OUT or .)."""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from cuda_driver import Kernel, load_manifest  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "out", "gpu")
results = []


def record(kind, name, ok=None, **fields):
    row = {"kind": kind, "name": name, **fields}
    if ok is not None:
        row["ok"] = bool(ok)
    results.append(row)
    status = "" if ok is None else ("PASS " if ok else "FAIL ")
    extra = " ".join(f"{k}={v}" for k, v in fields.items())
    print(f"{status}{kind} {name} {extra}", flush=True)


def variants(name):
    return [(e, Kernel(path, e)) for e, path in load_manifest(os.path.join(ROOT, name))]


def tag(entry):
    tuned = {k: v for k, v in entry["macros"].items() if k not in ("TYPE",)}
    return ",".join(f"{k}={v}" for k, v in tuned.items()) + f",w={entry['num_warps']}"


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    if torch.isnan(out).any():
        return float("inf")
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def cdiv(a, b):
    return (a + b - 1) // b


DT = {"float": torch.float32, "half": torch.float16}


# ---------------------------------------------------------------- launchers
def launch_add(k, e, a, b, c):
    n = a.numel()
    k((n // int(e["macros"]["SIZE"]),), N=n, a=a, b=b, c=c)


def launch_transpose(k, e, x, y):
    # X holds element (m, n) at m + n*ldx: as a torch tensor it is [N, ldx].
    n, m = x.shape
    tm, tn = int(e["macros"]["TM"]), int(e["macros"]["TN"])
    k((cdiv(m, tm), cdiv(n, tn)), X=x, Y=y, M=m, N=n, ldx=x.stride(0), ldy=y.stride(0))


def launch_softmax(k, e, x, y, programs=None):
    m, n = x.shape
    k((programs or m,), Y=y, X=x, ldx=x.stride(0), ldy=y.stride(0), M=m, N=n)


def launch_dot(k, e, a, b, c):
    m, kk = a.shape
    n = b.shape[1]
    tm, tn = int(e["macros"]["TM"]), int(e["macros"]["TN"])
    k((m // tm, n // tn), A=a, B=b, C=c, M=m, N=n, K=kk, lda=a.stride(0), ldb=b.stride(0), ldc=c.stride(0))


# ---------------------------------------------------------------- checks
def check_add(name):
    for e, k in variants(name):
        dt = DT[e["macros"]["TYPE"]]
        size = int(e["macros"]["SIZE"])
        for n in (size, size * 37, 1 << 20):
            a, b = torch.randn(n, device="cuda", dtype=dt), torch.randn(n, device="cuda", dtype=dt)
            c = torch.full_like(a, float("nan"))
            launch_add(k, e, a, b, c)
            torch.cuda.synchronize()
            err = rel_err(c, a + b)
            record("check", f"{name}[{tag(e)}] n={n}", err == 0.0, err=err)


def check_transpose(name):
    for e, k in variants(name):
        dt = DT[e["macros"]["TYPE"]]
        for (n, m) in ((8192, 8192), (1000, 777), (777, 1000), (1, 4099), (4099, 1), (64, 64)):
            x = torch.randn(n, m, device="cuda", dtype=dt)
            y = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            launch_transpose(k, e, x, y)
            torch.cuda.synchronize()
            ok = torch.equal(y, x.t())
            record("check", f"{name}[{tag(e)}] {m}x{n}", ok)


def check_transpose_div(name):
    """Variants that promise M, N, ldx, ldy are multiples of 16."""
    for e, k in variants(name):
        dt = DT[e["macros"]["TYPE"]]
        for (n, m) in ((8192, 8192), (1008, 784), (16, 4096)):
            x = torch.randn(n, m, device="cuda", dtype=dt)
            y = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            launch_transpose(k, e, x, y)
            torch.cuda.synchronize()
            record("check", f"{name}[{tag(e)}] {m}x{n}", torch.equal(y, x.t()))


def check_softmax(name):
    for e, k in variants(name):
        dt = DT[e["macros"]["TYPE"]]
        tn = int(e["macros"]["TN"])
        # A DIV variant promises N (and the row strides) are multiples of 16.
        sizes = {1024, 4096, 16384, tn - 16} if "DIV" in e["macros"] else {781, 1024, 4096, 16384, tn - 3}
        for n in sorted(sizes):
            if n > tn:
                continue
            for m, programs in ((4096, None), (4096, 132 * 4), (7, 3)):
                x = torch.randn(m, n, device="cuda", dtype=dt) * 3
                y = torch.full_like(x, float("nan"))
                launch_softmax(k, e, x, y, programs)
                torch.cuda.synchronize()
                err = rel_err(y, torch.softmax(x.float(), dim=1))
                tol = 1e-5 if dt == torch.float32 else 2e-3
                record("check", f"{name}[{tag(e)}] {m}x{n} grid={programs or m}", err < tol, err=f"{err:.2e}")


def check_matrix_ops(name):
    for e, k in variants(name):
        out = torch.full((16, 32), float("nan"), device="cuda")
        k((1,), out=out)
        torch.cuda.synchronize()
        ref = torch.full((16, 32), 8 * (3.14 + 5.17), device="cuda")
        err = rel_err(out, ref)
        record("check", f"{name}", err < 1e-6, err=f"{err:.2e}")


def check_dot(name):
    for e, k in variants(name):
        dt = DT[e["macros"]["TYPE"]]
        for (m, n, kk) in ((128, 128, 128), (256, 64, 512)):
            a = torch.randn(m, kk, device="cuda", dtype=dt)
            b = torch.randn(kk, n, device="cuda", dtype=dt)
            c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
            launch_dot(k, e, a, b, c)
            torch.cuda.synchronize()
            err = rel_err(c, a.double() @ b.double())
            tol = 1e-5 if dt == torch.float32 else 2e-3
            record("check", f"{name}[{tag(e)}] {m}x{n}x{kk}", err < tol, err=f"{err:.2e}")


# ---------------------------------------------------------------- benchmarks
def bench(fn):
    import triton.testing

    return triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")


def triton_kernels():
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, z, n, BLOCK: tl.constexpr):
        off = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = off < n
        tl.store(z + off, tl.load(x + off, mask=m) + tl.load(y + off, mask=m), mask=m)

    @triton.jit
    def transpose_kernel(x, y, M, N, sxm, sym, BM: tl.constexpr, BN: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        t = tl.load(x + rm[:, None] * sxm + rn[None, :], mask=mask)
        tl.store(y + rn[None, :] * sym + rm[:, None], t, mask=mask)

    @triton.jit
    def softmax_kernel(y, x, sx, sy, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        v = tl.load(x + row * sx + cols, mask=cols < n, other=-float("inf"))
        v = v - tl.max(v, axis=0)
        num = tl.exp(v)
        tl.store(y + row * sy + cols, num / tl.sum(num, axis=0), mask=cols < n)

    return add_kernel, transpose_kernel, softmax_kernel, triton


def best_variant(names, launch):
    best = None
    for name in names:
        for e, k in variants(name):
            try:
                ms = bench(lambda: launch(k, e))
            except Exception as exc:  # a variant that cannot launch is reported, not fatal
                record("bench-variant", f"{name}[{tag(e)}]", False, error=str(exc))
                continue
            record("bench-variant", f"{name}[{tag(e)}]", None, ms=f"{ms:.4f}")
            if best is None or ms < best[0]:
                best = (ms, f"{name}[{tag(e)}]")
    return best


def bench_all():
    add_k, trans_k, soft_k, triton = triton_kernels()
    # vector add fp32 2^28: 3 arrays of 4 bytes
    n = 1 << 28
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.empty_like(a)
    gb = 3 * n * 4 / 1e9
    ours = best_variant(["add_f32", "add_f32_w8"], lambda k, e: launch_add(k, e, a, b, c))
    t_torch = bench(lambda: torch.add(a, b, out=c))
    t_triton = bench(lambda: add_k[(triton.cdiv(n, 1024),)](a, b, c, n, BLOCK=1024))
    report("add fp32 2^28", gb, ours, t_torch, t_triton)
    del a, b, c
    # transpose fp16 8192^2: read + write
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    gb = 2 * x.numel() * 2 / 1e9
    t_torch = bench(lambda: y.copy_(x.t()))
    t_triton = bench(lambda: trans_k[(128, 128)](x, y, 8192, 8192, 8192, 8192, BM=64, BN=64))
    ours = best_variant(["transpose_f16", "transpose_f16_w8"], lambda k, e: launch_transpose(k, e, x, y))
    report("transpose fp16 8192^2", gb, ours, t_torch, t_triton)
    # Variant specialized for M, N, ldx, ldy multiples of 16 (what Triton's JIT does).
    ours = best_variant(["transpose_f16_div", "transpose_f16_div_w8"], lambda k, e: launch_transpose(k, e, x, y))
    report("transpose fp16 8192^2, DIV variant", gb, ours, t_torch, t_triton)
    del x, y
    # softmax fp32 4096 x 16384
    x = torch.randn(4096, 16384, device="cuda")
    y = torch.empty_like(x)
    gb = 2 * x.numel() * 4 / 1e9
    t_torch = bench(lambda: torch.softmax(x, dim=1))
    t_triton = bench(lambda: soft_k[(4096,)](y, x, 16384, 16384, 16384, BLOCK=16384, num_warps=16))
    ours = best_variant(["softmax_f32_16k"], lambda k, e: launch_softmax(k, e, x, y))
    report("softmax fp32 4096x16384", gb, ours, t_torch, t_triton)
    ours = best_variant(["softmax_f32_16k_div", "softmax_f32_16k_div_w8"], lambda k, e: launch_softmax(k, e, x, y))
    report("softmax fp32 4096x16384, DIV variant", gb, ours, t_torch, t_triton)


def report(work, gb, ours, t_torch, t_triton):
    row = {"torch_GBps": round(gb / (t_torch / 1e3)), "triton_GBps": round(gb / (t_triton / 1e3))}
    if ours:
        row["ours_GBps"] = round(gb / (ours[0] / 1e3))
        row["ours_variant"] = ours[1]
        row["vs_triton"] = round(row["ours_GBps"] / row["triton_GBps"], 3)
        row["vs_torch"] = round(row["ours_GBps"] / row["torch_GBps"], 3)
    record("bench", work, None, **row)


CHECKS = {
    "add_f32": check_add, "add_f32_w8": check_add, "add_f16": check_add,
    "transpose_f16": check_transpose, "transpose_f16_w8": check_transpose,
    "transpose_f32": check_transpose,
    "softmax_f32_1k": check_softmax, "softmax_f32_4k": check_softmax,
    "softmax_f32_16k": check_softmax, "softmax_f16_1k": check_softmax,
    "softmax_f32_16k_div": check_softmax, "softmax_f32_16k_div_w8": check_softmax,
    "transpose_f16_div": check_transpose_div, "transpose_f16_div_w8": check_transpose_div,
    "matrix_ops": check_matrix_ops, "dot_f32": check_dot, "dot_f16": check_dot,
}


def run_group(group, jsonl):
    """One group in this process; rows appended to `jsonl`."""
    torch.manual_seed(0)
    try:
        if group == "bench":
            bench_all()
        else:
            CHECKS[group](group)
    except Exception as exc:  # reported as a failed row; the parent goes on
        record("check" if group != "bench" else "bench", group, False, error=f"{type(exc).__name__}: {exc}")
    with open(jsonl, "a") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--no-bench", action="store_true")
    p.add_argument("--group", help=argparse.SUPPRESS)
    p.add_argument("--jsonl", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.group:
        return run_group(args.group, args.jsonl)
    import subprocess

    os.makedirs(args.out, exist_ok=True)
    jsonl = os.path.join(args.out, "rows.jsonl")
    open(jsonl, "w").close()
    started = time.time()
    groups = list(CHECKS) + ([] if args.no_bench else ["bench"])
    for group in groups:
        # One process per group: a kernel that faults cannot take the others down.
        rc = subprocess.call([sys.executable, __file__, "--group", group, "--jsonl", jsonl])
        if rc != 0:
            with open(jsonl, "a") as f:
                f.write(json.dumps({"kind": "check", "name": group, "ok": False, "error": f"exit {rc}"}) + "\n")
    rows = [json.loads(l) for l in open(jsonl)]
    meta = {
        "device": torch.cuda.get_device_name(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "torch": torch.__version__,
        "seconds": round(time.time() - started, 1),
    }
    try:
        import triton

        meta["triton"] = triton.__version__
    except ImportError:
        pass
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    fails = [r for r in rows if r.get("ok") is False]
    print(json.dumps(meta))
    for r in fails:
        print("FAILED:", r)
    for r in rows:
        if r["kind"] == "bench":
            print(r)
    print(f"{sum(1 for r in rows if r.get('ok'))} passed, {len(fails)} failed")


if __name__ == "__main__":
    main()
