"""Benchmark: what the contention sampler sees on a quiet machine and beside CPU-bound processes, and what
sampling costs.

    .venv/bin/python benchmarks/contention.py [windows]

Times a NumPy 300x300 float64 matmul case through the harness (`sampled_case`: two reads of /proc around
the timed calls, as every case is measured) `windows` times with nothing started beside it, then with one,
then with two CPU-bound processes (`python -c 'while True: pass'`) running beside it, and prints the
distribution of what other processes took (cores, steal included) and the share flagged busy at
`BUSY_CORES`. Then the cost of one reading, against the shortest window a measured case takes (its first
call, a warm-up and at least 0.2 s of samples). The "busy" threshold in src/jax_benchmarks/measure/contention.py
was chosen from its output (docs/timing.md#contention).

On a machine with nvidia-smi, last: the cost of the GPU reader (`Sampler.of_this_machine("gpu")`'s one
nvidia-smi start a case, after its timed calls: it adds to a case's wall time, never to a sample), against
the shortest measured case. Without nvidia-smi that line says it was not measured (benchmarks/gpu_session.sh
runs this script on the GPU machine).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

from jax_benchmarks.measure.contention import BUSY_CORES, Sampler, contention_between, of_fields
from jax_benchmarks.measure.harness import Timed, sampled_case

def windows_taken(windows: int, sampler: Sampler) -> tuple[list[float], int, float]:
    """What others took in each window (cores), how many windows said unknown, the mean window."""
    a = np.random.default_rng(0).random((300, 300))
    taken: list[float] = []
    unknown = 0
    lengths = []
    for _ in range(windows):
        _, measurement = sampled_case(Timed(lambda: a @ a), 5, sampler)
        seen = of_fields(measurement.contention)
        assert seen is not None
        lengths.append(seen.window_s)
        if seen.taken_cores is None:
            unknown += 1
        else:
            taken.append(seen.taken_cores)
    return taken, unknown, statistics.fmean(lengths)


def describe(label: str, taken: list[float], unknown: int, window: float) -> None:
    if not taken:
        print(f"{label:<28} every window unknown ({unknown})")
        return
    deciles = statistics.quantiles(taken, n=10, method="inclusive") if len(taken) > 1 else [taken[0]] * 9
    busy = sum(1 for t in taken if t >= BUSY_CORES)
    print(f"{label:<28} min {min(taken):.2f}  p10 {deciles[0]:.2f}  median {statistics.median(taken):.2f}  "
          f"p90 {deciles[8]:.2f}  max {max(taken):.2f}  busy {busy}/{len(taken)}  unknown {unknown}  "
          f"(window {window:.2f} s)")


def main(windows: int) -> None:
    sampler = Sampler.of_this_machine()
    cores = len(os.sched_getaffinity(0))
    print(f"# contention seen around a numpy 300x300 matmul case, {windows} windows each; {cores} cores; "
          f"busy at >= {BUSY_CORES} cores; load average before: {os.getloadavg()[0]:.2f}")
    for hogs in (0, 1, 2):
        processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
        try:
            time.sleep(0.5 if hogs else 0.0)
            taken, unknown, window = windows_taken(windows, sampler)
        finally:
            for process in processes:
                process.kill()
                process.wait()
        describe(f"{hogs} CPU-bound process(es)", taken, unknown, window)
    calls = 2000
    start = time.perf_counter()
    for _ in range(calls):
        sampler.read()
    per_reading = (time.perf_counter() - start) / calls
    shortest = 0.2  # measure()'s minimum total of samples, before the first call and warm-up
    print(f"sampling: {per_reading * 1e6:.0f} µs a reading, 2 a case: {2 * per_reading / shortest:.3%} of the "
          f"shortest measured case (0.2 s of samples); load average after: {os.getloadavg()[0]:.2f}")
    before = sampler.read()
    seen = contention_between(before, sampler.read())
    print(f"two readings back to back: {seen.sentence()}")
    gpu_reader_cost(shortest)


def gpu_reader_cost(shortest_s: float, calls: int = 20) -> None:
    """The GPU reader's wall time a case (one nvidia-smi start for the processes; the ids are asked once)."""
    if shutil.which("nvidia-smi") is None:
        print("GPU reader: no nvidia-smi on this machine, its cost not measured")
        return
    reader = Sampler.of_this_machine("gpu").gpu
    assert reader is not None  # a "gpu" target always gets one
    first = reader()  # asks the GPUs' ids, once a suite
    start = time.perf_counter()
    for _ in range(calls):
        reader()
    per_case = (time.perf_counter() - start) / calls
    print(f"GPU reader: {per_case * 1e3:.1f} ms a case (nvidia-smi, after the timed calls, never inside a sample): "
          f"{per_case / shortest_s:.1%} of the shortest measured case's 0.2 s of samples; it read: {first.sentence()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
