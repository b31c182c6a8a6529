# The pad path through the runtime's copy_fill kernel (both sides vectorized or neither), on one H100
# or H200 (the device line says which). Carry out/torch.tar.xz (scripts/gpu/torch_ops_prepare.sh),
# out/padall.tar.xz (dot.tc as triton::dot_padall with `pad N, K to 8` unconditional, no backward
# line), out/lrnew.tar.xz (examples/linear_relu.tc), each --no-build without its bridge copy, and
# out/ortgpu (scripts/ort/build_gpu_bundle.sh, packed without crates/ as out/ortgpu.tar.xz).
# Ordered to fit a short device budget: the builds run while ONNX Runtime is checked.
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf padall.tar.xz && tar xJf lrnew.tar.xz && tar xJf ortgpu.tar.xz && cd ..
mv out/lrnew/linear_relu out/torch/linear_relu
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
for d in out/padall/dot_padall out/torch/dot out/torch/dot_nt out/torch/dot_tn out/torch/linear_relu; do
  (cd $d && bash build.sh > build.log 2>&1; echo "$d build rc=$?") &
done
# ONNX Runtime (CPU package: host tensors, the GPU path through run_padded): values and padded GPU time.
mkdir -p $OUT/ort /tmp/c2; TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 150 python3 out/ortgpu/gpu_check.py out/ortgpu/lib $OUT/ort/gpu_check.json > $OUT/ort/gpu_check.log 2>&1; echo "ort gpu_check rc=$?"; tail -3 $OUT/ort/gpu_check.log
TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 100 python3 out/ortgpu/pad_timing.py out/ortgpu/lib $OUT/ort/pad_timing.json > $OUT/ort/pad_timing.log 2>&1; echo "ort pad_timing rc=$?"; tail -6 $OUT/ort/pad_timing.log
wait; date
# GPU time of each copy_fill launch and host time of a padded call (the padall op, this bridge).
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 100 python3 scripts/gpu/copy_fill_probe.py out/padall $OUT/probe 1025x1025x1025 2049x2049x2049 3001x3001x3001 > $OUT/probe.log 2>&1; echo "probe rc=$?"
grep -E "rel_err|padded call|aligned call|copy_fill#|dot#" $OUT/probe.log
SH="1000x777x1531 1025x1025x1025 2049x2049x2049 3001x3001x3001 1024x4097x4096 256x50257x4096"
TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 120 python3 scripts/gpu/odd_n_paths.py out/torch --padded out/padall --back-to-back --out $OUT/odd --shapes $SH > $OUT/odd.log 2>&1; echo "odd rc=$?"; tail -8 $OUT/odd.log
date
# Values: padded and unpadded shapes, views, empty K, backward, bias + ReLU, a side stream, a CUDA graph.
mkdir -p /tmp/c0; TRITON_OPGEN_CACHE=/tmp/c0/a.json timeout 150 python3 scripts/gpu/pad_check.py out/torch $OUT/pad > $OUT/pad_check.log 2>&1; echo "pad_check rc=$?"
grep -E "FAIL|passed|failed|host_us" $OUT/pad_check.log | tail -12
date
