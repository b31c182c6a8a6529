export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf base.tar.xz && cd ..
xz -dc out/bridgex/libopgen_bridge.a.xz > out/torch/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader
unset TRITON_OPGEN_CACHE; rm -rf ~/.cache/triton-opgen/autotune.json
for d in out/torch/dot out/base/dot ; do (cd $d && bash build.sh > build.log 2>&1; echo "$d build rc=$?") & done
wait; date
# The suite first (a fresh cache of its own), then the shared-cache check.
timeout 400 python3 scripts/gpu/matmul_suite.py out/base --budget 330 --out $OUT/suite > /tmp/suite.log 2>&1; echo "suite rc=$?"
tail -12 /tmp/suite.log; cp /tmp/suite.log $OUT/suite/
date
SH="128x4097x4096 1000x777x1531 1025x1025x1025"
timeout 40 python3 scripts/gpu/odd_n_paths.py out/torch --out /tmp/runs_odd --shapes $SH > /tmp/runs_odd.log 2>&1
timeout 40 python3 scripts/gpu/odd_n_paths.py out/base --out /tmp/base_odd --shapes $SH > /tmp/base_odd.log 2>&1
TRITON_OPGEN_CACHE=/tmp/fresh.json timeout 40 python3 scripts/gpu/odd_n_paths.py out/base --out /tmp/base_fresh --shapes $SH > /tmp/base_fresh.log 2>&1
mkdir -p $OUT/cache; cp ~/.cache/triton-opgen/autotune.json $OUT/cache/shared_autotune.json
python3 - <<'PY' | tee $OUT/cache/picks.txt
import json, os
for f in ["runs_odd", "base_odd", "base_fresh"]:
    try:
        rows = json.load(open(f"/tmp/{f}/odd_n_paths.json"))
    except Exception as e:
        print(f, "no result", e); continue
    for r in rows:
        o = r["ours"]
        print(f, "x".join(map(str, r["shape"])), "cublas %.1f ours %.1f" % (r["cublas"]["ms"]*1e3, o["ms"]*1e3), o["config"], "ok" if o["ok"] else "WRONG")
d = json.load(open(os.path.expanduser("~/.cache/triton-opgen/autotune.json")))
print("shared cache format", d["format_version"], len(d["entries"]), "entries")
PY
date
