# Transposed operands at widths that are multiples of 8 but not of 16 on wgmma: dot_nt's K-major
# `b` at TN = 8, dot_tn's M-major `a` at TN = 8, 24, 40. Made here with
#   OP=dot_nt bash scripts/gpu/dot_tile_widths.sh out/nnt "8, 24, 40, 64"
#   OP=dot_tn bash scripts/gpu/dot_tile_widths.sh out/ntn "8, 24, 40, 64"
# and carried as out/nnt.tar.xz, out/ntn.tar.xz. Every narrow variant pinned in turn (tma_check.py
# --variants), checked against torch in float32; results packed into one file.
set -x
export PYTHONUNBUFFERED=1
tar -C out -xJf out/nnt.tar.xz && tar -C out -xJf out/ntn.tar.xz
nvidia-smi --query-gpu=name --format=csv,noheader; date
(cd out/nnt/dot_nt && bash build.sh > build.log 2>&1; echo "nt build rc=$?") &
(cd out/ntn/dot_tn && bash build.sh > build.log 2>&1; echo "tn build rc=$?") &
wait
R=/tmp/narrow; mkdir -p $R/nt $R/tn
timeout 150 python3 scripts/gpu/tma_check.py out/nnt --op dot_nt --variants "TN=(8|24|40) ALIGN=8" --out $R/nt > $R/nt/check.log 2>&1; echo "nt check rc=$?"; tail -4 $R/nt/check.log
timeout 150 python3 scripts/gpu/tma_check.py out/ntn --op dot_tn --variants "TN=(8|24|40) ALIGN=8" --out $R/tn > $R/tn/check.log 2>&1; echo "tn check rc=$?"; tail -4 $R/tn/check.log
date
tar czf $OUT/narrow.tgz -C /tmp narrow
