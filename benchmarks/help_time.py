"""Benchmark: median wall time of `python main.py --help` (goal ≤ 0.3 s here).

    .venv/bin/python benchmarks/help_time.py [runs]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from jax_benchmarks.measure.timing import measure  # noqa: E402


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for args in (["--help"], ["xla", "--help"], ["mnist", "--help"]):
        cmd = [sys.executable, str(REPO / "main.py"), *args]
        m = measure(lambda: subprocess.run(cmd, capture_output=True, check=True),
                    repeats=runs, warmup=1, min_time_s=0.0, max_repeats=runs)
        print(f"python main.py {' '.join(args):<14} median {m.median_s:.3f} s  IQR {m.iqr_s:.3f} s  (n={m.repeats})")


if __name__ == "__main__":
    main()
