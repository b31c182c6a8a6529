#!/usr/bin/env python3
"""triton::cross_entropy forward and backward through the torch ops, on the GPU.

    for op in cross_entropy cross_entropy_dx; do
        target/release/triton-opgen tests/ops/$op.tc --framework torch --arch sm_90a --no-build -o out/ce/$op; done
    tar -C out -cJf out/ce.tar.xz ce
    python3 scripts/gpu/cross_entropy_check.py out/ce.tar.xz RESULTS     # on the GPU machine

Checks the per-row loss against F.cross_entropy(reduction='none') (fp32,
fp16, bf16; vocabularies of 10, 1000, 4096, 32000, 50257, 128256 columns;
ignored targets -100) and the logits gradient through torch autograd against
torch's; in float64 the loss too, and torch.autograd.gradcheck; and times forward and forward+backward against torch and a Triton
3.6 forward (online logsumexp over blocks, written here) in one process.
Writes RESULTS/cross_entropy_check.json.
"""
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from op_bundle import Results, unpack_and_build  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
ops = ["cross_entropy", "cross_entropy_dx"]
unpack_and_build(bundle, "ce", ops)
for op in ops:
    __import__(f"triton_{op}").load()
ce = torch.ops.triton.cross_entropy


@triton.jit
def triton_ce_fwd(loss_ptr, x_ptr, t_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    run_max = -float("inf")
    run_sum = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        new_max = tl.maximum(run_max, tl.max(x, axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        run_max = new_max
    t = tl.load(t_ptr + row)
    picked = tl.load(x_ptr + row * n_cols + t).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(run_sum) + run_max - picked)


def triton_cross_entropy(x, t):
    m, n = x.shape
    loss = torch.empty(m, device=x.device, dtype=torch.float32)
    block = min(triton.next_power_of_2(n), 8192)
    triton_ce_fwd[(m,)](loss, x, t, n, BLOCK=block, num_warps=8 if block >= 4096 else 4)
    return loss


results = Results()
record = results.record


TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for m, n in ((1, 10), (37, 1000), (64, 4096), (33, 32000), (16, 50257), (8, 128256)):
        x = (torch.randn(m, n, device="cuda") * 3).to(dtype).requires_grad_()
        t = torch.randint(0, n, (m,), device="cuda")
        if m > 2:
            t[1] = -100
        loss = ce(x, t)
        xr = x.detach().float().requires_grad_()
        ref = F.cross_entropy(xr, t, reduction="none", ignore_index=-100)
        err = ((loss - ref).abs() / (1 + ref.abs())).max().item()
        w = torch.rand(m, device="cuda")
        (g,) = torch.autograd.grad(loss, x, w)
        (gr,) = torch.autograd.grad(ref, xr, w)
        gerr = (g.float() - gr).abs().max().item()
        tol = TOL[dtype]
        ok = err <= tol and gerr <= tol and loss.dtype == torch.float32 and g.dtype == dtype
        record(f"{str(dtype).split('.')[-1]} {m}x{n}", ok, f"loss {err:.1e} dlogits {gerr:.1e}")

# float64: the loss is float64 too (`dtype S from T`), computed in double
# precision (software exp/log); values against torch's float64 loss, and
# torch.autograd.gradcheck of the loss in the logits (the spec's backward,
# cross_entropy_dx). One-tile rows and, past 16384 columns, the looping kernel.
for m, n in ((1, 10), (4, 10), (5, 1000), (3, 20000)):
    x = torch.randn(m, n, device="cuda", dtype=torch.float64) * 3
    t = torch.randint(0, n, (m,), device="cuda")
    if m > 2:
        t[1] = -100
    loss = ce(x, t)
    ref = F.cross_entropy(x, t, reduction="none", ignore_index=-100)
    err = ((loss - ref).abs() / (1 + ref.abs())).max().item()
    xg, xr = x.clone().requires_grad_(), x.clone().requires_grad_()
    w = torch.rand(m, device="cuda", dtype=torch.float64)
    (g,) = torch.autograd.grad(ce(xg, t), xg, w)
    (gr,) = torch.autograd.grad(F.cross_entropy(xr, t, reduction="none", ignore_index=-100), xr, w)
    gerr = (g - gr).abs().max().item()
    fast = m * n > 5000
    passed = torch.autograd.gradcheck(lambda v: ce(v, t), (xg,), fast_mode=fast, raise_exception=False)
    ok = loss.dtype == torch.float64 and g.dtype == torch.float64 and err <= 1e-13 and gerr <= 1e-13 and passed
    record(f"float64 {m}x{n} gradcheck", ok,
           f"loss {loss.dtype} {err:.1e}, dlogits {gerr:.1e}; gradcheck{' (fast mode)' if fast else ''} {'passed' if passed else 'FAILED'}")

for dtype in (torch.float32, torch.bfloat16):
    for m, n in ((4096, 32000), (4096, 128256), (16384, 4096)):
        x = torch.randn(m, n, device="cuda").to(dtype)
        t = torch.randint(0, n, (m,), device="cuda")
        ce(x, t)
        t_ours = triton.testing.do_bench(lambda: ce(x, t), warmup=10, rep=100)
        t_torch = triton.testing.do_bench(lambda: F.cross_entropy(x, t, reduction="none"), warmup=10, rep=100)
        t_triton = triton.testing.do_bench(lambda: triton_cross_entropy(x, t), warmup=10, rep=100)
        xg = x.clone().requires_grad_()
        w = torch.rand(m, device="cuda")
        tb_ours = triton.testing.do_bench(lambda: torch.autograd.grad(ce(xg, t), xg, w), warmup=5, rep=50)
        tb_torch = triton.testing.do_bench(lambda: torch.autograd.grad(F.cross_entropy(xg, t, reduction="none"), xg, w), warmup=5, rep=50)
        entry = {"dtype": str(dtype).split(".")[-1], "shape": [m, n], "fwd_ms": round(t_ours, 4), "torch_fwd_ms": round(t_torch, 4),
                 "triton_fwd_ms": round(t_triton, 4), "fwd_vs_torch": round(t_torch / t_ours, 3), "fwd_vs_triton": round(t_triton / t_ours, 3),
                 "fwd_bwd_ms": round(tb_ours, 4), "torch_fwd_bwd_ms": round(tb_torch, 4), "fwd_bwd_vs_torch": round(tb_torch / tb_ours, 3)}
        results.perf(entry)

results.finish(results_dir, "cross_entropy_check.json", {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__})
