"""What the op check scripts share: unpacking the tar.xz of --no-build folders
they were carried with, building every folder at once, and putting them on
sys.path."""
import os
import subprocess
import sys
import tarfile


def unpack_and_build(bundle, name, folders):
    """Unpacks BUNDLE (a tar.xz of out/NAME/) beside it, runs the build.sh of
    each of FOLDERS (relative to out/NAME; "" for out/NAME itself) that holds
    no built library yet in parallel, puts them on sys.path, and returns
    out/NAME. BUNDLE may also be the unpacked folder itself (assembled there
    from other bundles)."""
    if os.path.isdir(bundle):
        root = os.path.abspath(bundle)
    else:
        root = os.path.join(os.path.dirname(os.path.abspath(bundle)), name)
        with tarfile.open(bundle) as t:
            t.extractall(os.path.dirname(root))
    def built(folder):
        """Whether the folder holds its shared library (built earlier in the run)."""
        return any(f.startswith("lib") and f.endswith(".so") for f in os.listdir(os.path.join(root, folder)))

    builds = [
        (folder, subprocess.Popen(["bash", os.path.join(root, folder, "build.sh")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for folder in folders
        if not built(folder)
    ]
    for folder, proc in builds:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"{os.path.join(root, folder)}/build.sh failed:\n{err.decode()[-2000:]}")
    sys.path[:0] = [os.path.join(root, folder) for folder in folders]
    return root


class Results:
    """Checks (`ok`/`FAIL` lines) and timings of one check script, written
    as RESULTS/<file> by `finish`, which exits 1 if a check failed."""

    def __init__(self):
        self.data = {"checks": [], "perf": []}
        self.failed = 0

    def record(self, name, ok, detail):
        self.failed += not ok
        self.data["checks"].append({"name": name, "ok": bool(ok), "detail": detail})
        print(f"[{'ok' if ok else 'FAIL'}] {name}: {detail}", flush=True)

    def perf(self, entry):
        self.data["perf"].append(entry)
        print(f"[perf] {entry}", flush=True)

    def finish(self, results_dir, file, env):
        import json
        import time

        self.data["env"] = dict(env, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        os.makedirs(results_dir, exist_ok=True)
        path = os.path.join(results_dir, file)
        with open(path, "w") as f:
            json.dump(self.data, f, indent=1)
        from ratio_plot import plot_after

        plot_after(path)
        print(f"done: {self.failed} failed")
        sys.exit(1 if self.failed else 0)


class Checks:
    """Named checks that pass when a function returns (its value is the
    detail) or, for `expect`, when it raises the error named; `finish`
    writes RESULTS/<file> with `env` and exits 1 if one failed."""

    def __init__(self):
        self.results = []

    def check(self, name, fn):
        import traceback

        try:
            detail = fn()
            self.results.append({"name": name, "ok": True, "detail": detail})
            print(f"[ok] {name}: {detail}", flush=True)
        except Exception as e:  # noqa: BLE001
            self.results.append({"name": name, "ok": False, "detail": f"{type(e).__name__}: {e}"})
            print(f"[FAIL] {name}: {type(e).__name__}: {e}\n{traceback.format_exc()[-800:]}", flush=True)

    def expect(self, name, fn, error_type, needle):
        def run():
            try:
                fn()
            except error_type as e:
                assert needle in str(e), f"`{needle}` not in: {e}"
                return str(e).splitlines()[0][:240]
            raise AssertionError("nothing raised")

        self.check(name, run)

    def finish(self, results_dir, file, env):
        import json

        os.makedirs(results_dir, exist_ok=True)
        failed = [r for r in self.results if not r["ok"]]
        with open(os.path.join(results_dir, file), "w") as f:
            json.dump(dict(env, checks=self.results), f, indent=1)
        print(f"done: {len(self.results) - len(failed)} passed, {len(failed)} failed")
        sys.exit(1 if failed else 0)
