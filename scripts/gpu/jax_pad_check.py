#!/usr/bin/env python3
"""The JAX op's side of the spec's `pad` line and of empty inputs, on the GPU:
triton::dot generated for JAX (`pad N, K to 8 if` 2e9 multiply-adds or more,
M and N at least 192).

    here:  triton-opgen tests/ops/dot.tc --framework jax --arch sm_90a --no-build -o out/jpad/dot
           tar cJf out/jpad.tar.xz -C out jpad
    there: python3 scripts/gpu/jax_pad_check.py out/jpad.tar.xz RESULTS

Values (odd shapes past the condition, eagerly and under jax.jit; a small odd
shape; an empty K, whose output must be zeros) against an fp32 matmul, then
2049^3 and 3001^3 under jax.jit against jnp.matmul (XLA's cuBLAS call): median
of 20 timed calls after warm-up, each synchronized. Writes
RESULTS/jax_pad_check.json; exit 1 if a check failed.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

from op_bundle import Results, unpack_and_build  # noqa: E402

TOL = {"float16": 3e-3, "bfloat16": 2e-2}


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np

    unpack_and_build(sys.argv[1], "jpad", ["dot"])
    import triton_dot_jax

    dot = triton_dot_jax.dot
    jdot = jax.jit(dot)
    r = Results()
    key = jax.random.PRNGKey(0)
    for dt in (jnp.float16, jnp.bfloat16):
        name = jnp.dtype(dt).name
        for (m, n, k), fn, how in [((1537, 1537, 1531), dot, "eager"), ((2049, 2049, 2049), jdot, "jit"),
                                   ((1100, 4097, 1000), jdot, "jit"), ((100, 77, 153), dot, "eager")]:
            ka, kb = jax.random.split(jax.random.fold_in(key, m + n + k))
            a = jax.random.normal(ka, (m, k), jnp.float32).astype(dt)
            b = jax.random.normal(kb, (k, n), jnp.float32).astype(dt)
            want = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
            got = np.asarray(fn(a, b), np.float32)
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            r.record(f"jax dot {m}x{n}x{k} {name} {how}", got.shape == want.shape and err < TOL[name], f"rel err {err:.2e}")
        got = np.asarray(dot(jnp.ones((1200, 0), dt), jnp.ones((0, 1001), dt)), np.float32)
        r.record(f"jax dot 1200x1001x0 {name}", got.shape == (1200, 1001) and not got.any(), f"max |c| {np.abs(got).max()}")
    for dt in (jnp.float16, jnp.bfloat16):
        for m, n, k in [(2049, 2049, 2049), (3001, 3001, 3001)]:
            a = jnp.ones((m, k), dt)
            b = jnp.ones((k, n), dt)
            fns = {"ours": jdot, "xla": jax.jit(jnp.matmul)}
            med = {}
            for label, fn in fns.items():
                fn(a, b).block_until_ready()
                times = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    fn(a, b).block_until_ready()
                    times.append(time.perf_counter() - t0)
                med[label] = sorted(times)[10] * 1e6
            r.perf({"shape": [m, n, k], "dtype": jnp.dtype(dt).name, "ours_us": round(med["ours"], 1),
                    "xla_us": round(med["xla"], 1), "ours_over_xla": round(med["xla"] / med["ours"], 3),
                    "config": triton_dot_jax.last_config() if hasattr(triton_dot_jax, "last_config") else ""})
    r.finish(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OUT", "out/jax-pad"), "jax_pad_check.json",
             {"device": str(jax.devices()[0]), "jax": jax.__version__})


if __name__ == "__main__":
    main()
