set -u
timeout 300 python3 scripts/gpu/jax_pad_check.py out/jpad.tar.xz $OUT/jax > $OUT/jax_pad.log 2>&1; echo "jax_pad_check rc=$?"; grep -E "FAIL|done:" $OUT/jax_pad.log | tail -3
cat > /tmp/jax_tma4.py <<'P'
import os, sys
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, "out/jpad/dot")
import jax, jax.numpy as jnp, numpy as np
import triton_dot_jax as t
bad = 0
for cfg in ["TM=128 TN=192 ALIGN=8 SPLIT_K=1 TMA=4 num_warps=8 num_stages=8", "TM=64 TN=128 ALIGN=8 SPLIT_K=1 TMA=4 num_warps=4 num_stages=8", None]:
    t.pin_config(cfg)
    for (m, n, k) in [(3000, 3000, 3000), (1000, 1000, 1000), (300, 256, 1000)]:
        for dt in (jnp.float16, jnp.bfloat16):
            ka, kb = jax.random.split(jax.random.PRNGKey(m + k))
            a = jax.random.normal(ka, (m, k), jnp.float32).astype(dt)
            b = jax.random.normal(kb, (k, n), jnp.float32).astype(dt)
            want = np.asarray(a, np.float32) @ np.asarray(b, np.float32)
            got = np.asarray(jax.jit(t.dot)(a, b), np.float32)
            err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
            ok = err < (3e-3 if dt == jnp.float16 else 2e-2)
            bad += not ok
            print(f"{'ok' if ok else 'FAIL'} {cfg or 'autotuned: ' + str(t.last_config())} {m}x{n}x{k} {jnp.dtype(dt).name} rel err {err:.2e}", flush=True)
print("failed", bad); sys.exit(1 if bad else 0)
P
timeout 200 python3 /tmp/jax_tma4.py 2>&1 | grep -v "^WARNING\|^I0000\|^E0000" | tail -20; echo "jax tma4 rc=${PIPESTATUS[0]}"
