#!/usr/bin/env bash
# Issue 15 on the GPU machine (which has torch, g++, compute-sanitizer and a
# GPU but no Rust): item 4, every compiled variant of every bundled op under
# compute-sanitizer's memcheck, racecheck, synccheck and initcheck on the
# boundary shapes of its tiles (scripts/gpu/sanitize_variants.py); item 6,
# faults at run time (scripts/gpu/fault_check.py); item 5's GPU half, 8
# processes tuning the real dot op into one cache file
# (scripts/gpu/cache_concurrency_check.py).
#
# Carried: out/tw.tar.xz (tw/triton-opgen and the LLVM 19 libraries it links,
# see scripts/gpu/torch_wheel_check.sh). The ops are generated and built here
# into /tmp/san once per machine (kept while it stays warm), with two copies
# of add whose variant descriptions claim 300,000 bytes of shared memory.
#
# Usage: bash scripts/gpu/sanitize_variants.sh OUT [build|faults|cache|sanitize]
#   TOOLS="memcheck ..." OPS="add dot ..." JOBS=8 choose the sanitize runs;
#   RUN_TIMEOUT (seconds, default 1500) bounds each (a run cut short: exit code 124).
# Writes OUT/sanitize.tsv (op, tool, exit code, errors reported, the script's
# summary), OUT/faults.txt, OUT/cache.txt and OUT/logs.tar.xz (every run's log).
set -euo pipefail
source "$(dirname "$0")/smem_fault_folders.sh"
OUT=${1:?usage: sanitize_variants.sh OUT [build|faults|cache|sanitize]}
STAGE=${2:-all}
ALL_OPS="add transpose softmax col_sum cross_entropy cross_entropy_dx layer_norm layer_norm_dx layer_norm_dw dot dot_nt dot_tn attention"
OPS=${OPS:-$ALL_OPS}
TOOLS=${TOOLS:-memcheck racecheck synccheck initcheck}
JOBS=${JOBS:-8}
W=/tmp/san
LOGS=$W/logs
mkdir -p "$OUT" "$W" "$LOGS"

build() {
  [ -x /tmp/tw/triton-opgen ] || tar -C /tmp -xJf out/tw.tar.xz
  export LD_LIBRARY_PATH=/tmp/tw/lib
  /tmp/tw/triton-opgen --version
  local op
  for op in $ALL_OPS; do
    [ -f "$W/$op/libtriton_$op.so" ] && continue
    /tmp/tw/triton-opgen "tests/ops/$op.tc" --framework torch --arch sm_90a -j 4 -o "$W/$op" >"$W/$op.gen.log" 2>&1 &
  done
  wait
  for op in $ALL_OPS; do
    [ -f "$W/$op/libtriton_$op.so" ] || { echo "building $op failed:"; tail -20 "$W/$op.gen.log"; exit 1; }
    tail -1 "$W/$op.gen.log"
  done
  smem_fault_folders "$W"
}

faults() {
  local case rc=0
  : >"$OUT/faults.txt"
  for case in oom smem_one smem_all; do
    python3 scripts/gpu/fault_check.py "$W" "$case" >>"$OUT/faults.txt" 2>&1 || rc=1
  done
  cat "$OUT/faults.txt"
  return $rc
}

# One op under one tool; only the op's own kernels are instrumented (torch's
# reference kernels run as they are).
sanitize_one() {
  local op=$1 tool=$2 names rc=0
  local folder=$op
  [ "$op" = canary ] && folder=add
  names=$(python3 -c "import json, sys; print('|'.join(sorted({v['kernel'] for v in json.load(open(sys.argv[1]))})))" "$W/$folder/variants.json")
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout "${RUN_TIMEOUT:-1500}" compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 50 \
    --kernel-name "regex=^($names)\$" python3 scripts/gpu/sanitize_variants.py "$W" "$op" >"$LOGS/$op.$tool.log" 2>&1 || rc=$?
  local errors summary
  # memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors"; racecheck:
  # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
  errors=$(grep -m1 -o 'ERROR SUMMARY: [0-9]*' "$LOGS/$op.$tool.log" | grep -o '[0-9]*$' || true)
  [ -z "$errors" ] && errors=$(grep -m1 -o 'RACECHECK SUMMARY: .*' "$LOGS/$op.$tool.log" | sed 's/.*(\(.*\))/\1/' || true)
  summary=$(grep '^summary: ' "$LOGS/$op.$tool.log" | sed 's/^summary: //' | tail -1)
  printf '%s\t%s\t%s\t%s\t%s\n' "$op" "$tool" "$rc" "${errors:-?}" "${summary:-none}" | tee -a "$OUT/sanitize.tsv"
}
export -f sanitize_one
export W OUT LOGS

sanitize() {
  compute-sanitizer --version | tail -1
  # The filter reaches our kernels: initcheck must flag add reading never-written inputs.
  sanitize_one canary initcheck
  grep -q 'Uninitialized __global__ memory read' "$LOGS/canary.initcheck.log" && grep -Eq '(at add\+|in add\b)' "$LOGS/canary.initcheck.log" ||
    { echo "canary: initcheck saw nothing in add; the kernel filter does not reach our kernels" >&2; exit 1; }
  local op tool
  for tool in $TOOLS; do for op in $OPS; do echo "$op $tool"; done; done |
    xargs -P "$JOBS" -n 2 bash -c 'sanitize_one "$@"' _
  tar -C "$LOGS" -cJf "$OUT/logs.tar.xz" .
}

case $STAGE in
  build) build ;;
  faults) faults ;;
  cache) python3 scripts/gpu/cache_concurrency_check.py "$W" 2>&1 | tee "$OUT/cache.txt" ;;
  sanitize) sanitize ;;
  all) build; faults || echo "fault checks failed (OUT/faults.txt)"; sanitize ;;
  *) echo "unknown stage $STAGE" >&2; exit 2 ;;
esac
