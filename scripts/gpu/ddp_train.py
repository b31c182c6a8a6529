#!/usr/bin/env python3
"""Data-parallel training with the generated ops (issue 18, part 2).

    torchrun --nproc_per_node 2 scripts/gpu/ddp_train.py out/torch [--steps 50]

One process per GPU (NCCL). A tiny model whose linear layers run through
`triton::dot` (its gradients through the spec's backward: `triton::dot_nt`,
`triton::dot_tn`) and whose attention-like mixing runs through
`triton::softmax` (the op has no backward in its spec: a torch.autograd
Function gives it the softmax gradient in torch) is trained with
DistributedDataParallel beside the same model on torch.matmul / torch.softmax,
from the same initial weights and on the same batches (each rank its own
shard). Checked: the loss of every step matches the reference within a
tolerance, and after training the weights are identical on both ranks (the
gradient all-reduce ran). Rank 0 writes $OUT/ddp_train.json.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

# Keep NVLink multicast off (the machine's notes): NCCL, PyTorch, NVSHMEM.
for var, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"), ("NVSHMEM_DISABLE_NVLS", "1")):
    if os.environ.get(var) != value:
        sys.exit(f"{var}={value} must be set before the process starts (got {os.environ.get(var)!r})")


def load_ops(ops_dir):
    import importlib

    ops = {}
    for op in ("dot", "dot_nt", "dot_tn", "softmax"):
        folder = os.path.abspath(os.path.join(ops_dir, op))
        sys.path.insert(0, folder)
        ops[op] = importlib.import_module(f"triton_{op}").load()
    return ops


class TritonSoftmax(torch.autograd.Function):
    """triton::softmax forward; its gradient y * (g - sum(g * y)) in torch."""

    @staticmethod
    def forward(ctx, x, op):
        y = op(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum(-1, keepdim=True)), None


class Mixer(torch.nn.Module):
    """h = relu(x W1 + b1), p = softmax((h W2) / sqrt(H)); out = h W3 + p W4 + b3."""

    def __init__(self, d_in, hidden, d_out, matmul, softmax):
        super().__init__()
        g = torch.Generator().manual_seed(1234)
        self.w1 = torch.nn.Parameter(torch.randn(d_in, hidden, generator=g) / d_in ** 0.5)
        self.b1 = torch.nn.Parameter(torch.zeros(hidden))
        self.w2 = torch.nn.Parameter(torch.randn(hidden, hidden, generator=g) / hidden ** 0.5)
        self.w3 = torch.nn.Parameter(torch.randn(hidden, d_out, generator=g) / hidden ** 0.5)
        self.w4 = torch.nn.Parameter(torch.randn(hidden, d_out, generator=g))
        self.b3 = torch.nn.Parameter(torch.zeros(d_out))
        self.matmul, self.softmax = matmul, softmax
        self.scale = hidden ** -0.5

    def forward(self, x):
        h = torch.relu(self.matmul(x, self.w1) + self.b1)
        p = self.softmax(self.matmul(h, self.w2) * self.scale)
        return self.matmul(h, self.w3) + self.matmul(p, self.w4) + self.b3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("ops_dir")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rtol", type=float, default=2e-3)
    args = parser.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    ops = load_ops(args.ops_dir)

    d_in, hidden, d_out, batch = 192, 256, 64, 200  # batch 200: not a tile multiple
    models = {
        "triton": Mixer(d_in, hidden, d_out, ops["dot"], lambda s: TritonSoftmax.apply(s, ops["softmax"])),
        "torch": Mixer(d_in, hidden, d_out, torch.matmul, lambda s: torch.softmax(s, -1)),
    }
    ddp = {k: DDP(m.to(dev), device_ids=[local]) for k, m in models.items()}
    opts = {k: torch.optim.Adam(m.parameters(), lr=3e-3) for k, m in ddp.items()}
    teacher = torch.Generator().manual_seed(99)
    w_true = torch.randn(d_in, d_out, generator=teacher) / d_in ** 0.5
    losses = {k: [] for k in ddp}
    started = time.time()
    for step in range(args.steps):
        g = torch.Generator().manual_seed(10_000 * step + rank)  # each rank its own shard
        x = torch.randn(batch, d_in, generator=g)
        y = torch.tanh(x @ w_true)
        x, y = x.to(dev), y.to(dev)
        for k in ddp:
            opts[k].zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(ddp[k](x), y)
            loss.backward()
            opts[k].step()
            # The loss of the whole global batch: mean over ranks.
            total = loss.detach().clone()
            dist.all_reduce(total)
            losses[k].append(total.item() / world)
    elapsed = time.time() - started

    # Weights identical on every rank (gradients were all-reduced).
    digest = torch.stack([p.detach().double().sum() for p in ddp["triton"].parameters()])
    gathered = [torch.zeros_like(digest) for _ in range(world)]
    dist.all_gather(gathered, digest)
    same_weights = all(torch.equal(gathered[0], d) for d in gathered[1:])
    worst = max(abs(a - b) / abs(b) for a, b in zip(losses["triton"], losses["torch"]))
    learned = losses["triton"][-1] < 0.6 * losses["triton"][0]
    ok = same_weights and worst <= args.rtol and learned
    if rank == 0:
        report = {
            "world_size": world,
            "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())],
            "torch": torch.__version__,
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "steps": args.steps,
            "model": f"x[{batch}x{d_in}] per rank -> dot+bias, relu -> dot, triton::softmax -> dot+bias [{d_out}]",
            "loss_triton": losses["triton"],
            "loss_torch": losses["torch"],
            "max_rel_loss_diff": worst,
            "rtol": args.rtol,
            "weights_identical_across_ranks": same_weights,
            "loss_first_last": [losses["triton"][0], losses["triton"][-1]],
            "seconds": round(elapsed, 2),
            "ok": ok,
        }
        out = os.environ.get("OUT", ".")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "ddp_train.json"), "w") as f:
            json.dump(report, f, indent=1)
        for step in (0, 1, 9, 24, args.steps - 1):
            if step < args.steps:
                print(f"step {step:3d}: loss triton {losses['triton'][step]:.6f}  torch {losses['torch'][step]:.6f}")
        print(f"[{'ok' if ok else 'FAIL'}] DDP {world} GPUs, {args.steps} steps: max relative loss difference "
              f"{worst:.2e} (tol {args.rtol:g}), weights identical across ranks: {same_weights}, "
              f"loss {losses['triton'][0]:.4f} -> {losses['triton'][-1]:.4f}", flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
