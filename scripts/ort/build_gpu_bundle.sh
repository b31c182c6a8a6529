#!/usr/bin/env bash
# Builds the ONNX Runtime libraries of the bundled ops (add, softmax,
# transpose, dot) for the GPU machine, which has no cargo, and puts them with
# the check script into one folder to carry there:
#   bash scripts/ort/build_gpu_bundle.sh [DEST]      (default: out/ortgpu)
#   DEST/lib/libopgen_ort_triton_<op>.so, the check scripts, DEST/build.txt
# OPGEN_ARCH (default sm_90) picks the target; OPGEN_TUNED=FILE (an autotune
# cache from an earlier GPU run) also builds softmax and dot with `--tuned FILE`
# into DEST/lib/tuned/.
# On the GPU machine (onnxruntime CPU package):
#                     python3 DEST/gpu_check.py DEST/lib [RESULTS.json]
#                     python3 DEST/check_ep.py DEST/lib/libopgen_ort_triton_add.so --gpu [RESULTS.json]
# With onnxruntime-gpu (CUDA EP): python3 DEST/cuda_ep_check.py DEST/lib RESULTS_DIR
#                     python3 DEST/transformer_block.py DEST/lib RESULTS_DIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(realpath -m "${1:-$repo/out/ortgpu}")
arch=${OPGEN_ARCH:-sm_90}
cd "$repo"
cargo build --release --quiet -p triton-opgen
mkdir -p "$dest/lib" "$dest/crates"
for op in add softmax transpose dot dot_nt dot_tn; do
  ./target/release/triton-opgen "tests/ops/$op.tc" --framework ort --arch "$arch" \
    -o "$dest/crates/$op" --target-dir "$repo/target/ort-ops"
  cp "$repo/target/ort-ops/release/libopgen_ort_triton_$op.so" "$dest/lib/"
done
if [ -n "${OPGEN_TUNED:-}" ]; then
  mkdir -p "$dest/lib/tuned"
  for op in softmax dot; do
    ./target/release/triton-opgen "tests/ops/$op.tc" --framework ort --arch "$arch" --tuned "$OPGEN_TUNED" \
      -o "$dest/crates/${op}_tuned" --target-dir "$repo/target/ort-ops-tuned"
    cp "$repo/target/ort-ops-tuned/release/libopgen_ort_triton_$op.so" "$dest/lib/tuned/"
  done
fi
# The generated crates stay for reading; their PTX is inside the libraries.
for script in gpu_check pad_timing check_ep check_shared_domain timing ort_models cuda_ep_check rewrite_to_triton transformer_block; do
  cp "scripts/ort/$script.py" "$dest/"
done
{
  echo "built $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty') for $arch${OPGEN_TUNED:+, tuned from $OPGEN_TUNED}"
  ldd --version 2>&1 | sed -n 1p
} > "$dest/build.txt"
echo "bundle: $dest"
