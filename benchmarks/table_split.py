"""Benchmark: how long printing a comparison table takes when it is too wide for the console and is laid out again.

    .venv/bin/python benchmarks/table_split.py [--repeats 3] [--before OTHER_CHECKOUT]

Synthetic records through `comparison_table` (as every group's command prints them): 60 and 200 cases × 7
backend columns, each record with a median and its spread, a metric row (GFLOP/s) and a host peak, printed
into a piped console 80 and 200 columns wide. At 80 columns the 7 columns do not fit side by side and the
table is laid out in its next form (`Sheet`: stacked, a row per case and backend); at 200 they fit and it is
printed wide. Prints the best of `--repeats` wall times, the form printed and the widest line.

With OTHER_CHECKOUT (e.g. `git archive <commit> | tar -x -C /tmp/before`), the same tables are printed by that
checkout's code too, each checkout in a child process of its own, one after the other in the same run (on a
shared machine only figures measured side by side compare), and the script says whether both printed the same
text.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BACKENDS = ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad", "mlx")
SIZES = ((60, 80), (60, 200), (200, 80), (200, 200))  # (cases, console columns)
MIB = 2**20


def measure(repeats: int) -> list[dict[str, object]]:
    """In this process (whichever checkout's jax_benchmarks it imports): each size printed `repeats` times."""
    from rich.console import Console

    from jax_benchmarks.cli.tables import comparison_table
    from jax_benchmarks.store.record import Record

    out = []
    for cases, width in SIZES:
        records = []
        for case_index in range(cases):
            case = f"matmul_{100 + 10 * case_index}x{100 + 10 * case_index}_float64"
            for backend_index, backend in enumerate(BACKENDS):
                median = 1e-3 * (1 + case_index % 9) * (1 + backend_index)
                records.append(Record(
                    run_id="20250102T100000Z-cccccc", timestamp="2025-01-02T10:00:00+00:00", group="xla",
                    backend=backend, case=case, device="cpu", dtype="float64", median_s=median, iqr_s=median / 20,
                    min_s=median * 0.9, repeats=5, metrics={"gflops": 1.5 * backend_index},
                    memory={"memory_method": "untimed pass", "host_status": "measured", "host_peak_bytes": 3 * MIB},
                ))
        tables = comparison_table(records, "xla: " + ", ".join(BACKENDS), ("gflops",))
        best, text = float("inf"), ""
        for _ in range(repeats):
            sink = io.StringIO()
            console = Console(file=sink, width=width, force_terminal=False, color_system=None)
            start = time.perf_counter()
            console.print(tables)
            best = min(best, time.perf_counter() - start)
            text = sink.getvalue()
        form = ("split" if "(columns 1–" in text else "stacked" if "┃ backend" in text
                else "wide" if "┏" in text else "vertical")
        out.append({"cases": cases, "width": width, "seconds": best, "form": form,
                    "widest": max(len(line) for line in text.splitlines()),
                    "text": hashlib.sha256(text.encode()).hexdigest()})
    return out


def child(checkout: Path, repeats: int) -> list[dict[str, object]]:
    """`measure` in a fresh interpreter that imports `checkout`'s code."""
    env = {**os.environ, "PYTHONPATH": f"{checkout / 'src'}:{REPO}"}
    code = f"import json; from benchmarks.table_split import measure; print(json.dumps(measure({repeats})))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    figures: list[dict[str, object]] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="print each table this many times; the best is shown")
    parser.add_argument("--before", type=Path, help="another checkout to print the same tables with, for comparison")
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min) on {os.cpu_count()} cores")
    now = child(REPO, args.repeats)
    before = child(args.before, args.repeats) if args.before else None
    print(f"{'cases × columns':<16} {'console':>7} {'form':>8} {'widest':>6} {'now':>8}"
          + (f" {'before':>8} {'before ÷ now':>12}" if before else ""))
    for index, figure in enumerate(now):
        size = f"{figure['cases']} × {len(BACKENDS)}"
        line = (f"{size:<16} {figure['width']:>7} "
                f"{figure['form']:>8} {figure['widest']:>6} {figure['seconds']:>7.2f}s")
        if before is not None:
            old = before[index]
            same = "same text" if old["text"] == figure["text"] else f"before: {old['form']}, {old['widest']} wide"
            line += (f" {old['seconds']:>7.2f}s {float(str(old['seconds'])) / float(str(figure['seconds'])):>11.1f}×"
                     f"  {same}")
        print(line)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} after")


if __name__ == "__main__":
    main()
