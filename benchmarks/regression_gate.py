"""Does `report --baseline previous --fail-on-regression PCT` neither cry wolf nor sleep on this machine?

Each trial runs the same command three times back to back, each with --rounds R (R fresh processes):
  A  : --threads 2        (baseline)
  A' : --threads 2        (A/A: nothing changed; whatever differs is the machine)
  B  : --threads 1        (A/B: a real slowdown of matmul and inverse, same case names)

2 → 1 BLAS threads halves the cores a 512×512 matmul and inverse get on an otherwise idle 2-core
machine (about 1.7–2× slower). Run it on a quiet machine: when other jobs hold the cores, OpenBLAS's
second thread spins waiting for one and 2 threads can be the *slower* case (seen here: ~3.5× on a
busy machine), so there is no slowdown to find. The printed real ratio says which held.
then asks the gate A' vs A and B vs A' (so both pairs are equally far apart in time). Prints the
gate's exit-0 rate on A/A, the share of figures called slower on A/A, the exit-1 rate on A/B with
the figures it names, the real A/B ratio of the per-round medians (was the slowdown there?), the
command, and the wall time the extra rounds cost over a single run.

    .venv/bin/python benchmarks/regression_gate.py [TRIALS] [ROUNDS]
"""

from __future__ import annotations

import collections
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["xla", "numpy", "--matrix-size", "512"]
PCT = "10"
BASE_THREADS, SLOW_THREADS = 2, 1


def main(*args: str, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args, "--results", str(results)],
                          capture_output=True, text=True, cwd=ROOT, check=False)


def bench(results: Path, threads: int, rounds: int) -> float:
    start = time.perf_counter()
    done = main(*COMMAND, "--threads", str(threads), "--rounds", str(rounds), results=results)
    if done.returncode != 0:
        raise SystemExit(f"benchmark failed: {done.stderr[-2000:]}")
    return time.perf_counter() - start


def gate(results: Path) -> tuple[int, list[dict[str, object]]]:
    verdicts = main("report", "--baseline", "previous", "--fail-on-regression", PCT, "--format", "json",
                    results=results)
    rows = [row for table in json.loads(verdicts.stdout)["tables"] for row in table["rows"]]
    return verdicts.returncode, rows


def ratio(rows: list[dict[str, object]], case_prefix: str) -> float:
    row = next(r for r in rows if str(r["case"]).startswith(case_prefix))
    return 1 + float(str(row["change_pct"])) / 100


def run(trials: int, rounds: int) -> None:
    aa_exit0 = ab_exit1 = aa_slower = aa_figures = 0
    named: collections.Counter[str] = collections.Counter()
    ab_ratios: dict[str, list[float]] = {"matmul": [], "inverse": []}
    walls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        single = Path(tmp) / "single.jsonl"
        single_walls = [bench(single, BASE_THREADS, 1) for _ in range(3)]
        for trial in range(trials):
            aa, ab = Path(tmp) / f"aa{trial}.jsonl", Path(tmp) / f"ab{trial}.jsonl"
            walls.append(bench(aa, BASE_THREADS, rounds))
            walls.append(bench(aa, BASE_THREADS, rounds))
            ab.write_text("".join(line for line in aa.read_text().splitlines(keepends=True)
                                  if json.loads(line)["run_id"] == json.loads(aa.read_text().splitlines()[-1])["run_id"]))
            walls.append(bench(ab, SLOW_THREADS, rounds))
            code, rows = gate(aa)
            aa_exit0 += code == 0
            aa_figures += len(rows)
            aa_slower += sum(r["verdict"] == "slower" for r in rows)
            code, rows = gate(ab)
            ab_exit1 += code == 1
            named.update(str(r["case"]) for r in rows if r["verdict"] == "slower")
            for case in ab_ratios:
                ab_ratios[case].append(ratio(rows, case))
            print(f"trial {trial + 1}/{trials}: A/A exits 0 so far {aa_exit0},",
                  f"A/B matmul ×{ab_ratios['matmul'][-1]:.2f} inverse ×{ab_ratios['inverse'][-1]:.2f} exit {code}",
                  file=sys.stderr)
    one = statistics.median(single_walls)
    per_run = statistics.median(walls)
    print(f"command: python main.py {' '.join(COMMAND)} --threads {BASE_THREADS}|{SLOW_THREADS} --rounds {rounds}; "
          f"gate: report --baseline previous --fail-on-regression {PCT}")
    print(f"A/A: gate exit 0 in {aa_exit0}/{trials} trials (target ≥ {trials - trials // 20}); "
          f"figures called slower {aa_slower}/{aa_figures} = {aa_slower / max(aa_figures, 1):.1%} (target ≤ 5 %)")
    print(f"A/B: gate exit 1 in {ab_exit1}/{trials} trials (target ≥ {trials - trials // 20}); figures named: "
          + (", ".join(f"{case} {n}×" for case, n in named.most_common()) or "none"))
    for case, values in ab_ratios.items():
        print(f"A/B real ratio of {case} (threads {SLOW_THREADS} over {BASE_THREADS}, per-round medians): median ×{statistics.median(values):.2f},"
              f" range ×{min(values):.2f}–×{max(values):.2f}")
    print(f"wall time: one run without --rounds {one:.1f} s; with --rounds {rounds} {per_run:.1f} s "
          f"(+{per_run - one:.1f} s, ×{per_run / one:.1f})")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
