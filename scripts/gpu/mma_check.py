"""Tensor-core dot checks and one timing, on the GPU machine.

Usage: python3 mma_check.py DIR  (DIR = what scripts/gpu/mma_build.sh wrote;
this file and cuda_driver.py are copied there). Every variant against torch
(float64 reference) on a few shapes, outputs poisoned with NaN; then 4096^3
fp16 for the best of a few configs vs torch.matmul with triton.testing.do_bench.
Then the sm_90a (wgmma) variants `wg_*`: correct against torch at 4096^3 (f16 and
bf16) and 8192^3 (the fastest of each type), and timed against torch.matmul at
4096^3 and 8192^3 in the same run."""

import glob
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cuda_driver import Kernel, load_manifest  # noqa: E402

DT = {"float": torch.float32, "half": torch.float16, "bf16": torch.bfloat16}
TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}
fails = 0


def padded(rows, cols, dt, extra):
    """A rows x cols tensor with `extra` readable elements after its end (the
    kernels prefetch one tile past K)."""
    flat = torch.randn(rows * cols + extra, device="cuda", dtype=torch.float32).to(dt)
    return flat[: rows * cols].view(rows, cols)


def grid_of(mac, m, n):
    """Programs for an m x n output: (M / TM, N / TN), or grouped (dot_grouped.tc)."""
    tm, tn = int(mac["TM"]), int(mac["TN"])
    g = int(mac.get("GROUP_M", 1))
    return (m // tm * g, n // tn // g)


def run_dot(k, e, m, n, kk):
    mac = e["macros"]
    dt = DT[mac["TYPE"]]
    tm, tn, tk = int(mac["TM"]), int(mac["TN"]), int(mac["TK"])
    ta, tb = mac.get("USE_A") == "^a", mac.get("USE_B") == "^b"
    extra = 2 * tk * max(m, n, kk) + 64
    a_mem = padded(kk, m, dt, extra) if ta else padded(m, kk, dt, extra)
    b_mem = padded(n, kk, dt, extra) if tb else padded(kk, n, dt, extra)
    a = a_mem.t() if ta else a_mem
    b = b_mem.t() if tb else b_mem
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    k(grid_of(mac, m, n), A=a_mem, B=b_mem, C=c, M=m, N=n, K=kk,
      lda=a_mem.stride(0), ldb=b_mem.stride(0), ldc=c.stride(0))
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    out = c.double()
    err = float("inf") if torch.isnan(out).any() else ((out - ref).norm() / ref.norm()).item()
    return err, TOL[dt]


def main(root):
    global fails
    t0 = time.time()
    checked = 0
    for d in sorted(glob.glob(os.path.join(root, "*", "manifest.json"))):
        name = os.path.basename(os.path.dirname(d))
        for e, path in load_manifest(os.path.dirname(d)):
            mac = e["macros"]
            tag = f"{name}[{','.join(f'{x}={mac[x]}' for x in ('TYPE', 'TM', 'TN', 'TK'))}]"
            try:
                k = Kernel(path, e)
            except Exception as exc:  # reported, not fatal
                fails += 1
                print(f"FAIL {tag} load: {exc}", flush=True)
                continue
            tag += f" regs={k.registers}"
            for (m, n, kk) in ((256, 256, 64), (256, 256, 128), (256, 512, 192), (512, 256, 1024),
                               (256, 2048, 320)):
                if kk % int(mac["TK"]) or (n // int(mac["TN"])) % int(mac.get("GROUP_M", 1)):
                    continue  # no K mask: K must be a multiple of TK; whole groups
                try:
                    err, tol = run_dot(k, e, m, n, kk)
                except Exception as exc:
                    err, tol = float("inf"), 0.0
                    print(f"launch error: {exc}", flush=True)
                ok = err < tol
                checked += 1
                if not ok:
                    fails += 1
                print(f"{'PASS' if ok else 'FAIL'} {tag} {m}x{n}x{kk} err={err:.2e}", flush=True)
    print(f"checked {checked} runs, {fails} failures, {time.time() - t0:.1f}s", flush=True)

    import triton.testing
    M = N = K = 4096
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.empty(M, N, device="cuda", dtype=torch.float16)
    flops = 2 * M * N * K
    results = []
    for name in ("dot_f16_w8", "dot_f16_w4", "prefetch_f16_w8", "prefetch_f16_w4", "big_f16_w8",
                 "big_prefetch_f16_w8", "big2_f16_w8"):
        if not os.path.isdir(os.path.join(root, name)):
            continue  # a partial build (only some groups)
        for e, path in load_manifest(os.path.join(root, name)):
            mac = e["macros"]
            tm, tn, tk = int(mac["TM"]), int(mac["TN"]), int(mac["TK"])
            if tm < 64 or tn < 64 or tk < 32 or tm * tn > 128 * 256:
                continue
            try:
                k = Kernel(path, e)
            except Exception as exc:
                print(f"skip {name} {mac}: {exc}", flush=True)
                continue

            def launch():
                k((M // tm, N // tn), A=a, B=b, C=c, M=M, N=N, K=K,
                  lda=K, ldb=N, ldc=N)
            try:
                ms = triton.testing.do_bench(launch, warmup=10, rep=40, return_mode="median")
            except Exception as exc:
                print(f"skip {name} {mac}: {exc}", flush=True)
                continue
            results.append((ms, f"{name} TM={tm} TN={tn} TK={tk} w={e['num_warps']} regs={k.registers}"))
            print(f"bench {results[-1][1]}: {ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s", flush=True)
    if results:
        ms_t = triton.testing.do_bench(lambda: torch.matmul(a, b, out=c), warmup=10, rep=100, return_mode="median")
        best = min(results)
        print(f"torch.matmul 4096^3 fp16: {ms_t:.3f} ms {flops / ms_t / 1e9:.1f} TFLOP/s", flush=True)
        print(f"best ours: {best[1]}: {best[0]:.3f} ms {flops / best[0] / 1e9:.1f} TFLOP/s = "
              f"{ms_t / best[0]:.3f}x torch", flush=True)
    wgmma_section(root)
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return 1 if fails else 0


def uses_wgmma(path):
    with open(path) as f:
        return "wgmma.mma_async" in f.read()


def big_check(k, e, size):
    """Relative error against float64 at size^3 (inputs uniform in [-1, 1))."""
    mac = e["macros"]
    dt = DT[mac["TYPE"]]
    a = (torch.rand(size, size, device="cuda") * 2 - 1).to(dt)
    b = (torch.rand(size, size, device="cuda") * 2 - 1).to(dt)
    c = torch.full((size, size), float("nan"), device="cuda", dtype=dt)
    k(grid_of(mac, size, size), A=a, B=b, C=c, M=size, N=size, K=size, lda=size, ldb=size, ldc=size)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    out = c.double()
    err = float("inf") if torch.isnan(out).any() else ((out - ref).norm() / ref.norm()).item()
    del a, b, c, ref, out
    return err, TOL[dt]


def square_operands(sizes=(4096, 8192)):
    """For each size and tensor-core type: random square operands `a`, `b`, an output `c`
    and torch.matmul's median time on them (printed); yields (size, type name, a, b, c, ms)."""
    import triton.testing
    for size in sizes:
        flops = 2 * size ** 3
        for dtn, dt in (("half", torch.float16), ("bf16", torch.bfloat16)):
            a = torch.randn(size, size, device="cuda", dtype=dt)
            b = torch.randn(size, size, device="cuda", dtype=dt)
            c = torch.empty(size, size, device="cuda", dtype=dt)
            ms_t = triton.testing.do_bench(lambda: torch.matmul(a, b, out=c), warmup=10, rep=100,
                                           return_mode="median")
            print(f"torch.matmul {size}^3 {dtn}: {ms_t:.3f} ms {flops / ms_t / 1e9:.1f} TFLOP/s", flush=True)
            yield size, dtn, a, b, c, ms_t


def time_square(k, e, a, b, c, size):
    """Median milliseconds of kernel `k` computing c = a @ b, all size x size."""
    import triton.testing
    grid = grid_of(e["macros"], size, size)

    def launch():
        k(grid, A=a, B=b, C=c, M=size, N=size, K=size, lda=size, ldb=size, ldc=size)
    return triton.testing.do_bench(launch, warmup=10, rep=60, return_mode="median")


def wgmma_section(root):
    """sm_90a variants: correctness at 4096^3 (and 8192^3 for the fastest), timing vs torch.matmul."""
    global fails
    kernels = []
    for d in sorted(glob.glob(os.path.join(root, "wg_*", "manifest.json"))):
        name = os.path.basename(os.path.dirname(d))
        for e, path in load_manifest(os.path.dirname(d)):
            if not uses_wgmma(path):
                print(f"note: {name} {e['macros']} has no wgmma (tile too big for the warpgroups)", flush=True)
                continue
            try:
                kernels.append((name, e, Kernel(path, e)))
            except Exception as exc:
                fails += 1
                print(f"FAIL {name} {e['macros']} load: {exc}", flush=True)
    best = {}
    for size, dtn, a, b, c, ms_t in square_operands():
        flops = 2 * size ** 3
        for name, e, k in kernels:
            mac = e["macros"]
            if mac["TYPE"] != dtn:
                continue
            tm, tn, tk = int(mac["TM"]), int(mac["TN"]), int(mac["TK"])
            group = f" GROUP_M={mac['GROUP_M']}" if "GROUP_M" in mac else ""
            tag = (f"{name} TM={tm} TN={tn} TK={tk}{group} w={e['num_warps']} regs={k.registers} "
                   f"smem={k.shared}")
            if size == 4096:
                err, tol = big_check(k, e, size)
                ok = err < tol
                fails += 0 if ok else 1
                print(f"{'PASS' if ok else 'FAIL'} {tag} {size}^3 err={err:.2e}", flush=True)

            ms = time_square(k, e, a, b, c, size)
            print(f"bench {size}^3 {dtn} {tag}: {ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s = "
                  f"{ms_t / ms:.3f}x torch", flush=True)
            key = (size, dtn)
            if key not in best or ms < best[key][0]:
                best[key] = (ms, tag, ms_t, k, e)
    for (size, dtn), (ms, tag, ms_t, k, e) in sorted(best.items()):
        if size == 8192:
            err, tol = big_check(k, e, size)
            ok = err < tol
            fails += 0 if ok else 1
            print(f"{'PASS' if ok else 'FAIL'} {tag} {size}^3 err={err:.2e}", flush=True)
        print(f"best wgmma {size}^3 {dtn}: {tag}: {ms:.3f} ms {2 * size ** 3 / ms / 1e9:.1f} TFLOP/s = "
              f"{ms_t / ms:.3f}x torch.matmul ({2 * size ** 3 / ms_t / 1e9:.1f} TFLOP/s)", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else HERE))
