"""The matmul suite's report: ratios, their geomean and minimum, the picked
configs' ptxas -v spills, and the markdown table (scripts/gpu/matmul_suite.py
measures; this file only reads its rows, so it runs without a GPU)."""

import json
import math
import os
import re

from matmul_bench import fmt, ptxas_report

# The targets (issue 11, point 6).
TARGET_GEOMEAN = 1.0
TARGET_MIN = 0.85


def ratio(row, over):
    """ours TFLOP/s over contender `over`'s, or None when either is missing."""
    ours, other = row.get("ours", {}).get("tflops"), row.get(over, {}).get("tflops")
    if not ours or not other:
        return None
    return ours / other


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(rows):
    """Geomean and minimum of ours/cuBLAS and ours/Triton over the rows
    measured, the cases under the target, and spills of the picked configs."""
    out = {"cases": len(rows), "measured": 0}
    for over in ("cublas", "triton"):
        pairs = [(ratio(r, over), r) for r in rows]
        pairs = [(x, r) for x, r in pairs if x is not None]
        out["measured"] = max(out["measured"], len(pairs))
        if not pairs:
            continue
        low, low_row = min(pairs, key=lambda p: p[0])
        out[over] = {"geomean": geomean([x for x, _ in pairs]), "min": low, "min_case": case_name(low_row),
                     "below_target": [case_name(r) for x, r in pairs if x < TARGET_MIN]}
    spilled = [case_name(r) for r in rows if (r.get("ours", {}).get("ptxas") or {}).get("spill_bytes")]
    out["spilled"] = spilled
    out["failed"] = [case_name(r) for r in rows for k in ("ours", "cublas", "triton")
                     if r.get(k, {}).get("ok") is False]
    c = out.get("cublas", {})
    out["targets_met"] = bool(c) and c["geomean"] >= TARGET_GEOMEAN and c["min"] >= TARGET_MIN \
        and not spilled and not out["failed"]
    return out


def case_name(row):
    m, n, k = row["shape"]
    return f"{m}x{n}x{k} {row['dtype']}"


def ptx_target(ptx_path):
    """The `.target` of a PTX file (sm_90a, ...)."""
    with open(ptx_path) as f:
        for line in f:
            m = re.match(r"\s*\.target\s+(\w+)", line)
            if m:
                return m.group(1)
    return "sm_90a"


def ptxas_spills(ptxas, ptx_path):
    """Registers and spill bytes of the one kernel in `ptx_path` (ptxas -v)."""
    got = ptxas_report(ptxas, ptx_target(ptx_path), ptx_path, os.devnull)
    if "error" in got:
        return got
    stores, loads = got["spill_stores"], got["spill_loads"]
    return {"arch": ptx_target(ptx_path), "registers": got["registers"], "spill_stores": stores,
            "spill_loads": loads, "spill_bytes": (stores or 0) + (loads or 0)}


def variant_ptx(op_dir, config, dtypes):
    """The PTX file of the op's variant `config` for dtype group `dtypes`."""
    with open(os.path.join(op_dir, "variants.json")) as f:
        for entry in json.load(f):
            if entry["config"] == config and entry["dtypes"] == dtypes:
                return os.path.join(op_dir, entry["file"])
    return None


def table(rows):
    lines = ["| # | shape (MxNxK) | dtype | cuBLAS TFLOP/s | Triton 3.6 | ours | ours/cuBLAS | ours/Triton "
             "| ours config (regs, spill bytes) | first call s | Triton config |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(rows, 1):
        m, n, k = r["shape"]
        o, c, t = r.get("ours", {}), r.get("cublas", {}), r.get("triton", {})
        p = o.get("ptxas") or {}
        picked = f"{o.get('config', '-')} ({p.get('registers', '-')}, {p.get('spill_bytes', '-')})"
        if o.get("ok") is False:
            picked = f"WRONG: {o.get('error', 'rel err ' + fmt(o.get('rel_err'), 5))}"
        lines.append(f"| {i} | {m}x{n}x{k} | {r['dtype']} | {fmt(c.get('tflops'))} | {fmt(t.get('tflops'))} | "
                     f"{fmt(o.get('tflops'))} | {fmt(ratio(r, 'cublas'), 2)} | {fmt(ratio(r, 'triton'), 2)} | "
                     f"{picked} | {fmt(o.get('first_call_s'), 2)} | {t.get('config', '-')} |")
    return "\n".join(lines)


def summary_lines(s):
    lines = [f"cases: {s['cases']}, measured: {s['measured']}"]
    for over, label in (("cublas", "cuBLAS"), ("triton", "Triton")):
        if over in s:
            x = s[over]
            lines.append(f"ours/{label}: geomean {x['geomean']:.3f}, min {x['min']:.3f} ({x['min_case']}), "
                         f"below {TARGET_MIN}: {len(x['below_target'])}")
    lines.append(f"picked configs that spill: {', '.join(s['spilled']) or 'none'}")
    lines.append(f"wrong results: {', '.join(s['failed']) or 'none'}")
    lines.append(f"targets (geomean >= {TARGET_GEOMEAN} x cuBLAS, none below {TARGET_MIN}, no spills): "
                 f"{'met' if s['targets_met'] else 'not met'}")
    return lines


def markdown(rows, meta):
    s = summarize(rows)
    head = [f"# triton::dot vs cuBLAS vs Triton: {meta.get('device', '?')}", "",
            f"`{meta.get('command', '')}` ({meta.get('when', '')}; torch {meta.get('torch', '?')}, "
            f"Triton {meta.get('triton', '?')}). TFLOP/s = 2MNK / median time (CUDA events, "
            "L2 flushed, interleaved rounds); ours is `torch.ops.triton.dot(a, b)` as users call it, "
            "autotuned in this process (`first call s` includes that tuning).", ""]
    return "\n".join(head + [f"- {x}" for x in summary_lines(s)] + ["", table(rows), ""])
