#!/usr/bin/env python3
"""Checks an op with scalar attributes (examples/scale_shift.tc: y = alpha x +
beta, then relu if set) through its torch op and its JAX function on the GPU.

    # here: the --no-build folders, packed
    for fw in torch jax; do target/release/triton-opgen examples/scale_shift.tc --framework $fw \\
        --arch sm_90a --no-build -o out/attrs/$fw; done; tar -C out -cJf out/attrs.tar.xz attrs
    # on the GPU machine
    python3 scripts/gpu/attrs_check.py out/attrs.tar.xz RESULTS

Builds both folders, checks values against torch / jax.numpy for the
defaults and given attributes (fp32, fp16, odd lengths, under torch.compile
and jax.jit with static attributes), the framework's errors for a wrong or
missing attribute, and writes RESULTS/attrs_check.json. Exit 1 on a failure.
"""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
from op_bundle import Checks, unpack_and_build  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
unpack_and_build(bundle, "attrs", ["torch", "jax"])

import functools  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

import examples_scale_shift as torch_mod  # noqa: E402
import examples_scale_shift_jax as jax_mod  # noqa: E402

op = torch_mod.load()
checks = Checks()
check, expect = checks.check, checks.expect


CASES = [({}, "defaults"), ({"alpha": 2.5, "beta": -1.0}, "alpha, beta"), ({"alpha": -3.0, "beta": 0.5, "relu": True}, "relu")]


def reference(x, alpha=1.0, beta=0.0, relu=False):
    y = alpha * x.float() + beta
    return torch.clamp(y, min=0) if relu else y


for dtype, tol in ((torch.float32, 1e-6), (torch.float16, 2e-3)):
    for n in (1, 1000, 1 << 20 | 7):
        for kw, label in CASES:
            def torch_case(kw=kw, n=n, dtype=dtype, tol=tol):
                x = torch.randn(n, device="cuda", dtype=dtype)
                y = op(x, **kw)
                err = (y.float() - reference(x, **kw)).abs().max().item()
                assert y.dtype == dtype and err <= tol * 8, f"error {err}"
                return f"max error {err:.2e}"

            def jax_case(kw=kw, n=n, dtype=dtype, tol=tol):
                x = torch.randn(n, dtype=dtype)
                xj = jnp.asarray(x.float().numpy()).astype(jnp.float16 if dtype == torch.float16 else jnp.float32)
                y = jax.jit(functools.partial(jax_mod.scale_shift, **kw))(xj)
                want = reference(torch.from_numpy(jnp.asarray(xj, jnp.float32).__array__()), **kw)
                err = float(jnp.max(jnp.abs(jnp.asarray(y, jnp.float32) - jnp.asarray(want.numpy()))))
                assert err <= tol * 8, f"error {err}"
                return f"max error {err:.2e}"

            name = f"{str(dtype).split('.')[-1]} N={n} {label}"
            check(f"torch: {name}", torch_case)
            check(f"jax: {name}", jax_case)


def compiled():
    f = torch.compile(lambda x: op(x, alpha=0.5, beta=2.0, relu=True), fullgraph=True)
    x = torch.randn(4096, device="cuda")
    err = (f(x) - reference(x, 0.5, 2.0, True)).abs().max().item()
    assert err <= 1e-6, err
    return f"torch.compile(fullgraph=True): max error {err:.2e}"


def jax_grad_is_not_there():
    x = jnp.ones((8,))
    try:
        jax.grad(lambda v: jnp.sum(jax_mod.scale_shift(v, alpha=2.0)))(x)
    except TypeError as e:
        assert "has no gradient" in str(e)
        return str(e)
    raise AssertionError("no error")


check("torch.compile", compiled)
check("jax: grad without a backward line", jax_grad_is_not_there)
x = torch.ones(8, device="cuda")
expect("torch: wrong attribute type", lambda: op(x, alpha="a"), Exception, "alpha")
expect("torch: bool attribute given a string", lambda: op(x, relu="yes"), Exception, "relu")
expect("jax: wrong attribute type", lambda: jax_mod.scale_shift(jnp.ones(8), alpha="a"), TypeError, "attribute `alpha` must be a Python float")
expect("jax: traced attribute under jit", lambda: jax.jit(jax_mod.scale_shift)(jnp.ones(8), 2.0), TypeError, "static argument")
checks.finish(results_dir, "attrs_check.json", {"device": torch.cuda.get_device_name(), "jax": jax.__version__, "torch": torch.__version__})
