#!/usr/bin/env python3
"""The op spec's `pad` line on the GPU: triton::dot (`pad N, K to 8 if`
2e9 multiply-adds or more with M and N at least 192), its gradients triton::dot_nt (`pad K`)
and triton::dot_tn (`pad M, N`), and examples::linear_relu (`pad N, K`).

    here:  triton-opgen OP.tc --framework torch --arch sm_90a --no-build -o out/padc/OP   (each op)
           tar cJf out/padc.tar.xz -C out padc
    there: python3 scripts/gpu/pad_check.py out/padc.tar.xz RESULTS

Values (odd shapes above and below the condition, strided views, empty K,
backward through both gradient ops, the fused bias + ReLU) against fp32
torch on the same inputs, then timings of odd shapes against cuBLAS (the
suite's interleaved do_bench rounds). Writes RESULTS/pad_check.json; exit 1
if a check failed.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from op_bundle import Results, unpack_and_build  # noqa: E402

# (M, N, K): padded ones first (dot.tc's line: M and N at least 192, 2e9
# multiply-adds or more, N or K odd), then shapes below it.
PADDED = [(2049, 2049, 2049), (1100, 4097, 1000), (4096, 4096, 129), (2003, 1001, 1000), (1000, 2000, 1007)]
UNPADDED = [(1, 1, 1), (100, 77, 153), (769, 769, 769), (16, 4097, 4096), (1000, 777, 1531), (1025, 1025, 1025)]
TIMED = [(1000, 777, 1531), (1025, 1025, 1025), (1537, 1537, 1537), (2049, 2049, 2049), (3001, 3001, 3001),
         (4097, 4097, 4097), (1000, 4097, 4096), (4096, 4096, 4097), (4096, 4096, 129), (769, 769, 769)]
TOL = {"float16": 3e-3, "bfloat16": 2e-2}


def rel_err(got, want):
    return ((got.float() - want).norm() / want.norm().clamp_min(1e-12)).item()


def padded_by_dot(m, n, k):
    """Whether dot.tc's `pad` line applies to this shape."""
    return bool(n % 8 or k % 8) and m >= 192 and n >= 192 and m * n * k >= 2e9


def padded_calls(torch, dot, last_config, r):
    """The padded path in the places a framework puts it: a side stream (its
    copies must follow that stream, not the default one) and a CUDA graph
    (each copy captured, replayed on new inputs)."""
    m, n, k = 2049, 2049, 2049
    for dt in (torch.float16, torch.bfloat16):
        name = str(dt)[6:]
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            # Queued behind a ~10 ms sleep on the side stream: copies issued on
            # another stream would read `a` before the in-place update lands.
            torch.cuda._sleep(20_000_000)
            a.add_(0.5)
            c = dot(a, b)
        side.synchronize()
        err = rel_err(c, a.float() @ b.float())
        r.record(f"dot padded on a side stream {m}^3 {name}", err < TOL[name], f"rel err {err:.2e}, {last_config()}")
        dot(a, b)  # decided before capture (tuning benchmarks cannot be captured)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = dot(a, b)
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        g.replay()
        torch.cuda.synchronize()
        err = rel_err(out, a.float() @ b.float())
        r.record(f"dot padded in a CUDA graph, replayed on new inputs {m}^3 {name}", err < TOL[name],
                 f"rel err {err:.2e}, {last_config()}")


def main():
    import torch
    from matmul_suite import interleaved_ms

    root = unpack_and_build(sys.argv[1], "padc", ["dot", "dot_nt", "dot_tn", "linear_relu"])
    del root
    import examples_linear_relu
    import triton_dot
    import triton_dot_nt
    import triton_dot_tn

    dot, dot_nt, dot_tn, lr = triton_dot.load(), triton_dot_nt.load(), triton_dot_tn.load(), examples_linear_relu.load()
    r = Results()
    padded_calls(torch, dot, triton_dot.last_config, r)
    for dt in (torch.float16, torch.bfloat16):
        name = str(dt)[6:]
        for m, n, k in PADDED + UNPADDED:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            want = a.float() @ b.float()
            c = dot(a, b)
            err = rel_err(c, want)
            r.record(f"dot {m}x{n}x{k} {name}", c.shape == want.shape and c.is_contiguous() and err < TOL[name],
                     f"rel err {err:.2e}, {triton_dot.last_config()}")
        # Views: a's rows 3001 elements apart (an odd leading stride), b transposed.
        big = torch.randn(1500, 3001, device="cuda", dtype=dt)
        a = big[:, :1200]
        b = torch.randn(900, 1200, device="cuda", dtype=dt).t()
        want = a.float() @ b.float()
        c = dot(a, b)
        r.record(f"dot strided view 1500x900x1200 {name}", rel_err(c, want) < TOL[name],
                 f"rel err {rel_err(c, want):.2e}, {triton_dot.last_config()}")
        # Empty K: zeros, as torch.matmul gives.
        c = dot(torch.randn(1200, 0, device="cuda", dtype=dt), torch.randn(0, 1001, device="cuda", dtype=dt))
        r.record(f"dot 1200x1001x0 {name}", c.shape == (1200, 1001) and bool((c == 0).all()), f"max |c| {c.abs().max().item()}")
        # Backward: da through dot_nt (its K is dot's N), db through dot_tn (its M, N are dot's K, N).
        for m, n, k in [(1000, 777, 1531), (2049, 1031, 1000)]:
            a = torch.randn(m, k, device="cuda", dtype=dt, requires_grad=True)
            b = torch.randn(k, n, device="cuda", dtype=dt, requires_grad=True)
            dc = torch.randn(m, n, device="cuda", dtype=dt)
            dot(a, b).backward(dc)
            da_want, db_want = dc.float() @ b.detach().float().t(), a.detach().float().t() @ dc.float()
            ea, eb = rel_err(a.grad, da_want), rel_err(b.grad, db_want)
            r.record(f"dot backward {m}x{n}x{k} {name}", ea < TOL[name] and eb < TOL[name],
                     f"da rel err {ea:.2e} ({triton_dot_nt.last_config()}), db {eb:.2e} ({triton_dot_tn.last_config()})")
        for m, n, k in [(1000, 777, 1531), (2049, 2049, 2049), (100, 77, 153)]:
            x = torch.randn(m, k, device="cuda", dtype=dt)
            w = torch.randn(k, n, device="cuda", dtype=dt) / k ** 0.5
            bias = torch.randn(n, device="cuda", dtype=dt)
            want = torch.relu(torch.addmm(bias.float(), x.float(), w.float()))
            err = rel_err(lr(x, w, bias), want)
            r.record(f"linear_relu {m}x{n}x{k} {name}", err < TOL[name], f"rel err {err:.2e}, {examples_linear_relu.last_config()}")
    # Host time a call takes to issue (no sync): padded 2049^3 against the
    # aligned 2049x2056x2056 it becomes, which launches directly.
    import time
    for m, n, k in [(2049, 2049, 2049), (2049, 2056, 2056)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        dot(a, b)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(50):  # 50 calls, ~400 launches: the queue does not fill
            dot(a, b)
        host_us = (time.perf_counter() - t0) / 50 * 1e6
        torch.cuda.synchronize()
        r.perf({"shape": [m, n, k], "dtype": "float16", "host_us_per_call": round(host_us, 1), "padded": padded_by_dot(m, n, k)})
    for dt in (torch.float16, torch.bfloat16):
        for m, n, k in TIMED:
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(k, n, device="cuda", dtype=dt)
            dot(a, b)
            config = triton_dot.last_config()
            ms = interleaved_ms({"ours": lambda: dot(a, b), "cublas": lambda: torch.matmul(a, b)})
            ours, cublas = ms["ours"][0], ms["cublas"][0]
            r.perf({"shape": [m, n, k], "dtype": str(dt)[6:], "ours_us": round(ours * 1e3, 1), "cublas_us": round(cublas * 1e3, 1),
                    "ours_over_cublas": round(cublas / ours, 3), "config": config, "padded": padded_by_dot(m, n, k)})
    r.finish(sys.argv[2] if len(sys.argv) > 2 else os.environ.get("OUT", "out/pad-results"), "pad_check.json",
             {"device": torch.cuda.get_device_name(), "torch": torch.__version__})


if __name__ == "__main__":
    main()
