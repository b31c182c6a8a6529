"""Timing helper shared by the ONNX Runtime check scripts."""

import statistics
import time


def mean_us(fn, reps):
    """Mean wall time of `fn` in microseconds over `reps` calls (a mean, like
    the library's counters, so that the parts add up)."""
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    return statistics.fmean(times)


def interleaved_ms(runs, rounds, reps, windows=None):
    """Median over `rounds` of each run's mean milliseconds over `reps` calls,
    the runs (a dict of callables) taking turns, so they see the same clocks
    and neighbours; `windows`, if given, collects each run's (start, end)
    `time.time_ns()` per round."""
    means = {kind: [] for kind in runs}
    for _ in range(rounds):
        for kind, run in runs.items():
            start = time.time_ns()
            means[kind].append(mean_us(run, reps) / 1e3)
            if windows is not None:
                windows[kind].append((start, time.time_ns()))
    return {kind: statistics.median(v) for kind, v in means.items()}
