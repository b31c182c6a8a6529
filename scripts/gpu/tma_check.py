#!/usr/bin/env python3
"""TMA copies on the GPU through the generated `triton::dot` torch op.

    python3 scripts/gpu/tma_check.py out/torch [--out DIR] [--all] [--variants REGEX] [--op dot_tn]

Every variant whose manifest entry has `tensor_maps` (its pipelined loop
copies tiles with the tensor memory accelerator) is pinned in turn and run
on shapes its `require` lines admit: odd M, N and K off the tiles (TMA's
zero fill past the tensor's bounds), K below one tile, views with a row
stride longer than the row and a base one row in. Each result is checked
against torch.matmul in float32. Then inputs TMA cannot take (a view whose
base is 8 bytes off 16) must still run, on a variant without TMA.
Without --all, one variant per (TM, TN, warps, split, TMA) and dtype is pinned
(TMA=2: `b` multicast to a cluster's pair, whose grid must be even). With
--variants REGEX, the variants whose config matches it instead, TMA or not
(e.g. `"TN=(96|160) "` for new tile widths). With --op dot_tn (or dot_nt)
the gradient op of that folder instead: `a` given [K, M] (`b` [N, K]), its
transpose the product's operand.
Writes tma_check.json (and prints the failures and a summary).
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SHAPES = [(3000, 3000, 3000), (1000, 1000, 1000), (129, 264, 72), (37, 136, 9000),
          (1, 8, 3080), (257, 520, 4104), (8, 8, 8), (200, 64, 24), (3008, 3008, 3008),
          # 3 x 2 tiles of 128: with GROUP_M = 8 programs 2 and 3 of a
          # multicast pair have other columns of b (each copies its own).
          (300, 256, 1000)]


def views(torch, m, n, k, dtype, op_name="dot"):
    """(name, a, b): dense, then rows longer than the data, then a base one
    row in; for dot_tn `a` is [K, M], for dot_nt `b` is [N, K]."""
    a_shape = (k, m) if op_name == "dot_tn" else (m, k)
    b_shape = (n, k) if op_name == "dot_nt" else (k, n)
    a = torch.randn(*a_shape, device="cuda", dtype=dtype)
    b = torch.randn(*b_shape, device="cuda", dtype=dtype)
    yield "dense", a, b
    (ar, ac), (br, bc) = a_shape, b_shape
    wide_a = torch.randn(ar, ac + 24, device="cuda", dtype=dtype)[:, 8:8 + ac]
    wide_b = torch.randn(br + 1, bc + 40, device="cuda", dtype=dtype)[1:, 16:16 + bc]
    yield "strided", wide_a, wide_b


def operands(a, b, op_name):
    """The product's operands in float32: `a @ b` of the op's inputs."""
    a, b = a.float(), b.float()
    return (a.t() if op_name == "dot_tn" else a), (b.t() if op_name == "dot_nt" else b)


def main():
    import torch
    from matmul_suite import load_op

    args = sys.argv[1:]
    out = os.environ.get("OUT", "out")
    if "--out" in args:
        i = args.index("--out")
        out = args[i + 1]
        del args[i:i + 2]
    pattern = None
    if "--variants" in args:
        i = args.index("--variants")
        pattern = args[i + 1]
        del args[i:i + 2]
    op_name = "dot"
    if "--op" in args:
        i = args.index("--op")
        op_name = args[i + 1]
        del args[i:i + 2]
    every = "--all" in args
    args = [a for a in args if a != "--all"]
    ops_dir = args[0] if args else "out/torch"
    module, op = load_op(ops_dir, op_name)
    with open(os.path.join(ops_dir, op_name, "variants.json")) as f:
        variants = json.load(f)
    if pattern is not None:
        import re
        tma = [v for v in variants if re.search(pattern, v["config"])]
    else:
        tma = [v for v in variants if v.get("tensor_maps")]
    picked, seen = [], set()
    for v in tma:
        mac = v["macros"]
        key = (mac["TM"], mac["TN"], v["num_warps"], mac.get("SPLIT_K"), mac.get("TMA"), v["dtypes"])
        if every or key not in seen:
            seen.add(key)
            picked.append(v)
    dtypes = {"T=float16": torch.float16, "T=bfloat16": torch.bfloat16, "T=float32": torch.float32}
    results, wrong = [], []
    for v in picked:
        dtype = dtypes.get(v["dtypes"])
        if dtype is None:
            continue
        module.pin_config(v["config"])
        for (m, n, k) in SHAPES:
            for name, a, b in views(torch, m, n, k, dtype, op_name):
                try:
                    got = op(a, b)
                except RuntimeError as e:
                    # Not admitted by this variant's requires: fine.
                    results.append({"config": v["config"], "dtype": v["dtypes"],
                                    "shape": [m, n, k], "view": name, "skipped": str(e)[:120]})
                    continue
                torch.cuda.synchronize()
                lhs, rhs = operands(a, b, op_name)
                ref = lhs @ rhs
                err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
                # fp32 dots run on TF32 tensor cores (10-bit mantissa, like bf16's 7 or better).
                tol = 2e-2 if dtype in (torch.bfloat16, torch.float32) else 4e-3
                row = {"config": v["config"], "dtype": v["dtypes"], "shape": [m, n, k],
                       "view": name, "max_rel_err": err, "ok": err <= tol}
                results.append(row)
                if not row["ok"]:
                    wrong.append(row)
                    print("WRONG", row, flush=True)
    module.pin_config(None)
    # A base 8 bytes off 16: no TMA variant admits it; the op still runs.
    misaligned = []
    for dtype in (torch.float16, torch.bfloat16):
        big = torch.randn(1024 * 1024 + 8, device="cuda", dtype=dtype)
        a = big[4:4 + 512 * 512].view(512, 512)
        b = torch.randn(512, 512, device="cuda", dtype=dtype)
        try:
            got = op(a, b)
            torch.cuda.synchronize()
            lhs, rhs = operands(a, b, op_name)
            ref = lhs @ rhs
            err = ((got.float() - ref).abs() / (1 + ref.abs())).max().item()
            misaligned.append({"dtype": str(dtype), "max_rel_err": err,
                               "config": module.last_config(), "ok": err < 2e-2})
        except RuntimeError as e:
            misaligned.append({"dtype": str(dtype), "error": str(e)[:300], "ok": False})
    ran = [r for r in results if "ok" in r]
    summary = {
        "device": torch.cuda.get_device_name(),
        "tma_variants": len(tma),
        "pinned_variants": len(picked),
        "checks": len(ran),
        "wrong": len(wrong),
        "skipped": len(results) - len(ran),
        "misaligned_base": misaligned,
    }
    print(json.dumps(summary, indent=1))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tma_check.json"), "w") as f:
        json.dump({"summary": summary, "results": results}, f, indent=1)
    return 1 if wrong or not all(x["ok"] for x in misaligned) else 0


if __name__ == "__main__":
    sys.exit(main())
