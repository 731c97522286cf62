"""Would shorter timed windows buy more rounds a minute at equal trust? What a round's figure becomes if it kept
only the first 1/K of its timed samples (issue 48, goal 1).

The verdict judges each round by its fastest sample (`min_s`; report/compare.py says why). The fastest of fewer
samples can only be slower or equal, and by how much depends on the figure: how often its samples reach their floor.
For every record of the stores with at least K samples, this prints the fastest of its first 1/K over the fastest of
all (per figure, the geometric mean over its rounds), and then what the verdict would see: for each case measured by
two frameworks (or variants) of one group, the shift of their ratio (how far shorter windows would move the judged
ratio). A shift of a few % against a margin of ±5 % is a bias the A/A of issue 48 forbids.

    .venv/bin/python benchmarks/shorter_windows.py [--keep K] STORE.jsonl [STORE.jsonl ...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import statistics
from collections import defaultdict
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", type=Path)
    parser.add_argument("--keep", type=int, default=3, help="keep the first 1/K of each round's samples (default 3)")
    args = parser.parse_args()
    logs: dict[tuple[str, str, str], list[float]] = defaultdict(list)  # (group, case, framework) -> per-round log
    for store in args.stores:
        for line in store.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            samples = record.get("samples_s") or []
            if len(samples) < args.keep or not min(samples) > 0:
                continue
            kept = samples[: len(samples) // args.keep]
            who = record["backend"] + (f"/{record['variant']}" if record.get("variant") else "")
            logs[(record["group"], record["case"], who)].append(math.log(min(kept) / min(samples)))
    figures = {key: statistics.mean(values) for key, values in logs.items()}
    print(f"the fastest of the first 1/{args.keep} of each round's samples over the fastest of all, "
          f"{len(figures)} figures of {len(args.stores)} store(s)")
    for group in sorted({key[0] for key in figures}):
        mine = {key: value for key, value in figures.items() if key[0] == group}
        values = sorted(mine.values())
        worst = max(mine, key=lambda key: mine[key])
        print(f"{group}: {len(mine)} figures, median {math.exp(statistics.median(values)):.3f}, "
              f"slowest {math.exp(values[-1]):.3f} ({worst[2]} {worst[1]})")
        by_case: dict[str, dict[str, float]] = defaultdict(dict)
        for (_, case, who), value in mine.items():
            by_case[case][who] = value
        shifts = [(abs(by_case[case][a] - by_case[case][b]), case, a, b) for case in by_case
                  for a, b in itertools.combinations(sorted(by_case[case]), 2)]
        if shifts:
            shift, case, a, b = max(shifts)
            typical = 100 * statistics.median(s[0] for s in shifts)
            print(f"  {len(shifts)} comparisons: the judged ratio would move by {typical:.1f} % (median), at most "
                  f"{100 * (math.exp(shift) - 1):.1f} % ({a} against {b}, {case})")


if __name__ == "__main__":
    main()
