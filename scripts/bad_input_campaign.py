"""The bad-input campaign of issue 15, re-runnable: representative cases of
each family the issue lists, run against the real `tritonc` and
`triton-opgen` the way a new user would, each with a time limit (20 s) and
an address-space limit (8 GiB), classified by outcome.

Outcomes: `clean diagnostic` (non-zero exit, no panic or signal, and a
file:line:col location where the input has a source), `correct success`
(an input that should compile, compiled), and the failures: `crash`
(a signal), `panic`, `time-out`, `wrong success` (exit 0 for bad input),
`wrong failure` (valid input refused), `diagnostic without location`.

Usage: python3 scripts/bad_input_campaign.py [--tritonc PATH] [--opgen PATH] [-o OUT.md]
Prints the table per family and every failing case; exits 1 if any failed.
"""
import argparse
import collections
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

TIME_LIMIT_S = 20
MEMORY_LIMIT = 8 << 30
LOCATION = re.compile(r"[^\s:]+:\d+:\d+")
FAILURES = ("crash", "panic", "time-out", "wrong success", "wrong failure", "diagnostic without location")

ADD_KERNEL = """__global__ void add(int N, TYPE* a, TYPE* b, TYPE* c) {
  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);
  *(c + off) = *(a + off) + *(b + off);
}
"""

SPEC = """#pragma opgen op {ns}::{op}
#pragma opgen dtype T in {{float32: TYPE=float, float16: TYPE=half}}
#pragma opgen input {x}: T[N] contiguous
#pragma opgen input y: T[N] contiguous
#pragma opgen output z: T[N]
#pragma opgen args N, {x}, y, z
#pragma opgen grid {grid}
{tune}
#pragma opgen num_warps 4
{extra}
__global__ void add(int N, TYPE* a, TYPE* b, TYPE* c) {{
  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);
  bool in[SIZE] = off < N;
  *?(in)(c + off) = *?(in)(a + off) + *?(in)(b + off);
}}
"""


def spec(ns="triton", op="add", x="x", grid="cdiv(N, SIZE)", tune="#pragma opgen tune SIZE = [256, 1024]", extra=""):
    return SPEC.format(ns=ns, op=op, x=x, grid=grid, tune=tune, extra=extra)


def kernel_with(body_expr, params="int N, float* a"):
    return f"__global__ void k({params}) {{\n  int off[16] = 0 ... 16;\n  float v[16] = {body_expr};\n  *(a + off) = v;\n}}\n"


class Case:
    """One input: the tool, its arguments (FILE stands for the written
    source), the source text (or None), and what a good tool does:
    'diag' (an error at a location), 'error' (an error; no source to point
    into), 'ok' (success)."""

    def __init__(self, family, name, tool, args, source=None, expect="diag", stdout=None, stdin=None):
        self.family, self.name, self.tool, self.args = family, name, tool, args
        self.source, self.expect, self.stdout, self.stdin = source, expect, stdout, stdin


def nested(open_, close, inner, depth):
    return open_ * depth + inner + close * depth


def cases():
    deep = 10_000
    out = []
    tc = lambda family, name, source, args=(), expect="diag", **kw: out.append(  # noqa: E731
        Case(family, name, "tritonc", ["FILE", "-DTYPE=float", "-DSIZE=128", *args], source, expect, **kw))
    og = lambda family, name, source, args=(), expect="diag": out.append(  # noqa: E731
        Case(family, name, "opgen", ["FILE", "--framework", "torch", "--no-build", "-o", "OUTDIR", *args], source, expect))

    f = "deep or long kernel text"
    tc(f, "10,000 nested parentheses", kernel_with(nested("(", ")", "1.0", deep)))
    tc(f, "10,000 nested subscripts", kernel_with(nested("a[", "]", "0", deep)))
    # Flat chains are valid kernels: 10,000 terms compile; past the deepest
    # expression the later stages can recurse through (16,384), a diagnostic.
    for terms, expect in ((deep, "ok"), (40_000, "diag")):
        tc(f, f"flat chain of {terms:,} +", kernel_with(" + ".join(["1.0"] * terms)), expect=expect)
        tc(f, f"flat chain of {terms:,} &&", kernel_with("(" + " && ".join(["off < N"] * terms) + ") ? 1.0 : 0.0"), expect=expect)
        tc(f, f"a {terms:,}-term tile expression", kernel_with(" + ".join(["(0 ... 16)"] * terms)), expect=expect)
    tc(f, "macro calls nested 100,000 deep", "#define F(x) (x)\n" + kernel_with(nested("F(", ")", "1.0", 100_000)))

    f = "deep op-spec expressions"
    for directive, make in [
        ("args", lambda e: spec(extra="").replace("#pragma opgen args N, x, y, z", f"#pragma opgen args {e}, x, y, z")),
        ("require", lambda e: spec(extra=f"#pragma opgen require {e} == 1")),
        ("grid", lambda e: spec(grid=e)),
        ("backward", lambda e: spec(extra=f"#pragma opgen backward dx = {e}, dy = dz")),
    ]:
        og(f, f"10,000 nested parentheses in `{directive}`", make(nested("(", ")", "N" if directive != "backward" else "dz", deep)))

    f = "huge spaces, lines and files"
    lst = "[" + ",".join(str(i) for i in range(1, 257)) + "]"
    tc(f, "a tuning space of 16,777,216 points (-D lists)", ADD_KERNEL, ["--all-configs", "-o", "OUTDIR", f"-DA={lst}", f"-DB={lst}", f"-DC={lst}"], expect="error")
    tc(f, "a tuning space of 262,144 points", ADD_KERNEL, ["--all-configs", "-o", "OUTDIR", f"-DA={lst}", "-DB=[" + ",".join(str(i) for i in range(1, 1025)) + "]"], expect="error")
    og(f, "a spec tune space of 16,777,216 points", spec(tune="\n".join(f"#pragma opgen tune {n} = {lst}" for n in "ABC") + "\n#pragma opgen tune SIZE = [256]"))
    tc(f, "a 50 MB line of garbage", "@#$%^" * 10_000_000)
    tc(f, "a tile of 1,048,576 elements (-DSIZE=1048576)", ADD_KERNEL, ["-DSIZE=1048576"])
    out.append(Case(f, "reading /dev/urandom", "tritonc", ["/dev/urandom", "-DTYPE=float", "-DSIZE=128"], expect="error"))
    out.append(Case(f, "reading a FIFO", "tritonc", ["FIFO", "-DTYPE=float", "-DSIZE=128"], expect="error"))

    f = "output errors"
    out.append(Case(f, "stdout a closed pipe (--emit ir | head -1)", "tritonc", ["FILE", "-DTYPE=float", "-DSIZE=128", "--emit", "ir"], ADD_KERNEL, expect="ok", stdout="closed-pipe"))
    out.append(Case(f, "stdout a full disk (> /dev/full)", "tritonc", ["FILE", "-DTYPE=float", "-DSIZE=128"], ADD_KERNEL, expect="error", stdout="/dev/full"))

    f = "names a target language cannot take"
    for word in ("class", "def", "None", "import", "in", "int", "return"):
        og(f, f"op named `{word}`", spec(op=word))
        og(f, f"input named `{word}`", spec(x=word))
    og(f, "namespace `_1` (TF op name 1Add)", spec(ns="_1"))
    og(f, "namespace and op `_::_`", spec(ns="_", op="_"))

    f = "directives that contradict"
    og(f, "the same `tune` twice", spec(extra="#pragma opgen tune SIZE = [128]"))
    og(f, "the same `define` twice", spec(extra="#pragma opgen define G = 1\n#pragma opgen define G = 2"))
    og(f, "a name both tuned and defined", spec(extra="#pragma opgen define SIZE = 64"))
    og(f, "a tune list with an empty item", spec(tune="#pragma opgen tune SIZE = [256, , 1024]"))
    tc(f, "-D list with an empty item", ADD_KERNEL, ["--all-configs", "-o", "OUTDIR", "-DSIZE=[128,,256]"], expect="error")
    # In a kernel, 64u and 64L are C integer literals (a 64-element tile);
    # the launcher, which evaluates the grid, needs a plain integer.
    tc(f, "-DSIZE=64u in a kernel (a C literal)", ADD_KERNEL, ["-DSIZE=64u"], expect="ok")
    og(f, "tune SIZE = [64u, 128L] read by the grid", spec(tune="#pragma opgen tune SIZE = [64u, 128L]"))
    tc(f, "a float used as a mask", "__global__ void k(float* a) {\n  int off[16] = 0 ... 16;\n  float m[16] = 1.0;\n  *?(m)(a + off) = 1.0;\n}\n")

    f = "truncated files"
    full = spec()
    for cut in (0.25, 0.5, 0.75, 0.95):
        og(f, f"a spec cut at {int(cut * 100)}%", full[: int(len(full) * cut)])
    for cut in (0.3, 0.6, 0.9):
        tc(f, f"a kernel cut at {int(cut * 100)}%", ADD_KERNEL[: int(len(ADD_KERNEL) * cut)])
    tc(f, "an empty file", "")
    og(f, "an empty op spec", "")

    f = "valid inputs (must succeed)"
    tc(f, "add.tc", ADD_KERNEL, expect="ok")
    tc(f, "a 2,000-term sum", kernel_with(" + ".join(["1.0"] * 2000)), expect="ok")
    tc(f, "200 nested parentheses", kernel_with(nested("(", ")", "1.0", 200)), expect="ok")
    og(f, "the add op spec", spec(), expect="ok")
    return out


def limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def run(case, tools, work):
    src = os.path.join(work, "input.tc")
    if case.source is not None:
        with open(src, "w") as fh:
            fh.write(case.source)
    fifo = os.path.join(work, "fifo")
    if "FIFO" in case.args and not os.path.exists(fifo):
        os.mkfifo(fifo)
    outdir = os.path.join(work, "out")
    args = [tools[case.tool]] + [src if a == "FILE" else fifo if a == "FIFO" else outdir if a == "OUTDIR" else a for a in case.args]
    stdout = subprocess.DEVNULL
    if case.stdout == "/dev/full":
        stdout = open("/dev/full", "w")
    elif case.stdout == "closed-pipe":
        stdout = subprocess.PIPE
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, preexec_fn=limits)
    if case.stdout == "closed-pipe":
        proc.stdout.readline()  # `| head -1`
        proc.stdout.close()
    timer = threading.Timer(TIME_LIMIT_S, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    stderr = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.monotonic() - start
    peak_mb = usage.ru_maxrss / 1024
    return classify(case, proc.returncode, stderr, elapsed), proc.returncode, elapsed, peak_mb, stderr


def classify(case, rc, stderr, elapsed):
    if rc < 0:
        return "time-out" if elapsed >= TIME_LIMIT_S else "crash"
    if "panicked at" in stderr or rc == 101:
        return "panic"
    if rc == 0:
        return "correct success" if case.expect == "ok" else "wrong success"
    if case.expect == "ok":
        return "wrong failure"
    if case.expect == "diag" and not LOCATION.search(stderr):
        return "diagnostic without location"
    return "clean diagnostic"


def main():
    parser = argparse.ArgumentParser()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--tritonc", default=os.path.join(root, "target/release/tritonc"))
    parser.add_argument("--opgen", default=os.path.join(root, "target/release/triton-opgen"))
    parser.add_argument("-o", "--out")
    opts = parser.parse_args()
    tools = {"tritonc": opts.tritonc, "opgen": opts.opgen}
    table = collections.OrderedDict()
    lines = []
    failed = 0
    for case in cases():
        with tempfile.TemporaryDirectory() as work:
            outcome, rc, elapsed, peak_mb, stderr = run(case, tools, work)
        table.setdefault(case.family, collections.Counter())[outcome] += 1
        first = next((line for line in stderr.splitlines() if line.strip()), "")[:160]
        if outcome in FAILURES:
            failed += 1
            lines.append(f"- **{outcome}**: {case.family} / {case.name} (exit {rc}, {elapsed:.1f} s, {peak_mb:.0f} MB): `{first}`")
        print(f"{outcome:28} {elapsed:6.2f} s {peak_mb:7.0f} MB  {case.family} / {case.name}: {first}", flush=True)
    columns = ["clean diagnostic", "correct success", *FAILURES]
    report = ["| family | cases | " + " | ".join(columns) + " |", "| --- | --- |" + " --- |" * len(columns)]
    totals = collections.Counter()
    for family, counts in table.items():
        totals.update(counts)
        report.append(f"| {family} | {sum(counts.values())} | " + " | ".join(str(counts[c]) for c in columns) + " |")
    report.append(f"| **all** | **{sum(totals.values())}** | " + " | ".join(f"**{totals[c]}**" for c in columns) + " |")
    text = "\n".join(report) + "\n\n" + ("\n".join(lines) if lines else "No failures.") + "\n"
    print("\n" + text)
    if opts.out:
        with open(opts.out, "w") as fh:
            fh.write(text)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
