#!/usr/bin/env bash
# Sets up a fresh machine and runs the main job on the bundled vector-add
# kernel: a tuning space of four tile sizes compiled to PTX plus a manifest,
# then each PTX checked by ptxas for sm_90.
set -euo pipefail
cd "$(dirname "$0")/.."
PTXAS="$(bash scripts/setup.sh)"
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
cargo build --release -q -p tritonc
./target/release/tritonc tests/kernels/add.tc -DTYPE=float '-DSIZE=[32,64,128,256]' --all-configs -o out/add
for ptx in out/add/*.ptx; do
  "$PTXAS" -arch=sm_90 "$ptx" -o /dev/null && echo "ptxas sm_90 ok: $ptx"
done
echo "manifest: out/add/manifest.json"
