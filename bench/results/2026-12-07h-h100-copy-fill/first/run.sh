# The pad path through the runtime's copy_fill kernel, on one H100: the first build (one side vectorized where it could be).
# Carry out/torch.tar.xz (scripts/gpu/torch_ops_prepare.sh), out/padall.tar.xz (dot.tc as
# triton::dot_padall with `pad N, K to 8` unconditional, no backward line), out/lrnew.tar.xz
# (examples/linear_relu.tc), each --no-build without its bridge copy, and out/ortgpu
# (scripts/ort/build_gpu_bundle.sh, packed without crates/ as out/ortgpu.tar.xz).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf padall.tar.xz && tar xJf lrnew.tar.xz && tar xJf ortgpu.tar.xz && cd ..
mv out/lrnew/linear_relu out/torch/linear_relu
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
(cd out/padall/dot_padall && bash build.sh > build.log 2>&1; echo "padall build rc=$?") &
# Values: padded and unpadded shapes, views, empty K, backward, bias + ReLU, a side stream, a CUDA graph.
mkdir -p /tmp/c0; TRITON_OPGEN_CACHE=/tmp/c0/a.json timeout 300 python3 scripts/gpu/pad_check.py out/torch $OUT/pad > $OUT/pad_check.log 2>&1; echo "pad_check rc=$?"
grep -E "FAIL|passed|failed|host_us" $OUT/pad_check.log | tail -12
wait; date; tail -3 out/padall/dot_padall/build.log
# ONNX Runtime (CPU package: host tensors, the GPU path through run_padded): values and padded GPU time.
mkdir -p $OUT/ort /tmp/c2; TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 150 python3 out/ortgpu/gpu_check.py out/ortgpu/lib $OUT/ort/gpu_check.json > $OUT/ort/gpu_check.log 2>&1; echo "ort gpu_check rc=$?"; tail -6 $OUT/ort/gpu_check.log
TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 100 python3 out/ortgpu/pad_timing.py out/ortgpu/lib $OUT/ort/pad_timing.json > $OUT/ort/pad_timing.log 2>&1; echo "ort pad_timing rc=$?"; tail -12 $OUT/ort/pad_timing.log
date
SH="769x769x769 1000x777x1531 1025x1025x1025 1201x1201x1201 2049x2049x2049 3001x3001x3001 1024x4097x4096 256x50257x4096 4096x4096x129"
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 240 python3 scripts/gpu/odd_n_paths.py out/torch --padded out/padall --back-to-back --out $OUT/odd --shapes $SH > $OUT/odd.log 2>&1; echo "odd rc=$?"; tail -14 $OUT/odd.log
date
