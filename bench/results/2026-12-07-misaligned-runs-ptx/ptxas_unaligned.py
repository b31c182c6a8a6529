#!/usr/bin/env python3
"""Registers and spill bytes (`ptxas -v`, sm_90a) of every ALIGN=1 variant
of a generated dot bundle: python3 ptxas_unaligned.py out/X/dot (PTXAS names
ptxas). Prints `dtypes config registers spill_store_bytes` per variant."""
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys

folder = sys.argv[1]
ptxas = os.environ.get("PTXAS", "ptxas")
variants = json.load(open(os.path.join(folder, "variants.json")))


def usage(v):
    if v["macros"]["ALIGN"] != "1":
        return None
    path = os.path.join(folder, v["file"])
    log = subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o", "/dev/null"],
                         capture_output=True, text=True).stderr
    regs = re.findall(r"Used (\d+) registers", log)
    spills = re.findall(r"(\d+) bytes spill stores", log)
    return v["dtypes"], v["config"], regs[0] if regs else "?", spills[0] if spills else "?"


with cf.ThreadPoolExecutor(4) as pool:
    for row in pool.map(usage, variants):
        if row:
            print(*row)
