"""What the op check scripts share: unpacking the tar.xz of --no-build folders
they were carried with, building every folder at once, and putting them on
sys.path."""
import os
import subprocess
import sys
import tarfile


def unpack_and_build(bundle, name, folders):
    """Unpacks BUNDLE (a tar.xz of out/NAME/) beside it, runs the build.sh of
    each of FOLDERS (relative to out/NAME; "" for out/NAME itself) in
    parallel, puts them on sys.path, and returns out/NAME."""
    root = os.path.join(os.path.dirname(os.path.abspath(bundle)), name)
    with tarfile.open(bundle) as t:
        t.extractall(os.path.dirname(root))
    builds = [
        (folder, subprocess.Popen(["bash", os.path.join(root, folder, "build.sh")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for folder in folders
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
