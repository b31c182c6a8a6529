#!/usr/bin/env python3
"""Where a pinned `triton::dot` config goes wrong: for each shape, which rows
and columns of C differ from the fp32 reference (summarised as ranges), with
probe inputs that isolate operand `a`, operand `b` and the epilogue.

    python3 scripts/gpu/dot_error_map.py out/torch "CONFIG" 128x192x64 ...
"""
import sys
import os

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def ranges(idx):
    idx = sorted(set(int(i) for i in idx))
    out, start, prev = [], None, None
    for i in idx:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append((start, prev))
            start = prev = i
    if start is not None:
        out.append((start, prev))
    return " ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in out[:24]) + (" ..." if len(out) > 24 else "")


def main():
    import torch
    from matmul_suite import load_op

    module, op = load_op(sys.argv[1])
    config = sys.argv[2]
    for spec in sys.argv[3:]:
        m, n, k = (int(x) for x in spec.split("x"))
        probes = {
            "random": (torch.randn(m, k), torch.randn(k, n)),
            "a=eye (C = b's rows)": (torch.eye(m, k), torch.randn(k, n)),
            "b=eye (C = a's cols)": (torch.randn(m, k), torch.eye(k, n)),
            "a=row index, b=ones": (torch.arange(m).float()[:, None].expand(m, k).contiguous() / 64, torch.ones(k, n)),
            "a=ones, b=col index": (torch.ones(m, k), torch.arange(n).float()[None, :].expand(k, n).contiguous() / 64),
        }
        for name, (a, b) in probes.items():
            a = a.half().cuda()
            b = b.half().cuda()
            module.pin_config(config)
            got = op(a, b).float()
            ref = a.float() @ b.float()
            bad = (got - ref).abs() > 1e-2 * (1 + ref.abs())
            nbad = int(bad.sum())
            print(f"{spec} {name}: {nbad} of {m * n} wrong")
            if nbad:
                rows = bad.any(dim=1).nonzero().flatten().tolist()
                cols = bad.any(dim=0).nonzero().flatten().tolist()
                print(f"   rows {ranges(rows)}")
                print(f"   cols {ranges(cols)}")
                r, c = bad.nonzero()[0].tolist()
                print(f"   first wrong ({r}, {c}): got {got[r, c].item()} want {ref[r, c].item()}")
                if name.startswith("a=row"):
                    g = got[r, :].cpu()
                    print(f"   row {r} got/K*64 (which row it holds) cols 0..200 step 8: {[round(x) for x in (g[:200:8] * 64 / k).tolist()]}")
                if name.startswith("a=ones"):
                    g = got[:, c].cpu()
                    print(f"   col {c} got/K*64 rows 0..128 step 8: {[round(x) for x in (g[:128:8] * 64 / k).tolist()]}")
                    g = got[r, :].cpu()
                    print(f"   row {r} got/K*64 (which col it holds) cols 0..200 step 4: {[round(x) for x in (g[:200:4] * 64 / k).tolist()]}")


if __name__ == "__main__":
    main()
