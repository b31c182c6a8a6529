# The torch op's pad path through the runtime's copies (opgen::copy_padded) on one H100.
# Carry out/torch.tar.xz (scripts/gpu/torch_ops_prepare.sh), out/padall.tar.xz (dot.tc as
# triton::dot_padall with `pad N, K to 8` unconditional, no backward line) and out/lrnew.tar.xz
# (examples/linear_relu.tc), each --no-build without its bridge copy.
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf padall.tar.xz && tar xJf lrnew.tar.xz && cd ..
mv out/lrnew/linear_relu out/torch/linear_relu
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
(cd out/padall/dot_padall && bash build.sh > build.log 2>&1; echo "padall build rc=$?") &
# Values: padded and unpadded shapes, views, empty K, backward, bias + ReLU, a side stream, a CUDA graph.
mkdir -p /tmp/c0; TRITON_OPGEN_CACHE=/tmp/c0/a.json timeout 240 python3 scripts/gpu/pad_check.py out/torch $OUT/pad > $OUT/pad_check.log 2>&1; echo "pad_check rc=$?"
grep -E "FAIL|passed|failed" $OUT/pad_check.log | tail -8
wait; date
SH="769x769x769 1000x777x1531 1025x1025x1025 1201x1201x1201 16x4097x4096 128x4097x4096 2049x2049x2049 3001x3001x3001 4096x4096x129 256x50257x4096 1024x4097x4096"
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 200 python3 scripts/gpu/odd_n_paths.py out/torch --padded out/padall --back-to-back --out $OUT/odd --shapes $SH > $OUT/odd.log 2>&1; echo "odd rc=$?"; tail -14 $OUT/odd.log
date
# --tuned end to end, on this build's dot. When this ran, these steps were written out here
# (warm with next_tuned_check/warm.py, embed, rebuild, check with next_tuned_check/tuned_check.py);
# they now live in scripts/gpu/tuned_check.sh (tuned_warm.py, tuned_check.py).
bash scripts/gpu/tuned_check.sh out/torch/dot
date
