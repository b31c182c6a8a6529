"""Runs the codegen test kernels (dumped by `TRITONC_PTX_DUMP=out/codegen cargo
test --test codegen_kernels dump_ptx`) on the GPU and checks their values
against torch. Usage: python3 compiler/tests/common/gpu_codegen_check.py out/codegen
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts/gpu"))
import torch  # noqa: E402
from cuda_driver import Kernel  # noqa: E402

d = sys.argv[1]
entries = {e["name"]: e for e in json.load(open(os.path.join(d, "manifest.json")))}
dev = "cuda"
failures = []


class Skip(Exception):
    pass


def kernel(name):
    path = os.path.join(d, entries[name]["file"])
    if not os.path.exists(path):
        raise Skip(name)
    return Kernel(path, entries[name])


def check(name, got, want, atol=1e-5, rtol=1e-5):
    torch.cuda.synchronize()
    ok = torch.allclose(got.float(), want.float(), atol=atol, rtol=rtol, equal_nan=True)
    err = (got.float() - want.float()).abs().max().item() if got.numel() else 0
    print(f"{'ok  ' if ok else 'FAIL'} {name}: max abs err {err:.3g}")
    if not ok:
        failures.append(name)


def cdiv(a, b):
    return (a + b - 1) // b


def check_vector_adds():
    for name, dtype, size, n in [("add_f32", torch.float32, 1024, 8192), ("add_masked", torch.float32, 1024, 5000),
                                 ("add_masked16", torch.float32, 1024, 4096 + 48),
                                 ("add_f16_masked", torch.float16, 128, 1000), ("add_small", torch.float32, 64, 640)]:
        x = torch.randn(n + 64, device=dev, dtype=dtype)
        y = torch.randn(n + 64, device=dev, dtype=dtype)
        z = torch.full((n + 64,), 7.0, device=dev, dtype=dtype)
        kernel(name)((cdiv(n, size),), x=x, y=y, z=z, n=n)
        want = torch.full_like(z, 7.0)
        want[:n] = x[:n] + y[:n]
        check(name, z, want, atol=1e-2 if dtype == torch.float16 else 1e-5)


def check_transposes():
    # transposes
    for name, dtype in [("transpose_f32", torch.float32), ("transpose_f16", torch.float16)]:
        m, n = 100, 70
        x = torch.randn(m, 80, device=dev, dtype=dtype)
        y = torch.zeros(n, 104, device=dev, dtype=dtype)
        kernel(name)((cdiv(m, 32), cdiv(n, 32)), x=x, y=y, m=m, n=n, stride_x=80, stride_y=104)
        want = torch.zeros_like(y)
        want[:, :m] = x[:m, :n].t()
        check(name, y, want)


def check_softmax():
    # softmax
    m, n = 37, 200
    x = torch.randn(m, 256, device=dev)
    y = torch.zeros(m, 256, device=dev)
    kernel("softmax")((cdiv(m, 4),), x=x, y=y, m=m, n=n, stride=256)
    want = torch.zeros_like(y)
    want[:, :n] = torch.softmax(x[:, :n], dim=1)
    check("softmax", y, want, atol=1e-5, rtol=1e-3)


def check_sums():
    # sums
    x = torch.randn(32, 32, device=dev)
    for name, axis in [("row_sum", 1), ("col_sum", 0)]:
        y = torch.zeros(32, device=dev)
        kernel(name)((1,), x=x, y=y, stride=32)
        check(name, y, x.sum(dim=axis), atol=1e-4)


def check_while_loop():
    # while loop
    x = torch.randn(5 * 256, device=dev)
    y = torch.zeros(256, device=dev)
    kernel("while_acc")((1,), x=x, y=y, n=5)
    check("while_acc", y, x.view(5, 256).sum(0), atol=1e-4)


def check_dots():
    # dots
    for name, dtype in [("dot_f32", torch.float32), ("dot_f16", torch.float16)]:
        a = torch.randn(32, 32, device=dev, dtype=dtype)
        b = torch.randn(32, 32, device=dev, dtype=dtype)
        c = torch.zeros(32, 32, device=dev)
        kernel(name)((1,), a=a, b=b, c=c, stride_a=32, stride_b=32, stride_c=32)
        check(name, c, a.float() @ b.float(), atol=1e-3, rtol=1e-3)


def check_matmul():
    # matmul: loop over K with masked loads (A has rows to spare, B columns to spare)
    M, N, KD = 100, 90, 70
    a = torch.randn(128, 72, device=dev, dtype=torch.float16)
    b = torch.randn(KD, 128, device=dev, dtype=torch.float16)
    c = torch.zeros(M, 96, device=dev)
    kernel("matmul_f16")((cdiv(M, 32), cdiv(N, 32)), A=a, B=b, C=c, M=M, N=N, K=KD, lda=72, ldb=128, ldc=96)
    want = torch.zeros_like(c)
    want[:, :N] = a[:M, :KD].float() @ b[:, :N].float()
    check("matmul_f16", c, want, atol=1e-2, rtol=1e-3)


def check_misc():
    # misc: bytes in, halves/bools/atomic max/atomic add out (one program, n < 128)
    n = 120
    by = torch.randint(0, 6, (128,), device=dev, dtype=torch.int8)
    flags = torch.zeros(128, device=dev, dtype=torch.bool)
    halves = torch.zeros(128, device=dev, dtype=torch.float16)
    total = torch.randn(128, device=dev)
    counts = torch.randint(-50, 50, (128,), device=dev, dtype=torch.int32)
    total0, counts0 = total.clone(), counts.clone()
    kernel("misc")((1,), bytes=by, flags=flags, halves=halves, total=total, counts=counts, n=n)
    vf = by[:n].float()
    m3 = torch.maximum(torch.exp(vf), torch.log(vf.abs())) + torch.minimum(vf.abs().sqrt(), torch.sin(vf))
    sel = torch.where(vf > 0, m3, torch.cos(vf) * -vf) * 2  # n > 100 doubles
    check("misc halves", halves[:n], sel.half(), atol=1e-2, rtol=1e-2)
    check("misc flags", flags[:n], vf > 0)
    vi = by[:n].int()
    q = torch.div(vi, 3, rounding_mode="trunc")
    x = ((q << 3) >> (vi - q * 3)) ^ vi
    check("misc counts", counts[:n], torch.maximum(counts0[:n], x))
    want = total0.clone()
    want[:n] += sel
    want[0] = sel.sum() + sel[0] + 1
    check("misc total", total, want, atol=1e-2, rtol=1e-3)


def check_scalar_atomic():
    # scalar atomic: every thread sees the old counter; exchanged tile returns the old x
    counter = torch.tensor([5], device=dev, dtype=torch.int32)
    tickets = torch.zeros(4, device=dev, dtype=torch.int32)
    xs = torch.randint(-9, 9, (64,), device=dev, dtype=torch.int32)
    x0 = xs.clone()
    kernel("scalar_atomic")((1,), counter=counter, tickets=tickets, x=xs)
    check("scalar_atomic ticket", tickets[:1], (5 + x0.sum()).view(1))
    check("scalar_atomic counter", counter, torch.tensor([6], device=dev))
    check("scalar_atomic exchange", xs, torch.arange(64, device=dev))


def check_reduce_broadcast_transpose():
    # reduce, broadcast back, subtract, transpose (tiles with replicated threads too)
    for name, m, n, axis, red in [("rbt_64x1_0", 64, 1, 0, "sum"), ("rbt_2x2_1", 2, 2, 1, "amax"),
                                  ("rbt_8x128_0", 8, 128, 0, "sum"), ("rbt_64x128_1", 64, 128, 1, "amin")]:
        stride = max(16, ((max(m, n) + 15) // 16) * 16)
        x = torch.randn(max(m, n), stride, device=dev)
        y = torch.zeros(max(m, n), stride, device=dev)
        kernel(name)((1,), x=x, y=y, stride=stride)
        v = x[:m, :n]
        want = torch.zeros_like(y)
        want[:n, :m] = (v - getattr(torch, red)(v, dim=axis, keepdim=True)).t()
        check(name, y, want, atol=1e-4)


def check_reduce_3d():
    x = torch.randn(4 * 8 * 16, device=dev)
    y = torch.zeros(4 * 16, device=dev)
    kernel("reduce3d")((1,), x=x, y=y)
    check("reduce3d", y, x.view(4, 8, 16).sum(1).reshape(-1), atol=1e-4)


def check_types_mix():
    b16 = torch.randn(64, device=dev, dtype=torch.bfloat16)
    f64s = torch.randn(64, device=dev, dtype=torch.float64)
    a8 = torch.randint(-8, 8, (16, 16), device=dev, dtype=torch.int8)
    c32 = torch.zeros(16, 16, device=dev, dtype=torch.int32)
    b0, d0 = b16.clone(), f64s.clone()
    kernel("types_mix")((1,), b16=b16, f64s=f64s, a8=a8, c32=c32, scale=1.5)
    check("types_mix bf16", b16, (b0.float() * 1.5).bfloat16(), atol=0, rtol=0)
    check("types_mix f64", f64s, d0 * d0 + 1, atol=1e-12, rtol=0)
    check("types_mix i8 dot", c32, (a8.cpu().long() @ a8.cpu().long().t()).to(dev), atol=0, rtol=0)


for check_fn in [check_vector_adds, check_transposes, check_softmax, check_sums, check_while_loop, check_dots, check_matmul, check_misc, check_scalar_atomic, check_reduce_broadcast_transpose, check_reduce_3d, check_types_mix]:
    try:
        check_fn()
    except Skip as e:
        print(f"skip {check_fn.__name__}: no PTX for {e}")

print("FAILURES:", failures if failures else "none")
sys.exit(1 if failures else 0)
