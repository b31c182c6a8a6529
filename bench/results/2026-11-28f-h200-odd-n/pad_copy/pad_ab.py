import torch, torch.nn.functional as F, triton.testing as tt, sys
def cpad(x, kp, np_):
    return F.pad(x, (0, np_ - x.shape[1], 0, kp - x.shape[0])).contiguous()
def strips(x, kp, np_):
    k, n = x.shape
    out = x.new_empty((kp, np_))
    out[:k, :n].copy_(x)
    if np_ != n: out[:k, n:].zero_()
    if kp != k: out[k:, :].zero_()
    return out
r8 = lambda v: (v + 7) // 8 * 8
print("| rows x cols | dtype | constant_pad_nd us | strips us | host us cpad | host us strips |")
for dt in (torch.float16,):
    for k, n in [(733, 2049), (2049, 2049), (1031, 2049), (2049, 1031), (4096, 4097), (4097, 4096), (4096, 32001), (4096, 50257), (50257, 4096)]:
        x = torch.randn(k, n, device="cuda", dtype=dt)
        kp, np_ = r8(k), r8(n)
        assert torch.equal(cpad(x, kp, np_), strips(x, kp, np_))
        res = {}
        for rnd in range(5):
            for name, f in (("c", cpad), ("s", strips)):
                res.setdefault(name, []).append(tt.do_bench(lambda: f(x, kp, np_), warmup=10, rep=40, return_mode="median"))
        import time
        host = {}
        for name, f in (("c", cpad), ("s", strips)):
            torch.cuda.synchronize(); t = time.perf_counter()
            for _ in range(200): f(x, kp, np_)
            host[name] = (time.perf_counter() - t) / 200 * 1e6
            torch.cuda.synchronize()
        med = {kk: sorted(v)[2] * 1e3 for kk, v in res.items()}
        print(f"| {k}x{n} | {str(dt)[6:]} | {med['c']:.1f} | {med['s']:.1f} | {host['c']:.1f} | {host['s']:.1f} |", flush=True)
