"""Tensor-core dot checks and one timing, on the GPU machine.

Usage: python3 mma_check.py DIR  (DIR = what scripts/gpu/mma_build.sh wrote;
this file and cuda_driver.py are copied there). Every variant against torch
(float64 reference) on a few shapes, outputs poisoned with NaN; then 4096^3
fp16 for the best of a few configs vs torch.matmul with triton.testing.do_bench."""

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
    k((m // tm, n // tn), A=a_mem, B=b_mem, C=c, M=m, N=n, K=kk,
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
            for (m, n, kk) in ((256, 256, 128), (256, 512, 192), (512, 256, 1024)):
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
    ms_t = triton.testing.do_bench(lambda: torch.matmul(a, b, out=c), warmup=10, rep=100, return_mode="median")
    best = min(results)
    print(f"torch.matmul 4096^3 fp16: {ms_t:.3f} ms {flops / ms_t / 1e9:.1f} TFLOP/s", flush=True)
    print(f"best ours: {best[1]}: {best[0]:.3f} ms {flops / best[0] / 1e9:.1f} TFLOP/s = "
          f"{ms_t / best[0]:.3f}x torch", flush=True)
    print(torch.cuda.get_device_name(), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else HERE))
