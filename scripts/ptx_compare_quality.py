"""Compares two scripts/ptx_corpus.sh outputs file by file with ptxas -v:
spills that appear or grow, occupancy by registers (blocks of the file's
.maxntid threads that 64K registers hold) lost or gained, and totals of
registers, spill bytes and instructions.

    python3 scripts/ptx_compare_quality.py BEFORE AFTER      (PTXAS= picks ptxas)
"""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def ptxas():
    if os.environ.get("PTXAS"):
        return os.environ["PTXAS"]
    import nvidia

    return os.path.join(nvidia.__path__[0], "cu13/bin/ptxas")


def metrics(path):
    text = open(path).read()
    arch = re.search(r"^\.target (\w+)", text, re.M).group(1)
    v = subprocess.run([ptxas(), "-v", "-arch=" + arch, path, "-o", "/dev/null"], capture_output=True, text=True).stderr
    regs = max([int(x) for x in re.findall(r"Used (\d+) registers", v)] or [0])
    spill = sum(int(x) for x in re.findall(r"(\d+) bytes spill stores", v))
    m = re.search(r"\.maxntid (\d+)", text)
    threads = int(m.group(1)) if m else 128
    instrs = sum(1 for line in text.splitlines() if re.match(r"\t[a-z@]", line))
    per_warp = ((max(regs, 1) * 32 + 255) // 256) * 256
    blocks = 65536 // (per_warp * ((threads + 31) // 32))
    return regs, spill, instrs, blocks


def main():
    before, after = sys.argv[1], sys.argv[2]
    pairs = []
    for root, _, files in os.walk(before):
        for f in files:
            if f.endswith(".ptx"):
                a = os.path.join(root, f)
                pairs.append((os.path.relpath(a, before), a, os.path.join(after, os.path.relpath(a, before))))
    with ThreadPoolExecutor(os.cpu_count()) as ex:
        rows = list(ex.map(lambda p: (p[0], metrics(p[1]), metrics(p[2])), pairs))
    groups = {
        "new spills": [r for r in rows if r[1][1] == 0 and r[2][1] > 0],
        "more spill": [r for r in rows if r[1][1] > 0 and r[2][1] > r[1][1]],
        "occupancy lost": [r for r in rows if r[2][3] < r[1][3]],
        "spills gone": [r for r in rows if r[1][1] > 0 and r[2][1] == 0],
        "occupancy gained": [r for r in rows if r[2][3] > r[1][3]],
    }
    total = lambda i, k: sum(r[k][i] for r in rows)
    print(f"{len(rows)} files; " + ", ".join(f"{k} {len(v)}" for k, v in groups.items()))
    print(f"registers {total(0, 1)} -> {total(0, 2)}, spill bytes {total(1, 1)} -> {total(1, 2)}, "
          f"instructions {total(2, 1)} -> {total(2, 2)}")
    for name, group in groups.items():
        for rel, b, a in group[:10]:
            print(f"  {name}: {rel} (regs, spill, instrs, blocks) {b} -> {a}")


if __name__ == "__main__":
    main()
