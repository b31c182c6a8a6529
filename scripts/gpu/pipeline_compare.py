"""GPU time of the same dot configs compiled two ways (e.g. before and after a
change to the LLVM pass pipeline): each folder holds `tritonc --all-configs`
outputs of tests/ops/dot.tc (sub-folders with manifest.json); the kernels of
both are timed at M = N = K in interleaved rounds (CUDA events), checked
against torch.matmul, and reported as a ratio.

    python3 scripts/gpu/pipeline_compare.py BEFORE_DIR AFTER_DIR [SIZE]
"""

import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cuda_driver  # noqa: E402


def kernels(root):
    found = {}
    for sub in sorted(os.listdir(root)):
        d = os.path.join(root, sub)
        if os.path.isfile(os.path.join(d, "manifest.json")):
            for entry, path in cuda_driver.load_manifest(d):
                found[f"{sub}/{entry['file']}"] = (entry, path)
    return found


def main():
    before, after = kernels(sys.argv[1]), kernels(sys.argv[2])
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    m = n = k = size
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = torch.matmul(a, b).float()
    print(f"{torch.cuda.get_device_name()}, {m}x{n}x{k} fp16, median of 15 interleaved rounds of 20 launches")
    print("| config | before regs | after regs | before TFLOP/s | after TFLOP/s | after/before |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in sorted(before):
        if name not in after:
            continue
        runs = {}
        for tag, (entry, path) in (("before", before[name]), ("after", after[name])):
            kern = cuda_driver.Kernel(path, entry)
            tm, tn = int(entry["macros"]["TM"]), int(entry["macros"]["TN"])
            c = torch.empty(m, n, device="cuda", dtype=torch.float16)
            grid = [((m + tm - 1) // tm) * ((n + tn - 1) // tn)]
            args = dict(A=a, B=b, C=c, M=m, N=n, K=k, lda=k, ldb=n, ldc=n)
            launch = lambda kern=kern, grid=grid, args=args: kern(grid, **args)
            launch()
            torch.cuda.synchronize()
            err = (c.float() - ref).abs().max().item()
            assert err < 1.0, f"{tag} {name}: max error {err}"
            runs[tag] = (kern, launch, [])
        for _ in range(15):
            for tag in ("before", "after"):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(20):
                    runs[tag][1]()
                end.record()
                torch.cuda.synchronize()
                runs[tag][2].append(start.elapsed_time(end) / 20)
        tf = {t: 2 * m * n * k / (statistics.median(r[2]) * 1e-3) / 1e12 for t, r in runs.items()}
        print(f"| {name} | {runs['before'][0].registers} | {runs['after'][0].registers} | {tf['before']:.1f} | "
              f"{tf['after']:.1f} | {tf['after'] / tf['before']:.3f} |")


if __name__ == "__main__":
    main()
