# The short form of run.sh, for a device budget of about three minutes: ONNX Runtime's values
# and padded GPU time, then the probe on the padall op (values at 3 shapes, each copy_fill launch).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf padall.tar.xz && tar xJf ortgpu.tar.xz && cd ..
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
(cd out/padall/dot_padall && bash build.sh > build.log 2>&1; echo "padall build rc=$?") &
mkdir -p $OUT/ort /tmp/c2; TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 80 python3 out/ortgpu/gpu_check.py out/ortgpu/lib $OUT/ort/gpu_check.json > $OUT/ort/gpu_check.log 2>&1; echo "ort gpu_check rc=$?"; tail -3 $OUT/ort/gpu_check.log
TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 60 python3 out/ortgpu/pad_timing.py out/ortgpu/lib $OUT/ort/pad_timing.json > $OUT/ort/pad_timing.log 2>&1; echo "ort pad_timing rc=$?"; tail -6 $OUT/ort/pad_timing.log
wait; date
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 60 python3 scripts/gpu/copy_fill_probe.py out/padall $OUT/probe 1025x1025x1025 2049x2049x2049 3001x3001x3001 > $OUT/probe.log 2>&1; echo "probe rc=$?"
grep -E "rel_err|padded call|aligned call|copy_fill#|dot#" $OUT/probe.log
date
