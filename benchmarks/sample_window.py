"""Benchmark: how steady a round's fastest sample is, by how long the figure samples (`--min-time`).

    .venv/bin/python benchmarks/sample_window.py [PROCESSES] [WINDOW_S ...]

Each of PROCESSES fresh processes per window length times NumPy's `uniform` of 2x64x64 float64 (about 30 µs
a call) through the harness's own `measure` with `min_time_s=WINDOW_S`, and prints the fastest sample (what
a round gives the gate). On a shared host the CPU runs about 1.6× slower for tenths of a second at a time,
which /proc/stat does not show (docs/timing.md#a-steadier-window): a 0.2 s window can fall entirely in such
a spell; a longer one rarely does. Default: 15 processes, windows 0.2 and 1.0 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import sys
import numpy as np
from jax_benchmarks.measure.timing import measure
rng = np.random.default_rng(0)
m = measure(lambda: rng.uniform(size=(2, 64, 64)), repeats=5, min_time_s=float(sys.argv[1]))
print(min(m.samples_s))
"""


def fastest(window_s: float) -> float:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-c", CHILD, str(window_s)], capture_output=True, text=True, check=True,
                          env=env)
    return float(done.stdout)


def main() -> None:
    processes = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    windows = [float(w) for w in sys.argv[2:]] or [0.2, 1.0]
    print(f"# load average before: {os.getloadavg()[0]:.2f} on {len(os.sched_getaffinity(0))} cores; "
          f"{processes} fresh processes a window")
    for window in windows:
        values = [fastest(window) * 1e6 for _ in range(processes)]
        floor = min(values)
        slow = sum(1 for v in values if v > 1.25 * floor)
        print(f"window {window:g} s: fastest sample per process (µs) {' '.join(f'{v:.1f}' for v in values)}; "
              f"median {statistics.median(values):.1f}; {slow} of {processes} more than 1.25× the lowest")
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
