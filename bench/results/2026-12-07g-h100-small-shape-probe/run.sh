export PYTHONUNBUFFERED=1
SHAPES=${SHAPES:-1000x776x1528 1024x1024x1024}
mkdir -p out/lib && xz -dc out/gradlib/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 540 python3 scripts/gpu/small_shape_probe.py out/grad1.tar.xz $OUT/probe $SHAPES > $OUT/probe.log 2>&1; echo "rc=$?"; date -u
tail -20 $OUT/probe.log
