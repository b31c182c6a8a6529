#!/usr/bin/env python3
"""The user-written fused op examples/linear_relu.tc (y = relu(x @ w + bias),
TK = 32, 4 or 8 warps) through its generated torch op, against
torch.relu(torch.addmm(bias, x, w)) in the same process (issue 11, item 3).

    here:  triton-opgen examples/linear_relu.tc --framework torch --arch sm_90a --no-build -o DIR/linear_relu
           (with the bridge library in DIR/lib/libopgen_bridge.a, as torch_ops_prepare.sh lays out)
    there: python3 scripts/gpu/linear_relu_check.py DIR

Values on odd and aligned shapes (fp16, bf16) against an fp32 reference,
then timings (the suite's interleaved do_bench rounds: L2 flushed, median)
at 4096^3, 8192^3 and LLM shapes. Writes $OUT/linear_relu.json; exit 1 if a
value check failed.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# The last four have N and K multiples of 8 (the ALIGN=8 variants, whose K step
# the widen-dot-k pass makes 64) with K off 64: the wider last step is masked.
CHECK_SHAPES = [(1, 1, 1), (37, 45, 29), (300, 200, 513), (1000, 777, 1531), (4096, 4096, 4096),
                (100, 256, 40), (129, 64, 8), (264, 136, 96), (513, 1024, 1064)]
TIME_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (4096, 4096, 11008), (1000, 4096, 4096)]


def main():
    import torch
    from matmul_suite import interleaved_ms
    from torch_ops_check import finish_build, start_build

    ops_dir = sys.argv[1] if len(sys.argv) > 1 else "out/torch"
    module = finish_build(ops_dir, "linear_relu", *start_build(ops_dir, "linear_relu"), module="examples_linear_relu")
    if module is None:
        raise SystemExit("building examples::linear_relu failed (output above)")
    op = module.load()
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "checks": [], "timings": []}
    failed = 0
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in CHECK_SHAPES:
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            w = torch.randn(k, n, device="cuda", dtype=dtype) / k ** 0.5
            bias = torch.randn(n, device="cuda", dtype=dtype)
            want = torch.relu(torch.addmm(bias.float(), x.float(), w.float()))
            got = op(x, w, bias).float()
            err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-6)).item()
            ok = err < (4e-3 if dtype == torch.float16 else 2e-2)
            failed += 0 if ok else 1
            line = f"{'ok' if ok else 'FAIL'} {m}x{n}x{k} {str(dtype)[6:]}: rel err {err:.2e} config {module.last_config()}"
            print(line, flush=True)
            report["checks"].append({"shape": [m, n, k], "dtype": str(dtype)[6:], "rel_err": err, "ok": ok,
                                     "config": module.last_config()})
    for dtype in (torch.float16, torch.bfloat16):
        for m, n, k in TIME_SHAPES:
            x = torch.randn(m, k, device="cuda", dtype=dtype)
            w = torch.randn(k, n, device="cuda", dtype=dtype) / k ** 0.5
            bias = torch.randn(n, device="cuda", dtype=dtype)
            op(x, w, bias)  # autotunes
            config = module.last_config()
            times = interleaved_ms({"ours": lambda: op(x, w, bias),
                                    "torch": lambda: torch.relu(torch.addmm(bias, x, w))})
            ours, ref = times["ours"][0], times["torch"][0]
            flops = 2.0 * m * n * k
            line = (f"{m}x{n}x{k} {str(dtype)[6:]}: ours {flops / ours / 1e9:.1f} TFLOP/s, "
                    f"relu(addmm) {flops / ref / 1e9:.1f} ({ref / ours:.3f}x) config {config}")
            print(line, flush=True)
            report["timings"].append({"shape": [m, n, k], "dtype": str(dtype)[6:], "ours_ms": ours,
                                      "torch_ms": ref, "ratio": ref / ours, "config": config})
    out = os.environ.get("OUT", ".")
    with open(os.path.join(out, "linear_relu.json"), "w") as f:
        json.dump(report, f, indent=1)
    from ratio_plot import plot_after

    plot_after(os.path.join(out, "linear_relu.json"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
