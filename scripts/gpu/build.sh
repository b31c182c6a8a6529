#!/usr/bin/env bash
# Builds, on this machine, everything the GPU checks need: PTX + manifest of
# each test kernel's tuning space under out/gpu/<name>/. The device machine has
# no Rust; carry out/gpu there and run scripts/gpu/check.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=/usr/lib/llvm-19
cargo build --release -q -p tritonc
T=./target/release/tritonc
O=out/gpu
rm -rf "$O"; mkdir -p "$O"
ARCH=sm_90
source scripts/gpu/build_lib.sh
build add_f32 4 add.tc -DTYPE=float '-DSIZE=[512,1024,2048,4096]'
build add_f32_w8 8 add.tc -DTYPE=float '-DSIZE=[2048,4096]'
build add_f16 4 add.tc -DTYPE=half '-DSIZE=[1024,2048]'
build transpose_f16 4 transpose_masked.tc -DTYPE=half '-DTM=[32,64]' '-DTN=[32,64]'
build transpose_f16_w8 8 transpose_masked.tc -DTYPE=half '-DTM=[64,128]' '-DTN=[64]'
build transpose_f16_div 4 transpose_masked.tc -DTYPE=half '-DTM=[32,64]' '-DTN=[64]' '-DDIV=__multipleof(16)'
build transpose_f16_div_w8 8 transpose_masked.tc -DTYPE=half '-DTM=[64,128]' '-DTN=[64]' '-DDIV=__multipleof(16)'
build transpose_f32 4 transpose_masked.tc -DTYPE=float -DTM=32 -DTN=32
build softmax_f32_1k 4 softmax.tc -DTYPE=float -DTN=1024
build softmax_f32_4k 8 softmax.tc -DTYPE=float -DTN=4096
build softmax_f32_16k 16 softmax.tc -DTYPE=float -DTN=16384
build softmax_f32_16k_div 16 softmax.tc -DTYPE=float -DTN=16384 '-DDIV=__multipleof(16)'
build softmax_f32_16k_div_w8 8 softmax.tc -DTYPE=float -DTN=16384 '-DDIV=__multipleof(16)'
build softmax_f16_1k 4 softmax.tc -DTYPE=half -DTN=1024
build matrix_ops 4 matrix_ops.tc
build dot_f32 4 dot.tc -DTYPE=float -DTM=32 -DTN=32 -DTK=8
build dot_f16 4 dot.tc -DTYPE=half -DTM=64 -DTN=64 -DTK=16
du -sh "$O"
# Tensor-core dots (mma.sync) for scripts/gpu/mma_check.py.
TRITONC=$T bash scripts/gpu/mma_build.sh "$O/mma" >/dev/null
# The runtime's own GPU check (autotuner, cache reuse, persistent softmax):
# a release binary without LLVM, runs on the GPU machine as is.
bash plugins/runtime/gpu-bundle.sh "$O/runtime" >/dev/null
du -sh "$O"
