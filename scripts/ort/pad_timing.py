"""GPU time of the ONNX Runtime dot op on both sides of its `pad` line's
condition (2e9 multiply-adds, M and N >= 192, N or K odd: zero-padded copies), in
interleaved rounds: M = 476 runs the unaligned variants as is, M = 489 the
aligned ones on padded twins (the copies counted in), same N and K, so the
time per multiply-add compares the two paths. Also an aligned pair
(N, K = 2048) as the yardstick, and 1024x4097x4096 (a twin zeroed in
strips only) beside 1024x4096x4096. Time = the library's CUDA-event counter
around each launch (kernel_ns), per call.

usage: python3 pad_timing.py LIBDIR [RESULTS.json]
"""

import json
import statistics
import sys

import numpy as np
from gpu_check import single_op_session
from ort_models import Lib, feeds_for

CASES = [(476, 2049, 2049), (489, 2049, 2049), (476, 2048, 2048), (489, 2048, 2048),
         # b's twin past 8M elements (zeroed in its pad strips only) and its aligned yardstick.
         (1024, 4097, 4096), (1024, 4096, 4096)]
ROUNDS, REPS = 7, 10


def main():
    lib = Lib(sys.argv[1], "dot")
    rng = np.random.default_rng(4)
    runs = []
    for shape in CASES:
        sess = single_op_session(lib, "dot", np.float16)
        feeds = feeds_for("dot", shape, np.float16, rng)
        lib.reset()
        for _ in range(3):
            sess.run(None, feeds)  # autotune, warm up
        padded = lib.stats()["padded_launches"] > 0
        runs.append((shape, sess, feeds, padded))
    samples = {shape: [] for shape, *_ in runs}
    for _ in range(ROUNDS):
        for shape, sess, feeds, _ in runs:
            lib.reset()
            for _ in range(REPS):
                sess.run(None, feeds)
            s = lib.stats()
            samples[shape].append(s["kernel_ns"] / max(s["launches"], 1) / 1e3)
    rows = []
    for shape, _, _, padded in runs:
        m, n, k = shape
        us = statistics.median(samples[shape])
        rows.append({"shape": list(shape), "padded": padded, "gpu_us": us, "tflops": 2 * m * n * k / us / 1e6})
        print(f"dot float16 {shape}: {'padded' if padded else 'as is'}, {us:.1f} us a call, {rows[-1]['tflops']:.0f} TFLOP/s", flush=True)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            json.dump({"rounds": ROUNDS, "reps": REPS, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
