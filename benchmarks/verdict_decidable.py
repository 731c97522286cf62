"""What would it take to decide a verdict's comparisons on this machine? From measured verdict stores.

Goal (issue 37): `verdict --scale standard` decides at least 80 % of its comparisons within its budget (8 minutes on
2 cores). For each comparison the page counts (`verdict/sequential.decided_count`: every finding that compares, a
finding whose answer, JAX against the fastest other framework, is undecided counted undecided), this prints whether
it was decided and, if not, the rounds a side its rounds say would decide it (`Decision.rounds_to_decide`: at the
rounds' spread and observed ratio, at the verdict's 99.9 % two-sided, 80 % power), and what those rounds cost at the
scale's round times (`verdict/scale.py`, measured on a quiet 2-core CPU; every step of the group: an upper bound
where the verdict's added round runs only the steps the open finding rests on, verdict/sequential.py's
`next_round`). Then the least added time that would decide 80 % of the comparisons, adding rounds to the groups
where deciding is cheapest (a group's round serves all its comparisons).

    .venv/bin/python benchmarks/verdict_decidable.py [--scale standard] STORE [STORE ...]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from jax_benchmarks.store.location import as_location  # noqa: E402
from jax_benchmarks.verdict.answer import answers  # noqa: E402
from jax_benchmarks.verdict.decide import MAX_ROUNDS  # noqa: E402
from jax_benchmarks.verdict.findings import all_findings, latest_runs  # noqa: E402
from jax_benchmarks.verdict.scale import SCALES, Scale  # noqa: E402
from jax_benchmarks.verdict.page import undecided_keys  # noqa: E402
from jax_benchmarks.verdict.sequential import counted, decided_count, rounds_to_settle  # noqa: E402
from jax_benchmarks.verdict.source import read_results  # noqa: E402

GOAL = 0.8


def report(store: Path, scale: Scale) -> None:
    records, _ = read_results(as_location(str(store)), lambda message: print(f"  warning: {message}"))
    chosen = latest_runs(records)
    findings = all_findings(chosen)
    answer_of = {a.key: a for a in answers(findings)}
    rows = []  # (finding key, group, rounds done, more rounds needed: 0 decided, None more than MAX_ROUNDS)
    for finding in findings:
        if not counted(finding):
            continue
        group = finding.records[0].group if finding.records else finding.key.split("-")[0]
        done = max((d.rounds for d in finding.decisions), default=0)
        rows.append((finding.key, group, done, rounds_to_settle(finding, answer_of.get(finding.key))))
    decided, undecided = decided_count(findings, undecided_keys(list(answer_of.values())))
    print(f"== {store}: decided {decided} of {decided + undecided} ({decided / (decided + undecided):.0%})")
    print(f"{'comparison':48} {'group':9} {'rounds':>6} {'more rounds to decide':>22} {'their time':>11}")
    for key, group, done, needed in rows:
        more = ("decided" if needed == 0 else f"more than {MAX_ROUNDS}" if needed is None else f"{needed}")
        cost = "" if not needed else f"{needed * scale.group_round_s(group) / 60:.1f} min"
        print(f"{key[:48]:48} {group:9} {done:>6} {more:>22} {cost:>11}")
    # The least added time to decide GOAL of the comparisons: a group's added rounds serve all its comparisons, so
    # deciding a set costs, per group, its largest need times its round time; try the cheapest sets greedily.
    goal = math.ceil(GOAL * len(rows))
    decidable = sorted(((group, needed) for _, group, _, needed in rows if needed),
                       key=lambda pair: pair[1] * scale.group_round_s(pair[0]))
    have, per_group = sum(1 for r in rows if r[3] == 0), dict[str, int]()
    for group, needed in decidable:
        if have >= goal:
            break
        per_group[group] = max(per_group.get(group, 0), needed)
        have += 1
    if have >= goal and not per_group:
        print(f"{GOAL:.0%} decided ({goal} of {len(rows)}): reached by these rounds")
    elif have >= goal:
        added = sum(n * scale.group_round_s(g) for g, n in per_group.items())
        print(f"{GOAL:.0%} decided ({goal} of {len(rows)}): about {added / 60:.1f} min of added rounds at the scale's "
              f"quiet round times ({', '.join(f'{g} {n} more' for g, n in per_group.items())}), beyond "
              f"its {scale.rounds} rounds' {scale.budget_s / 60:.1f} min")
    else:
        print(f"{GOAL:.0%} decided ({goal} of {len(rows)}): not within {MAX_ROUNDS} rounds a side: "
              f"{sum(1 for r in rows if r[3] is None)} comparison(s) sit within the rounds' noise of the margin")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="standard", choices=sorted(SCALES))
    parser.add_argument("stores", nargs="+", type=Path)
    args = parser.parse_args()
    for store in args.stores:
        report(store, SCALES[args.scale])


if __name__ == "__main__":
    main()
