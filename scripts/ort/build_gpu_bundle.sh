#!/usr/bin/env bash
# Builds the ONNX Runtime libraries of the bundled ops (add, softmax,
# transpose, dot) for the GPU machine, which has no cargo, and puts them with
# the check script into one folder to carry there:
#   bash scripts/ort/build_gpu_bundle.sh [DEST]      (default: out/ortgpu)
#   DEST/lib/libopgen_ort_triton_<op>.so, DEST/gpu_check.py, DEST/build.txt
# On the GPU machine: python3 DEST/gpu_check.py DEST/lib [RESULTS.json]
#                     python3 DEST/check_ep.py DEST/lib/libopgen_ort_triton_add.so --gpu [RESULTS.json]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(realpath -m "${1:-$repo/out/ortgpu}")
arch=${OPGEN_ARCH:-sm_90}
cd "$repo"
cargo build --release --quiet -p triton-opgen
mkdir -p "$dest/lib" "$dest/crates"
for op in add softmax transpose dot; do
  ./target/release/triton-opgen "tests/ops/$op.tc" --framework ort --arch "$arch" \
    -o "$dest/crates/$op" --target-dir "$repo/target/ort-ops"
  cp "$repo/target/ort-ops/release/libopgen_ort_triton_$op.so" "$dest/lib/"
done
# The generated crates stay for reading; their PTX is inside the libraries.
cp scripts/ort/gpu_check.py scripts/ort/check_ep.py scripts/ort/check_shared_domain.py scripts/ort/timing.py "$dest/"
{
  echo "built $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty') for $arch"
  ldd --version | head -1
} > "$dest/build.txt"
echo "bundle: $dest"
