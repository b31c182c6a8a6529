"""Faults at run time are framework errors, not aborts (issue 15 item 6, the
GPU half), through generated torch ops:

- out of memory at output allocation: dot of a [300000, 1] by [1, 300000]
  needs a 180 GB output; torch.OutOfMemoryError naming the op and output;
  the process goes on (a small dot afterwards is right);
- a variant asking for more shared memory than the device has (what an
  sm_80 build meets on a 99 KiB sm_86 card; here the add op's variant
  descriptions are edited to claim 300,000 bytes, OPS_DIR/add_smem_one with
  its first variant edited, OPS_DIR/add_smem_all with every one): the tuner
  skips the one that cannot launch; a pinned one is a RuntimeError naming
  op, config and both sizes; when none can launch, the error lists each.

Usage: fault_check.py OPS_DIR CASE, CASE one of oom (OPS_DIR/dot),
smem_one, smem_all (each a process of its own: both libraries register
triton::add). Prints `ok: ...` / `FAIL: ...` lines; exits 1 on a failure.
"""
import importlib.util
import os
import sys

import torch

ops_dir, case = sys.argv[1], sys.argv[2]
failures = 0


def report(good, what, detail):
    global failures
    failures += 0 if good else 1
    print(f"{'ok' if good else 'FAIL'}: {what}: {detail}", flush=True)


def module_at(folder, name):
    spec = importlib.util.spec_from_file_location(f"{name}_{os.path.basename(folder)}", os.path.join(folder, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expect(what, error_type, needles, fn):
    try:
        fn()
        torch.cuda.synchronize()
    except error_type as e:
        text = str(e).splitlines()[0]
        report(all(n in text for n in needles), what, f"{type(e).__name__}: {text}")
        return
    except Exception as e:  # noqa: BLE001
        report(False, what, f"expected {error_type.__name__}, got {type(e).__name__}: {e}")
        return
    report(False, what, f"expected {error_type.__name__}, nothing raised")


def out_of_memory():
    dot = module_at(os.path.join(ops_dir, "dot"), "triton_dot").load()
    a = torch.randn(300000, 1, device="cuda", dtype=torch.float16)
    b = torch.randn(1, 300000, device="cuda", dtype=torch.float16)
    expect("output too large for the GPU", torch.OutOfMemoryError,
           ["triton::dot: cannot allocate output `c` of shape [300000, 300000]", "out of memory"],
           lambda: dot(a, b))
    x, y = torch.randn(300, 200, device="cuda", dtype=torch.float16), torch.randn(200, 100, device="cuda", dtype=torch.float16)
    err = ((dot(x, y).float() - x.float() @ y.float()).abs().max()).item()
    report(err < 0.1, "the process goes on after the OOM", f"a 300x100x200 dot, max error {err:.3g}")


def one_over_the_limit():
    one = module_at(os.path.join(ops_dir, "add_smem_one"), "triton_add")
    add_one = one.load()
    n = 100_000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    try:
        got = add_one(x, y)
        report(torch.equal(got, x + y) and one.last_config() != one.configs()[0], "one variant over the limit is skipped by the tuner",
               f"ran {one.last_config()!r}, result exact")
    except Exception as e:  # noqa: BLE001
        report(False, "one variant over the limit is skipped by the tuner", f"{type(e).__name__}: {e}")
    first = one.configs()[0]
    one.pin_config(first)
    expect("pinned, the variant over the limit", RuntimeError,
           ["triton::add", first, "300000 B dynamic", "exceeds the device's"], lambda: add_one(x, y))
    one.pin_config(None)


def every_one_over_the_limit():
    every = module_at(os.path.join(ops_dir, "add_smem_all"), "triton_add")
    add_all = every.load()
    x, y = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    expect("every variant over the limit", RuntimeError,
           ["triton::add", "every config failed", "exceeds the device's"], lambda: add_all(x, y))

{"oom": out_of_memory, "smem_one": one_over_the_limit, "smem_all": every_one_over_the_limit}[case]()
print(f"done: {failures} failed; torch {torch.__version__}, {torch.cuda.get_device_name()}")
sys.exit(1 if failures else 0)
