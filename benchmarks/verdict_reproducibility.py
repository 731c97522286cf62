"""Does the verdict reproduce? Two measuring verdicts on the same machine, their comparisons set side by side.

Goals (issue 37): two default `verdict` runs on the same quiet machine give 0 hard flips ("A faster" on one
page, "B faster" on the other) and at most 1 soft flip ("faster" on one, "the same" on the other); a standard
verdict decides at least 80 % of its comparisons within its budget.

The comparisons counted are the page's directional claims, each with a fixed orientation:
* every answer (verdict/answer.py): JAX's (or Flax's) fastest figure against the fastest other framework's,
  one per finding that has both (matmul, inverse, gradients, the BFGS fit, the CNN step);
* every jit gain (jit/findings.py): a compiled variant against eager, per backend and case.
Each is one of faster, slower, the same (within ±m %) or undecided (verdict/decide.py). A hard flip: faster on
one page and slower on the other; a soft flip: faster or slower on one, the same on the other. Undecided
against anything is neither: the verdict did not claim.

Each verdict runs in its own process, as a user runs it (`python main.py verdict --scale S`), with its own
results store in a temporary folder (so the two never read each other's rounds), one after the other. The
machine's load average is printed before and after each: on a busy machine the verdict's added rounds are
fewer (its budget is wall time), and figures taken while other processes held the cores are undecided.

    .venv/bin/python benchmarks/verdict_reproducibility.py [--scale quick] [--budget SECONDS]
    .venv/bin/python benchmarks/verdict_reproducibility.py --from A.jsonl B.jsonl   # two stores already measured
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from jax_benchmarks.jit.findings import jit_gains  # noqa: E402
from jax_benchmarks.store.location import as_location  # noqa: E402
from jax_benchmarks.verdict.answer import answers  # noqa: E402
from jax_benchmarks.verdict.decide import Word  # noqa: E402
from jax_benchmarks.verdict.findings import all_findings, latest_runs  # noqa: E402
from jax_benchmarks.verdict.source import read_results  # noqa: E402

DECIDED: tuple[Word, ...] = ("faster", "slower", "same")


def comparisons(store: Path) -> dict[str, Word]:
    """The page's directional claims from one store: key (what against what, oriented) -> word."""
    records, _ = read_results(as_location(str(store)), lambda message: print(f"  warning: {message}"))
    chosen = latest_runs(records)
    out: dict[str, Word] = {}
    for answer in answers(all_findings(chosen)):
        out[f"{answer.topic}: JAX against the fastest other framework"] = answer.contrast.judged
    for gain in jit_gains(chosen.get("jit", [])):
        out[f"jit: {gain.backend} {gain.compiled} against eager at {gain.case}"] = gain.contrast.judged
    return out


def flips(first: dict[str, Word], second: dict[str, Word]) -> tuple[int, int]:
    """(hard, soft) flips over the comparisons both pages make."""
    hard = soft = 0
    for key in first.keys() & second.keys():
        pair = {first[key], second[key]}
        if pair == {"faster", "slower"}:
            hard += 1
        elif "same" in pair and pair & {"faster", "slower"}:
            soft += 1
    return hard, soft


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def run_verdict(scale: str, budget: float | None, folder: Path, index: int) -> Path:
    store, page = folder / f"verdict-{index}.jsonl", folder / f"verdict-{index}.md"
    command = [sys.executable, str(ROOT / "main.py"), "verdict", "--scale", scale, "--results", str(store),
               "--format", "markdown", "-o", str(page), *(["--budget", str(budget)] if budget else [])]
    print(f"verdict {index}: {load()} before", flush=True)
    began = time.perf_counter()
    # The verdict wraps its stderr at the console's width, which rich reads from COLUMNS when stderr is not a
    # terminal: a wide one keeps each message on one line, so that its lines can be picked out below.
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
                               "COLUMNS": "1000"})
    took = time.perf_counter() - began
    rounds = [line for line in done.stderr.splitlines() if line.startswith("verdict run ")]
    print(f"verdict {index}: exit {done.returncode} in {took / 60:.1f} min; {load()} after", flush=True)
    for line in rounds:
        print(f"  {line}")
    decided = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("Decided: ")] \
        if page.exists() else []
    for line in decided:
        print(f"  page: {line}")
    return store


def report(stores: Sequence[Path]) -> None:
    pages = [comparisons(store) for store in stores]
    keys = sorted(set().union(*pages))
    print(f"\n{'comparison':<78} " + " ".join(f"{f'verdict {i + 1}':<10}" for i in range(len(pages))))
    for key in keys:
        print(f"{key[:78]:<78} " + " ".join(f"{page.get(key, '—'):<10}" for page in pages))
    for i, page in enumerate(pages):
        decided = sum(1 for word in page.values() if word in DECIDED)
        print(f"verdict {i + 1}: {decided} of {len(page)} comparisons decided "
              f"({decided / len(page):.0%})" if page else f"verdict {i + 1}: no comparisons")
    for i in range(len(pages) - 1):
        hard, soft = flips(pages[i], pages[i + 1])
        print(f"verdict {i + 1} against {i + 2}: {hard} hard flip(s), {soft} soft flip(s) over "
              f"{len(pages[i].keys() & pages[i + 1].keys())} comparisons on both")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="quick", choices=("quick", "standard", "full"))
    parser.add_argument("--budget", type=float, default=None, help="verdict --budget (default: the scale's)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--from", dest="stores", nargs="+", type=Path, default=None,
                        help="compare these stores (already measured) instead of running verdicts")
    args = parser.parse_args()
    if args.stores:
        report(args.stores)
        return
    with tempfile.TemporaryDirectory(prefix="verdict-repro-") as folder:
        stores = [run_verdict(args.scale, args.budget, Path(folder), i + 1) for i in range(args.runs)]
        report(stores)


if __name__ == "__main__":
    main()
