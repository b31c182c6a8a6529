# copy_fill probe: one padall op folder built against three bridge libraries
# (std: flavors as landed; generic: every side element by element; mr: the
# 2-byte destination-vectorized flavor compiled with --misaligned-runs).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf padall.tar.xz && cd ..
nvidia-smi --query-gpu=name --format=csv,noheader; date
for f in std generic mr; do
  xz -dc out/cfexp/lib_$f.a.xz > out/cfexp/lib_$f.a
  mkdir -p out/pa_$f && cp -r out/padall/dot_padall out/pa_$f/
  (cd out/pa_$f/dot_padall && BRIDGE_LIB=$PWD/../../cfexp/lib_$f.a bash build.sh > build.log 2>&1; echo "$f build rc=$?") &
done
wait; date
for f in std generic mr; do
  mkdir -p /tmp/c_$f; TRITON_OPGEN_CACHE=/tmp/c_$f/a.json timeout 150 python3 scripts/gpu/copy_fill_probe.py out/pa_$f $OUT/$f 1025x1025x1025 2049x2049x2049 3001x3001x3001 > $OUT/$f.log 2>&1; echo "$f probe rc=$?"
done
date
