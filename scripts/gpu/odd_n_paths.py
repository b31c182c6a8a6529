#!/usr/bin/env python3
"""Odd N (an LLM head over a vocabulary like 50257 or 32001): what each way
of running `torch.ops.triton.dot` costs, against cuBLAS, in one process.

    python3 scripts/gpu/odd_n_paths.py FOLDER [--out DIR] [--shapes MxNxK ...]

FOLDER holds the built (or buildable) `dot` op folder. For each shape and
dtype: `cublas` (torch.matmul), `ours` (the op as users call it: its spec's
`pad` line decides), `pad_each_call` (both operands zero-padded to multiples
of 8 by torch on every call, the op on the copies, the output cut back: what
the op's pad path does) and `pad_b_once` (b padded once beforehand, as a
user would for a weight; a padded along K only where K is odd),
`pad_strips_each_call` (the padded copies written once, zeros in the pad
strips only), with --unpadded FOLDER, `unpadded` (an op built from
dot.tc without its pad line, named `dot_nopad`), and with --padded FOLDER,
`padded` (an op whose pad line's condition always holds, named
`dot_padall`). With --back-to-back, each path is also timed over calls in
a row without an L2 flush between them (host_overhead.gpu_us: CUDA events
around the run, so the host's time to issue a call shows where it exceeds
the GPU's). Every result
is checked against an fp32 torch.matmul. Writes odd_n_paths.json and .md.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from host_overhead import gpu_us  # noqa: E402
from matmul_suite import check, first_call, interleaved_ms, load_op  # noqa: E402

SHAPES = [(m, n, 4096) for n in (50257, 32001) for m in (1, 16, 128, 512, 1024, 4096)]


NAMES = ["ours", "unpadded", "padded", "pad_each_call", "pad_strips_each_call", "pad_b_once"]


def parse_shape(text):
    m, n, k = (int(x) for x in text.lower().split("x"))
    return m, n, k


def round_up(n, multiple=8):
    return (n + multiple - 1) // multiple * multiple


def run_shape(torch, dot, last_config, m, n, k, dtype, unpadded=None, padded=None, back_to_back=False):
    import torch.nn.functional as F

    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt)
    b = torch.randn(k, n, device="cuda", dtype=dt)
    ref = torch.matmul(a.float(), b.float())
    kp, np_ = round_up(k), round_up(n)
    b_once = F.pad(b, (0, np_ - n, 0, kp - k)).contiguous()

    def pad_each_call():
        ap = F.pad(a, (0, kp - k)).contiguous() if kp != k else a
        bp = F.pad(b, (0, np_ - n, 0, kp - k)).contiguous()
        return dot(ap, bp)[:, :n]

    def pad_strips_each_call():
        # The padded copy written once: zeros in the pad strips only.
        bp = b.new_empty((kp, np_))
        bp[:k, :n].copy_(b)
        bp[:k, n:].zero_()
        bp[k:, :].zero_()
        ap = a
        if kp != k:
            ap = a.new_empty((m, kp))
            ap[:, :k].copy_(a)
            ap[:, k:].zero_()
        return dot(ap, bp)[:, :n]

    def pad_b_once():
        ap = F.pad(a, (0, kp - k)).contiguous() if kp != k else a
        return dot(ap, b_once)[:, :n]

    contenders = {
        "cublas": lambda: torch.matmul(a, b),
        "ours": lambda: dot(a, b),
        "pad_each_call": pad_each_call,
        "pad_strips_each_call": pad_strips_each_call,
        "pad_b_once": pad_b_once,
    }
    if unpadded is not None:
        contenders["unpadded"] = lambda: unpadded(a, b)
    if padded is not None:
        contenders["padded"] = lambda: padded(a, b)
    row = {"shape": [m, n, k], "dtype": dtype}
    timed = {}
    for name, fn in contenders.items():
        try:
            out, seconds = first_call(torch, fn)
            row[name] = dict(check(torch, out, ref, dtype), first_call_s=seconds)
            if name != "cublas" and last_config is not None:
                row[name]["config"] = last_config()
            if row[name]["ok"]:
                timed[name] = fn
        except Exception as e:  # noqa: BLE001 - a failure is a result
            row[name] = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    flops = 2.0 * m * n * k
    for name, (ms, rounds) in interleaved_ms(timed).items():
        row[name].update(ms=ms, tflops=flops / ms / 1e9, ms_rounds=rounds)
    if back_to_back:
        for name, fn in timed.items():
            row[name]["back_to_back_ms"] = gpu_us(fn) / 1e3
    return row


def table(rows):
    names = [n for n in NAMES if n in rows[0]]
    lines = ["| shape (MxNxK) | dtype | cuBLAS µs | " + " | ".join(f"{n} µs (x cuBLAS)" for n in names) + " |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in names) + " |"]
    for r in rows:
        cb = r["cublas"].get("ms")
        cells = []
        for n in names:
            ms = r[n].get("ms")
            if ms is None or cb is None:
                cells.append("wrong" if not r[n].get("ok", False) else "-")
            else:
                cell = f"{ms * 1e3:.1f} ({cb / ms:.2f})"
                if "back_to_back_ms" in r[n]:
                    cell += f"; in a row {r[n]['back_to_back_ms'] * 1e3:.1f}"
                cells.append(cell)
        cbs = f"{cb * 1e3:.1f}" if cb else "-"
        if cb and "back_to_back_ms" in r["cublas"]:
            cbs += f"; in a row {r['cublas']['back_to_back_ms'] * 1e3:.1f}"
        lines.append(f"| {'x'.join(map(str, r['shape']))} | {r['dtype']} | {cbs} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ops_dir")
    parser.add_argument("--out", default=os.environ.get("OUT") or "out/odd-n-results")
    parser.add_argument("--shapes", nargs="*", type=parse_shape, default=SHAPES)
    parser.add_argument("--dtypes", nargs="*", default=["float16"])
    parser.add_argument("--unpadded", help="folder holding `dot_nopad`: dot.tc without its pad line")
    parser.add_argument("--padded", help="folder holding `dot_padall`: dot.tc padding whatever the size")
    parser.add_argument("--back-to-back", action="store_true", help="also time 20 calls in a row")
    args = parser.parse_args()
    import torch

    module, dot = load_op(args.ops_dir)
    last_config = getattr(module, "last_config", None)
    unpadded = load_op(args.unpadded, "dot_nopad")[1] if args.unpadded else None
    padded = load_op(args.padded, "dot_padall")[1] if args.padded else None
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for dtype in args.dtypes:
        for m, n, k in args.shapes:
            row = run_shape(torch, dot, last_config, m, n, k, dtype, unpadded, padded, args.back_to_back)
            rows.append(row)
            print(table([row]).splitlines()[-1], flush=True)
            with open(os.path.join(args.out, "odd_n_paths.json"), "w") as f:
                json.dump(rows, f, indent=1)
    md = table(rows)
    with open(os.path.join(args.out, "odd_n_paths.md"), "w") as f:
        f.write(md)
    print(md)
    return 0 if all(r[n].get("ok") for r in rows for n in NAMES if n in r) else 1


if __name__ == "__main__":
    sys.exit(main())
