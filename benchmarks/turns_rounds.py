"""Rounds taken in turns against today's rounds, side by side in one run (issue 48, item 1).

Today a round of a group command is one fresh process running the frameworks one after another (`group all`); a
round taken in turns (`cli/rounds.run_round_in_turns`, jax_benchmarks.measure.turns) is one fresh process per
framework, side by side, taking turns at the timed windows. For each group command given, this script runs N rounds
of each mode, the modes alternating round by round (which goes first alternates too), each into its own store, and
prints per mode:

- the rounds' wall time (median) and rounds a minute;
- per comparison of two frameworks on the same case (every pair of backends with the case): the spread (sd) across
  rounds of the round's log ratio of their fastest samples (what the verdict judges), its median over the pairs, and
  the variance a minute (sd² ÷ rounds a minute: the variance of the mean ratio over a minute's rounds; lower is
  better; the ratio of the two modes' is the goal's "rounds a minute at equal trust");
- the A/A bias: each figure's geometric mean over its rounds, in turns over today's (the geometric mean over the
  figures and the largest |log ratio|, as %), so that a bias of the mode shows.

    .venv/bin/python benchmarks/turns_rounds.py --rounds 6 -- xla all --matrix-size 1000

`--gap settle --gap 0.1` runs one mode in turns per gap (side by side with one process, all alternating): the
arbiter's gap that waits until the round's processes are quiet against a fixed 0.1 s.

`--join 'pytorch --compile'` (repeatable) adds a command of the group with options of its own, as `verdict --turns`
joins `mnist pytorch --compile` to `mnist all`'s turns (verdict/cli.py's `taken_in_turns`): today's round is then
`all` and the joined command one after the other (two processes, their wall times added), the round in turns one more
process; and each case's figures are compared across variants too (Flax's jitted step against torch.compile's):

    .venv/bin/python benchmarks/turns_rounds.py --rounds 6 --join 'pytorch --compile' -- mnist all --epochs 1 \
        --data-source embedded --comet off
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from jax_benchmarks.cli.rounds import run_round, run_round_in_turns  # noqa: E402
from jax_benchmarks.groups import GROUPS  # noqa: E402
from jax_benchmarks.measure.turns import TURN_GAP, TURN_WINDOWS, Gap  # noqa: E402


def all_backends(group: str) -> list[str]:
    spec = importlib.import_module(GROUPS[group].module).SPEC
    return [name for name, backend in spec.backends.items() if backend.in_all and not backend.missing]


def fastest(path: Path) -> dict[tuple[str, str, str], dict[int, float]]:
    """(case, variant, backend) -> round index -> the round's fastest sample."""
    out: dict[tuple[str, str, str], dict[int, float]] = defaultdict(dict)
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        record = json.loads(line)
        value = record.get("min_s") or record.get("median_s")
        if value and record.get("round_index") is not None:
            out[(record["case"], record.get("variant") or "", record["backend"])][record["round_index"]] = value
    return out


def pair_spreads(figures: dict[tuple[str, str, str], dict[int, float]],
                 across_variants: bool = False) -> dict[str, float]:
    """'case [variant]: a/b' -> sd over rounds of log(a's fastest) - log(b's fastest), rounds both have; each pair of
    backends of one case and variant, or with `across_variants` of one case ('case: flax/pytorch [compile:default]')."""
    by_case: dict[tuple[str, str], dict[str, dict[int, float]]] = defaultdict(dict)
    for (case, variant, backend), rounds in figures.items():
        if across_variants:
            by_case[(case, "")][backend + (f" [{variant}]" if variant else "")] = rounds
        else:
            by_case[(case, variant)][backend] = rounds
    out = {}
    for (case, variant), backends in sorted(by_case.items()):
        for a, b in itertools.combinations(sorted(backends), 2):
            common = sorted(set(backends[a]) & set(backends[b]))
            if len(common) >= 3:
                diffs = [math.log(backends[a][i]) - math.log(backends[b][i]) for i in common]
                out[f"{case}{' [' + variant + ']' if variant else ''}: {a}/{b}"] = statistics.stdev(diffs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--gap", action="append", type=Gap.parse, default=[],
                        help="'settle' (until the round's processes are quiet), 'settle:SECONDS' (and at least that "
                             "long) or SECONDS (a fixed gap); repeatable: one mode in turns per gap (default: the "
                             "arbiter's)")
    parser.add_argument("--windows", type=int, default=TURN_WINDOWS, help="turns a figure's samples are split into")
    parser.add_argument("--join", action="append", default=[],
                        help="a command of the group with options of its own ('pytorch --compile'), repeatable")
    parser.add_argument("command", nargs="+", help="GROUP all OPTIONS... (after --)")
    args = parser.parse_args()
    group, command, *options = args.command
    if command != "all":
        raise SystemExit("a round in turns runs `all`'s backends side by side: give GROUP all OPTIONS")
    backends = [*all_backends(group), *args.join]
    gaps: list[Gap] = args.gap or [TURN_GAP]
    folder = Path(tempfile.mkdtemp(prefix="turns-rounds-"))
    turns_modes = {f"in turns, gap {gap}": gap for gap in gaps}
    stores = {"one process": folder / "one.jsonl",
              **{mode: folder / f"turns{i}.jsonl" for i, mode in enumerate(turns_modes)}}
    walls: dict[str, list[float]] = defaultdict(list)
    print(f"{group} {command} {' '.join(options)}: backends {', '.join(backends)}; {args.rounds} rounds a mode; "
          f"in turns: {args.windows} windows a figure, gaps: "
          f"{'; '.join(map(str, gaps))}; logs in {folder}", flush=True)
    for index in range(args.rounds):
        modes = list(stores) if index % 2 == 0 else list(reversed(stores))
        for mode in modes:
            store = ["--results", str(stores[mode])]
            if mode == "one process":
                done = [run_round(group, name, [*own, *options, *store], rounds=args.rounds, index=index,
                                  run_id="one-process", log=folder / "one.log")
                        for name, *own in [[command], *(joined.split() for joined in args.join)]]
            else:
                done = [run_round_in_turns(group, backends, [*options, *store], rounds=args.rounds, index=index,
                                           run_id="in-turns", log=folder / "turns.log", gap=turns_modes[mode],
                                           windows=args.windows)]
            walls[mode].append(sum(each.seconds for each in done))
            print(f"round {index + 1} {mode}: {walls[mode][-1]:.1f} s, exit "
                  f"{', '.join(str(each.code) for each in done)}", flush=True)
    spreads = {mode: pair_spreads(fastest(path), across_variants=bool(args.join)) for mode, path in stores.items()}
    per_minute = {mode: 60 / statistics.median(walls[mode]) for mode in stores}
    for mode in stores:
        values = list(spreads[mode].values())
        print(f"{mode}: round {statistics.median(walls[mode]):.1f} s (median), {per_minute[mode]:.2f} rounds/min; "
              f"pair spread median {statistics.median(values):.3f} over {len(values)} pairs; variance/min "
              f"{statistics.median(values) ** 2 / per_minute[mode]:.2e}")
    one_figures = fastest(stores["one process"])
    for mode in turns_modes:
        print(f"-- one process against {mode}")
        print(f"{'comparison':58} {'one process':>11} {'in turns':>9} {'var/min ratio':>13}")
        for key in spreads["one process"]:
            one, turns = spreads["one process"][key], spreads[mode].get(key)
            if turns is None:
                continue
            ratio = (one ** 2 / per_minute["one process"]) / (turns ** 2 / per_minute[mode]) if turns else math.inf
            print(f"{key:58} {one:11.3f} {turns:9.3f} {ratio:12.1f}×")
        ratios = [(spreads["one process"][k] ** 2 / per_minute["one process"]) / (spreads[mode][k] ** 2 /
                  per_minute[mode]) for k in spreads["one process"] if spreads[mode].get(k)]
        if ratios:
            print(f"variance a minute, one process over {mode}: median {statistics.median(ratios):.1f}× over "
                  f"{len(ratios)} comparisons (min {min(ratios):.1f}×, max {max(ratios):.1f}×)")
        turns_figures = fastest(stores[mode])
        bias = [math.log(statistics.geometric_mean(turns_figures[k].values()) /
                         statistics.geometric_mean(one_figures[k].values())) for k in one_figures if k in turns_figures]
        if bias:
            print(f"A/A bias, {mode} over one process: geometric mean {math.exp(statistics.fmean(bias)):.3f}, "
                  f"largest {max(abs(b) for b in bias) * 100:.1f} % over {len(bias)} figures")
            per_figure = []
            for figure in sorted(one_figures):
                if figure in turns_figures:
                    case, variant, backend = figure
                    ratio = (statistics.geometric_mean(turns_figures[figure].values()) /
                             statistics.geometric_mean(one_figures[figure].values()))
                    per_figure.append(f"{backend} {case}{' [' + variant + ']' if variant else ''} {ratio:.2f}")
            print("  per figure: " + ", ".join(per_figure))
    print(f"ended {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
