#!/usr/bin/env bash
# Builds what runtime_gpu_check needs on the GPU machine (no Rust there) into
# one folder: the release binary, add.tc compiled for every SIZE, and the
# probe kernels as an sm_90 cubin (when ptxas is found).
#   plugins/runtime/gpu-bundle.sh OUT_DIR
# Then on the GPU machine:
#   OUT_DIR/runtime_gpu_check --ptx-dir OUT_DIR/add --cache /tmp/at/autotune.json --cubin OUT_DIR/probe_sm90.cubin --softmax-dir OUT_DIR/softmax
#   OUT_DIR/runtime_gpu_check --ptx-dir OUT_DIR/add --cache /tmp/at/autotune.json --expect-cached
#   OUT_DIR/runtime_gpu_check --ptx-dir OUT_DIR/add --cache /tmp/at/autotune.json --corrupt-cache
set -euo pipefail
out=${1:?usage: gpu-bundle.sh OUT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
cargo build --release -p opgen-runtime --bin runtime_gpu_check
cargo build --release -p tritonc --bin tritonc
mkdir -p "$out"
cp target/release/runtime_gpu_check "$out/"
rm -rf "$out/add"
target/release/tritonc tests/kernels/add.tc -DTYPE=float '-DSIZE=[128,256,512,1024]' --all-configs -o "$out/add"
rm -rf "$out/softmax"
target/release/tritonc tests/kernels/softmax.tc -DTYPE=float '-DTN=[1024,4096,16384]' --all-configs -o "$out/softmax"
ptxas=$(command -v ptxas || python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13/bin/ptxas"))' 2>/dev/null || true)
if [ -n "$ptxas" ] && [ -x "$ptxas" ]; then
  "$ptxas" -arch=sm_90 plugins/runtime/src/bin/runtime_gpu_check/probe.ptx -o "$out/probe_sm90.cubin"
else
  echo "ptxas not found: no cubin in the bundle (run without --cubin)" >&2
fi
ls -la "$out" "$out/add"
