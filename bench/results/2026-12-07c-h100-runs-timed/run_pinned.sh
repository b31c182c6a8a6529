export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf base.tar.xz && cd ..
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
for d in out/torch/dot out/base/dot ; do (cd $d && bash build.sh > build.log 2>&1; echo "$d build rc=$?") & done
wait; date
SH="16x4097x4096 128x4097x4096 1025x1025x1025 1000x777x1531 1201x1201x1201 128x32001x4096"
for b in base torch; do ROUNDS=3 TRITON_OPGEN_CACHE=/tmp/cache_$b.json timeout 250 python3 scripts/gpu/dot_pinned_ab.py out/$b $SH --configs "$(cat out/align1_configs.txt)" > $OUT/pinned_$b.log 2>&1; echo "$b rc=$?"; date; done
grep -A4 "cuBLAS" $OUT/pinned_*.log | head -120
