"""Benchmark: does a figure of work timed once depend on which other cases ran before it in the process?

    .venv/bin/python benchmarks/selection_effect.py [rounds]

Work timed once (a data load, an epoch, a validation) has no warm-up, so the state of the process's heap
when it starts is part of its time: pages an earlier case freed are reused without faulting. The harness
hands the heap back (garbage collector, malloc_trim) before such work, so that its figure is the same
whether the whole suite ran before it or the case was selected alone with `-k`. This runs `mnist pytorch`
and `mnist flax` for one epoch of --dry-run batches on the embedded digits (offline, CPU), the whole
suite and each work-timed-once case alone, in fresh processes, alternating which goes first from round
to round, and prints the ratio of the medians (whole suite / alone) per figure.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from pathlib import Path

from memory_footprint import label, run

BASE = ["--epochs", "1", "--dry-run", "--data-source", "embedded", "--comet", "off", "--repeats", "5"]
# The mnist cases timed once, around their work, and the `-k` that selects each with no case before it
# (validation validates the model its epoch trained, so it needs the epoch).
ONCE = {"load_mnist": "load_mnist", "train_epoch": "train_epoch", "validation": "train_epoch,validation"}


def main(rounds: int) -> None:
    print(f"# mnist, CPU, {rounds} round(s): median of each figure timed once, whole suite / selected alone")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        run(["mnist", "pytorch", *BASE, "-k", "load_mnist"], False, results)  # builds the data cache, untimed
        for backend in ("pytorch", "flax"):
            suite: dict[str, list[float]] = {}
            alone: dict[str, list[float]] = {}
            for r in range(rounds):
                for whole in ((True, False) if r % 2 == 0 else (False, True)):
                    for case in (None,) if whole else tuple(ONCE):
                        select = [] if case is None else ["-k", ONCE[case]]
                        records, _ = run(["mnist", backend, *BASE, *select], False, results)
                        for record in records:
                            if record["case"].startswith(tuple(ONCE) if case is None else case):
                                (suite if whole else alone).setdefault(label(record), []).append(record["median_s"])
            for figure, values in suite.items():
                a, s = statistics.median(alone[figure]), statistics.median(values)
                print(f"  {figure:45} whole suite {s * 1e3:8.1f} ms  alone {a * 1e3:8.1f} ms  ×{s / a:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
