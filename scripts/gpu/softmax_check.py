#!/usr/bin/env python3
"""The bundled softmax on rows of any length, through its torch op, on the GPU.

    # here: target/release/triton-opgen tests/ops/softmax.tc --framework torch --arch sm_90a \\
    #           --no-build -o out/softmax && tar -C out -cJf out/softmax.tar.xz softmax
    python3 scripts/gpu/softmax_check.py out/softmax.tar.xz RESULTS     # on the GPU machine

Checks values against torch.softmax (fp32/fp16/bf16; rows of 1, 1000, 4096,
5000, 20000, 100003 columns; strided rows) and times `triton::softmax`
against torch.softmax and a Triton 3.6 row softmax (one program per row, the
row in one block, warps by block size) at 4096 x {1024, 4096, 16384, 32768},
all with triton.testing.do_bench in one process (five interleaved rounds,
medians), and again as CUDA graphs of calls on rotating inputs larger than
L2 (per-call GPU time without launch cost or event quantization). Writes RESULTS/softmax_check.json
and .md; exit 1 on a wrong value.
"""
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

from op_bundle import unpack_and_build  # noqa: E402
from ratio_plot import plot_after  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
unpack_and_build(bundle, "softmax", [""])
import triton_softmax  # noqa: E402

ours = triton_softmax.load()


@triton.jit
def triton_row_softmax(y_ptr, x_ptr, ld_x, ld_y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * ld_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * ld_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def triton_softmax_ref(x):
    m, n = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    warps = 4 if block <= 2048 else 8 if block <= 8192 else 16 if block <= 16384 else 32
    triton_row_softmax[(m,)](y, x, x.stride(0), y.stride(0), n, BLOCK=block, num_warps=warps)
    return y


ROUNDS = 5
# Bytes a graph's calls move together (inputs and outputs): past the H100's
# 50 MB L2, so no call finds its input there.
GRAPH_BYTES = 256 << 20
results = {"checks": [], "perf": []}


def graph_rounds(fns, xs):
    """{name: [per-call ms of each round]}: each callable captured in a CUDA
    graph of one call per input of `xs` (rotating, more bytes than L2
    holds), the graphs replayed in turn ROUNDS times. No host launch cost and
    no event quantization (~0.5 us, 5 % of a 10-us call) in the figure."""
    graphs = {}
    for name, fn in fns.items():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for x in xs:
                fn(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for x in xs:
                fn(x)
        graph.replay()
        graphs[name] = graph
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, graph in graphs.items():
            per_replay = []
            for _ in range(10):
                start.record()
                graph.replay()
                end.record()
                end.synchronize()
                per_replay.append(start.elapsed_time(end) / len(xs))
            times[name].append(statistics.median(per_replay))
    return times
dev = "cuda"
failed = 0
for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 1e-3), (torch.bfloat16, 8e-3)):
    for m, n in ((3, 1), (7, 1000), (5, 4096), (4, 5000), (3, 20000), (2, 100003)):
        x = (torch.randn(m, n, device=dev) * 8).to(dtype)
        got = ours(x)
        want = torch.softmax(x.float(), dim=-1)
        err = (got.float() - want).abs().max().item()
        ok = err <= tol and got.dtype == dtype
        failed += not ok
        results["checks"].append({"dtype": str(dtype), "shape": [m, n], "max_err": err, "ok": ok, "config": triton_softmax.last_config()})
        print(f"[{'ok' if ok else 'FAIL'}] {dtype} {m}x{n}: max error {err:.2e} ({triton_softmax.last_config()})", flush=True)
    base = (torch.randn(6, 30000, device=dev)).to(dtype)
    view = base[::2, 96:20096]  # 16-byte aligned start, strided rows
    err = (ours(view).float() - torch.softmax(view.float(), -1)).abs().max().item()
    ok = err <= tol
    failed += not ok
    results["checks"].append({"dtype": str(dtype), "shape": "strided 3x20000", "max_err": err, "ok": ok})
    print(f"[{'ok' if ok else 'FAIL'}] {dtype} strided rows 3x20000: max error {err:.2e}", flush=True)

for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for n in (1024, 4096, 16384, 32768):
        x = torch.randn(4096, n, device=dev).to(dtype)
        ours(x)  # tune this shape bucket first
        # Five rounds, the three interleaved: at ~10 us a cell moves a few
        # percent run to run and with what ran just before; medians of the rounds.
        rounds = {"ours": [], "torch": [], "triton": []}
        for _ in range(ROUNDS):
            rounds["ours"].append(triton.testing.do_bench(lambda: ours(x), warmup=25, rep=200))
            rounds["torch"].append(triton.testing.do_bench(lambda: torch.softmax(x, dim=-1), warmup=25, rep=200))
            rounds["triton"].append(triton.testing.do_bench(lambda: triton_softmax_ref(x), warmup=25, rep=200))
        t_ours, t_torch, t_triton = (statistics.median(rounds[k]) for k in ("ours", "torch", "triton"))
        copies = max(1, min(32, -(-GRAPH_BYTES // (2 * x.numel() * x.element_size()))))
        xs = [x] + [torch.randn_like(x) for _ in range(copies - 1)]
        try:
            graph = graph_rounds({"ours": ours, "torch": lambda v: torch.softmax(v, dim=-1), "triton": triton_softmax_ref}, xs)
            g_ours, g_torch, g_triton = (statistics.median(graph[k]) for k in ("ours", "torch", "triton"))
            graph_entry = {"graph_calls": len(xs), "graph_ours_ms": round(g_ours, 5), "graph_torch_ms": round(g_torch, 5),
                           "graph_triton_ms": round(g_triton, 5), "graph_ours_vs_torch": round(g_torch / g_ours, 3),
                           "graph_ours_vs_triton": round(g_triton / g_ours, 3),
                           "graph_rounds_ms": {k: [round(t, 5) for t in v] for k, v in graph.items()}}
        except Exception as e:  # noqa: BLE001 - a failure is a result
            graph_entry = {"graph_error": f"{type(e).__name__}: {str(e)[:300]}"}
        del xs
        gbps = 2 * x.numel() * x.element_size() / (t_ours * 1e-3) / 1e9
        entry = {"dtype": str(dtype).split(".")[-1], "shape": [4096, n], "ours_ms": round(t_ours, 4), "torch_ms": round(t_torch, 4),
                 "triton_ms": round(t_triton, 4), "ours_vs_torch": round(t_torch / t_ours, 3), "ours_vs_triton": round(t_triton / t_ours, 3),
                 "ours_GBps": round(gbps), "config": triton_softmax.last_config(),
                 "rounds_ms": {k: [round(t, 4) for t in v] for k, v in rounds.items()}, **graph_entry}
        results["perf"].append(entry)
        print(f"[perf] {entry}", flush=True)

results["env"] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
os.makedirs(results_dir, exist_ok=True)
with open(os.path.join(results_dir, "softmax_check.json"), "w") as f:
    json.dump(results, f, indent=1)
plot_after(os.path.join(results_dir, "softmax_check.json"))
lines = [f"# triton::softmax on {results['env']['device']} ({results['env']['date']})", "",
         f"torch {results['env']['torch']}, triton {results['env']['triton']}; times by triton.testing.do_bench, medians of {ROUNDS} interleaved rounds; ratios > 1: ours faster.", "",
         "| dtype | shape | ours ms | torch ms | Triton ms | torch / ours | Triton / ours | graphs: torch / ours | graphs: Triton / ours | ours GB/s | config |",
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for p in results["perf"]:
    lines.append(f"| {p['dtype']} | {p['shape'][0]}x{p['shape'][1]} | {p['ours_ms']} | {p['torch_ms']} | {p['triton_ms']} | {p['ours_vs_torch']} | "
                 f"{p['ours_vs_triton']} | {p.get('graph_ours_vs_torch', p.get('graph_error'))} | {p.get('graph_ours_vs_triton', '')} | "
                 f"{p['ours_GBps']} | {p['config']} |")
lines += ["", f"Values: {len(results['checks']) - failed} of {len(results['checks'])} right against torch.softmax in fp32."]
with open(os.path.join(results_dir, "softmax_check.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print(f"done: {failed} failed")
sys.exit(1 if failed else 0)
