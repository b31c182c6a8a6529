"""Checks of the matmul suite that need no GPU: the case list covers what
issue 11 asks for, and the report computes ratios, geomean, minimum and
spills right on made-up rows (`python3 scripts/gpu/matmul_suite.py --self-test`)."""

import json
import math
import os
import stat
import tempfile

import matmul_suite_report as report


def check_shapes(shapes, llm_m, llm_nk):
    dims = [(m, n, k) for _, m, n, k in shapes]
    assert len(set(dims)) == len(dims) >= 24, f"{len(set(dims))} distinct shapes of {len(dims)}"
    assert all((m, 4096, 4096) in dims for m in llm_m), "every M for (N, K) = (4096, 4096)"
    for n, k in llm_nk:
        assert any((d[1], d[2]) == (n, k) for d in dims), f"no M for (N, K) = ({n}, {k})"
    for must in [(3000, 3000, 3000), (1000, 777, 1531), (8192, 8192, 128), (4096, 4096, 64)]:
        assert must in dims, f"{must} missing"
    seq = [(1000, 1000, 1000), (1024, 1024, 1024), (3000, 3000, 3000), (3008, 3008, 3008)]
    assert dims[:4] == seq, f"the sequence runs first, in order: {dims[:4]}"


def made_up_row(shape, dtype, ours, cublas, triton, spill=0, ok=True):
    return {"shape": list(shape), "dtype": dtype,
            "ours": {"tflops": ours, "ok": ok, "config": "TM=128 TN=256 ALIGN=16 num_warps=8",
                     "ptxas": {"registers": 168, "spill_bytes": spill}},
            "cublas": {"tflops": cublas, "ok": True}, "triton": {"tflops": triton, "ok": True}}


def check_report():
    rows = [made_up_row((1024, 1024, 1024), "float16", 200.0, 100.0, 200.0),
            made_up_row((16, 4096, 4096), "bfloat16", 40.0, 50.0, 20.0, spill=8)]
    s = report.summarize(rows)
    assert math.isclose(s["cublas"]["geomean"], math.sqrt(2.0 * 0.8)), s
    assert math.isclose(s["cublas"]["min"], 0.8) and s["cublas"]["min_case"] == "16x4096x4096 bfloat16", s
    assert s["cublas"]["below_target"] == ["16x4096x4096 bfloat16"], s
    assert math.isclose(s["triton"]["geomean"], math.sqrt(1.0 * 2.0)), s
    assert s["spilled"] == ["16x4096x4096 bfloat16"] and not s["targets_met"], s
    good = [made_up_row((8192, 8192, 8192), "float16", 700.0, 650.0, 600.0)]
    assert report.summarize(good)["targets_met"]
    wrong = [made_up_row((8192, 8192, 8192), "float16", 700.0, 650.0, 600.0, ok=False)]
    assert report.summarize(wrong)["failed"] == ["8192x8192x8192 float16"]
    text = report.markdown(rows, {"device": "Made-up GPU", "command": "x"})
    lines = [x for x in text.splitlines() if x.startswith("| ")]
    assert len(lines) == 2 + len(rows), text
    assert "| 2.00 | 1.00 |" in lines[2] and "(168, 0)" in lines[2], lines[2]
    assert "geomean 1.265" in text, text
    # No measurement at all: no ratios, no division by zero.
    empty = report.summarize([{"shape": [1, 1, 1], "dtype": "float16", "ours": {"ok": False, "error": "x"}}])
    assert "cublas" not in empty and not empty["targets_met"], empty


def check_spills():
    with tempfile.TemporaryDirectory() as d:
        ptx = os.path.join(d, "ptx", "7.ptx")
        os.makedirs(os.path.dirname(ptx))
        with open(ptx, "w") as f:
            f.write(".version 8.4\n.target sm_90a\n.address_size 64\n")
        with open(os.path.join(d, "variants.json"), "w") as f:
            json.dump([{"config": "TM=64 num_warps=8", "dtypes": "T=float16", "file": "ptx/7.ptx"},
                       {"config": "TM=64 num_warps=8", "dtypes": "T=bfloat16", "file": "ptx/8.ptx"}], f)
        assert report.variant_ptx(d, "TM=64 num_warps=8", "T=float16") == ptx
        assert report.variant_ptx(d, "TM=64 num_warps=8", "T=float32") is None
        fake = os.path.join(d, "ptxas")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho \"ptxas info    : Compiling entry function 'dot' for '$1'\"\n"
                    "echo 'ptxas info    : Function properties for dot'\n"
                    "echo '    24 bytes stack frame, 16 bytes spill stores, 8 bytes spill loads'\n"
                    "echo 'ptxas info    : Used 255 registers, used 1 barriers'\n")
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        got = report.ptxas_spills(fake, ptx)
        assert got == {"arch": "sm_90a", "registers": 255, "spill_stores": 16, "spill_loads": 8,
                       "spill_bytes": 24}, got


def run_self_test(shapes, llm_m, llm_nk):
    check_shapes(shapes, llm_m, llm_nk)
    check_report()
    check_spills()
    print(f"self-test passed: {len(shapes)} shapes, report and ptxas parsing")
    return 0
