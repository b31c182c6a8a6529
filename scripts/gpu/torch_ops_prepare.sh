#!/usr/bin/env bash
# On the Rust machine: writes the --no-build folders of the bundled torch ops
# (tests/ops/*.tc) under out/torch/<op>/, with one shared copy of the prebuilt
# runtime bridge in out/torch/lib/, packed as out/torch.tar.xz. Carry that to
# the GPU machine and run
#   tar -C out -xJf out/torch.tar.xz && python3 scripts/gpu/torch_ops_check.py out/torch
# The GPU machine is an H100: the ops are built for sm_90a (wgmma for dot's
# aligned configs). Pass another arch as the first argument (e.g. sm_90).
set -euo pipefail
ARCH=${1:-sm_90a}
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
O=out/torch
source scripts/gpu/ops_folders.sh
generate_ops torch "$O" "$ARCH"
pack_folder "$O"
