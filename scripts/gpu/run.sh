#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, after out/gpu was built
# here by scripts/gpu/build.sh and carried: every GPU check and benchmark, one
# results folder ($OUT, or the first argument). Exit status 1 if any check failed.
set -uo pipefail
out=${1:-${OUT:-out/gpu-results}}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/device.txt" 2>&1
status=0
python3 scripts/gpu/check.py --out "$out" > "$out/check.log" 2>&1 || status=1
python3 scripts/gpu/mma_check.py out/gpu/mma > "$out/mma.log" 2>&1 || status=1
R=out/gpu/runtime
cache=$(mktemp -d)/autotune.json
runtime() { # title, flags...
  echo "## $1" >> "$out/runtime.log"; shift
  $R/runtime_gpu_check --ptx-dir $R/add --cache "$cache" "$@" >> "$out/runtime.log" 2>&1 || status=1
}
runtime "run 1: fresh cache" --cubin $R/probe_sm90.cubin --softmax-dir $R/softmax
runtime "run 2: second process, same cache" --expect-cached
runtime "run 3: corrupted cache" --corrupt-cache
runtime "run 4: rebuilt cache reused" --expect-cached
grep -E "passed|failed|FAILED" "$out/check.log" | tail -20
grep -E "^checked|TFLOP|FAIL" "$out/mma.log" | tail -12
grep -E "^\{.*\}$" "$out/runtime.log" | tail -4
exit $status
