"""Runs every compiled variant of one bundled op on the boundary shapes of its
tiles, for compute-sanitizer (issue 15 item 4; scripts/gpu/sanitize_variants.sh
runs this under memcheck, racecheck, synccheck and initcheck).

Each config is pinned in turn (the module's pin_config) and run per dtype on
shapes at the edges of its tile: 1, tile - 1, tile + 1 and an odd size (for
ALIGN = 8 variants the multiples of 8 next to those, the only sizes they
accept); every result is compared with torch. A shape a variant does not
accept (a `require` line) is counted, not an error.

Usage: sanitize_variants.py OPS_DIR OP (or `canary`, see canary())
OPS_DIR holds the built torch op folders (OPS_DIR/<op>/triton_<op>.py).
$SANITIZE_CONFIGS (a regular expression) keeps only the configs it matches
(e.g. `SPLIT_K=4`); the others are neither run nor expected to run.
Prints a line per mismatch and one JSON summary line (`summary: {...}`);
exits 1 on a mismatch or an unexpected error.
"""
import importlib
import json
import math
import os
import re
import sys

import torch
import torch.nn.functional as F

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def config_of(text):
    """'TM=64 TN=32 ALIGN=8 num_warps=4' -> {'TM': 64, ...}."""
    return {k: int(v) for k, v in (item.split("=") for item in text.split())}


def edges(tile, align=1, large=None):
    """Sizes at the edges of `tile`: 1, tile - 1, tile + 1 and an odd size past
    two tiles; with `align`, the multiples of `align` next to those."""
    if align == 1:
        sizes = [1, tile - 1, tile + 1, large or (2 * tile + 37) | 1]
    else:
        sizes = [align, tile - align, tile + align, large or 2 * tile + 3 * align]
    return [s for s in dict.fromkeys(sizes) if s > 0]


def rand(*shape, dtype):
    return to_gpu(torch.randn(*shape, dtype=dtype))


def to_gpu(t):
    """Inputs are made on the host and copied, and references computed on the
    host from copies back (`host`): initcheck sees a copy's bytes as written,
    but not the writes of torch's own kernels, which the kernel filter leaves
    uninstrumented (reading their results back would be flagged)."""
    return t.to("cuda")


def host(t):
    """A GPU tensor's values on the host, as float32."""
    return t.cpu().float()


def zip_shapes(*axes):
    """Shapes pairing the i-th size of each axis list, plus a rotated pairing
    (so a 1 meets a tile + 1 on the other axis too)."""
    n = max(len(a) for a in axes)
    out = []
    for shift in (0, 1):
        for i in range(n):
            out.append(tuple(a[(i + shift * j) % len(a)] for j, a in enumerate(axes)))
    return list(dict.fromkeys(out))


# ---- the ops: shapes per config, and (outputs, references) per shape ----

def add_shapes(c, dtype):
    return [(n,) for n in edges(c["SIZE"])]


def add_run(op, shape, dtype):
    x, y = rand(*shape, dtype=dtype), rand(*shape, dtype=dtype)
    return [(op(x, y), host(x) + host(y))]


def dot_tk(dtype):
    return 8 if dtype == torch.float32 else 64


def dot_shapes(c, dtype):
    a = c.get("ALIGN", 1)
    ms = edges(c["TM"])
    ns = edges(c["TN"], a)
    if c.get("SPLIT_K", 1) > 1:
        # Split-K variants take a deep K only (dot.tc: K >= 3072); the
        # programs of a cluster then get unequal numbers of K steps.
        ks = [3072, 3072 + a, 3072 + 5 * dot_tk(dtype) + a]
    else:
        ks = edges(dot_tk(dtype), a, large=8 * dot_tk(dtype) * 2 + (a if a > 1 else 7))
    return zip_shapes(ms, ns, ks)


def dot_run(op, shape, dtype):
    m, n, k = shape
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    return [(op(a, b), host(a) @ host(b))]


def dot_nt_shapes(c, dtype):
    # ALIGN = 8: K (the contiguous size of both operands) a multiple of 8.
    a = c.get("ALIGN", 1)
    ks = edges(dot_tk(dtype), a, large=257 if a == 1 else 256 + a)
    return zip_shapes(edges(c["TM"]), edges(c["TN"]), ks)


def dot_tn_shapes(c, dtype):
    # ALIGN = 8: M and N (the operands' contiguous sizes) multiples of 8.
    a = c.get("ALIGN", 1)
    return zip_shapes(edges(c["TM"], a), edges(c["TN"], a), edges(dot_tk(dtype), large=257))


def dot_nt_run(op, shape, dtype):
    m, n, k = shape
    a, b = rand(m, k, dtype=dtype), rand(n, k, dtype=dtype)
    return [(op(a, b), host(a) @ host(b).t())]


def dot_tn_run(op, shape, dtype):
    m, n, k = shape
    a, b = rand(k, m, dtype=dtype), rand(k, n, dtype=dtype)
    return [(op(a, b), host(a).t() @ host(b))]


def transpose_shapes(c, dtype):
    return zip_shapes(edges(c["TN"]), edges(c["TM"]))


def transpose_run(op, shape, dtype):
    x = rand(*shape, dtype=dtype)
    return [(op(x), host(x).t())]


def rows_shapes(c, dtype):
    """Row-wise ops (softmax, cross entropy, layer norm): N at the edges of
    TN, M = 1, an odd count and more rows than the persistent grid has programs."""
    a = c.get("ALIGN", 1)
    return zip_shapes([1, 77, 1001], edges(c["TN"], a))


def softmax_run(op, shape, dtype):
    x = rand(*shape, dtype=dtype)
    return [(op(x), torch.softmax(host(x), -1))]


def cross_entropy_run(op, shape, dtype):
    m, n = shape
    x = rand(m, n, dtype=dtype)
    t = to_gpu(torch.randint(0, n, (m,)))
    return [(op(x, t), F.cross_entropy(host(x), t.cpu(), reduction="none"))]


def cross_entropy_dx_run(op, shape, dtype):
    m, n = shape
    x = rand(m, n, dtype=dtype)
    t = to_gpu(torch.randint(0, n, (m,)))
    dloss = to_gpu(torch.rand(m))
    ref = (torch.softmax(host(x), -1) - F.one_hot(t.cpu(), n).float()) * host(dloss)[:, None]
    return [(op(dloss, x, t), ref)]


def ln_stats(x):
    """Mean and 1/std of x's rows, on the host."""
    xf = host(x)
    return xf.mean(-1), torch.rsqrt(xf.var(-1, unbiased=False) + 1e-5)


def layer_norm_run(op, shape, dtype):
    m, n = shape
    x, w, b = rand(m, n, dtype=dtype), rand(n, dtype=dtype), rand(n, dtype=dtype)
    y, mean, rstd = op(x, w, b, eps=1e-5)
    ref_mean, ref_rstd = ln_stats(x)
    ref_y = F.layer_norm(host(x), (n,), host(w), host(b), 1e-5)
    return [(y, ref_y), (mean, ref_mean), (rstd, ref_rstd)]


def layer_norm_dx_run(op, shape, dtype):
    m, n = shape
    dy, x, w = rand(m, n, dtype=dtype), rand(m, n, dtype=dtype), rand(n, dtype=dtype)
    mean, rstd = ln_stats(x)
    xhat = (host(x) - mean[:, None]) * rstd[:, None]
    wdy = host(w) * host(dy)
    ref = rstd[:, None] * (wdy - xhat * (wdy * xhat).mean(-1, keepdim=True) - wdy.mean(-1, keepdim=True))
    return [(op(dy, x, w, to_gpu(mean), to_gpu(rstd)), ref)]


def columns_shapes(c, dtype):
    return zip_shapes(edges(c["TM"]), edges(c["TN"]))


def col_sum_run(op, shape, dtype):
    x = rand(*shape, dtype=dtype)
    return [(op(x), host(x).sum(0))]


def layer_norm_dw_run(op, shape, dtype):
    m, n = shape
    dy, x = rand(m, n, dtype=dtype), rand(m, n, dtype=dtype)
    mean, rstd = ln_stats(x)
    ref = (host(dy) * (host(x) - mean[:, None]) * rstd[:, None]).sum(0)
    return [(op(dy, x, to_gpu(mean), to_gpu(rstd)), ref)]


def attention_shapes(c, dtype):
    return [(s, c["HEAD"]) for s in edges(c["TM"]) + [c["TN"] - 1, c["TN"] + 1]]


def attention_run(op, shape, dtype):
    s, hd = shape
    q, k, v = (rand(1, 2, s, hd, dtype=dtype) for _ in range(3))
    scale = 1.0 / math.sqrt(hd)
    out = []
    for causal in (False, True):
        ref = F.scaled_dot_product_attention(host(q), host(k), host(v), is_causal=causal, scale=scale)
        out.append((op(q, k, v, scale=scale, causal=causal), ref))
    return out


OPS = {
    "add": (add_shapes, add_run),
    "dot": (dot_shapes, dot_run),
    "dot_nt": (dot_nt_shapes, dot_nt_run),
    "dot_tn": (dot_tn_shapes, dot_tn_run),
    "transpose": (transpose_shapes, transpose_run),
    "softmax": (rows_shapes, softmax_run),
    "cross_entropy": (rows_shapes, cross_entropy_run),
    "cross_entropy_dx": (rows_shapes, cross_entropy_dx_run),
    "layer_norm": (rows_shapes, layer_norm_run),
    "layer_norm_dx": (rows_shapes, layer_norm_dx_run),
    "col_sum": (columns_shapes, col_sum_run),
    "layer_norm_dw": (columns_shapes, layer_norm_dw_run),
    "attention": (attention_shapes, attention_run),
}


def close(got, ref, dtype):
    got, ref = host(got), ref.float()
    if got.shape != ref.shape:
        return False, f"shape {tuple(got.shape)} vs {tuple(ref.shape)}"
    if got.numel() == 0:
        return True, ""
    err = ((got - ref).abs().max() / (ref.abs().max() + 1e-3)).item()
    tol = 2e-2 if dtype != torch.float32 else 1e-2
    return err <= tol and not math.isnan(err), f"relative error {err:.2e}"


def canary(ops_dir):
    """The positive control: add on inputs never written (torch.empty, each
    its own cudaMalloc without the caching allocator), which initcheck must
    report in the `add` kernel, showing that its kernel filter reaches our
    kernels."""
    sys.path.insert(0, os.path.join(ops_dir, "add"))
    import triton_add

    add = triton_add.load()
    x, y = (torch.empty(4096, device="cuda") for _ in range(2))
    add(x, y)
    torch.cuda.synchronize()
    print("summary: " + json.dumps({"op": "canary", "launches": 1}), flush=True)


def main():
    ops_dir, name = sys.argv[1], sys.argv[2]
    if name == "canary":
        return canary(ops_dir)
    sys.path.insert(0, os.path.join(ops_dir, name))
    module = importlib.import_module(f"triton_{name}")
    op = module.load()
    shapes_of, run = OPS[name]
    torch.manual_seed(0)
    torch.set_num_threads(2)  # a dozen of these run at once, references on the host
    counts = {"configs": 0, "launches": 0, "not_accepted": 0, "mismatches": 0, "errors": 0}
    ran = set()  # (config, "T=<dtype>") of every variant that ran at least once
    keep = re.compile(os.environ.get("SANITIZE_CONFIGS", ""))
    for config in filter(keep.search, module.configs()):
        counts["configs"] += 1
        module.pin_config(config)
        c = config_of(config)
        for dtype_name, dtype in DTYPES.items():  # one the op lacks: "unsupported dtype", counted
            for shape in shapes_of(c, dtype):
                try:
                    pairs = run(op, shape, dtype)
                    torch.cuda.synchronize()
                except RuntimeError as e:
                    text = str(e)
                    # The pinned variant's `require` lines, none of the op's, or its dtypes.
                    refusals = ("does not accept these inputs", "no compiled config accepts", "unsupported dtype")
                    if any(r in text for r in refusals):
                        counts["not_accepted"] += 1
                        continue
                    counts["errors"] += 1
                    print(f"ERROR {name} [{config}] {dtype} {shape}: {text.splitlines()[0]}", flush=True)
                    continue
                counts["launches"] += 1
                ran.add((config, f"T={dtype_name}"))
                for i, (got, ref) in enumerate(pairs):
                    good, why = close(got, ref, dtype)
                    if not good:
                        counts["mismatches"] += 1
                        print(f"MISMATCH {name} [{config}] {dtype} {shape} output {i}: {why}", flush=True)
    module.pin_config(None)
    # Every compiled variant must have met a shape it accepts.
    with open(os.path.join(ops_dir, name, "variants.json")) as f:
        compiled = {(v["config"], v["dtypes"]) for v in json.load(f) if keep.search(v["config"])}
    for config, dtypes in sorted(compiled - ran):
        print(f"NOT RUN {name} [{config}] {dtypes}: no shape here is one it accepts", flush=True)
    counts["variants"], counts["variants_run"] = len(compiled), len(compiled & ran)
    print("summary: " + json.dumps({"op": name, **counts}), flush=True)
    sys.exit(1 if counts["mismatches"] or counts["errors"] or compiled - ran else 0)


if __name__ == "__main__":
    main()
