#!/usr/bin/env bash
# Compile time of tritonc (Triton-C -> PTX), whole process, for a few configs
# (dots on mma.sync for sm_90, on wgmma for sm_90a):
# the median of RUNS runs (default 5) of wall time and CPU time, and the median
# of each phase that `tritonc --timings` reports. Prints a Markdown report.
# Usage: scripts/bench_compile.sh            (uses target/release/tritonc)
#        TRITONC=path/to/tritonc RUNS=9 scripts/bench_compile.sh
# Not a test: the numbers depend on the machine and its load; say which when
# you commit them (bench/results/).
set -euo pipefail
cd "$(dirname "$0")/.."
export TRITONC=${TRITONC:-./target/release/tritonc}
export RUNS=${RUNS:-5}
[ -x "$TRITONC" ] || { echo "no $TRITONC: cargo build --release -p tritonc" >&2; exit 1; }
python3 - <<'PY'
import os, re, resource, statistics, subprocess, tempfile, time

tritonc = os.environ["TRITONC"]
runs = int(os.environ["RUNS"])
dot = ["tests/kernels/dot.tc", "-DTYPE=half"]
configs = [  # (name, arguments, --arch)
    ("dot f16 64x64x64, 4 warps", [*dot, "-DTM=64", "-DTN=64", "-DTK=64", "--num-warps", "4"], "sm_90"),
    ("dot f16 128x128x64, 4 warps", [*dot, "-DTM=128", "-DTN=128", "-DTK=64", "--num-warps", "4"], "sm_90"),
    ("dot f16 128x128x64, 8 warps", [*dot, "-DTM=128", "-DTN=128", "-DTK=64", "--num-warps", "8"], "sm_90"),
    ("dot f16 128x256x64, 8 warps", [*dot, "-DTM=128", "-DTN=256", "-DTK=64", "--num-warps", "8"], "sm_90"),
    ("dot f16 64x64x64, 4 warps", [*dot, "-DTM=64", "-DTN=64", "-DTK=64", "--num-warps", "4"], "sm_90a"),
    ("dot f16 128x128x64, 8 warps", [*dot, "-DTM=128", "-DTN=128", "-DTK=64", "--num-warps", "8"], "sm_90a"),
    ("dot f16 128x256x64, 8 warps", [*dot, "-DTM=128", "-DTN=256", "-DTK=64", "--num-warps", "8"], "sm_90a"),
    ("add f32 1024, 4 warps", ["tests/kernels/add.tc", "-DTYPE=float", "-DSIZE=1024", "--num-warps", "4"], "sm_90"),
    ("softmax f32 1024, 4 warps", ["tests/kernels/softmax.tc", "-DTYPE=float", "-DTN=1024", "--num-warps", "4"], "sm_90"),
]
line = re.compile(r"^\s*([0-9.]+) ms  (.*)$")

def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def one_run(args, arch, out):
    cmd = [tritonc, *args, "--arch", arch, "--timings", "-o", out]
    cpu0, t0 = cpu_children(), time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, cpu_children() - cpu0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    phases = {}
    for l in p.stderr.splitlines():
        m = line.match(l)
        if m:
            phases[m.group(2)] = float(m.group(1))
    return wall * 1e3, cpu * 1e3, phases

print(f"tritonc compile time: `{tritonc}`, median of {runs} runs, ms\n")
summary, details = [], []
with tempfile.TemporaryDirectory() as tmp:
    for name, args, arch in configs:
        name = f"{name}, {arch}"
        out = os.path.join(tmp, "k.ptx")
        one_run(args, arch, out)  # warm the page cache; not counted
        samples = [one_run(args, arch, out) for _ in range(runs)]
        wall = statistics.median(s[0] for s in samples)
        cpu = statistics.median(s[1] for s in samples)
        summary.append((name, wall, cpu, min(s[0] for s in samples), max(s[0] for s in samples)))
        labels = list(samples[0][2])
        details.append((name, [(l, statistics.median(s[2].get(l, 0.0) for s in samples)) for l in labels]))
print("| config | wall (median) | wall min..max | CPU user+sys (median) |")
print("|---|---:|---:|---:|")
for name, wall, cpu, lo, hi in summary:
    print(f"| {name} | {wall:.1f} | {lo:.1f}..{hi:.1f} | {cpu:.1f} |")
for name, phases in details:
    print(f"\n{name}, per phase (`--timings`, median):\n")
    print("| phase | ms |")
    print("|---|---:|")
    for label, ms in phases:
        print(f"| {label} | {ms:.2f} |")
PY
