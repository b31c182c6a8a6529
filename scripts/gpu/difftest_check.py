"""Differential check on the GPU (issue 15): runs each case of a `difftest`
output folder (cases.jsonl: kernel source, launch, PTX, the CPU interpreter's
outputs) on the device and compares.

    python3 scripts/gpu/difftest_check.py CASES.jsonl OUT_DIR

Inputs are recomputed here from their seeds with the generator's splitmix64,
so they never travel. Ints must match exactly; floats within a tolerance
scaled by the output's magnitude (1e-4 for float, 1e-2 for half: the CPU and
the GPU may fuse multiply-adds and order sums differently); NaN matches NaN.
Elements a kernel must not store stay zero on both sides. A case whose PTX
the driver refuses, whose launch fails, or that kills the context is a
finding too: cases run in worker processes, restarted after a crash.
Writes OUT_DIR/results.jsonl (one line per case) and OUT_DIR/summary.json.
"""

import base64
import json
import os
import subprocess
import sys
import time

GAMMA = 0x9E3779B97F4A7C15
MASK = (1 << 64) - 1
TOL = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2}


def splitmix_values(seed, n):
    """What rng::input_values gives: the generator's i-th output mixed from
    seed + (i + 1) * GAMMA."""
    import numpy as np

    with np.errstate(over="ignore"):
        z = (np.uint64(seed) + (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GAMMA)))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return z


def inputs(seed, n, dtype):
    import numpy as np

    r = splitmix_values(seed, n)
    if dtype == "i32":
        return ((r % np.uint64(201)).astype(np.int64) - 100).astype(np.float64)
    return ((r % np.uint64(257)).astype(np.int64) - 128).astype(np.float64) / 16.0


def numpy_dtype(name):
    """The numpy type of an output's raw bytes (bf16 has none: see run_case)."""
    import numpy as np

    return {"f32": np.float32, "f16": np.float16, "i32": np.int32}[name]


def torch_dtype(name):
    import torch

    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32}[name]


def run_case(case, tmp):
    import numpy as np
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cuda_driver

    ptx_path = os.path.join(tmp, "case.ptx")
    with open(ptx_path, "w") as f:
        f.write(case["ptx"])
    params, args, outputs = [], {}, {}
    for p in case["params"]:
        if p["kind"] == "buffer":
            params.append({"name": p["name"], "type": p["dtype"] + "*"})
            dt = torch_dtype(p["dtype"])
            if p["seed"] is None:
                t = torch.zeros(max(p["len"], 1), dtype=dt, device="cuda")
                outputs[p["name"]] = (t, p["dtype"], p["len"])
            else:
                v = inputs(p["seed"], p["len"], p["dtype"])
                t = torch.tensor(v, dtype=torch.float64).to(dt).cuda()
            args[p["name"]] = t
        elif p["kind"] == "int":
            params.append({"name": p["name"], "type": "i32"})
            args[p["name"]] = p["value"]
        else:
            params.append({"name": p["name"], "type": "f32"})
            args[p["name"]] = p["value"]
    entry = {"kernel": "k", "shared_bytes": case["shared_bytes"], "num_warps": case["num_warps"], "params": params}
    kernel = cuda_driver.Kernel(ptx_path, entry)
    kernel(case["grid"], **args)
    torch.cuda.synchronize()
    worst = None
    for name, (t, dt, n) in outputs.items():
        got = t[:n].float().cpu().numpy().astype(np.float64) if dt != "i32" else t[:n].cpu().numpy().astype(np.int64)
        raw = base64.b64decode(case["expected"][name])
        if dt == "bf16":
            exp = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        else:
            exp = np.frombuffer(raw, dtype=numpy_dtype(dt)).astype(np.float64 if dt != "i32" else np.int64)
        if dt == "i32":
            bad = np.nonzero(got != exp)[0]
        else:
            finite = np.isfinite(exp)
            scale = max(1.0, float(np.max(np.abs(exp[finite]))) if finite.any() else 1.0)
            both_nan = np.isnan(exp) & np.isnan(got)
            same_inf = np.isinf(exp) & (exp == got)
            close = np.abs(got - exp) <= TOL[dt] * scale
            bad = np.nonzero(~(both_nan | same_inf | close))[0]
        if len(bad):
            i = int(bad[0])
            worst = {"output": name, "mismatches": int(len(bad)), "of": int(n), "first": i,
                     "expected": float(exp[i]), "got": float(got[i])}
            break
    return {"status": "mismatch", **worst} if worst else {"status": "ok", "registers": kernel.registers}


def worker(cases_path, start, results_path):
    import tempfile

    tmp = tempfile.mkdtemp()
    with open(cases_path) as f, open(results_path, "a") as out:
        for index, line in enumerate(f):
            if index < start:
                continue
            case = json.loads(line)
            # Written before the launch: a crash leaves the case named.
            print(json.dumps({"index": index, "seed": case["seed"], "status": "started"}), file=out, flush=True)
            try:
                result = run_case(case, tmp)
            except Exception as e:  # the driver's refusal or a failed launch
                result = {"status": "error", "error": str(e)[:500]}
            meta = {"index": index, "seed": case["seed"], "template": case["template"], "arch": case["arch"],
                    "num_warps": case["num_warps"]}
            print(json.dumps({**meta, **result}), file=out, flush=True)
            if result["status"] == "error" and any(w in result["error"] for w in ("ILLEGAL", "LAUNCH_FAILED", "MISALIGNED")):
                sys.exit(3)  # the context is gone: a fresh process goes on


def canaries(lines, out_dir, count=10):
    """The check must be able to fail: `count` cases whose expected outputs
    are corrupted (one element moved far off, or a stored element that must
    stay zero) all have to be reported as mismatches."""
    import numpy as np

    caught = 0
    tmp = os.path.join(out_dir, "canary")
    os.makedirs(tmp, exist_ok=True)
    for line in lines[:count]:
        case = json.loads(line)
        name, b64 = next(iter(case["expected"].items()))
        dt = next(p["dtype"] for p in case["params"] if p["kind"] == "buffer" and p["name"] == name)
        values = np.frombuffer(base64.b64decode(b64), dtype=numpy_dtype(dt)).copy()
        values[len(values) // 2] = values[len(values) // 2] * 3 + 1000 if dt != "f16" else 30000
        case["expected"][name] = base64.b64encode(values.tobytes()).decode()
        if run_case(case, tmp)["status"] == "mismatch":
            caught += 1
    return caught


def supervise(cases_path, results_path):
    """Runs workers over `cases_path` until every case has a result; a worker
    that dies inside a case leaves it as a `crash`."""
    open(results_path, "w").close()
    total = sum(1 for _ in open(cases_path))
    start = 0
    while start < total:
        before = start
        subprocess.run([sys.executable, __file__, "--worker", cases_path, str(start), results_path])
        done = {}
        for line in open(results_path):
            r = json.loads(line)
            done[r["index"]] = r if r["status"] != "started" or r["index"] not in done else done[r["index"]]
        last = max(done) if done else -1
        if last >= 0 and done[last]["status"] == "started":
            with open(results_path, "a") as out:
                print(json.dumps({"index": last, "seed": done[last]["seed"], "status": "crash"}), file=out)
        start = last + 1
        if start <= before:
            sys.exit(f"the worker made no progress at case {start} of {cases_path}")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        worker(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "--supervise":
        supervise(sys.argv[2], sys.argv[3])
        return
    cases_path, out_dir = sys.argv[1], sys.argv[2]
    jobs = int(os.environ.get("DIFFTEST_JOBS", "12"))
    os.makedirs(out_dir, exist_ok=True)
    lines = open(cases_path).read().splitlines()
    t0 = time.time()
    caught = canaries(lines, out_dir)
    print(f"canaries: {caught}/10 corrupted expectations caught", flush=True)
    # Shards run at once: loading a module JIT-compiles its PTX on the CPU.
    procs = []
    for j in range(jobs):
        shard = os.path.join(out_dir, f"shard{j}.jsonl")
        with open(shard, "w") as f:
            f.write("".join(line + "\n" for line in lines[j::jobs]))
        procs.append(subprocess.Popen([sys.executable, __file__, "--supervise", shard,
                                       os.path.join(out_dir, f"results{j}.jsonl")]))
    # DIFFTEST_BUDGET seconds: then the shards stop and what ran is reported.
    budget = float(os.environ.get("DIFFTEST_BUDGET", "1e9"))
    for p in procs:
        try:
            p.wait(timeout=max(1.0, budget - (time.time() - t0)))
        except subprocess.TimeoutExpired:
            p.kill()
    subprocess.run(["pkill", "-f", "difftest_check.py --worker"])
    final = []
    with open(os.path.join(out_dir, "results.jsonl"), "w") as merged:
        for j in range(jobs):
            by_index = {}
            for line in open(os.path.join(out_dir, f"results{j}.jsonl")):
                r = json.loads(line)
                if r["status"] != "started":
                    by_index[r["index"]] = r
            for r in by_index.values():
                merged.write(json.dumps(r) + "\n")
                final.append(r)
            os.remove(os.path.join(out_dir, f"results{j}.jsonl"))
            os.remove(os.path.join(out_dir, f"shard{j}.jsonl"))
    counts = {}
    for r in final:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    findings = [r for r in final if r["status"] != "ok"]
    summary = {"cases": len(lines), "checked": len(final), "canaries_caught": f"{caught}/10", "counts": counts,
               "seconds": round(time.time() - t0, 1), "findings": findings[:200]}
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "findings"}))
    for r in findings[:40]:
        print("FINDING", json.dumps(r))


if __name__ == "__main__":
    main()
