# Back-to-back time of padded calls by config (scripts/gpu/padded_host_probe.py). Carry
# out/torch.tar.xz (its bridge library) and out/padall.tar.xz (see ../2026-12-07i-h100-pad-tf).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz torch/lib && tar xJf padall.tar.xz && cd ..
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
(cd out/padall/dot_padall && bash build.sh > build.log 2>&1; echo "build rc=$?")
timeout 150 python3 scripts/gpu/padded_host_probe.py out/padall $OUT 1025x1025x1025 1000x777x1531 2049x2049x2049 > $OUT/probe.log 2>&1
echo "probe rc=$?"; date
