"""Does `report --baseline previous --fail-on-regression PCT` neither cry wolf nor sleep on this machine?

Each trial runs the same command three times back to back, each with --rounds R (R fresh processes):
  A  : the command                    (baseline)
  A' : the same command               (A/A: nothing changed; whatever differs is the machine)
  B  : the same command, made slower  (A/B: a real slowdown of matmul and inverse, same case names)
then asks the gate A' vs A and B vs A' (so both pairs are equally far apart in time). Prints per trial
the gate's exit codes and the ratios it measured (B over A', A' over A) with the load average, then the gate's exit-0 rate on A/A,
the share of figures called slower on A/A, the exit-1 rate on A/B with the figures it names, the command,
and the wall time the extra rounds cost over a single run.

SLOWDOWN picks how B is made slower (the product code is the same in A and B):
  kernel  (default) both at --threads 1; B runs OpenBLAS's Nehalem kernels (OPENBLAS_CORETYPE, SSE only)
          instead of the ones it picks for this CPU: the same arithmetic with older instructions, about
          2.5× the CPU time of a 512×512 matmul and 1.5× of an inverse, whatever else the machine runs.
  threads 2 → 1 BLAS threads, through OPENBLAS_NUM_THREADS (an environment change, as the kernel is: a --threads
          change is a change of settings, whose run `--baseline previous` never takes as the baseline).
          Only on an idle machine is that a ~2× slowdown: when other
          jobs hold a core, OpenBLAS's second thread waits for one and 2 threads are the *slower* case
          (seen here: matmul ×10 slower with 2 threads than with 1), so there is no slowdown to find.

    .venv/bin/python benchmarks/regression_gate.py [TRIALS] [ROUNDS] [kernel|threads] [KEEP_DIR]

KEEP_DIR keeps every trial's results file (aaN.jsonl: A and A'; abN.jsonl: A' and B) for a closer look.
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["xla", "numpy", "--matrix-size", "512"]
PCT = "10"
SLOWED = ("matmul", "inverse")
# (options of A and A', options of B, environment of B)
SLOWDOWNS: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "kernel": (["--threads", "1"], ["--threads", "1"], {"OPENBLAS_CORETYPE": "Nehalem"}),
    "threads": ([], [], {"OPENBLAS_NUM_THREADS": "1"}),
}


def main(*args: str, results: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args, "--results", str(results)],
                          capture_output=True, text=True, cwd=ROOT, check=False, env={**os.environ, **(env or {})})


def bench(results: Path, options: list[str], rounds: int, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = main(*COMMAND, *options, "--rounds", str(rounds), results=results, env=env)
    if done.returncode != 0:
        raise SystemExit(f"benchmark failed: {done.stderr[-2000:]}")
    return time.perf_counter() - start


def gate(results: Path) -> tuple[int, list[dict[str, object]]]:
    verdicts = main("report", "--baseline", "previous", "--fail-on-regression", PCT, "--format", "json",
                    results=results)
    rows = [row for table in json.loads(verdicts.stdout)["tables"] for row in table["rows"]]
    return verdicts.returncode, rows


def ratio(rows: list[dict[str, object]], case_prefix: str) -> float:
    """current / baseline as the gate measured it (its change: geometric means of the rounds' fastest samples)."""
    row = next(r for r in rows if str(r["case"]).startswith(case_prefix))
    return 1 + float(str(row["change_pct"])) / 100


def slower(rows: list[dict[str, object]]) -> list[str]:
    return [str(r["case"]).split("_")[0] for r in rows if r["verdict"] == "slower"]


def last_run_only(path: Path) -> str:
    lines = path.read_text().splitlines(keepends=True)
    last = json.loads(lines[-1])["run_id"]
    return "".join(line for line in lines if json.loads(line)["run_id"] == last)


def run(trials: int, rounds: int, slowdown: str, keep: Path | None) -> None:
    base_options, slow_options, slow_env = SLOWDOWNS[slowdown]
    aa_exit0 = ab_exit1 = aa_slower = aa_figures = 0
    named: collections.Counter[str] = collections.Counter()
    ab_ratios: dict[str, list[float]] = {case: [] for case in SLOWED}
    walls: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or Path(scratch)
        single = tmp / "single.jsonl"
        single_walls = [bench(single, base_options, 1) for _ in range(3)]
        for trial in range(trials):
            aa, ab = tmp / f"aa{trial}.jsonl", tmp / f"ab{trial}.jsonl"
            walls.append(bench(aa, base_options, rounds))
            walls.append(bench(aa, base_options, rounds))
            ab.write_text(last_run_only(aa))
            walls.append(bench(ab, slow_options, rounds, slow_env))
            aa_code, aa_rows = gate(aa)
            aa_exit0 += aa_code == 0
            aa_figures += len(aa_rows)
            aa_slower += len(slower(aa_rows))
            ab_code, ab_rows = gate(ab)
            ab_exit1 += ab_code == 1
            named.update(str(r["case"]) for r in ab_rows if r["verdict"] == "slower")
            for case in ab_ratios:
                ab_ratios[case].append(ratio(ab_rows, case))
            print(f"trial {trial + 1:2}/{trials}: A/A exit {aa_code} (" + " ".join(
                      f"{case} ×{ratio(aa_rows, case):.2f}" for case in SLOWED) + ", slower: "
                  + (", ".join(slower(aa_rows)) or "none") + f"); A/B exit {ab_code} (" + " ".join(
                      f"{case} ×{ratio(ab_rows, case):.2f}" for case in SLOWED) + ", slower: "
                  + (", ".join(slower(ab_rows)) or "none") + f"); load {os.getloadavg()[0]:.1f}", flush=True)
    one = statistics.median(single_walls)
    per_run = statistics.median(walls)
    b_text = " ".join([*(f"{k}={v}" for k, v in slow_env.items()), "python main.py", *COMMAND, *slow_options])
    print(f"A, A': python main.py {' '.join([*COMMAND, *base_options])} --rounds {rounds}; "
          f"B: {b_text} --rounds {rounds}; gate: report --baseline previous --fail-on-regression {PCT}")
    print(f"A/A: gate exit 0 in {aa_exit0}/{trials} trials (target ≥ {trials - trials // 20}); "
          f"figures called slower {aa_slower}/{aa_figures} = {aa_slower / max(aa_figures, 1):.1%} (target ≤ 5 %)")
    print(f"A/B: gate exit 1 in {ab_exit1}/{trials} trials (target ≥ {trials - trials // 20}); figures named: "
          + (", ".join(f"{case} {n}×" for case, n in named.most_common()) or "none"))
    for case, values in ab_ratios.items():
        print(f"A/B ratio of {case} as the gate measured it (B over A', geometric means of the rounds' fastest samples): "
              f"median ×{statistics.median(values):.2f}, range ×{min(values):.2f}–×{max(values):.2f}")
    print(f"wall time: one run without --rounds {one:.1f} s; with --rounds {rounds} {per_run:.1f} s "
          f"(+{per_run - one:.1f} s, ×{per_run / one:.1f})")


if __name__ == "__main__":
    argv = sys.argv[1:]
    run(int(argv[0]) if argv else 20, int(argv[1]) if len(argv) > 1 else 10,
        argv[2] if len(argv) > 2 else "kernel", Path(argv[3]) if len(argv) > 3 else None)
