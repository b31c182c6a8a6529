#!/usr/bin/env bash
# On the GPU machine: unpacks out/jax.tar.xz (scripts/gpu/jax_ops_prepare.sh),
# builds every JAX and torch op folder with its build.sh (g++, no Rust), in
# parallel, then runs scripts/gpu/jax_ops_check.py, which writes its table and
# JSON under $OUT (or the folder given as the first argument).
set -euo pipefail
cd "$(dirname "$0")/../.."
RESULTS=${1:-${OUT:-out/jax-results}}
mkdir -p "$RESULTS"
rm -rf out/jax && tar -C out -xJf out/jax.tar.xz
pids=()
for dir in out/jax/jax/*/ out/jax/torch/*/; do
  [ -f "$dir/build.sh" ] || continue
  lib=$(cd "$dir/../lib" && pwd)/libopgen_bridge.a
  (BRIDGE_LIB=$lib bash "$dir/build.sh" >"$dir/build.log" 2>&1 || { echo "build failed: $dir"; cat "$dir/build.log"; exit 1; }) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
XLA_PYTHON_CLIENT_PREALLOCATE=false python3 scripts/gpu/jax_ops_check.py out/jax "$RESULTS"
