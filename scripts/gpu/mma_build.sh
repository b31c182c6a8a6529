#!/usr/bin/env bash
# Builds the tensor-core dot variants (PTX + manifests) for scripts/gpu/mma_check.py
# into ${1:-out/mma}. Run on the build machine; carry the folder to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
T=${TRITONC:-./target/debug/tritonc}
O=${1:-out/mma}
rm -rf "$O"; mkdir -p "$O"
cp scripts/gpu/mma_check.py scripts/gpu/cuda_driver.py "$O/"
source scripts/gpu/build_lib.sh
build dot_f16_w4 4 dot.tc -DTYPE=half '-DTM=[32,64,128]' '-DTN=[32,64,128]' '-DTK=[16,32,64]'
build dot_f16_w8 8 dot.tc -DTYPE=half '-DTM=[32,64,128]' '-DTN=[32,64,128]' '-DTK=[16,32,64]'
build dot_bf16_w4 4 dot.tc -DTYPE=bf16 '-DTM=[32,128]' '-DTN=[64,128]' '-DTK=[16,32]'
build dot_bf16_w8 8 dot.tc -DTYPE=bf16 '-DTM=[64,128]' '-DTN=[32,128]' '-DTK=[32,64]'
build dot_fma_f32 4 dot.tc -DTYPE=float -DTM=32 -DTN=32 -DTK=8
build dot_fma_f16 4 dot.tc -DTYPE=half -DTM=64 -DTN=64 -DTK=8
build prefetch_f16_w8 8 dot_prefetch.tc -DTYPE=half '-DTM=[64,128]' '-DTN=[128]' '-DTK=[32,64]'
build prefetch_f16_w4 4 dot_prefetch.tc -DTYPE=half '-DTM=[64,128]' '-DTN=[64,128]' '-DTK=[16,32]'
build big_f16_w8 8 dot.tc -DTYPE=half -DTM=128 -DTN=256 -DTK=32
build big_prefetch_f16_w8 8 dot_prefetch.tc -DTYPE=half -DTM=128 -DTN=256 -DTK=32
build big2_f16_w8 8 dot.tc -DTYPE=half -DTM=256 -DTN=128 -DTK=32
build prefetch_bf16_w4 4 dot_prefetch.tc -DTYPE=bf16 -DTM=64 -DTN=64 -DTK=32
# sm_90a: the pipelined loop on wgmma (names wg_*: mma_check.py times them at 4096^3 and 8192^3).
ARCH=sm_90a build wg_f16_w8 8 dot.tc -DTYPE=half -DTM=128 '-DTN=[128,256]' -DTK=64
ARCH=sm_90a build wg_f16_w8_m256 8 dot.tc -DTYPE=half -DTM=256 -DTN=128 -DTK=64
ARCH=sm_90a build wg_f16_w8_k128 8 dot.tc -DTYPE=half -DTM=128 -DTN=128 -DTK=128
ARCH=sm_90a build wg_f16_w4 4 dot.tc -DTYPE=half -DTM=64 -DTN=128 -DTK=64
ARCH=sm_90a build wg_bf16_w8 8 dot.tc -DTYPE=bf16 -DTM=128 '-DTN=[128,256]' -DTK=64
# TK 32 and 16 on wgmma (a's rows in the 64- and 32-byte swizzles), one warpgroup included.
ARCH=sm_90a build wg_f16_w8_k32 8 dot.tc -DTYPE=half -DTM=128 '-DTN=[128,256]' -DTK=32
ARCH=sm_90a build wg_f16_w4_k32 4 dot.tc -DTYPE=half '-DTM=[64,128]' -DTN=128 -DTK=32
ARCH=sm_90a build wg_bf16_w8_k32 8 dot.tc -DTYPE=bf16 -DTM=128 '-DTN=[128,256]' -DTK=32
ARCH=sm_90a build wg_f16_k16_w4 4 dot.tc -DTYPE=half -DTM=64 '-DTN=[128,256]' -DTK=16
ARCH=sm_90a build wg_f16_k16_w8 8 dot.tc -DTYPE=half -DTM=128 '-DTN=[128,256]' -DTK=16
# TN 32 and 16 on wgmma (b's rows in the 64- and 32-byte swizzles): narrow tiles for skinny M.
ARCH=sm_90a build wg_f16_n32_w8 8 dot.tc -DTYPE=half -DTM=128 '-DTN=[16,32]' -DTK=64
ARCH=sm_90a build wg_f16_n32_w4 4 dot.tc -DTYPE=half -DTM=64 '-DTN=[16,32]' -DTK=64
ARCH=sm_90a build wg_bf16_n32_w8 8 dot.tc -DTYPE=bf16 -DTM=128 -DTN=32 -DTK=32
# 3 buffers instead of 4 (experiment: how much the 4th buys).
STAGES=3 ARCH=sm_90a build wg_f16_w8_s3 8 dot.tc -DTYPE=half -DTM=128 -DTN=256 -DTK=64
# The same loop with programs grouped for L2 reuse (GROUP_M, seed 004).
ARCH=sm_90a KDIR=scripts/gpu/kernels build wg_grouped_f16_w8 8 dot_grouped.tc -DTYPE=half -DTM=128 -DTN=256 -DTK=64 '-DGROUP_M=[4,8]'
ARCH=sm_90a KDIR=scripts/gpu/kernels build wg_grouped_bf16_w8 8 dot_grouped.tc -DTYPE=bf16 -DTM=128 -DTN=256 -DTK=64 -DGROUP_M=8
# sm_90a, TK=32: the pre-fetch loop is unrotated and
# pipelined on wgmma (64-byte swizzle); the plain 64x64x32 dot likewise.
ARCH=sm_90a build sm90a_prefetch_f16_w8 8 dot_prefetch.tc -DTYPE=half -DTM=128 -DTN=128 -DTK=32
ARCH=sm_90a build sm90a_dot_f16_w4_k32 4 dot.tc -DTYPE=half -DTM=64 -DTN=64 -DTK=32
i=0
grep '^// tritonc:' tests/kernels/dot_trans.tc | sed 's|^// tritonc:||; s/-DTM=64/-DTM=128/; s/-DTN=32/-DTN=64/; s/-DTK=16/-DTK=32/' |
while read -r line; do
  i=$((i + 1))
  eval "build trans_v${i}_w8 8 dot_trans.tc $line"
  eval "build trans_v${i}_bf16_w4 4 dot_trans.tc ${line/-DTYPE=half/-DTYPE=bf16}"
done
du -sh "$O"
