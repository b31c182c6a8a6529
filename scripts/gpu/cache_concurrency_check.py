"""The autotune cache under concurrency on the GPU (issue 15 item 5, the GPU
half; CI checks the same with a mock timer): 8 processes tune different
shapes of the real dot op into one cache file at once; no entry may be lost
and the file must stay valid JSON. A second round re-runs every shape in 8
fresh processes, which must benchmark nothing (every choice is in the file).

Usage: cache_concurrency_check.py OPS_DIR (OPS_DIR/dot built for torch).
Prints `ok: ...` / `FAIL: ...`; exits 1 on a failure.
"""
import json
import os
import subprocess
import sys

WORKERS, SHAPES = 8, 12
CACHE = "/tmp/opgen_cache_concurrency/autotune.json"


def shapes_of(worker):
    """Shapes no other worker's key shares: M's power-of-two bucket is the
    worker's, (N, K) run over 12 buckets."""
    m = 2 ** (4 + worker)
    return [(m, 2 ** (4 + j % 4), 2 ** (4 + j // 4)) for j in range(SHAPES)]


def worker(ops_dir, index):
    import torch

    sys.path.insert(0, os.path.join(ops_dir, "dot"))
    import triton_dot

    dot = triton_dot.load()
    for m, n, k in shapes_of(index):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        err = (dot(a, b).float() - a.float() @ b.float()).abs().max().item()
        assert err < 0.5, (m, n, k, err)
    torch.cuda.synchronize()
    print(json.dumps({"worker": index, "benchmarked": triton_dot.benchmark_calls()}))


def run_round():
    env = dict(os.environ, TRITON_OPGEN_CACHE=CACHE)
    procs = [
        subprocess.Popen([sys.executable, __file__, sys.argv[1], "--worker", str(i)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(WORKERS)
    ]
    results = []
    for p in procs:
        out, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"worker failed ({p.returncode}): {err[-2000:]}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "--worker":
        return worker(sys.argv[1], int(sys.argv[3]))
    os.makedirs(os.path.dirname(CACHE), exist_ok=True)
    for f in os.listdir(os.path.dirname(CACHE)):
        os.remove(os.path.join(os.path.dirname(CACHE), f))
    failures = 0

    def report(good, what):
        nonlocal failures
        failures += 0 if good else 1
        print(f"{'ok' if good else 'FAIL'}: {what}", flush=True)

    first = run_round()
    tuned = sum(r["benchmarked"] for r in first)
    with open(CACHE) as f:
        entries = json.load(f)["entries"]
    dot_keys = [k for k in entries if k.startswith("triton::dot|")]
    want = WORKERS * SHAPES
    report(len(dot_keys) == want,
           f"{WORKERS} processes tuning {SHAPES} shapes each at once: {len(dot_keys)} of {want} entries kept "
           f"({tuned} configs benchmarked), the file is valid JSON")
    again = run_round()
    report(all(r["benchmarked"] == 0 for r in again),
           f"8 fresh processes on the same shapes benchmark {sum(r['benchmarked'] for r in again)} configs "
           "(every choice read from the file)")
    import torch

    print(f"done: {failures} failed; torch {torch.__version__}, {torch.cuda.get_device_name()}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
