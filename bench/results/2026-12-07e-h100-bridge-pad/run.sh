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
# --tuned end to end (bench/results/2026-12-07d-h100-suite/next_tuned_check), on this build's dot.
T=bench/results/2026-12-07d-h100-suite/next_tuned_check
mkdir -p /tmp/warm; TRITON_OPGEN_CACHE=/tmp/warm/autotune.json timeout 60 python3 $T/warm.py out/torch/dot
cp /tmp/warm/autotune.json $OUT/warm.json
mkdir -p out/tuned && cp -r out/torch/dot out/tuned/dot && rm -f out/tuned/dot/*.so
python3 - <<'PY'
import json
p = "out/tuned/dot/kernels.cpp"
s = open(p).read()
old = 'extern "C" const char triton_dot_tuned[] = "";'
assert s.count(old) == 1
s = s.replace(old, 'extern "C" const char triton_dot_tuned[] = ' + json.dumps(open("/tmp/warm/autotune.json").read()) + ';')
open(p, "w").write(s)
print("embedded the warmed cache")
PY
(cd out/tuned/dot && bash build.sh > build.log 2>&1; echo "tuned build rc=$?")
timeout 60 python3 $T/tuned_check.py out/tuned/dot 2>&1 | tee $OUT/tuned_check.log
date
