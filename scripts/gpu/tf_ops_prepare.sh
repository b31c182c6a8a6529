#!/usr/bin/env bash
# On the Rust machine: writes the --no-build folders of the bundled TensorFlow
# ops (tests/ops/*.tc) under out/tf/<op>/, with one shared copy of the prebuilt
# runtime bridge in out/tf/lib/, and beside each op the PTX and variant list of
# its configs (out/tf/<op>/raw/, what the torch folder holds) so the check can
# launch the picked kernel directly, packed as out/tf.tar.xz. Carry that (and
# TensorFlow, see ../shared/tools/tf-gpu-bundle.sh) to the GPU machine and run
#   tar -C out -xJf out/tf.tar.xz; source /tmp/tf-env.sh; python3 scripts/gpu/tf_ops_check.py out/tf RESULTS_DIR
# The ops are built for sm_90a (the H100); pass another arch as the first argument.
set -euo pipefail
ARCH=${1:-sm_90a}
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
O=out/tf
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
source scripts/gpu/ops_folders.sh
generate_ops tf "$O" "$ARCH"
generate_ops torch "$raw" "$ARCH" >/dev/null 2>&1
for op in "${BUNDLED_OPS[@]}"; do
  mkdir -p "$O/$op/raw"
  cp -r "$raw/$op/ptx" "$raw/$op/variants.json" "$O/$op/raw/"
done
pack_folder "$O"
