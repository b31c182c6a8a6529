#!/usr/bin/env bash
# Every PTX file a compiler change should be judged on, into OUT: the
# tensor-core configs of scripts/gpu/mma_build.sh, every `// tritonc:` line of
# tests/kernels (sm_90) and every variant of every bundled op and example
# (sm_90a). Set TRITONC_LLVM_PASSES to try another LLVM pipeline; compare two
# outputs with scripts/ptx_compare_quality.py.
# Usage: scripts/ptx_corpus.sh OUT     (release binaries: cargo build --release;
#        TRITONC= and TRITON_OPGEN= pick other ones; PTX_CORPUS_OPS=0 leaves the ops out)
set -euo pipefail
cd "$(dirname "$0")/.."
O=${1:?usage: scripts/ptx_corpus.sh OUT}
rm -rf "$O"; mkdir -p "$O"
export TRITONC=${TRITONC:-./target/release/tritonc} TRITON_OPGEN_COMPILE_CACHE=off
OPGEN=${TRITON_OPGEN:-./target/release/triton-opgen}
bash scripts/gpu/mma_build.sh "$O/mma" >/dev/null
i=0
for f in tests/kernels/*.tc; do
  grep '^// tritonc:' "$f" | sed 's|^// tritonc:||' | while read -r line; do
    i=$((i + 1)); name="$(basename "$f" .tc)_l$i"
    eval "set -- $line"; warps=4; args=()
    while [ $# -gt 0 ]; do if [ "$1" = --num-warps ]; then warps=$2; shift 2; else args+=("$1"); shift; fi; done
    "$TRITONC" "$f" -I tests/kernels "${args[@]}" --num-warps "$warps" --arch sm_90 --all-configs -o "$O/kernels/$name" 2>/dev/null
  done
done
[ "${PTX_CORPUS_OPS:-1}" = 0 ] || for op in tests/ops/*.tc examples/*.tc; do
  "$OPGEN" "$op" --framework torch --no-build --arch sm_90a -o "$O/ops/$(basename "$op" .tc)" >/dev/null 2>&1 ||
    { echo "triton-opgen failed on $op" >&2; exit 1; }
done
echo "$(find "$O" -name '*.ptx' | wc -l) PTX files in $O"
