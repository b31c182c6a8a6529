#!/usr/bin/env bash
# On the Rust machine: writes the --no-build folders of the bundled JAX ops
# (tests/ops/*.tc) under out/jax/jax/<op>/ and of the same torch ops under
# out/jax/torch/<op>/ (the check times both on the same kernels), each with
# one shared copy of the prebuilt runtime bridge, packed as out/jax.tar.xz
# (the PTX packs ~10x, which keeps it under the device's carry limit).
# Carry out/jax.tar.xz to the GPU machine and run
#   bash scripts/gpu/jax_ops_run.sh
set -euo pipefail
ARCH=${1:-sm_90a}
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
source scripts/gpu/ops_folders.sh
rm -rf out/jax out/jax.tar.xz
generate_ops jax out/jax/jax "$ARCH"
generate_ops torch out/jax/torch "$ARCH"
rm -rf out/jax/torch/*/ptx
tar -C out -cJf out/jax.tar.xz jax
du -sh out/jax out/jax.tar.xz
