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
