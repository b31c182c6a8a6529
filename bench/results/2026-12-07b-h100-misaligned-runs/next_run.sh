# The next GPU call (not run: no machine started). Carry out/torch.tar.xz (OPGEN_FLAGS=--misaligned-runs
# bash scripts/gpu/torch_ops_prepare.sh at e2bd643 or later) and out/base.tar.xz (dot.tc without the flag).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf base.tar.xz && cd ..
nvidia-smi --query-gpu=name --format=csv,noheader
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
for d in out/torch/dot out/base/dot ; do (cd $d && bash build.sh > build.log 2>&1; echo "$d build rc=$?") & done
wait
SH="16x4097x4096 128x4097x4096 16x50257x4096 128x32001x4096 1025x1025x1025 1000x777x1531 1201x1201x1201 1x4097x4096"
timeout 60 python3 scripts/gpu/odd_n_paths.py out/torch --out /tmp/runs_odd --shapes $SH > $OUT/runs_odd.log 2>&1; tail -9 $OUT/runs_odd.log; cp /tmp/runs_odd/odd_n_paths.json $OUT/runs_odd.json
timeout 60 python3 scripts/gpu/odd_n_paths.py out/base --out /tmp/base_odd --shapes $SH > $OUT/base_odd.log 2>&1; tail -8 $OUT/base_odd.log; cp /tmp/base_odd/odd_n_paths.json $OUT/base_odd.json
timeout 100 python3 scripts/gpu/tma_check.py out/torch --out /tmp/check --variants "ALIGN=1" > $OUT/tma.log 2>&1; echo "tma rc=$?"; grep -c '"ok": true' /tmp/check/tma_check.json; grep -c '"ok": false' /tmp/check/tma_check.json; cp /tmp/check/tma_check.json $OUT/
