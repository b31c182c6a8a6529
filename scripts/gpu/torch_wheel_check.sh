#!/usr/bin/env bash
# The torch half of issue 17's wheel test, on the GPU machine (which has torch,
# g++ and a GPU but no Rust): triton-opgen, built on the build machine, generates,
# builds and packs add, dot and the two ops dot's gradient calls as wheels
# (--wheel), which go into a fresh venv and run there against torch, checked
# against torch's own add and matmul, backward included.
# Carried: out/tw.tar.xz (tw/triton-opgen and the LLVM 19 libraries it links,
# which this machine lacks: `tar -cf - tw | xz` of the binary and
# libLLVM.so.19.1, libz3.so.4, libicuuc.so.72, libicudata.so.72), optionally
# out/tw_bin/triton-opgen (a newer binary). Usage: bash scripts/gpu/torch_wheel_check.sh OUT
set -euo pipefail
OUT=${1:?usage: torch_wheel_check.sh OUT}
mkdir -p "$OUT"
tar -C /tmp -xJf out/tw.tar.xz
[ -f out/tw_bin/triton-opgen ] && cp out/tw_bin/triton-opgen /tmp/tw/
export LD_LIBRARY_PATH=/tmp/tw/lib
TOOL=/tmp/tw/triton-opgen
$TOOL --version
for op in add dot dot_nt dot_tn; do
  $TOOL tests/ops/$op.tc --framework torch --arch sm_90a --wheel -o /tmp/wheel_$op 2>&1 | tail -3
done
ls -la /tmp/wheel_*/dist/
rm -rf /tmp/wheel_venv
python3 -m venv /tmp/wheel_venv
# The fresh venv sees this machine's torch (installed outside the base
# interpreter, so --system-site-packages would not) and nothing else of it.
TORCH_SITE=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')
echo "$TORCH_SITE" > "$(/tmp/wheel_venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/machine_torch.pth"
/tmp/wheel_venv/bin/pip install -q --no-deps --no-index /tmp/wheel_*/dist/*.whl
cd /tmp
/tmp/wheel_venv/bin/python - <<'PY' | tee "$OUT/torch_wheel_check.txt"
import importlib.metadata as md
import torch
import triton_add, triton_dot

for pkg in ("triton_add", "triton_dot"):
    print(f"{pkg} {md.version(pkg)} requires {md.requires(pkg)}; installed at {__import__(pkg).__file__}")
    assert "/tmp/wheel_venv/" in __import__(pkg).__file__, "not the installed copy"
add, dot = triton_add.load(), triton_dot.load()
torch.manual_seed(0)
for n in (1, 1000, 1 << 20):
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    assert torch.equal(add(x, y), x + y), n
    print(f"ok: add n={n} equals x + y")
for m, n, k in ((1, 1, 1), (1000, 1000, 1000), (4096, 4096, 4096), (3000, 17, 256)):
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        got, ref = dot(a, b).float(), (a.float() @ b.float())
        err = ((got - ref).abs().max() / (ref.abs().max() + 1e-6)).item()
        assert err < 2e-2, (m, n, k, dtype, err)
        print(f"ok: dot {m}x{n}x{k} {dtype} rel err {err:.2e}")
a = torch.randn(64, 32, device="cuda", dtype=torch.float16, requires_grad=True)
b = torch.randn(32, 48, device="cuda", dtype=torch.float16, requires_grad=True)
dot(a, b).float().sum().backward()
ga = torch.ones(64, 48, device="cuda", dtype=torch.float16) @ b.detach().t()
assert (a.grad.float() - ga.float()).abs().max().item() < 1e-1
print("ok: dot backward through the installed wheels (load() loaded triton_dot_nt and triton_dot_tn)")
print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
PY
# Without the wheel of an op the gradient calls: forward works, backward names it.
/tmp/wheel_venv/bin/pip uninstall -q -y triton_dot_tn
/tmp/wheel_venv/bin/python - <<'PY' | tee -a "$OUT/torch_wheel_check.txt"
import torch
import triton_dot

dot = triton_dot.load()
a = torch.randn(64, 32, device="cuda", dtype=torch.float16, requires_grad=True)
b = torch.randn(32, 48, device="cuda", dtype=torch.float16, requires_grad=True)
out = dot(a, b)
try:
    out.float().sum().backward()
    raise SystemExit("FAIL: backward ran without triton::dot_tn")
except RuntimeError as e:
    msg = str(e).splitlines()[0]
    assert "triton::dot_tn" in msg and "import triton_dot_tn" in msg, msg
    print(f"ok: without triton_dot_tn installed, backward says: {msg}")
PY
