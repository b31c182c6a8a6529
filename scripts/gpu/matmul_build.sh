#!/usr/bin/env bash
# Builds, on this machine, the matmul kernels for scripts/gpu/matmul_bench.py:
# PTX + manifest of every variant and tuning config under ${1:-out/matmul}/<name>/.
# ARCH=sm_90a bash scripts/gpu/matmul_build.sh rebuilds for another target.
# The device machine has no Rust: carry the folder there and run
#   python3 out/matmul/matmul_bench.py out/matmul
set -euo pipefail
cd "$(dirname "$0")/../.."
export LLVM_SYS_191_PREFIX=${LLVM_SYS_191_PREFIX:-/usr/lib/llvm-19}
ARCH=${ARCH:-sm_90}
T=${TRITONC:-./target/release/tritonc}
O=${1:-out/matmul}
if [ -z "${TRITONC:-}" ]; then cargo build --release -q -p tritonc; fi
rm -rf "$O"; mkdir -p "$O"
cp scripts/gpu/matmul_bench.py scripts/gpu/cuda_driver.py "$O/"
start=$(date +%s.%N)
source scripts/gpu/build_lib.sh
# dot_trans.tc's four -D sets, from its `// tritonc:` lines (v1: A B, v2: ^A B,
# v3: A ^B, v4: ^A ^B), without their TYPE and tiles.
trans_sets() {
  grep '^// tritonc:' tests/kernels/dot_trans.tc |
    sed 's|^// tritonc:||; s/-DTYPE=[a-z0-9]*//; s/-DTM=[0-9]*//; s/-DTN=[0-9]*//; s/-DTK=[0-9]*//'
}

# (a) Correctness: every variant in each type; f16/bf16 on tensor cores
# (mma.sync), f32 on FMA. check_<variant>_<type>.
for ty in half bf16 float; do
  if [ $ty = float ]; then tiles=(-DTM=32 -DTN=32 -DTK=8); w=4
  else tiles=(-DTM=64 -DTN=64 -DTK=32); w=4; fi
  build check_dot_$ty $w dot.tc -DTYPE=$ty "${tiles[@]}"
  build check_prefetch_$ty $w dot_prefetch.tc -DTYPE=$ty "${tiles[@]}"
  build check_remat_$ty $w dot_remat.tc -DTYPE=$ty "${tiles[@]}"
  i=0
  while read -r line; do
    i=$((i + 1))
    eval "build check_trans${i}_$ty $w dot_trans.tc -DTYPE=$ty ${tiles[*]} $line"
  done < <(trans_sets)
  build check_grouped_$ty $w matmul_grouped.tc -DTYPE=$ty "${tiles[@]}" -DGROUP_M=4 -DLEAKY_RELU=1
  build check_grouped16_$ty $w matmul_grouped.tc -DTYPE=$ty "${tiles[@]}" -DGROUP_M=4 -DLEAKY_RELU=1 \
    '-DDIV=__multipleof(16)'
done
# Larger tensor-core tiles with 8 warps, plain and grouped.
build check_dot_half_big 8 dot.tc -DTYPE=half -DTM=128 -DTN=128 -DTK=32
build check_dot_bf16_big 8 dot.tc -DTYPE=bf16 -DTM=128 -DTN=128 -DTK=32
build check_grouped16_bf16_big 8 matmul_grouped.tc -DTYPE=bf16 -DTM=128 -DTN=128 -DTK=32 -DGROUP_M=8 \
  -DLEAKY_RELU=1 '-DDIV=__multipleof(16)'

# (b) The fp16 tuning space the benchmark times on every shape (each config
# is also checked against torch there): seed 003's plain dot and seed 004's
# grouped kernel without the activation.
# 4 warps: up to 128x128 tiles (128x256 spills: 256 accumulators a thread).
W4=('-DTM=[64,128]' '-DTN=[64,128]' '-DTK=[32,64]')
W8=('-DTM=[64,128]' '-DTN=[64,128,256]' '-DTK=[32,64]')
build pool_dot_w4 4 dot.tc -DTYPE=half "${W4[@]}"
build pool_dot_w8 8 dot.tc -DTYPE=half "${W8[@]}"
G=(-DTYPE=half -DGROUP_M=8 '-DDIV=__multipleof(16)')
build pool_grouped_w4 4 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=0 "${W4[@]}"
build pool_grouped_w8 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=0 "${W8[@]}"
# Thin M tiles for skinny products (M = 16).
build pool_grouped_thin_w4 4 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=0 -DTM=32 '-DTN=[64,128]' '-DTK=[64,128]'
# 256x128 tiles with 8 warps.
build pool_dot_w8_tall 8 dot.tc -DTYPE=half -DTM=256 -DTN=128 '-DTK=[32,64]'
build pool_grouped_w8_tall 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=0 -DTM=256 -DTN=128 '-DTK=[32,64]'
# Deeper pipelines for the large 8-warp tiles, through tritonc's
# --num-stages (it picks 2 stages with 8 warps itself).
for s in 3 4; do
  for t in "128 256" "256 128"; do
    set -- $t
    STAGES=$s build pool_dot_w8_s${s}_$1x$2 8 dot.tc -DTYPE=half -DTM=$1 -DTN=$2 -DTK=32
    STAGES=$s build pool_grouped_w8_s${s}_$1x$2 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=0 \
      -DTM=$1 -DTN=$2 -DTK=32
    STAGES=$s build leaky_grouped_w8_s${s}_$1x$2 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=1 \
      -DTM=$1 -DTN=$2 -DTK=32
  done
done
# The grouped kernel with its leaky ReLU, timed at the fastest grouped config.
build leaky_grouped_w4 4 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=1 "${W4[@]}"
build leaky_grouped_w8 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=1 "${W8[@]}"
build leaky_grouped_w8_tall 8 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=1 -DTM=256 -DTN=128 '-DTK=[32,64]'
build leaky_grouped_thin_w4 4 matmul_grouped.tc "${G[@]}" -DLEAKY_RELU=1 -DTM=32 '-DTN=[64,128]' '-DTK=[64,128]'
end=$(date +%s.%N)
cat > "$O/build.json" <<JSON
{"arch": "$ARCH", "commit": "$(git rev-parse HEAD)", "dirty": $([ -z "$(git status --porcelain -- compiler tests scripts/gpu)" ] && echo false || echo true),
 "date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "build_seconds": $(echo "$end - $start" | bc), "ptx_files": $(find "$O" -name '*.ptx' | wc -l)}
JSON
cat "$O/build.json"
du -sh "$O"
