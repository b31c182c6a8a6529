#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job on bundled examples, no GPU
# needed:
#  1. tritonc: the vector-add kernel's tuning space (four tile sizes) compiled
#     to PTX plus a manifest, each PTX checked by ptxas for sm_90;
#  2. triton-opgen: the op spec tests/ops/add.tc turned into an ONNX Runtime
#     custom-op library, loaded into onnxruntime (the CPU package set-up
#     installs): the op registers, shape inference gives the output its dtype
#     and symbolic dim, a wrong dtype is refused naming the argument, and
#     running it says there is no CUDA device (on a GPU machine it runs).
set -euo pipefail
cd "$(dirname "$0")/.."
PTXAS="$(bash scripts/setup.sh)"
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
cargo build --release -q -p tritonc -p triton-opgen -p opgen-bridge
echo "== 1. tritonc: tests/kernels/add.tc, SIZE in [32, 64, 128, 256] -> PTX"
./target/release/tritonc tests/kernels/add.tc -DTYPE=float '-DSIZE=[32,64,128,256]' --all-configs -o out/add
for ptx in out/add/*.ptx; do
  "$PTXAS" -arch=sm_90 "$ptx" -o /dev/null && echo "ptxas sm_90 ok: $ptx"
done
echo "manifest: out/add/manifest.json"
echo "== 2. triton-opgen: tests/ops/add.tc -> an ONNX Runtime op library"
./target/release/triton-opgen tests/ops/add.tc --framework ort -o out/add_ort --target-dir target/ort-ops
python3 scripts/ort/check_add.py target/ort-ops/release/libopgen_ort_triton_add.so
echo "demo done: out/add (PTX, manifest), target/ort-ops/release/libopgen_ort_triton_add.so (the op)"
