#!/usr/bin/env bash
# The checks of this folder's README on the H100: the ops of out/s2 (made by
#   target/release/triton-opgen tests/ops/dot.tc --framework torch --arch sm_90a --no-build -o out/s2/dot
#   (and dot_tn, dot_nt, scripts/gpu/kernels/dot_accumulate_op.tc -> acc_nn,
#   scripts/gpu/kernels/dot_tn_accumulate_op.tc -> acc_tn), carried as out/s2.tar.xz.
# Usage: bash bench/results/2026-11-28-h100-split-n/checks.sh OUT_DIR
set -u
O=$1
mkdir -p out "$O" && tar -C out -xJf out/s2.tar.xz
for op in dot dot_tn; do bash out/s2/$op/build.sh > "$O/build_$op.log" 2>&1 & done; wait
python3 scripts/gpu/dot_tn_accumulate_check.py out/s2/acc_nn "$O" > "$O/acc_nn.log" 2>&1 &
python3 scripts/gpu/tma_check.py out/s2 --all --variants "TM=192 " --out "$O/tm192" > "$O/tm192.log" 2>&1
python3 scripts/gpu/tma_check.py out/s2 --all --variants "TMA=[34]" --out "$O/ws" > "$O/ws.log" 2>&1
python3 scripts/gpu/tma_check.py out/s2 --op dot_tn --all --out "$O/tn" > "$O/tn.log" 2>&1
wait
python3 scripts/gpu/dot_tn_accumulate_check.py out/s2/acc_tn "$O" > "$O/acc_tn.log" 2>&1
for f in "$O"/tm192/*.json "$O"/ws/*.json "$O"/tn/*.json; do
  python3 -c "import json,sys;d=json.load(open(sys.argv[1]))['summary'];print(sys.argv[1],{k:d[k] for k in ('pinned_variants','checks','wrong','skipped')})" "$f"
done
tail -2 "$O/acc_nn.log" "$O/acc_tn.log"
