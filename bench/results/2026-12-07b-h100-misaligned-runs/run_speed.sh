# Call 2 (same warm H100, right after call 1); carried out/base.tar.xz
# (tests/ops/dot.tc without --misaligned-runs, --no-build, its bridge copy removed).
export PYTHONUNBUFFERED=1 BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
(cd out && tar xJf base.tar.xz) && (cd out/base/dot && bash build.sh > $OUT/base_build.log 2>&1)
SH="1x4097x4096 16x4097x4096 128x4097x4096 16x50257x4096 128x32001x4096 1025x1025x1025 1000x777x1531 1201x1201x1201"
for i in 1 2; do
  timeout 120 python3 scripts/gpu/odd_n_paths.py out/torch --out $OUT/runs_odd$i --shapes $SH > $OUT/runs_odd$i.log 2>&1
  timeout 120 python3 scripts/gpu/odd_n_paths.py out/base --out $OUT/base_odd$i --shapes $SH > $OUT/base_odd$i.log 2>&1
done
