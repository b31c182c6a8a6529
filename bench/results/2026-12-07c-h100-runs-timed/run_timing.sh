set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf base.tar.xz && tar xJf nopad.tar.xz && cd ..
nvidia-smi --query-gpu=name --format=csv,noheader
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
date
for d in out/torch/dot out/base/dot out/nopad/dot_nopad ; do (cd $d && bash build.sh > build.log 2>&1; echo "$d build rc=$?") & done
wait; date
SH="1x4097x4096 16x4097x4096 128x4097x4096 16x50257x4096 128x32001x4096 1025x1025x1025 1000x777x1531 1201x1201x1201"
timeout 80 python3 scripts/gpu/odd_n_paths.py out/torch --out /tmp/runs_odd --shapes $SH > /tmp/runs_odd.log 2>&1; tail -12 /tmp/runs_odd.log; cp /tmp/runs_odd/odd_n_paths.json $OUT/runs_odd.json
timeout 80 python3 scripts/gpu/odd_n_paths.py out/base --out /tmp/base_odd --shapes $SH > /tmp/base_odd.log 2>&1; tail -10 /tmp/base_odd.log; cp /tmp/base_odd/odd_n_paths.json $OUT/base_odd.json
date
timeout 100 python3 scripts/gpu/tma_check.py out/torch --out /tmp/check --variants "ALIGN=1" > $OUT/tma.log 2>&1; echo "tma rc=$?"; tail -4 $OUT/tma.log
date
PF="2049x2049x2049 3001x3001x3001 1024x4097x4096 256x50257x4096 4096x4096x129 1537x1537x1537"
timeout 90 python3 scripts/gpu/odd_n_paths.py out/torch --unpadded out/nopad --out /tmp/nopad_odd --shapes $PF > /tmp/nopad_odd.log 2>&1; tail -10 /tmp/nopad_odd.log; cp /tmp/nopad_odd/odd_n_paths.json $OUT/nopad_odd.json
date
timeout 200 python3 scripts/gpu/torch_ops_check.py out/torch --quick > $OUT/toc.log 2>&1; echo "torch_ops_check rc=$?"; tail -5 $OUT/toc.log
cat /tmp/runs_odd.log /tmp/base_odd.log /tmp/nopad_odd.log > $OUT/odd_logs.txt
