#!/usr/bin/env python3
"""The matmul suite users can rerun: the generated op `torch.ops.triton.dot`,
called the way users call it, against torch.matmul (cuBLAS) and the Triton
tutorial matmul (Triton 3.6, autotuned, written below) in one process.

    bash scripts/gpu/torch_ops_prepare.sh            # here (Rust machine): out/torch/ (sm_90a)
    python3 scripts/gpu/matmul_suite.py out/torch    # GPU machine (torch, Triton, g++, ptxas),
                                                     # from the repository root; carry out/torch

It builds out/torch/dot with its build.sh (unless built), then for each case
(25 shapes x fp16, bf16; see SHAPES) checks all three results against an
fp32 torch.matmul of the same inputs (relative Frobenius error under TOL of
the dtype, all finite) and times them (triton.testing.do_bench: CUDA events,
L2 flushed, median; ROUNDS interleaved rounds, median of the rounds). The
op's autotune cache starts empty ($TRITON_OPGEN_CACHE in a temp folder, or
--cache FILE) and the cases run in one process in SHAPES order, so a choice
reused from an earlier shape shows (the `sequence` group: 1000^3, 1024^3,
3000^3, 3008^3). Writes matmul_suite.json and matmul_suite.md to --out (else
$OUT, else out/suite-results) after every case (and the op's autotune.json
at the end), and prints the table: TFLOP/s,
ours/cuBLAS, ours/Triton, their geomean and minimum, the config the op picked
(its last_config()) and that config's registers and spill bytes (ptxas -v on
the PTX in out/torch/dot/ptx). Takes about 5 minutes on an H100 (a fresh
machine compiles Triton's configs per dtype and specialization first); cases
past --budget seconds are listed as skipped. Exit status 1 if a result was
wrong.

    python3 scripts/gpu/matmul_suite.py --list        # the cases, no GPU needed
    python3 scripts/gpu/matmul_suite.py --self-test   # the report on made-up rows, no GPU needed
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import matmul_suite_report as report  # noqa: E402

# LLM projections (M tokens; N, K of LLaMA-7B layers and its vocabulary).
LLM_M = [1, 16, 128, 1000, 3000, 4096, 8192]
LLM_NK = [(4096, 4096), (11008, 4096), (4096, 11008), (32000, 4096)]
# (group, M, N, K), run in this order.
SHAPES = (
    # One process, differing shapes: 1024^3 and 3008^3 (multiples of 16)
    # share power-of-two buckets with 1000^3 and 3000^3 (masked variants).
    [("sequence", 1000, 1000, 1000), ("sequence", 1024, 1024, 1024),
     ("sequence", 3000, 3000, 3000), ("sequence", 3008, 3008, 3008)]
    # Every M for the first (N, K), three M each for the others (time).
    + [("llm", m, 4096, 4096) for m in LLM_M]
    + [("llm", m, 11008, 4096) for m in (1, 128, 4096)]
    + [("llm", m, 4096, 11008) for m in (16, 1000, 4096)]
    + [("llm", m, 32000, 4096) for m in (1, 128, 3000)]
    + [("odd", 1000, 777, 1531), ("odd", 2049, 2049, 2049)]
    + [("skinny K", 8192, 8192, 128), ("skinny K", 4096, 4096, 64)]
    + [("square", 8192, 8192, 8192)]
)
DTYPES = ["float16", "bfloat16"]
# Relative Frobenius error against the fp32 product of the same inputs.
TOL = {"float16": 2e-3, "bfloat16": 1e-2}
ROUNDS = 3


def log(t0, msg):
    print(f"[{time.time() - t0:6.1f}s] {msg}", flush=True)


# ------------------------------------------------- Triton tutorial matmul

def triton_tutorial_matmul():
    """The matmul of Triton's tutorial 03 (grouped program order, masked K
    tail, the tutorial's CUDA autotune configs keyed on M, N, K); the output
    dtype follows C's. Returns (matmul(a, b) -> c, the autotuned kernel)."""
    import torch
    import triton
    import triton.language as tl

    def cfg(bm, bn, bk, stages, warps):
        return triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8},
                             num_stages=stages, num_warps=warps)

    @triton.autotune(
        configs=[cfg(128, 256, 64, 3, 8), cfg(64, 256, 32, 4, 4), cfg(128, 128, 32, 4, 4),
                 cfg(128, 64, 32, 4, 4), cfg(64, 128, 32, 4, 4), cfg(128, 32, 32, 4, 4),
                 cfg(64, 32, 32, 5, 2), cfg(32, 64, 32, 5, 2)],
        key=["M", "N", "K"],
    )
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                      GROUP_SIZE_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
            accumulator = tl.dot(a, b, accumulator)
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        c = accumulator.to(c_ptr.dtype.element_ty)
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
        tl.store(c_ptrs, c, mask=c_mask)

    def matmul(a, b):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=a.dtype)

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
        return c
    return matmul, matmul_kernel


# ------------------------------------------------------------- one case

def first_call(torch, fn):
    """Runs `fn` once (autotuning happens here); its output and wall seconds."""
    torch.cuda.synchronize()
    start = time.time()
    out = fn()
    torch.cuda.synchronize()
    return out, time.time() - start


def check(torch, out, ref, dtype):
    err = ((out.float() - ref).norm() / ref.norm()).item()
    finite = bool(torch.isfinite(out).all().item())
    return {"rel_err": err, "ok": finite and err < TOL[dtype]}


def interleaved_ms(fns):
    """{name: (median ms, ms of each round)} for each callable of `fns`:
    ROUNDS rounds, each timing every callable once (triton.testing.do_bench:
    L2 flushed, median), so drifting clocks hit all of them alike."""
    import triton.testing

    times = {name: [] for name in fns}
    for _ in range(ROUNDS):
        for name, fn in fns.items():
            times[name].append(triton.testing.do_bench(fn, warmup=10, rep=25, return_mode="median"))
    return {name: (sorted(ms)[len(ms) // 2], ms) for name, ms in times.items()}


def run_case(torch, ops, group, m, n, k, dtype):
    """Checks and times ours, cuBLAS and Triton on one shape and dtype."""
    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    ref = torch.matmul(a.float(), b.float())
    contenders = {"ours": lambda: ops["dot"](a, b), "cublas": lambda: torch.matmul(a, b),
                  "triton": lambda: ops["triton"](a, b)}
    row = {"group": group, "shape": [m, n, k], "dtype": dtype}
    timed = {}
    for name, fn in contenders.items():
        try:
            out, seconds = first_call(torch, fn)
            row[name] = dict(check(torch, out, ref, dtype), first_call_s=seconds)
            if row[name]["ok"]:
                timed[name] = fn
        except Exception as e:  # noqa: BLE001 - a failure is a result
            row[name] = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    if "ok" in row["ours"] and "error" not in row["ours"]:
        row["ours"]["config"] = ops["last_config"]()
    if "ok" in row["triton"] and "error" not in row["triton"]:
        row["triton"]["config"] = str(getattr(ops["triton_kernel"], "best_config", "-"))
    flops = 2.0 * m * n * k
    for name, (ms, rounds) in interleaved_ms(timed).items():
        row[name].update(ms=ms, tflops=flops / ms / 1e9, ms_rounds=rounds)
    return row


# ------------------------------------------------------------ the run

def load_op(ops_dir, name="dot"):
    """Builds (if needed) and loads out/torch/<name> (dot, dot_nt, dot_tn); (module, op)."""
    import importlib

    folder = os.path.join(ops_dir, name)
    if os.path.exists(os.path.join(folder, f"libtriton_{name}.so")):
        sys.path.insert(0, os.path.abspath(folder))
        module = importlib.import_module(f"triton_{name}")
    else:
        from torch_ops_check import finish_build, start_build

        module = finish_build(ops_dir, name, *start_build(ops_dir, name))
        if module is None:
            raise SystemExit(f"building the {name} op failed (output above)")
    return module, module.load()


def add_spills(rows, op_dir):
    """ptxas -v of each picked config, once per (config, dtype)."""
    from matmul_bench import find_ptxas

    ptxas = find_ptxas()
    seen = {}
    for r in rows:
        ours = r.get("ours", {})
        if "config" not in ours:
            continue
        key = (ours["config"], f"T={r['dtype']}")
        if key not in seen:
            ptx = report.variant_ptx(op_dir, *key)
            if ptxas is None or ptx is None:
                seen[key] = {"error": "no ptxas" if ptxas is None else "variant not in variants.json"}
            else:
                seen[key] = report.ptxas_spills(ptxas, ptx)
        ours["ptxas"] = seen[key]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops_dir", nargs="?", default="out/torch")
    parser.add_argument("--out", default=os.environ.get("OUT") or "out/suite-results")
    parser.add_argument("--cache", help="autotune cache file (default: a fresh one)")
    parser.add_argument("--budget", type=float, default=480, help="seconds after which cases are skipped")
    parser.add_argument("--list", action="store_true", help="print the cases and exit")
    parser.add_argument("--self-test", action="store_true", help="check the report on made-up rows")
    args = parser.parse_args()
    if args.list:
        for i, (group, m, n, k) in enumerate(SHAPES, 1):
            print(f"{i:2d} {group:9s} {m}x{n}x{k}")
        print(f"{len(SHAPES)} shapes x {', '.join(DTYPES)} = {len(SHAPES) * len(DTYPES)} cases")
        return 0
    if args.self_test:
        from matmul_suite_selftest import run_self_test

        return run_self_test(SHAPES, LLM_M, LLM_NK)

    t0 = time.time()
    os.environ["TRITON_OPGEN_CACHE"] = args.cache or os.path.join(tempfile.mkdtemp(), "autotune.json")
    import torch
    import triton

    module, dot = load_op(args.ops_dir)
    tri, tri_kernel = triton_tutorial_matmul()
    ops = {"dot": dot, "last_config": module.last_config, "triton": tri, "triton_kernel": tri_kernel}
    os.makedirs(args.out, exist_ok=True)
    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "triton": triton.__version__,
            "command": " ".join(["python3", "scripts/gpu/matmul_suite.py"] + sys.argv[1:]),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "autotune_cache": os.environ["TRITON_OPGEN_CACHE"]}
    log(t0, f"{meta['device']}, torch {meta['torch']}, Triton {meta['triton']}; op built/loaded")
    rows = []
    for group, m, n, k in SHAPES:
        for dtype in DTYPES:
            if time.time() - t0 > args.budget:
                rows.append({"group": group, "shape": [m, n, k], "dtype": dtype, "skipped": "time budget"})
                continue
            row = run_case(torch, ops, group, m, n, k, dtype)
            rows.append(row)
            o = row["ours"]
            log(t0, f"{m}x{n}x{k} {dtype}: ours {report.fmt(o.get('tflops'))} ({o.get('config', o.get('error'))}), "
                    f"cuBLAS {report.fmt(row['cublas'].get('tflops'))}, Triton {report.fmt(row['triton'].get('tflops'))}"
                    f" TFLOP/s; ours/cuBLAS {report.fmt(report.ratio(row, 'cublas'), 2)}")
            save(args.out, [r for r in rows if "skipped" not in r], meta, rows)
    measured = [r for r in rows if "skipped" not in r]
    add_spills(measured, os.path.join(args.ops_dir, "dot"))
    # The op's choices, keyed as the runtime keys them (candidate sets included).
    if os.path.exists(os.environ["TRITON_OPGEN_CACHE"]):
        shutil.copy(os.environ["TRITON_OPGEN_CACHE"], os.path.join(args.out, "autotune.json"))
    save(args.out, measured, meta, rows)
    print(report.markdown(measured, meta))
    skipped = [report.case_name(r) for r in rows if "skipped" in r]
    if skipped:
        print(f"skipped past the {args.budget:.0f} s budget: {', '.join(skipped)}")
    return 1 if report.summarize(measured)["failed"] else 0


def save(out, measured, meta, rows):
    with open(os.path.join(out, "matmul_suite.json"), "w") as f:
        json.dump({"meta": meta, "summary": report.summarize(measured), "rows": rows}, f, indent=1)
    with open(os.path.join(out, "matmul_suite.md"), "w") as f:
        f.write(report.markdown(measured, meta))
    try:
        import matmul_suite_plot

        print(f"chart: {matmul_suite_plot.plot(out)}")
    except ImportError:
        print("no chart: matplotlib is not installed (python3 scripts/gpu/matmul_suite_plot.py DIR draws it later)")


if __name__ == "__main__":
    sys.exit(main())
