#!/usr/bin/env bash
# On the GPU machine: the C++ side of the runtime bridge (plugins/bridge, the
# cxx boundary) end to end, through the ops users build: every bundled torch
# op (scripts/gpu/torch_ops_check.py: values, errors, threads, streams), the
# run-time faults that must arrive as torch errors (scripts/gpu/fault_check.py:
# out of memory, a variant over the shared-memory limit, pinned or not), and
# the JAX ops (scripts/gpu/jax_ops_run.sh). Carry out/torch.tar.xz
# (scripts/gpu/torch_ops_prepare.sh) and out/jax.tar.xz
# (scripts/gpu/jax_ops_prepare.sh); results and logs go to $OUT (or $1).
set -u
cd "$(dirname "$0")/../.."
source scripts/gpu/smem_fault_folders.sh
R=${1:-${OUT:-out/bridge-results}}
mkdir -p "$R"
: >"$R/summary.txt"
nvidia-smi --query-gpu=name --format=csv,noheader >"$R/gpu.txt"
rm -rf out/torch && tar -C out -xJf out/torch.tar.xz
python3 scripts/gpu/torch_ops_check.py out/torch >"$R/torch_ops.log" 2>&1
echo "torch ops: rc=$?" >>"$R/summary.txt"
# The add op with its variants claiming 300,000 bytes of shared memory (one,
# all); the packed folders share one copy of the bridge archive in $W/lib.
W=out/torch
BRIDGE_LIB=$PWD/$W/lib/libopgen_bridge.a smem_fault_folders "$W" "$R"
: >"$R/faults.txt"
# A fresh autotune cache: the torch checks above tuned the real add op, and
# the edited ones share its name and configs, so a remembered choice would be
# launched directly instead of showing the tuner's "every config failed".
export TRITON_OPGEN_CACHE=$(mktemp -d)
for c in oom smem_one smem_all; do
  python3 scripts/gpu/fault_check.py "$W" "$c" >>"$R/faults.txt" 2>&1
  echo "faults $c: rc=$?" >>"$R/summary.txt"
done
bash scripts/gpu/jax_ops_run.sh "$R/jax" >"$R/jax.log" 2>&1
echo "jax ops: rc=$?" >>"$R/summary.txt"
cat "$R/summary.txt"
