#!/usr/bin/env python3
"""Time of the generated dot op's first call per shape (module loads, which
JIT-compile each candidate's PTX, plus autotuning) with an empty autotune
cache, and the op's speed on the same shapes against cuBLAS.

    python3 scripts/gpu/first_call.py OPS_DIR [MxNxK ...]   (default: 1000^3, 8192^3, 16x4096x4096)
"""

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    os.environ["TRITON_OPGEN_CACHE"] = os.path.join(tempfile.mkdtemp(), "autotune.json")
    import torch
    from matmul_suite import interleaved_ms, load_op

    module, op = load_op(sys.argv[1])
    specs = sys.argv[2:] or ["1000x1000x1000", "8192x8192x8192", "16x4096x4096"]
    for spec in specs:
        m, n, k = (int(x) for x in spec.split("x"))
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        torch.cuda.synchronize()
        start = time.perf_counter()
        op(a, b)
        torch.cuda.synchronize()
        first = time.perf_counter() - start
        times = interleaved_ms({"ours": lambda: op(a, b), "cublas": lambda: torch.matmul(a, b)})
        print(f"{spec}: first call {first:.2f} s ({module.benchmark_calls()} configs benchmarked so far), "
              f"{times['cublas'][0] / times['ours'][0]:.2f}x cuBLAS, config {module.last_config()}", flush=True)


if __name__ == "__main__":
    main()
