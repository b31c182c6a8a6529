#!/usr/bin/env bash
# Compiles the runtime's own kernels (plugins/runtime/kernels/*.tc) into the
# PTX the runtime embeds: copy_fill for 2- and 4-byte elements, each with both
# sides 16-byte vectorized or neither (one side vectorized ran slower than
# neither on an H100: lanes 16 bytes apart on the other side,
# bench/results/2026-12-07h-h100-copy-fill).
# PTX for sm_80: the driver JIT-compiles it for any newer GPU.
# Usage: scripts/runtime_kernels.sh [OUT_DIR]   (default: plugins/runtime/kernels)
#        TRITONC=path/to/tritonc scripts/runtime_kernels.sh
# The compiler's test `runtime_kernels_are_current` runs this into a scratch
# folder and fails when a committed file differs: rerun it after a compiler
# change that alters them, and commit the result.
set -euo pipefail
cd "$(dirname "$0")/.."
TRITONC=${TRITONC:-./target/release/tritonc}
OUT=${1:-plugins/runtime/kernels}
[ -x "$TRITONC" ] || { echo "no $TRITONC: cargo build --release -p tritonc" >&2; exit 1; }
mkdir -p "$OUT"
for width in "b16 int16_t 8" "b32 int 4"; do
  read -r name type vector <<<"$width"
  for sides in "generic 1" "vec16 $vector"; do
    read -r flavor align <<<"$sides"
    "$TRITONC" plugins/runtime/kernels/copy_fill.tc --arch sm_80 --num-warps 4 \
      -DTYPE="$type" -DTR=16 -DTC=128 -DALIGN="$align" \
      -o "$OUT/copy_fill_${name}_${flavor}.ptx"
  done
done
