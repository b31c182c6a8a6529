#!/usr/bin/env bash
# `--tuned` end to end on one GPU, for a built dot op folder (OPDIR, its
# library built with $BRIDGE_LIB): warm a cache with the op in a fresh
# process (tuned_warm.py), embed that cache in a copy's kernels.cpp the way
# `triton-opgen --tuned` does (its text as a C string), rebuild the copy, and
# check it (tuned_check.py: warmed shapes captured into a CUDA graph with
# nothing benchmarked, an unwarmed one refused). Writes warm.json and
# tuned_check.log to $OUT; exit 1 if the check failed.
#   bash scripts/gpu/tuned_check.sh out/torch/dot
set -euo pipefail
OPDIR=${1:?usage: tuned_check.sh OPDIR}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out/tuned-results}
WORK=$(mktemp -d)
mkdir -p "$OUT"
TRITON_OPGEN_CACHE=$WORK/autotune.json timeout 60 python3 "$HERE/tuned_warm.py" "$OPDIR"
cp "$WORK/autotune.json" "$OUT/warm.json"
cp -r "$OPDIR" "$WORK/dot" && rm -f "$WORK"/dot/*.so
python3 - "$WORK/dot/kernels.cpp" "$WORK/autotune.json" <<'PY'
import json, sys
path, cache = sys.argv[1:]
s = open(path).read()
old = 'extern "C" const char triton_dot_tuned[] = "";'
assert s.count(old) == 1, "kernels.cpp holds no empty tuned table (built with --tuned already?)"
s = s.replace(old, 'extern "C" const char triton_dot_tuned[] = ' + json.dumps(open(cache).read()) + ';')
open(path, "w").write(s)
print("embedded the warmed cache")
PY
(cd "$WORK/dot" && bash build.sh > build.log 2>&1) || { tail -20 "$WORK/dot/build.log"; exit 1; }
timeout 60 python3 "$HERE/tuned_check.py" "$WORK/dot" 2>&1 | tee "$OUT/tuned_check.log"
grep -q "TUNED CHECK PASSED" "$OUT/tuned_check.log"
