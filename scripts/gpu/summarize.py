"""Turns one GPU run's results (scripts/gpu/run.sh's folder) into a Markdown
summary: device, date, checks passed/failed, and the benchmark table with
ratios against PyTorch and Triton.

    python3 scripts/gpu/summarize.py RESULTS_DIR > RESULTS_DIR/README.md
"""

import json
import os
import sys


def main(folder):
    data = json.load(open(os.path.join(folder, "results.json")))
    meta, rows = data["meta"], data["results"]
    checks = [r for r in rows if r["kind"] == "check"]
    failed = [r for r in checks if not r.get("ok")]
    print(f"# GPU run {meta['date']}\n")
    print(f"{meta['device']}, torch {meta['torch']}, triton {meta.get('triton', '?')}; "
          f"built by `scripts/gpu/build.sh`, run by `scripts/gpu/run.sh`.\n")
    print(f"Correctness against PyTorch: {len(checks) - len(failed)} passed, {len(failed)} failed.\n")
    for r in failed:
        print(f"- FAILED {r['name']}: {r.get('error', r.get('err'))}")
    print("| work | ours GB/s | PyTorch GB/s | Triton GB/s | ours / Triton | ours / PyTorch | our variant |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if r["kind"] == "bench" and "torch_GBps" in r:
            print(f"| {r['name']} | {r.get('ours_GBps', '-')} | {r['torch_GBps']} | {r['triton_GBps']} | "
                  f"{r.get('vs_triton', '-')} | {r.get('vs_torch', '-')} | `{r.get('ours_variant', '-')}` |")
    runtime = os.path.join(folder, "runtime.log")
    if os.path.exists(runtime):
        print("\n## Runtime (autotuner, cache, persistent softmax)\n")
        for line in open(runtime):
            line = line.strip()
            if line.startswith("## "):
                title = line[3:]
            elif line.startswith("{") and line.endswith("}"):
                s = json.loads(line)
                picks = ", ".join(f"n={a['n']}: {a['picked']} ({a['gbps']:.0f} GB/s)" for a in s.get("autotune", []))
                print(f"- {title}: benchmark calls {s.get('benchmark_calls')}, ok={s.get('ok')}; {picks}")
                for sm in s.get("softmax") or []:
                    print(f"  - persistent softmax {sm['rows']}x{sm['cols']} grid={sm['grid']} "
                          f"(NUM_SM x occupancy): max rel err {sm['max_relative_error']:.1e}, "
                          f"{sm['gbps']:.0f} GB/s, {sm['registers_per_thread']} regs, ok={sm['ok']}")


if __name__ == "__main__":
    main(sys.argv[1])
