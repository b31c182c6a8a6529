"""Pre-fetch matmul variants on the GPU machine: correctness and timing.

Usage: python3 prefetch_check.py DIR (what scripts/gpu/prefetch_build.sh wrote).
Every variant against a float64 reference on small shapes (outputs poisoned
with NaN; helpers from mma_check.py); then the sm_90a variants (`wg_*`, and
the sm_90 `prefetch_f16_w8` for comparison): correct at 4096^3 and 8192^3,
timed against torch.matmul at both sizes in the same run."""

import glob
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cuda_driver import Kernel, load_manifest  # noqa: E402
from mma_check import big_check, run_dot, square_operands, time_square  # noqa: E402


def kernels(root, pattern):
    for d in sorted(glob.glob(os.path.join(root, pattern, "manifest.json"))):
        name = os.path.basename(os.path.dirname(d))
        for e, path in load_manifest(os.path.dirname(d)):
            with open(path) as f:
                ptx = f.read()
            engine = "wgmma" if "wgmma.mma_async" in ptx else (
                "cp.async+mma.sync" if "cp.async" in ptx else "mma.sync")
            mac = e["macros"]
            tag = (f"{name}[{mac['TYPE']} {mac['TM']}x{mac['TN']}x{mac['TK']} w{e['num_warps']}] "
                   f"{engine}")
            yield name, e, path, tag


def main(root):
    fails = 0
    t0 = time.time()
    for name, e, path, tag in kernels(root, "*"):
        k = Kernel(path, e)
        tag += f" regs={k.registers}"
        tk, tn = int(e["macros"]["TK"]), int(e["macros"]["TN"])
        for (m, n, kk) in ((256, 256, 64), (256, 512, 192), (512, 256, 1024)):
            if kk % tk or n % tn:
                continue
            err, tol = run_dot(k, e, m, n, kk)
            ok = err < tol
            fails += 0 if ok else 1
            print(f"{'PASS' if ok else 'FAIL'} {tag} {m}x{n}x{kk} err={err:.2e}", flush=True)
    print(f"small shapes done, {fails} failures, {time.time() - t0:.1f}s", flush=True)
    timed = [x for x in kernels(root, "wg_*") if "trans" not in x[0]]
    timed += [x for x in kernels(root, "prefetch_f16_w8") if x[1]["macros"]["TM"] == "128"]
    for size, dtn, a, b, c, ms_t in square_operands():
        flops = 2 * size ** 3
        for name, e, path, tag in timed:
            mac = e["macros"]
            if mac["TYPE"] != dtn:
                continue
            k = Kernel(path, e)
            err, tol = big_check(k, e, size)
            ok = err < tol
            fails += 0 if ok else 1
            ms = time_square(k, e, a, b, c, size)
            print(f"{'PASS' if ok else 'FAIL'} err={err:.1e} bench {size}^3 {tag}: {ms:.3f} ms "
                  f"{flops / ms / 1e9:.1f} TFLOP/s = {ms_t / ms:.3f}x torch", flush=True)
    print(f"{fails} failures", torch.cuda.get_device_name(),
          time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), flush=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else HERE))
