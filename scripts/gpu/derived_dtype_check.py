#!/usr/bin/env python3
"""Checks an op with a derived dtype (examples/row_center.tc: `dtype S from
T`; y = x - mean(x) + shift per row, mean a second output of dtype S)
through its torch op and its JAX function on the GPU.

    # here: the --no-build folders, packed
    for fw in torch jax; do target/release/triton-opgen examples/row_center.tc --framework $fw \\
        --arch sm_90a --no-build -o out/rc/$fw; done; tar -C out -cJf out/rc.tar.xz rc
    # on the GPU machine
    python3 scripts/gpu/derived_dtype_check.py out/rc.tar.xz RESULTS

For x in float16, float32 and float64: mean's dtype (float32, float32,
float64) and the values against torch / jax.numpy in float64, under
torch.compile and jax.jit too; an S input (`shift`) that disagrees with x is
the framework's error naming both. Writes RESULTS/derived_dtype_check.json;
exit 1 on a failure.
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
from op_bundle import Checks, unpack_and_build  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
unpack_and_build(bundle, "rc", ["torch", "jax"])

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

jax.config.update("jax_enable_x64", True)
import examples_row_center as torch_mod  # noqa: E402
import examples_row_center_jax as jax_mod  # noqa: E402

op = torch_mod.load()
checks = Checks()
check, expect = checks.check, checks.expect
STATS = {"float16": "float32", "float32": "float32", "float64": "float64"}
TOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}


def reference(x, shift):
    x64 = np.asarray(x, dtype=np.float64)
    mean = x64.mean(-1)
    return x64 - mean[:, None] + np.asarray(shift, dtype=np.float64)[:, None], mean


def compare(dtype, y, mean, x, shift, stats_dtype):
    want_y, want_mean = reference(x, shift)
    assert str(mean.dtype).split(".")[-1] == stats_dtype, f"mean is {mean.dtype}, want {stats_dtype}"
    err = max(float(np.max(np.abs(np.asarray(mean, dtype=np.float64) - want_mean))),
              float(np.max(np.abs(np.asarray(y, dtype=np.float64) - want_y))))
    assert err <= TOL[dtype], f"max error {err:.1e}"
    return f"mean {stats_dtype}, y {dtype}, max error {err:.1e}"


for dtype, (m, n) in [(d, s) for d in STATS for s in ((1, 1), (37, 300), (5, 1024))]:
    stats = STATS[dtype]
    xt = torch.randn(m, n, device="cuda", dtype=torch.float64).to(getattr(torch, dtype))
    st = torch.randn(m, device="cuda", dtype=torch.float64).to(getattr(torch, stats))
    x_np, s_np = xt.cpu().double().numpy().astype(dtype), st.cpu().double().numpy().astype(stats)

    def torch_run(xt=xt, st=st, x_np=x_np, s_np=s_np, dtype=dtype, stats=stats):
        y, mean = op(xt, st)
        return compare(dtype, y.cpu().double().numpy(), mean.cpu(), x_np, s_np, stats)

    def jax_run(x_np=x_np, s_np=s_np, dtype=dtype, stats=stats):
        y, mean = jax.jit(jax_mod.row_center)(jnp.asarray(x_np), jnp.asarray(s_np))
        return compare(dtype, np.asarray(y, dtype=np.float64), mean, x_np, s_np, stats)

    check(f"torch {dtype} {m}x{n}", torch_run)
    check(f"jax {dtype} {m}x{n}", jax_run)


def compiled():
    x = torch.randn(9, 77, device="cuda", dtype=torch.float64)
    s = torch.randn(9, device="cuda", dtype=torch.float64)
    y, mean = torch.compile(lambda a, b: op(a, b), fullgraph=True)(x, s)
    return compare("float64", y.cpu().numpy(), mean.cpu(), x.cpu().numpy(), s.cpu().numpy(), "float64")


check("torch.compile float64", compiled)
x64, x16 = torch.ones(4, 8, device="cuda", dtype=torch.float64), torch.ones(4, 8, device="cuda", dtype=torch.float16)
expect("torch: float32 shift for float64 x", lambda: op(x64, torch.ones(4, device="cuda")), RuntimeError,
       "argument `shift` has dtype Float but must be Double where `x` is Double (S follows T)")
expect("torch: float16 shift for float16 x", lambda: op(x16, torch.ones(4, device="cuda", dtype=torch.float16)), RuntimeError,
       "argument `shift` has dtype Half but must be Float where `x` is Half (S follows T)")
expect("jax: float32 shift for float64 x", lambda: jax_mod.row_center(jnp.ones((4, 8), jnp.float64), jnp.ones(4, jnp.float32)),
       TypeError, "argument `shift` has dtype float32 but must be float64 where `x` is float64 (S follows T)")
checks.finish(results_dir, "derived_dtype_check.json", {"device": torch.cuda.get_device_name(), "jax": jax.__version__, "torch": torch.__version__})
