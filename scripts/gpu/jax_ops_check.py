#!/usr/bin/env python3
"""Checks the triton-opgen JAX ops on a GPU machine (jax[cuda], torch, g++).

    bash scripts/gpu/jax_ops_prepare.sh        # on the Rust machine: out/jax.tar.xz
    bash scripts/gpu/jax_ops_run.sh            # on the GPU machine: builds, then this

Usage: jax_ops_check.py ROOT RESULTS, where ROOT/jax/<op> and ROOT/torch/<op>
are the built folders of the bundled ops. Checks, for every bundled op:
values against jax.numpy (fp32/fp16/bf16 where the op has it, odd shapes),
under jax.jit with several shapes, under jax.vmap; jax.grad of dot against
jnp.dot and of add; the errors (trace-time ValueError/TypeError naming the
argument, the handler's INVALID_ARGUMENT when ffi_call is called directly,
the "no compiled config" error of softmax on a too-long row); and times the
op against the jnp equivalent and the torch op on the same kernels in one
process. Writes RESULTS/jax_ops_check.json and RESULTS/jax_ops_check.md;
exit status 1 if a check failed.
"""

import json
import os
import platform
import sys
import time
import traceback

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

ROOT, RESULTS = sys.argv[1], sys.argv[2]
OPS = ["add", "softmax", "transpose", "dot", "dot_nt", "dot_tn"]
sys.path[:0] = [os.path.join(ROOT, "jax", op) for op in OPS] + [os.path.join(ROOT, "torch", op) for op in OPS]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

mods = {op: __import__(f"triton_{op}_jax") for op in OPS}
results = {"checks": [], "errors": [], "perf": [], "env": {}}


def record(section, name, ok, detail=""):
    results[section].append({"name": name, "ok": bool(ok), "detail": str(detail)})
    print(f"[{'ok' if ok else 'FAIL'}] {section}: {name}: {str(detail)[:300]}", flush=True)


def check(name, fn):
    try:
        record("checks", name, True, fn() or "")
    except Exception as e:  # noqa: BLE001 - every failure is a result
        record("checks", name, False, f"{type(e).__name__}: {e}\n{traceback.format_exc()[-1200:]}")


def expect_error(name, fn, error_types, needles):
    try:
        out = fn()
        jax.block_until_ready(out)
    except error_types as e:
        text = str(e)
        missing = [n for n in needles if n not in text]
        first = text.strip().splitlines()[0] if text.strip() else text
        record("errors", name, not missing, first if not missing else f"missing {missing} in: {text[:400]}")
        return
    except Exception as e:  # noqa: BLE001
        record("errors", name, False, f"{type(e).__name__} instead of {error_types}: {e}")
        return
    record("errors", name, False, "nothing raised")


TOL = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}
DOT_TOL = {"float32": 2e-2, "float16": 1e-2, "bfloat16": 3e-2}  # fp32 dot runs on tf32 tensor cores


def rand(key, shape, dtype):
    return jax.random.normal(jax.random.PRNGKey(key), shape, jnp.float32).astype(dtype)


def close(got, want, tol, scale_by_max=False):
    got = np.asarray(jnp.asarray(got, jnp.float32))
    want = np.asarray(jnp.asarray(want, jnp.float32))
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    scale = float(np.max(np.abs(want))) if (scale_by_max and want.size) else 1.0
    assert err <= tol * max(scale, 1.0), f"max error {err:.3g} > {tol} (scale {scale:.3g})"
    return f"max error {err:.2e}"


def on_gpu(x):
    devs = x.devices()
    assert all(d.platform == "gpu" for d in devs), f"result on {devs}"


# ---- values against jax.numpy, eager and under jit ----
REFS = {
    "add": lambda x, y: x + y,
    "softmax": lambda x: jax.nn.softmax(x.astype(jnp.float32), axis=-1),
    "transpose": lambda x: x.T,
    "dot": lambda a, b: jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32), precision="highest"),
    "dot_nt": lambda a, b: jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32).T, precision="highest"),
    "dot_tn": lambda a, b: jnp.dot(a.astype(jnp.float32).T, b.astype(jnp.float32), precision="highest"),
}
CASES = {
    "add": [((1,), (1,)), ((1000,), (1000,)), (((1 << 20) + 3,),) * 2],
    "softmax": [((1, 1),), ((7, 1000),), ((513, 4096),), ((3, 33),), ((2, 40003),)],
    "transpose": [((1, 1),), ((67, 131),), ((1024, 2048),)],
    "dot": [((1, 1), (1, 1)), ((3, 5), (5, 7)), ((1000, 777), (777, 1531)), ((512, 1024), (1024, 256)), ((16, 4096), (4096, 4096))],
    "dot_nt": [((3, 5), (7, 5)), ((300, 257), (129, 257)), ((512, 512), (256, 512))],
    "dot_tn": [((5, 3), (5, 7)), ((257, 300), (257, 129)), ((512, 512), (512, 256))],
}
DTYPES = {op: ["float32", "float16"] for op in OPS}
for op in ("dot", "dot_nt", "dot_tn"):
    DTYPES[op] = ["float32", "float16", "bfloat16"]

for op in OPS:
    fn = getattr(mods[op], op)
    jitted = jax.jit(fn)
    for dtype in DTYPES[op]:
        for shapes in CASES[op]:
            args = [rand(i + 1, s, dtype) for i, s in enumerate(shapes)]
            tol = (DOT_TOL if op.startswith("dot") else TOL)[dtype]
            want = REFS[op](*args)
            label = f"{op} {dtype} {' x '.join(str(list(s)) for s in shapes)}"

            def run(fn=fn, args=args, want=want, tol=tol, op=op, dtype=dtype):
                eager = fn(*args)
                on_gpu(eager)
                assert eager.dtype == jnp.dtype(dtype), f"dtype {eager.dtype}"
                text = close(eager, want, tol, scale_by_max=op.startswith("dot"))
                close(jitted(*args), want, tol, scale_by_max=op.startswith("dot"))
                return text + "; jit same"

            check(label, run)


# ---- jit with changing shapes, vmap, grad ----
def jit_shapes():
    f = jax.jit(lambda a, b: mods["dot"].dot(a, b) * 2.0 + 1.0)
    seen = []
    for m, k, n in [(64, 64, 64), (100, 37, 250), (1024, 1024, 512)]:
        a, b = rand(1, (m, k), jnp.float16), rand(2, (k, n), jnp.float16)
        close(f(a, b), REFS["dot"](a, b) * 2 + 1, 2e-2, scale_by_max=True)
        seen.append(f"{m}x{k}x{n}")
    return "one jitted function (dot inside a fused expression), shapes " + ", ".join(seen)


def vmap_ops():
    xs, ys = rand(1, (5, 1000), jnp.float32), rand(2, (5, 1000), jnp.float32)
    close(jax.vmap(mods["add"].add)(xs, ys), xs + ys, 1e-6)
    a, b = rand(3, (4, 64, 96), jnp.float16), rand(4, (4, 96, 32), jnp.float16)
    close(jax.jit(jax.vmap(mods["dot"].dot))(a, b), jnp.einsum("bmk,bkn->bmn", a.astype(jnp.float32), b.astype(jnp.float32)), 1e-2, True)
    x = rand(5, (3, 8, 300), jnp.float32)
    close(jax.vmap(mods["softmax"].softmax)(x), jax.nn.softmax(x, axis=-1), 1e-5)
    return "add, dot (under jit), softmax over a leading batch axis (sequential)"


def grad_dot():
    out = []
    for dtype, (m, k, n) in [("float32", (300, 257, 129)), ("float16", (512, 256, 384)), ("bfloat16", (64, 128, 96))]:
        a, b = rand(1, (m, k), dtype), rand(2, (k, n), dtype)
        w = rand(3, (m, n), jnp.float32)
        loss = lambda f: (lambda a, b: jnp.sum(f(a, b).astype(jnp.float32) * w))
        ours = jax.grad(loss(mods["dot"].dot), argnums=(0, 1))(a, b)
        ref = jax.grad(loss(lambda a, b: jnp.dot(a, b, precision="highest")), argnums=(0, 1))(a, b)
        for g, r, name in zip(ours, ref, "ab"):
            assert g.dtype == jnp.dtype(dtype), f"d{name} dtype {g.dtype}"
            close(g, r, DOT_TOL[dtype], scale_by_max=True)
        jit_ours = jax.jit(jax.grad(loss(mods["dot"].dot), argnums=(0, 1)))(a, b)
        close(jit_ours[0], ref[0], DOT_TOL[dtype], scale_by_max=True)
        out.append(f"{dtype} {m}x{k}x{n}")
    return "jax.grad of dot (dot_nt/dot_tn) vs jnp.dot, eager and jit: " + ", ".join(out)


def grad_add():
    x, y = rand(1, (1000,), jnp.float32), rand(2, (1000,), jnp.float32)
    gx, gy = jax.grad(lambda x, y: jnp.sum(mods["add"].add(x, y) ** 2), argnums=(0, 1))(x, y)
    close(gx, 2 * (x + y), 1e-5)
    close(gy, 2 * (x + y), 1e-5)
    return "d/dx, d/dy of sum((x+y)^2)"


def no_grad_softmax():
    try:
        jax.grad(lambda x: jnp.sum(mods["softmax"].softmax(x)))(rand(1, (4, 8), jnp.float32))
    except TypeError as e:
        assert "has no gradient" in str(e), str(e)
        return str(e)
    raise AssertionError("no error")


def autotune_cache():
    d = mods["dot"]
    a, b = rand(1, (1536, 1536), jnp.float16), rand(2, (1536, 1536), jnp.float16)
    before = d.benchmark_calls()
    jax.block_until_ready(d.dot(a, b))
    first = d.benchmark_calls() - before
    jax.block_until_ready(d.dot(a, b))
    second = d.benchmark_calls() - before - first
    assert second == 0, f"second call benchmarked {second}"
    return f"1536^3 fp16: first call benchmarked {first} configs, second 0; picked {d.last_config()}"


def shared_cache():
    """A choice the torch op tuned, saved in $TRITON_OPGEN_CACHE, is the JAX
    op's too: same op, kernels, dtype group and device model."""
    import subprocess
    import tempfile

    cache = os.path.join(tempfile.mkdtemp(), "autotune.json")
    env = dict(os.environ, TRITON_OPGEN_CACHE=cache)
    torch_code = (
        f"import sys, torch; sys.path.insert(0, {os.path.join(ROOT, 'torch', 'dot')!r}); import triton_dot as m; op = m.load(); "
        "a = torch.randn(2304, 2304, device='cuda', dtype=torch.float16); op(a, a); torch.cuda.synchronize(); print(m.benchmark_calls())"
    )
    jax_code = (
        f"import sys, jax, jax.numpy as jnp; sys.path.insert(0, {os.path.join(ROOT, 'jax', 'dot')!r}); import triton_dot_jax as m; "
        "a = jnp.ones((2304, 2304), jnp.float16); m.dot(a, a).block_until_ready(); print(m.benchmark_calls(), m.last_config())"
    )
    ran = []
    for code in (torch_code, jax_code):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-800:]
        ran.append(out.stdout.strip().splitlines()[-1])
    torch_calls, jax_line = int(ran[0]), ran[1]
    assert torch_calls > 0 and jax_line.startswith("0 "), f"torch benchmarked {torch_calls}, jax: {jax_line}"
    return f"2304^3 fp16: the torch op benchmarked {torch_calls} configs and saved; a JAX process then benchmarked 0 and ran {jax_line[2:]}"


check("autotune: cache shared with the torch op", shared_cache)
check("jit: one function, changing shapes", jit_shapes)
check("vmap", vmap_ops)
check("grad: dot", grad_dot)
check("grad: add", grad_add)
check("grad: softmax has none", no_grad_softmax)
check("autotune: shape bucket cached", autotune_cache)

# ---- errors ----
x32 = rand(1, (8,), jnp.float32)
expect_error("add: dims differ", lambda: mods["add"].add(x32, rand(2, (9,), jnp.float32)), ValueError,
             ["triton::add: dimension N of argument `y` (axis 0) is 9 but argument `x` has N = 8"])
expect_error("add: dtypes differ", lambda: mods["add"].add(x32, x32.astype(jnp.float16)), TypeError,
             ["argument `y` has dtype float16 but `x` has float32 (both are T)"])
expect_error("add: unsupported dtype", lambda: mods["add"].add(x32.astype(jnp.int32), x32.astype(jnp.int32)), TypeError,
             ["unsupported dtype int32 of argument `x`; supported: T=float32; T=float16"])
expect_error("dot: rank", lambda: mods["dot"].dot(x32, x32), ValueError,
             ["argument `a` must have 2 dimension(s) [M, K], got shape [8]"])
expect_error("dot: under jit", lambda: jax.jit(mods["dot"].dot)(rand(1, (4, 5), jnp.float16), rand(2, (6, 7), jnp.float16)), ValueError,
             ["dimension K of argument `b` (axis 0) is 6 but argument `a` has K = 5"])
expect_error("handler: dims (ffi_call direct)",
             lambda: jax.ffi.ffi_call("triton_add", jax.ShapeDtypeStruct((8,), jnp.float32))(x32, rand(2, (9,), jnp.float32)),
             Exception, ["INVALID_ARGUMENT", "argument `y` (axis 0) is 9"])
expect_error("handler: result shape (ffi_call direct)",
             lambda: jax.ffi.ffi_call("triton_add", jax.ShapeDtypeStruct((4,), jnp.float32))(x32, x32),
             Exception, ["INVALID_ARGUMENT", "result `z` was declared with shape [4]", "the op makes [8]"])



# ---- timings: ours (JAX), jnp, the torch op on the same kernels; one process ----
def wall_us(fn, args, iters):
    """Mean time per call of a stream of `iters` async calls, ended by one sync."""
    out = fn(*args)
    jax.block_until_ready(out)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(iters):
            out = fn(*args)
        jax.block_until_ready(out)
        best = min(best, (time.perf_counter() - t) / iters * 1e6)
    return best


def torch_us(fn, args, iters):
    fn(*args)
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(iters):
            fn(*args)
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t) / iters * 1e6)
    return best


torch_ops = {}
for op in OPS:
    torch_mod = __import__(f"triton_{op}")
    torch_ops[op] = torch_mod.load()

PERF = [
    ("dot", "float16", [(4096, 4096), (4096, 4096)], lambda a, b: a @ b, 20),
    ("dot", "bfloat16", [(4096, 4096), (4096, 4096)], lambda a, b: a @ b, 20),
    ("dot", "float16", [(1000, 777), (777, 1531)], lambda a, b: a @ b, 50),
    ("dot", "float16", [(16, 4096), (4096, 4096)], lambda a, b: a @ b, 100),
    ("dot", "float32", [(2048, 2048), (2048, 2048)], lambda a, b: a @ b, 20),
    ("dot_nt", "float16", [(2048, 2048), (2048, 2048)], lambda a, b: a @ b.T, 20),
    ("dot_tn", "float16", [(2048, 2048), (2048, 2048)], lambda a, b: a.T @ b, 20),
    ("softmax", "float16", [(4096, 1024)], lambda x: jax.nn.softmax(x, axis=-1), 100),
    ("softmax", "float32", [(4096, 4096)], lambda x: jax.nn.softmax(x, axis=-1), 50),
    ("add", "float32", [(1 << 24,), (1 << 24,)], lambda x, y: x + y, 100),
    ("transpose", "float32", [(4096, 4096)], lambda x: x.T, 50),
]
# What a call costs with nothing to do: JAX's and torch's dispatch floors,
# which small ops (16 x 4096 x 4096, softmax over 4096 x 1024) sit on.
tiny = jnp.ones((1,), jnp.float32)
results["dispatch_floor_us"] = {
    "jax_jit": round(wall_us(jax.jit(lambda x: x + 1), [tiny], 200), 2),
    "torch": round(torch_us(lambda x: x + 1, [torch.ones(1, device="cuda")], 200), 2),
}
print(f"[perf] dispatch floor: {results['dispatch_floor_us']}", flush=True)
TORCH_DTYPE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
for op, dtype, shapes, ref, iters in PERF:
    label = f"{op} {dtype} {' x '.join(str(list(s)) for s in shapes)}"
    try:
        args = [rand(i + 1, s, dtype) for i, s in enumerate(shapes)]
        ours = jax.jit(getattr(mods[op], op))
        jnp_fn = jax.jit(ref)
        t_ours = wall_us(ours, args, iters)
        config = mods[op].last_config()
        t_jnp = wall_us(jnp_fn, args, iters)
        targs = [torch.randn(*s, device="cuda").to(TORCH_DTYPE[dtype]) for s in shapes]
        t_torch = torch_us(torch_ops[op], targs, iters)
        t_ours2 = wall_us(ours, args, iters)  # again, after the others: min of both
        t_ours = min(t_ours, t_ours2)
        entry = {"op": op, "dtype": dtype, "shapes": shapes, "jax_op_us": round(t_ours, 2), "jnp_us": round(t_jnp, 2),
                 "torch_op_us": round(t_torch, 2), "jnp_over_ours": round(t_jnp / t_ours, 3),
                 "torch_op_over_ours": round(t_torch / t_ours, 3), "config": config}
        if op.startswith("dot"):
            m, k = shapes[0] if op != "dot_tn" else shapes[0][::-1]
            n = shapes[1][1] if op != "dot_nt" else shapes[1][0]
            entry["jax_op_tflops"] = round(2 * m * n * k / t_ours / 1e6, 1)
        results["perf"].append(entry)
        print(f"[perf] {label}: ours {t_ours:.1f} us, jnp {t_jnp:.1f} us ({t_jnp / t_ours:.2f}x), torch op {t_torch:.1f} us ({t_torch / t_ours:.2f}x); {config}", flush=True)
    except Exception as e:  # noqa: BLE001
        record("checks", f"perf {label}", False, f"{type(e).__name__}: {e}")

results["env"] = {
    "device": jax.devices()[0].device_kind,
    "jax": jax.__version__,
    "jaxlib": __import__("jaxlib").__version__,
    "torch": torch.__version__,
    "python": platform.python_version(),
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
}
failed = [c for s in ("checks", "errors") for c in results[s] if not c["ok"]]
passed = sum(c["ok"] for s in ("checks", "errors") for c in results[s])
os.makedirs(RESULTS, exist_ok=True)
with open(os.path.join(RESULTS, "jax_ops_check.json"), "w") as f:
    json.dump(results, f, indent=1)
lines = [f"# JAX ops on {results['env']['device']} ({results['env']['date']})", "",
         f"jax {results['env']['jax']}, jaxlib {results['env']['jaxlib']}, torch {results['env']['torch']}.",
         f"Checks: {passed} passed, {len(failed)} failed.", "",
         "| op | dtype | shapes | JAX op (us) | jnp (us) | torch op (us) | jnp / ours | torch op / ours | config |",
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for p in results["perf"]:
    lines.append(f"| {p['op']} | {p['dtype']} | {' x '.join(str(list(s)) for s in p['shapes'])} | {p['jax_op_us']} | {p['jnp_us']} | "
                 f"{p['torch_op_us']} | {p['jnp_over_ours']} | {p['torch_op_over_ours']} | {p['config']} |")
floor = results.get("dispatch_floor_us", {})
lines += ["", "Times: mean per call over a stream of async calls ended by one sync, best of 3; ratios > 1 mean ours is faster.",
          f"Dispatch floor (a jitted `x + 1` on one element; torch's `x + 1`): JAX {floor.get('jax_jit')} us, torch {floor.get('torch')} us:",
          "calls near the floor measure the framework's dispatch, not the kernel.", ""]
for s in ("checks", "errors"):
    lines += [f"## {s}", ""] + [f"- {'ok' if c['ok'] else 'FAIL'}: {c['name']}: {c['detail'].splitlines()[0] if c['detail'] else ''}" for c in results[s]] + [""]
with open(os.path.join(RESULTS, "jax_ops_check.md"), "w") as f:
    f.write("\n".join(lines))
print(f"done: {passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
