# Call 1 (13:58 UTC): the landed dot, dot_nt, dot_tn (grad1: dot_grad_bench's bundle of
# ../2026-12-07f-h100-grad-split, --no-build for sm_90a; out/gradlib: main's bridge, strip -g, xz).
export PYTHONUNBUFFERED=1
mkdir -p out/lib && xz -dc out/gradlib/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; date -u
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 540 python3 scripts/gpu/small_shape_probe.py out/grad1.tar.xz $OUT/probe 1000x776x1528 1024x1024x1024 > $OUT/probe.log 2>&1; echo "rc=$?"; date -u
# Call 2 (15:00 UTC): run2.sh. Call 3 (15:04 UTC, same warm machine):
# TRITON_OPGEN_CACHE=/tmp/c1/a.json ROUNDS=3 python3 scripts/gpu/dot_pinned_ab.py out/grad1 4096x4096x4096 \
#   --configs "TM=128 TN=256 ALIGN=8 KX=1 SPLIT_K=1 TMA=0 num_warps=8 num_stages=3;...TMA=0 ... num_stages=8;...TMA=4 ... num_stages=3;...TMA=1 ... num_stages=8"
