# Not run yet (no device time left on 2026-12-07). Carry out/base.tar.xz (dot.tc, --no-build, bridge copy removed)
# and out/bridgex/libopgen_bridge.a.xz (the bridge of 94d5215 or later).
# --tuned end to end on one GPU: warm a cache with the op, embed that cache in the op's
# kernels.cpp the way `triton-opgen --tuned` does (its text as a C string), rebuild, check.
export PYTHONUNBUFFERED=1
cd out && tar xJf base.tar.xz && cd ..
mkdir -p out/lib && xz -dc out/bridgex/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader
(cd out/base/dot && bash build.sh > build.log 2>&1; echo "base build rc=$?")
mkdir -p /tmp/warm; TRITON_OPGEN_CACHE=/tmp/warm/autotune.json python3 bench/results/2026-12-07d-h100-suite/next_tuned_check/warm.py out/base/dot
cp /tmp/warm/autotune.json $OUT/warm.json
mkdir -p out/tuned && cp -r out/base/dot out/tuned/dot && rm -f out/tuned/dot/*.so
python3 - <<'PY'
import json
p = "out/tuned/dot/kernels.cpp"
s = open(p).read()
old = 'extern "C" const char triton_dot_tuned[] = "";'
assert s.count(old) == 1
s = s.replace(old, 'extern "C" const char triton_dot_tuned[] = ' + json.dumps(open("/tmp/warm/autotune.json").read()) + ';')
open(p, "w").write(s)
print("embedded the warmed cache")
PY
(cd out/tuned/dot && bash build.sh > build.log 2>&1; echo "tuned build rc=$?")
python3 bench/results/2026-12-07d-h100-suite/next_tuned_check/tuned_check.py out/tuned/dot 2>&1 | tee $OUT/tuned_check.log
