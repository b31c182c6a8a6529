#!/usr/bin/env bash
# Builds the pre-fetch matmul variants (dot_prefetch.tc, dot_trans.tc) next to the
# plain loop (dot.tc) into ${1:-out/prefetch}, for scripts/gpu/prefetch_check.py.
# sm_90: pipelined mma.sync; sm_90a (names wg*): warpgroup MMA.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=${TRITONC:-./target/release/tritonc}
O=${1:-out/prefetch}
rm -rf "$O"; mkdir -p "$O"
cp scripts/gpu/prefetch_check.py scripts/gpu/mma_check.py scripts/gpu/cuda_driver.py "$O/"
source scripts/gpu/build_lib.sh
build prefetch_f16_w8 8 dot_prefetch.tc -DTYPE=half '-DTM=[64,128]' -DTN=128 '-DTK=[32,64]'
build prefetch_f16_w4 4 dot_prefetch.tc -DTYPE=half '-DTM=[64,128]' '-DTN=[64,128]' '-DTK=[16,32]'
build prefetch_bf16_w4 4 dot_prefetch.tc -DTYPE=bf16 -DTM=64 -DTN=64 -DTK=32
ARCH=sm_90a build wg_plain_f16_w8 8 dot.tc -DTYPE=half -DTM=128 -DTN=256 -DTK=64
ARCH=sm_90a build wg_prefetch_f16_w8 8 dot_prefetch.tc -DTYPE=half -DTM=128 '-DTN=[128,256]' -DTK=64
ARCH=sm_90a build wg_plain_bf16_w8 8 dot.tc -DTYPE=bf16 -DTM=128 -DTN=256 -DTK=64
ARCH=sm_90a build wg_prefetch_bf16_w8 8 dot_prefetch.tc -DTYPE=bf16 -DTM=128 -DTN=256 -DTK=64
i=0
grep '^// tritonc:' tests/kernels/dot_trans.tc | sed 's|^// tritonc:||; s/-DTM=64/-DTM=128/; s/-DTN=32/-DTN=256/; s/-DTK=16/-DTK=64/' |
while read -r line; do
  i=$((i + 1))
  eval "build trans_v${i}_w8 8 dot_trans.tc $line"
  eval "ARCH=sm_90a build wg_trans_v${i}_w8 8 dot_trans.tc $line"
done
du -sh "$O"
