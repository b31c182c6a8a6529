# small_shape_probe.py on the landed dot/dot_nt/dot_tn (grad1: tests/ops specs at 08c1bbf's compiler)
# and on dot with TN = [64, 112], ALIGN = [8] (tn112: tests/ops/dot.tc with those two tune lines
# replaced, triton-opgen --framework torch --arch sm_90a --no-build), both --no-build for sm_90a.
export PYTHONUNBUFFERED=1
mkdir -p out/lib && xz -dc out/gradlib/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u
mkdir -p /tmp/c1 /tmp/c2
TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 170 python3 scripts/gpu/small_shape_probe.py out/grad1.tar.xz $OUT/large --ops dot,dot_nt 4096x4096x4096 > $OUT/large.log 2>&1; echo "large rc=$?"; date -u
TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 100 python3 scripts/gpu/small_shape_probe.py out/tn112.tar.xz $OUT/tn112 --ops dot 1000x776x1528 2000x776x1528 > $OUT/tn112.log 2>&1; echo "tn112 rc=$?"; date -u
