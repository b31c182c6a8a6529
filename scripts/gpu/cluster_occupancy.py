#!/usr/bin/env python3
"""What the driver says about the split-K variants of a generated op's
`dot`: blocks per SM (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) and
clusters at once (`cuOccupancyMaxActiveClusters`, the compiled cluster
shape), next to the unsplit sibling's blocks per SM: the numbers the
runtime's split plan reads.

    python3 scripts/gpu/cluster_occupancy.py out/torch/dot "TM=128 TN=256 ALIGN=8 KX=1 SPLIT_K=4 TMA=0 num_warps=8 num_stages=8" ...
"""
import ctypes
import sys

from cuda_driver import Kernel, _check, _driver, variant_for


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.c_void_p), ("numAttrs", ctypes.c_uint)]


def occupancy(kernel, splits):
    lib = _driver()
    blocks = ctypes.c_int()
    _check(lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), kernel.func, kernel.threads,
                                                           ctypes.c_size_t(kernel.shared)), "blocks per SM")
    clusters = None
    if splits > 1:
        config = LaunchConfig(1, 1, splits, kernel.threads, 1, 1, kernel.shared, None, None, 0)
        n = ctypes.c_int()
        status = lib.cuOccupancyMaxActiveClusters(ctypes.byref(n), kernel.func, ctypes.byref(config))
        clusters = n.value if status == 0 else f"error {status}"
    return blocks.value, clusters


def main():
    op_dir = sys.argv[1]
    for config in sys.argv[2:]:
        split = int(next(t for t in config.split() if t.startswith("SPLIT_K="))[8:])
        for label, cfg in (("split", config), ("sibling", config.replace(f"SPLIT_K={split}", "SPLIT_K=1"))):
            entry, ptx = variant_for(op_dir, cfg, "T=float16")
            kernel = Kernel(ptx, entry)
            blocks, clusters = occupancy(kernel, int(entry.get("cluster_splits", 1)))
            print(f"{label:8} {cfg}: {kernel.registers} regs, {kernel.shared} B shared, "
                  f"{blocks} blocks/SM, clusters at once {clusters}")


if __name__ == "__main__":
    main()
