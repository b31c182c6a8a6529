#!/usr/bin/env python3
"""triton::layer_norm forward and backward through the torch ops, on the GPU.

    # here: the four ops (forward, dx, dw, col_sum for db), packed
    for op in layer_norm layer_norm_dx layer_norm_dw col_sum; do
        target/release/triton-opgen tests/ops/$op.tc --framework torch --arch sm_90a --no-build -o out/ln/$op; done
    tar -C out -cJf out/ln.tar.xz ln
    python3 scripts/gpu/layer_norm_check.py out/ln.tar.xz RESULTS     # on the GPU machine

Checks y, mean and rstd against torch.nn.functional.layer_norm (fp32, fp16,
bf16; odd shapes, eps given), the gradients of x, w and b through torch
autograd (the spec's backward: layer_norm_dx, layer_norm_dw, col_sum) against
torch's, in float64 also torch.autograd.gradcheck, and times forward and forward+backward against torch and a Triton
3.6 forward kernel (written here) in one process. Writes RESULTS/layer_norm_check.json.
"""
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from op_bundle import Results, unpack_and_build  # noqa: E402

bundle, results_dir = sys.argv[1], sys.argv[2]
ops = ["layer_norm", "layer_norm_dx", "layer_norm_dw", "col_sum"]
unpack_and_build(bundle, "ln", ops)
for op in ops:
    __import__(f"triton_{op}").load()
ln = torch.ops.triton.layer_norm


@triton.jit
def triton_ln_fwd(y_ptr, x_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (d * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def triton_layer_norm(x, w, b, eps=1e-5):
    m, n = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(n)
    triton_ln_fwd[(m,)](y, x, w, b, n, eps, BLOCK=block, num_warps=4 if block <= 2048 else 8 if block <= 8192 else 16)
    return y


results = Results()
record = results.record


TOL = {torch.float32: 2e-5, torch.float16: 2e-2, torch.bfloat16: 1e-1}
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for m, n, eps in ((1, 1, 1e-5), (37, 300, 1e-5), (128, 1024, 1e-6), (9, 4099, 1e-3), (300, 16384, 1e-5)):
        x = (torch.randn(m, n, device="cuda") * 2 + 0.5).to(dtype).requires_grad_()
        w = torch.randn(n, device="cuda").to(dtype).requires_grad_()
        b = torch.randn(n, device="cuda").to(dtype).requires_grad_()
        y, mean, rstd = ln(x, w, b, eps=eps)
        ref = F.layer_norm(x.float(), (n,), w.float(), b.float(), eps)
        err_y = (y.float() - ref).abs().max().item()
        xf = x.detach().float()
        err_mean = (mean - xf.mean(-1)).abs().max().item()
        err_rstd = ((rstd - torch.rsqrt(xf.var(-1, unbiased=False) + eps)).abs() / (rstd.abs() + 1)).max().item()
        dy = torch.randn_like(y)
        gx, gw, gb = torch.autograd.grad(y, (x, w, b), dy)
        xr, wr, br = (t.detach().float().requires_grad_() for t in (x, w, b))
        rx, rw, rb = torch.autograd.grad(F.layer_norm(xr, (n,), wr, br, eps), (xr, wr, br), dy.float())
        errs = [(g.float() - r).abs().max().item() / (1 + r.abs().max().item()) for g, r in ((gx, rx), (gw, rw), (gb, rb))]
        tol = TOL[dtype]
        ok = err_y <= tol * 10 and err_mean <= tol and err_rstd <= tol and all(e <= tol * 10 for e in errs)
        record(f"{str(dtype).split('.')[-1]} {m}x{n} eps={eps}", ok,
               f"y {err_y:.1e} mean {err_mean:.1e} rstd {err_rstd:.1e}; dx {errs[0]:.1e} dw {errs[1]:.1e} db {errs[2]:.1e}")

# float64: mean and rstd are float64 too (`dtype S from T`); values against
# torch's float64 layer norm, and torch.autograd.gradcheck of y in x, w and b
# (the spec's backward: layer_norm_dx, layer_norm_dw, col_sum).
for m, n, eps in ((1, 1, 1e-5), (3, 7, 1e-5), (5, 300, 1e-3), (4, 4099, 1e-5)):
    x = torch.randn(m, n, device="cuda", dtype=torch.float64) * 2 + 0.5
    w = torch.randn(n, device="cuda", dtype=torch.float64)
    b = torch.randn(n, device="cuda", dtype=torch.float64)
    y, mean, rstd = ln(x, w, b, eps=eps)
    err_y = (y - F.layer_norm(x, (n,), w, b, eps)).abs().max().item()
    err_mean = (mean - x.mean(-1)).abs().max().item()
    err_rstd = ((rstd - torch.rsqrt(x.var(-1, unbiased=False) + eps)).abs() / (rstd.abs() + 1)).max().item()
    args = tuple(t.clone().requires_grad_() for t in (x, w, b))
    fast = m * n > 2000
    passed = torch.autograd.gradcheck(lambda *a: ln(*a, eps=eps)[0], args, fast_mode=fast, raise_exception=False)
    ok = (mean.dtype == rstd.dtype == torch.float64 and err_y <= 1e-12 and err_mean <= 1e-13 and err_rstd <= 1e-13 and passed)
    record(f"float64 {m}x{n} eps={eps} gradcheck", ok,
           f"y {err_y:.1e} mean {mean.dtype} {err_mean:.1e} rstd {err_rstd:.1e}; gradcheck{' (fast mode)' if fast else ''} {'passed' if passed else 'FAILED'}")

for dtype in (torch.float32, torch.float16, torch.bfloat16):
    for n in (1024, 4096, 8192):
        m = 4096
        x = torch.randn(m, n, device="cuda").to(dtype)
        w = torch.randn(n, device="cuda").to(dtype)
        b = torch.randn(n, device="cuda").to(dtype)
        ln(x, w, b)
        t_ours = triton.testing.do_bench(lambda: ln(x, w, b), warmup=25, rep=200)
        t_torch = triton.testing.do_bench(lambda: F.layer_norm(x, (n,), w, b), warmup=25, rep=200)
        t_triton = triton.testing.do_bench(lambda: triton_layer_norm(x, w, b), warmup=25, rep=200)
        xg, wg, bg = (t.clone().requires_grad_() for t in (x, w, b))
        dy = torch.randn_like(x)

        def ours_fb():
            y, _, _ = ln(xg, wg, bg)
            torch.autograd.grad(y, (xg, wg, bg), dy)

        def torch_fb():
            torch.autograd.grad(F.layer_norm(xg, (n,), wg, bg), (xg, wg, bg), dy)

        tb_ours = triton.testing.do_bench(ours_fb, warmup=10, rep=100)
        tb_torch = triton.testing.do_bench(torch_fb, warmup=10, rep=100)
        entry = {"dtype": str(dtype).split(".")[-1], "shape": [m, n], "fwd_ms": round(t_ours, 4), "torch_fwd_ms": round(t_torch, 4),
                 "triton_fwd_ms": round(t_triton, 4), "fwd_vs_torch": round(t_torch / t_ours, 3), "fwd_vs_triton": round(t_triton / t_ours, 3),
                 "fwd_bwd_ms": round(tb_ours, 4), "torch_fwd_bwd_ms": round(tb_torch, 4), "fwd_bwd_vs_torch": round(tb_torch / tb_ours, 3)}
        results.perf(entry)

results.finish(results_dir, "layer_norm_check.json", {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__})
