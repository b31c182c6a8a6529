# Call 1 (H100, 2026-12-07 05:35 UTC), from the repository root; carried:
# out/torch.tar.xz (OPGEN_FLAGS=--misaligned-runs bash scripts/gpu/torch_ops_prepare.sh),
# out/lr.tar.xz (examples/linear_relu.tc --misaligned-runs, --no-build, its bridge copy removed).
set -x
export PYTHONUNBUFFERED=1
cd out && tar xJf torch.tar.xz && tar xJf lr.tar.xz && cd ..
nvidia-smi --query-gpu=name --format=csv,noheader
export BRIDGE_LIB=$PWD/out/torch/lib/libopgen_bridge.a
timeout 230 python3 scripts/gpu/torch_ops_check.py out/torch --quick > $OUT/toc.log 2>&1; echo "torch_ops_check rc=$?"
mkdir -p out/padc && cp -r out/torch/dot out/torch/dot_nt out/torch/dot_tn out/lr/linear_relu out/padc/
(timeout 200 python3 scripts/gpu/pad_check.py out/padc $OUT/pad > $OUT/pad.log 2>&1; echo "pad_check rc=$?" >> $OUT/pad.log) &
timeout 200 python3 scripts/gpu/tma_check.py out/torch --out $OUT/check --variants "ALIGN=1" > $OUT/tma.log 2>&1
wait
