# dot_nt / dot_tn with dot's num_stages [3, 8] and split_k [1, 2, 4] (grad2) against the landed
# specs (grad1), each bundle dot + dot_nt + dot_tn --no-build for sm_90a without its bridge copy;
# out/gradlib/libopgen_bridge.a.xz: `strip -g` of target/release/libopgen_bridge.a, xz.
export PYTHONUNBUFFERED=1
mkdir -p out/lib && xz -dc out/gradlib/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader; date
mkdir -p /tmp/c2; TRITON_OPGEN_CACHE=/tmp/c2/a.json timeout 280 python3 scripts/gpu/dot_grad_bench.py out/grad2.tar.xz $OUT/grad2 > $OUT/grad2.log 2>&1; echo "grad2 rc=$?"; date
mkdir -p /tmp/c1; TRITON_OPGEN_CACHE=/tmp/c1/a.json timeout 250 python3 scripts/gpu/dot_grad_bench.py out/grad1.tar.xz $OUT/grad1 > $OUT/grad1.log 2>&1; echo "grad1 rc=$?"; date
