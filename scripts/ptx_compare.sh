#!/usr/bin/env bash
# Proof that a compiler change keeps the output: build the same PTX with two tritonc
# binaries and compare the folders byte for byte.
#   scripts/ptx_compare.sh build OUT_DIR     every `// tritonc:` line of tests/kernels/*.tc
#       (--all-configs) for sm_80, sm_90 and sm_90a, each with the pipeliner on and off
#       (TRITONC_NO_PIPELINE=1), plus the GPU check sets of scripts/gpu/mma_build.sh and
#       scripts/gpu/prefetch_build.sh (wgmma, big tiles, pre-fetch variants).
#       TRITONC=path/to/tritonc picks the compiler (default: target/release/tritonc).
#   scripts/ptx_compare.sh diff BEFORE AFTER  counts the PTX files and manifests, lists
#       the ones that differ or exist on one side only; exit status 1 when any does.
# Typical use: build "before" with a binary of the base commit copied aside, rebuild,
# build "after", then diff.
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
  local out=$1
  export TRITONC=${TRITONC:-./target/release/tritonc}
  rm -rf "$out"
  mkdir -p "$out"
  for arch in sm_80 sm_90 sm_90a; do
    for pipeline in on off; do
      build_test_kernels "$out/kernels/$arch-pipeline-$pipeline" "$arch" "$pipeline"
    done
  done
  bash scripts/gpu/mma_build.sh "$out/mma" >/dev/null
  bash scripts/gpu/prefetch_build.sh "$out/prefetch" >/dev/null
  echo "$(find "$out" -name '*.ptx' | wc -l) PTX files in $out"
}

# One folder per `// tritonc:` line (name: file stem and line number in the file).
build_test_kernels() { # out arch on|off
  local out=$1 arch=$2 pipeline=$3 f line i warps
  for f in tests/kernels/*.tc; do
    i=0
    while read -r line; do
      i=$((i + 1))
      eval "set -- $line"
      warps=4
      local args=()
      while [ $# -gt 0 ]; do
        if [ "$1" = --num-warps ]; then warps=$2; shift 2; else args+=("$1"); shift; fi
      done
      local no_pipeline=0 dir
      [ "$pipeline" = off ] && no_pipeline=1
      dir="$out/$(basename "$f" .tc)_l$i"
      mkdir -p "$dir"
      # A point may be unsupported on an arch: its error message is output too (in the
      # log, with the folder name taken out so two builds compare).
      { TRITONC_NO_PIPELINE=$no_pipeline "$TRITONC" "$f" -I tests/kernels ${args[@]+"${args[@]}"} \
        --num-warps "$warps" --arch "$arch" --all-configs -o "$dir" 2>&1 || true; } |
        sed "s|$dir|OUT|g" >"$dir/tritonc.log"
    done < <(grep '^// tritonc:' "$f" | sed 's|^// tritonc:||')
  done
}

compare() {
  local before=$1 after=$2 total same=0 differ=0 only=0 rel
  total=$( (cd "$before" && find . -name '*.ptx' -o -name manifest.json -o -name '*.log') | sort)
  while read -r rel; do
    if [ ! -e "$after/$rel" ]; then
      echo "only in $before: $rel"; only=$((only + 1))
    elif cmp -s "$before/$rel" "$after/$rel"; then
      same=$((same + 1))
    else
      echo "differs: $rel"; differ=$((differ + 1))
    fi
  done <<<"$total"
  while read -r rel; do
    [ -e "$before/$rel" ] || { echo "only in $after: $rel"; only=$((only + 1)); }
  done < <(cd "$after" && find . -name '*.ptx' -o -name manifest.json -o -name '*.log' | sort)
  local ptx
  ptx=$(grep -c '\.ptx$' <<<"$total" || true)
  echo "compared $(wc -l <<<"$total") files ($ptx PTX, the rest manifests and logs):" \
    "$same identical, $differ differ, $only on one side only"
  [ "$differ" -eq 0 ] && [ "$only" -eq 0 ]
}

case ${1:-} in
  build) build "${2:?usage: scripts/ptx_compare.sh build OUT_DIR}" ;;
  diff) compare "${2:?usage: scripts/ptx_compare.sh diff BEFORE AFTER}" "${3:?missing AFTER}" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
