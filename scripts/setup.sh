#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian 12 machine, only
# what is missing: LLVM 19 (Debian) for inkwell, and ptxas (CUDA 13.0, from
# PyPI) for checking the PTX we emit; onnxruntime and onnx (PyPI) for the ORT
# op tests; tensorflow-cpu (PyPI) for the TensorFlow op tests; jax and jaxlib
# (PyPI, CPU) for the JAX op tests. Safe to run again.
set -euo pipefail

need_apt=()
[ -x /usr/lib/llvm-19/bin/llvm-config ] || need_apt+=(llvm-19-dev libpolly-19-dev)
dpkg -s libzstd-dev >/dev/null 2>&1 || need_apt+=(libzstd-dev)
dpkg -s zlib1g-dev >/dev/null 2>&1 || need_apt+=(zlib1g-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

ptxas_path() {
  python3 - <<'PY' 2>/dev/null
import os, nvidia
for root in nvidia.__path__:
    p = os.path.join(root, "cu13", "bin", "ptxas")
    if os.access(p, os.X_OK):
        print(p)
        break
PY
}
if [ -z "$(ptxas_path)" ]; then
  echo "setup: installing ptxas (pip nvidia-cuda-nvcc==13.0.88)" >&2
  python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvcc==13.0.88
fi
# onnxruntime (CPU package) and onnx for the ONNX Runtime op tests (opgen/tests/ort_*.rs).
if ! python3 -c "import onnxruntime, onnx" 2>/dev/null; then
  echo "setup: installing onnxruntime==1.31.1 onnx==1.23.2 (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check onnxruntime==1.31.1 onnx==1.23.2 >&2
fi
# tensorflow-cpu: its headers and flags build the TensorFlow ops (opgen/tests/tf_*.rs).
if ! python3 -c "import tensorflow" >/dev/null 2>&1; then
  echo "setup: installing tensorflow-cpu==2.21.0 (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check tensorflow-cpu==2.21.0 >&2
fi
# jax and jaxlib (CPU package): jaxlib's XLA FFI headers build the JAX ops,
# and its CPU backend runs their checks (opgen/tests/jax_*.rs).
if ! JAX_PLATFORMS=cpu python3 -c "import jax" >/dev/null 2>&1; then
  echo "setup: installing jax==0.10.2 jaxlib==0.10.2 (pip)" >&2
  python3 -m pip install -q --disable-pip-version-check jax==0.10.2 jaxlib==0.10.2 >&2
fi
PTXAS="$(ptxas_path)"
[ -n "$PTXAS" ] || { echo "setup: ptxas not found after install" >&2; exit 1; }
echo "$PTXAS"
