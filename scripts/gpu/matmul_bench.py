"""Matmul checks and benchmarks on the GPU machine, in one run.

Usage: python3 matmul_bench.py DIR [--dry]
DIR is what scripts/gpu/matmul_build.sh wrote (this file and cuda_driver.py
are copied there). Results go to $OUT/matmul_bench.json (or DIR when OUT is
unset); progress and a table to stdout.

1. ptxas -v on every PTX file (in parallel): registers, spills, cubins.
2. Correctness: every check_* variant (plain, prefetch, remat, the 4 fused
   transpositions, the grouped/masked/leaky-ReLU kernel) in fp16, bf16 and
   fp32 (FMA) against a float64 torch reference on fresh random inputs, odd
   shapes for the masked kernel; outputs poisoned with NaN, padding columns
   of C must stay NaN. Every pool_* config is checked too.
3. fp16 benchmarks per shape: torch.matmul (cuBLAS), a Triton matmul
   (@triton.autotune over a small config list) and ours (every pool config
   valid for the shape timed, the fastest kept, like the runtime's
   autotuner; also the fastest config of seed 004's grouped kernel and that
   config with its leaky ReLU), all with triton.testing.do_bench (CUDA events,
   L2 flushed before each run, median) in ROUNDS interleaved rounds (median
   of the rounds, and their spread), each output checked against torch.
4. The picked configs' registers and spills from ptxas -v.

--dry runs only step 1 and lists the candidates per shape (no GPU needed).
"""

import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

T0 = time.time()
# The square ones the acceptance names first, so a run cut short has them.
BENCH_SHAPES = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (8192, 8192, 128),
    (16, 4096, 4096),
    (4096, 4096, 64),
]
TOL = {"float": 1e-5, "half": 2e-3, "bf16": 1e-2}
ALPHA = 0.1
# Benchmarks of further shapes are skipped past this many seconds, so the
# JSON is written inside the device call's limit.
BUDGET_S = float(os.environ.get("MATMUL_BENCH_BUDGET_S", "200"))


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


# ---------------------------------------------------------------- ptxas -v

def find_ptxas():
    cands = [shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas"]
    cands += sorted(glob.glob("/usr/local/cuda*/bin/ptxas"))
    try:
        import triton

        cands.append(os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "ptxas"))
    except Exception:
        pass
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def ptxas_report(ptxas, arch, ptx, cubin):
    """Registers, spill bytes and stack frame of the one kernel in `ptx`."""
    out = subprocess.run([ptxas, f"-arch={arch}", "-v", ptx, "-o", cubin],
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        return {"error": text.strip()[-2000:]}

    def num(pattern):
        m = re.search(pattern, text)
        return int(m.group(1)) if m else None
    return {
        "registers": num(r"Used (\d+) registers"),
        "spill_stores": num(r"(\d+) bytes spill stores"),
        "spill_loads": num(r"(\d+) bytes spill loads"),
        "stack_frame": num(r"(\d+) bytes stack frame"),
        "cubin": cubin,
    }


def load_variants(root):
    """Every (folder name, manifest entry, PTX path, build arch)."""
    found = []
    for m in sorted(glob.glob(os.path.join(root, "*", "manifest.json"))):
        d = os.path.dirname(m)
        with open(m) as f:
            man = json.load(f)
        for e in man["variants"]:
            found.append({"group": os.path.basename(d), "entry": e, "ptx": os.path.join(d, e["file"]),
                          "arch": man.get("arch", "sm_90")})
    return found


def run_ptxas(variants, ptxas):
    cubin_dir = "/tmp/matmul_cubins"
    os.makedirs(cubin_dir, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max(4, os.cpu_count() or 4)) as pool:
        futs = {}
        for v in variants:
            cubin = os.path.join(cubin_dir, f"{v['group']}__{v['entry']['file']}.cubin")
            futs[pool.submit(ptxas_report, ptxas, v["arch"], v["ptx"], cubin)] = v
        for f in concurrent.futures.as_completed(futs):
            futs[f]["ptxas"] = f.result()


def tag(v):
    mac = v["entry"]["macros"]
    tiles = "x".join(mac[x] for x in ("TM", "TN", "TK"))
    return f"{v['group']}[{tiles} w{v['entry']['num_warps']}]"


# ---------------------------------------------------------- correctness

def kind_of(group):
    """seed003 (no masks, 2-D grid), grouped (masks, 1-D grid)."""
    return "grouped" if "grouped" in group else "seed003"


def launch(k, v, a_mem, b_mem, c_mem, m, n, kk, alpha=ALPHA):
    mac = v["entry"]["macros"]
    tm, tn = int(mac["TM"]), int(mac["TN"])
    args = dict(A=a_mem, B=b_mem, C=c_mem, M=m, N=n, K=kk,
                lda=a_mem.stride(0), ldb=b_mem.stride(0), ldc=c_mem.stride(0))
    for p in v["entry"]["params"]:  # the kernel's `__multipleof` promises
        if p.get("multiple_of") and args[p["name"]] % p["multiple_of"]:
            raise ValueError(f"{p['name']}={args[p['name']]} is not a multiple of {p['multiple_of']}")
    if kind_of(v["group"]) == "grouped":
        args["alpha"] = alpha
        k(((m + tm - 1) // tm * ((n + tn - 1) // tn), 1, 1), **args)
    else:
        k((m // tm, n // tn, 1), **args)


def check_one(torch, k, v, m, n, kk, pad):
    """Relative error of one launch against float64, or inf when an element
    (or a padding column that must stay untouched) is wrong."""
    mac = v["entry"]["macros"]
    dt = {"float": torch.float32, "half": torch.float16, "bf16": torch.bfloat16}[mac["TYPE"]]
    ta, tb = mac.get("USE_A") == "^a", mac.get("USE_B") == "^b"
    tk = int(mac["TK"])
    # Stored operands, `pad` extra columns, and room for the seed kernels'
    # one-tile read past K.
    extra = 2 * tk * (max(m, n, kk) + pad) + 64

    def stored(rows, cols):
        flat = torch.randn(rows * (cols + pad) + extra, device="cuda", dtype=torch.float32).to(dt)
        return flat[: rows * (cols + pad)].view(rows, cols + pad)[:, :cols]
    a_mem = stored(kk, m) if ta else stored(m, kk)
    b_mem = stored(n, kk) if tb else stored(kk, n)
    a = a_mem.t() if ta else a_mem
    b = b_mem.t() if tb else b_mem
    c_full = torch.full((m, n + pad), float("nan"), device="cuda", dtype=dt)
    c = c_full[:, :n]
    launch(k, v, a_mem, b_mem, c, m, n, kk)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    if kind_of(v["group"]) == "grouped" and mac.get("LEAKY_RELU", "1") != "0":
        ref = torch.where(ref >= 0, ref, ALPHA * ref)
    out = c.double()
    if torch.isnan(out).any() or (pad and not torch.isnan(c_full[:, n:]).all()):
        return float("inf")
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def check_shapes(v):
    mac = v["entry"]["macros"]
    tm, tn, tk = int(mac["TM"]), int(mac["TN"]), int(mac["TK"])
    if kind_of(v["group"]) == "seed003":
        # No masks: multiples of the tiles; leading dims padded by 8.
        return [(2 * tm, 2 * tn, 4 * tk, 0), (3 * tm, 5 * tn, 11 * tk, 8), (tm, tn, tk, 0)]
    if mac.get("DIV"):
        # M, N, K, lda, ldb, ldc multiples of 16, not of the tiles.
        return [(272, 208, 176, 0), (16, 400, 336, 16), (1040, 1056, 1072, 0)]
    return [(37, 53, 29, 0), (1, 70, 17, 0), (70, 1, 9, 3), (129, 257, 65, 5), (1000, 1000, 1000, 0)]


def correctness(torch, kernels):
    results = []
    for v in kernels:
        if not (v["group"].startswith("check_") or v["group"].startswith("pool_")
                or v["group"].startswith("leaky_")):
            continue
        k = v.get("kernel")
        for (m, n, kk, pad) in check_shapes(v):
            if k is None:
                err, why = float("inf"), v.get("load_error", "not loaded")
            else:
                try:
                    err, why = check_one(torch, k, v, m, n, kk, pad), ""
                except Exception as exc:  # reported, not fatal
                    err, why = float("inf"), f"{type(exc).__name__}: {exc}"
            tol = TOL[v["entry"]["macros"]["TYPE"]]
            ok = err < tol
            results.append({"variant": tag(v), "group": v["group"], "type": v["entry"]["macros"]["TYPE"],
                            "shape": [m, n, kk], "pad": pad, "rel_err": err if err != float("inf") else None,
                            "tol": tol, "ok": ok, "error": why})
            if not ok:
                log(f"FAIL {tag(v)} {m}x{n}x{kk} pad={pad} err={err:.2e} {why}")
    return results


# ---------------------------------------------------------- Triton matmul

def triton_matmul():
    import triton
    import triton.language as tl

    def cfg(bm, bn, bk, stages, warps):
        return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                             num_stages=stages, num_warps=warps)

    @triton.autotune(
        configs=[
            cfg(128, 256, 64, 3, 8),
            cfg(128, 128, 64, 4, 8),
            cfg(128, 128, 32, 4, 4),
            cfg(64, 256, 32, 4, 4),
            cfg(128, 64, 32, 4, 4),
            cfg(64, 128, 64, 4, 4),
            cfg(16, 128, 128, 4, 4),
            cfg(32, 64, 128, 4, 4),
        ],
        key=["M", "N", "K"],
    )
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr):
        # Programs in groups of GROUP_M tile rows (L2 reuse), as seed 004.
        pid = tl.program_id(0)
        grid_m = tl.cdiv(M, BLOCK_M)
        grid_n = tl.cdiv(N, BLOCK_N)
        width = GROUP_M * grid_n
        first_m = (pid // width) * GROUP_M
        group_size = min(grid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % width) % group_size
        pid_n = (pid % width) // group_size
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        # Wrapped rows/columns: in bounds without masks; the store masks them.
        ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
        rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
        pa = a_ptr + ram[:, None] * stride_am + rk[None, :] * stride_ak
        pb = b_ptr + rk[:, None] * stride_bk + rbn[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(pa, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
            b = tl.load(pb, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc)
            pa += BLOCK_K * stride_ak
            pb += BLOCK_K * stride_bk
        pc = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        tl.store(pc, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))

    def run(a, b, c):
        M, K = a.shape
        N = b.shape[1]

        def grid(meta):
            return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
    return run, matmul_kernel


# ---------------------------------------------------------- benchmarks

def valid_for(v, m, n, k):
    mac = v["entry"]["macros"]
    tm, tn, tk = int(mac["TM"]), int(mac["TN"]), int(mac["TK"])
    if kind_of(v["group"]) == "seed003":
        return m % tm == 0 and n % tn == 0 and k % tk == 0
    if mac.get("DIV"):
        return m % 16 == 0 and n % 16 == 0 and k % 16 == 0
    return True


ROUNDS = 3


def leaky_twin(kernels, v):
    """The leaky-ReLU build of grouped pool config `v` (same tiles, warps, stages)."""
    name = v["group"].replace("pool_", "leaky_")
    return next((x for x in kernels if x["group"] == name and x.get("kernel")
                 and all(x["entry"]["macros"][t] == v["entry"]["macros"][t] for t in ("TM", "TN", "TK"))), None)


def summary(ms_list, flops):
    ms_list = sorted(ms_list)
    med = ms_list[len(ms_list) // 2]
    return {"ms": med, "tflops": flops / med / 1e9, "ms_rounds": ms_list,
            "spread": (ms_list[-1] - ms_list[0]) / med}


def bench(torch, kernels, shapes):
    import triton.testing

    def timed(fn, warmup=25, rep=100):
        return triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median")

    tri_run, tri_kernel = triton_matmul()
    pool = [v for v in kernels if v["group"].startswith("pool_") and v.get("kernel")]
    rows = []
    for (m, n, kk) in shapes:
        if time.time() - T0 > BUDGET_S:
            log(f"skipped {m}x{n}x{kk}: past the {BUDGET_S:.0f} s budget")
            rows.append({"shape": [m, n, kk], "skipped": "time budget"})
            continue
        flops = 2.0 * m * n * kk
        a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
        b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
        ref = torch.matmul(a.float(), b.float())
        lref = torch.where(ref >= 0, ref, ALPHA * ref)
        c = torch.empty(m, n, device="cuda", dtype=torch.float16)

        def err_of(out, want=ref):
            return ((out.float() - want).norm() / want.norm()).item()
        row = {"shape": [m, n, kk]}
        # Contenders: name -> (launch, reference).
        contenders = {"torch": (lambda: torch.matmul(a, b, out=c), ref)}
        try:
            c.fill_(float("nan"))
            t_tune = time.time()
            tri_run(a, b, c)  # autotunes on first use of this shape
            torch.cuda.synchronize()
            row["triton_tuning"] = {"seconds": time.time() - t_tune,
                                    "config": str(getattr(tri_kernel, "best_config", None))}
            contenders["triton"] = (lambda: tri_run(a, b, c), ref)
        except Exception as exc:
            row["triton"] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"triton {m}x{n}x{kk}: {exc}")
        # Ours: time every valid pool config (short runs), keep the fastest
        # correct one, and the fastest of seed 004's grouped kernel.
        tried = []
        for v in pool:
            if not valid_for(v, m, n, kk):
                continue
            k = v["kernel"]
            c.fill_(float("nan"))
            try:
                ms = timed(lambda: launch(k, v, a, b, c, m, n, kk), warmup=5, rep=25)
                e = err_of(c)
            except Exception as exc:
                log(f"ours {tag(v)} {m}x{n}x{kk}: {exc}")
                continue
            tried.append({"variant": tag(v), "ms": ms, "tflops": flops / ms / 1e9, "rel_err": e,
                          "ok": e < TOL["half"], "registers": v["ptxas"].get("registers"),
                          "spill_stores": v["ptxas"].get("spill_stores"), "v": v})
        good = sorted((t for t in tried if t["ok"]), key=lambda t: t["ms"])
        picks = {}
        if good:
            picks["ours"] = good[0]["v"]
            grouped = [t for t in good if kind_of(t["v"]["group"]) == "grouped"]
            if grouped:
                picks["ours_grouped"] = grouped[0]["v"]
                twin = leaky_twin(kernels, grouped[0]["v"])
                if twin is not None:
                    picks["ours_grouped_leaky_relu"] = twin
        for name, v in picks.items():
            contenders[name] = ((lambda v=v: launch(v["kernel"], v, a, b, c, m, n, kk)),
                                lref if name.endswith("leaky_relu") else ref)
        # Final timings: ROUNDS interleaved rounds of every contender; median.
        ms_of = {name: [] for name in contenders}
        errs = {}
        for _ in range(ROUNDS):
            for name, (fn, want) in contenders.items():
                c.fill_(float("nan"))
                ms_of[name].append(timed(fn))
                errs[name] = err_of(c, want)
        for name in contenders:
            row[name] = dict(summary(ms_of[name], flops), rel_err=errs[name])
            if name in picks:
                v = picks[name]
                row[name].update({"variant": tag(v), "ptxas": {x: v["ptxas"].get(x) for x in
                                                              ("registers", "spill_stores", "spill_loads",
                                                               "stack_frame")},
                                  "shared_bytes": v["entry"].get("shared_bytes"),
                                  "macros": v["entry"]["macros"], "num_warps": v["entry"]["num_warps"]})
        if "ours" not in row:
            row["ours"] = {"error": "no valid config passed"}
        row["ours_candidates"] = [{x: t[x] for x in t if x != "v"} for t in tried]
        rows.append(row)
        o, t, tr = row.get("ours", {}), row["torch"], row.get("triton", {})
        if "tflops" in o:
            log(f"{m}x{n}x{kk}: torch {t['tflops']:.1f}  triton {tr.get('tflops', float('nan')):.1f}  "
                f"ours {o['tflops']:.1f} TFLOP/s ({o['variant']}) = {o['tflops'] / t['tflops']:.2f}x cuBLAS; "
                f"spreads {t['spread']:.3f} {tr.get('spread', float('nan')):.3f} {o['spread']:.3f}")
    return rows


def fmt(x, digits=1):
    return f"{x:.{digits}f}" if isinstance(x, (int, float)) else "-"


def table(rows):
    lines = ["| shape (MxNxK) | cuBLAS TFLOP/s | Triton 3.6 | ours | ours/cuBLAS | ours/Triton | ours config "
             "| regs | spill bytes | seed 004 grouped | + leaky ReLU |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        m, n, k = r["shape"]
        if "torch" not in r:
            lines.append(f"| {m}x{n}x{k} | skipped | | | | | | | | | |")
            continue
        t, tr, o = r["torch"], r.get("triton", {}), r.get("ours", {})
        g, gl = r.get("ours_grouped", {}), r.get("ours_grouped_leaky_relu", {})
        tri = fmt(tr.get("tflops"))
        if "tflops" in o:
            rt = f"{o['tflops'] / tr['tflops']:.2f}" if "tflops" in tr else "-"
            p = o["ptxas"]
            lines.append(f"| {m}x{n}x{k} | {t['tflops']:.1f} | {tri} | {o['tflops']:.1f} | "
                         f"{o['tflops'] / t['tflops']:.2f} | {rt} | {o['variant']} | {p['registers']} | "
                         f"{p['spill_stores']} | {fmt(g.get('tflops'))} | {fmt(gl.get('tflops'))} |")
        else:
            lines.append(f"| {m}x{n}x{k} | {t['tflops']:.1f} | {tri} | failed | - | - | - | - | - | - | - |")
    return "\n".join(lines)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dry = "--dry" in sys.argv
    root = args[0] if args else HERE
    out_dir = os.environ.get("OUT") or root
    report = {"started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        with open(os.path.join(root, "build.json")) as f:
            report["build"] = json.load(f)
    except OSError:
        pass
    variants = load_variants(root)
    ptxas = find_ptxas()
    report["ptxas"] = ptxas
    if ptxas:
        ver = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
        report["ptxas_version"] = ver[-1] if ver else None
        run_ptxas(variants, ptxas)
    else:
        for v in variants:
            v["ptxas"] = {}
    log(f"{len(variants)} variants, ptxas -v done ({ptxas})")
    report["ptxas_v"] = {tag(v): {x: y for x, y in v["ptxas"].items() if x != "cubin"} for v in variants}

    def save():
        path = os.path.join(out_dir, "matmul_bench.json")
        with open(path, "w") as f:
            json.dump(report, f, indent=1, default=str)
        return path
    if dry:
        for (m, n, k) in BENCH_SHAPES:
            c = [tag(v) for v in variants if v["group"].startswith("pool_") and valid_for(v, m, n, k)]
            print(f"{m}x{n}x{k}: {len(c)} candidates")
        save()
        return 0

    import torch
    from cuda_driver import Kernel

    report["device"] = torch.cuda.get_device_name()
    report["versions"] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import triton

        report["versions"]["triton"] = triton.__version__
    except ImportError:
        pass
    for v in variants:
        cubin = v["ptxas"].get("cubin")
        try:
            v["kernel"] = Kernel(cubin if cubin and os.path.exists(cubin) else v["ptx"], v["entry"])
        except Exception as exc:
            v["load_error"] = f"{type(exc).__name__}: {exc}"
            log(f"load {tag(v)}: {exc}")
    log("kernels loaded")
    checks = correctness(torch, variants)
    report["checks"] = checks
    failed = [c for c in checks if not c["ok"]]
    report["checks_passed"] = len(checks) - len(failed)
    report["checks_total"] = len(checks)
    log(f"correctness: {len(checks) - len(failed)} of {len(checks)} passed")
    by_variant = {}
    for c in checks:
        by_variant.setdefault(c["variant"], []).append(c["ok"])
    for name, oks in sorted(by_variant.items()):
        if name.split("[")[0].startswith("check_"):
            print(f"  {'PASS' if all(oks) else 'FAIL'} {name}: {sum(oks)}/{len(oks)} shapes")
    save()
    rows = bench(torch, variants, BENCH_SHAPES)
    report["bench"] = rows
    report["table"] = table(rows)
    report["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["seconds"] = time.time() - T0
    path = save()
    print()
    print(f"{report['device']}, torch {torch.__version__}, {report['finished_utc']}; "
          f"checks {report['checks_passed']}/{report['checks_total']}")
    print(report["table"])
    print(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
