"""A/A of rounds taken in turns (issue 48: the same framework against itself must never be called faster).

For one backend command, each round starts TWO processes of the same backend in turns (the round's arbiter,
jax_benchmarks.measure.turns, exactly as `verdict --turns` starts one process per framework), each into its own store
under one run id; then every figure of the first process is compared with the same figure of the second, round by
round, by the verdict's own test (report/compare.py's `compare`: paired from 5 rounds; verdict/decide.py's
`decide` at its 99.9 % and margin), and the outcomes are counted. A decided "faster" or "slower" is a false decision.
Also printed: each comparison's spread of the rounds' log ratios (what the paired test rests on), and the ratio.

    .venv/bin/python benchmarks/turns_aa.py --rounds 6 -- xla numpy --matrix-size 1000

`--gap settle --gap 0.1` takes each round's pair once per gap (the order alternating round by round), so that two
of the arbiter's gaps are judged side by side.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jax_benchmarks.cli import relaunch  # noqa: E402
from jax_benchmarks.cli.relaunch import ending_with_parent, round_argv  # noqa: E402
from jax_benchmarks.cli.rounds import wait_in_turns  # noqa: E402
from jax_benchmarks.measure.turns import TURN_GAP, Arbiter, Gap  # noqa: E402
from jax_benchmarks.report.compare import Comparison, compare  # noqa: E402
from jax_benchmarks.store.record import Record  # noqa: E402
from jax_benchmarks.verdict.decide import Decision, decide  # noqa: E402


def one_round(group: str, backend: str, options: list[str], stores: list[Path], rounds: int, index: int,
              run_id: str, folder: Path, gap: Gap) -> float:
    """Two processes of `group backend` in turns, each into its own store; the round's wall time."""
    began = time.perf_counter()
    with Arbiter(str(folder / f"turns.{index}"), len(stores), gap) as arbiter:
        children = {}
        for side, store in enumerate(stores):
            argv = round_argv(group, backend, [*options, "--results", str(store), "--turns", arbiter.path],
                              rounds=rounds, index=index, run_id=run_id)
            with (folder / f"side{side}.log").open("a") as out:
                children[f"side {side}"] = relaunch.start(ending_with_parent(argv), stdout=out, stderr=out)
        wait_in_turns(children, arbiter)
    return time.perf_counter() - began


Key = TypeVar("Key", bound=tuple[str, ...])  # a figure: (case, variant) or (case, variant, backend)


def judged(a: Mapping[Key, list[Record]], b: Mapping[Key, list[Record]]) -> Iterator[tuple[Key, Comparison, Decision]]:
    """Each figure both sides hold (in key order), `a`'s rounds against `b`'s by the verdict's own test (`compare`,
    then `decide` at its 99.9 % and margin); a figure `compare` cannot judge (untimed) is left out."""
    for key in sorted(a):
        if key in b and (comparison := compare(a[key], b[key])) is not None:
            yield key, comparison, decide([comparison])[0]


def outcomes(words: collections.Counter[str]) -> str:
    """'N comparisons, F called faster or slower, S the same, U undecided': an A/A's count (F is its false
    decisions)."""
    return (f"{sum(words.values())} comparisons, {words['faster'] + words['slower']} called faster or slower, "
            f"{words['same']} the same, {words['undecided']} undecided")


def figures(store: Path) -> dict[tuple[str, str, str], list[Record]]:
    """(case, variant, backend) -> the timed records of that figure, every round."""
    out: dict[tuple[str, str, str], list[Record]] = collections.defaultdict(list)
    for line in store.read_text().splitlines():
        record = Record.model_validate(json.loads(line))
        if record.median_s:
            out[(record.case, record.variant or "", record.backend)].append(record)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--gap", action="append", type=Gap.parse, default=[],
                        help="the arbiter's gap: 'settle', 'settle:SECONDS' or SECONDS (see turns_rounds.py); "
                             "repeatable: each round runs one pair per gap, the order alternating (default: the "
                             "arbiter's)")
    parser.add_argument("command", nargs="+", help="GROUP BACKEND OPTIONS... (after --)")
    args = parser.parse_args()
    group, backend, *options = args.command
    gaps: list[Gap] = args.gap or [TURN_GAP]
    folder = Path(tempfile.mkdtemp(prefix="turns-aa-"))
    stores = {gap: [folder / f"a{i}.jsonl", folder / f"b{i}.jsonl"] for i, gap in enumerate(gaps)}
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-aaaaaa"
    print(f"{group} {backend} {' '.join(options)}: two processes in turns a round, {args.rounds} rounds, gap "
          f"{'; '.join(map(str, gaps))}; {folder}", flush=True)
    for index in range(args.rounds):
        for gap in (gaps if index % 2 == 0 else list(reversed(gaps))):
            wall = one_round(group, backend, options, stores[gap], args.rounds, index, run_id, folder, gap)
            print(f"round {index + 1}, gap {gap}: {wall:.1f} s", flush=True)
    for gap in gaps:
        print(f"-- gap {gap}")
        a, b = figures(stores[gap][0]), figures(stores[gap][1])
        words: collections.Counter[str] = collections.Counter()
        for key, comparison, decision in judged(a, b):
            words[decision.word] += 1
            low, high = comparison.interval or (math.nan, math.nan)
            spread = "—" if comparison.spread is None else f"{comparison.spread:.3f}"
            print(f"{key[0]}{' [' + key[1] + ']' if key[1] else ''}: {comparison.method}, {comparison.rounds} rounds, "
                  f"ratio {1 + comparison.change_pct / 100:.3f}, spread {spread}, 95 % CI {low:.3f}–{high:.3f}: "
                  f"{decision.word}{' (busy)' if decision.busy else ''}")
        print(f"A/A, gap {gap}: {outcomes(words)}")
    print(f"ended {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
