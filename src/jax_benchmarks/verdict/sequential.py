"""Sequential rounds: after a measuring verdict's first rounds, one more round of each group whose findings are
still undecided, again and again, until every finding is decided or the budget (`verdict --budget`) is spent.

Each added round is a fresh process per group command, run by the verdict's own round launcher
(`verdict.cli.measure`) with the next round index; a group command runs every framework it compares in each
round, one after the other, so the frameworks stay interleaved round by round. A round is started only when it
fits what is left of the budget at the pace the finished rounds ran (their wall time against the scale's
reference figures); where the rounds of every open group do not fit, those that do (the cheapest first) run. A refused comparison (the records are not the same work) is never a reason to add rounds:
more rounds cannot make it comparable.

Pure functions of records and figures: the CLI runs the rounds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.answer import answers
from jax_benchmarks.verdict.findings import Finding, group_findings
from jax_benchmarks.verdict.scale import Scale

# `--rounds` takes at most 100 (settings.BenchSettings.rounds): the last index a round may have is 99.
MAX_ROUNDS = 100


def is_open(finding: Finding) -> bool:
    """Undecided, and not because its records are unlike (a refusal names what differs: rounds cannot fix it)."""
    return finding.status == "undecided"


def open_groups(chosen: Mapping[str, Sequence[Record]], target: float | None) -> list[str]:
    """The groups (of `chosen`: per group, the run's records) with at least one undecided finding, or an
    undecided answer (JAX against the fastest other framework, verdict/answer.py; not a refused one)."""
    out = []
    for group, records in chosen.items():
        declared = group_findings(group)
        if declared is None or not records:
            continue
        found = declared.findings(records, target)
        if any(is_open(f) for f in found) or any(a.word == "undecided" and not a.contrast.decision.refused
                                                 for a in answers(found)):
            out.append(group)
    return out


def next_round(scale: Scale, rounds_done: int, open_now: Sequence[str], spent_s: float, budget_s: float,
               pace: float) -> Scale | None:
    """The scale to run round `rounds_done` (0-based index) of: the steps of the groups in `open_now` that fit what
    is left of the budget at `pace` (seconds taken per reference second), the cheapest first, so that a budget
    too small for every open group still buys rounds for some; `rounds` one more than done. None when none is
    open, none fits, or the rounds' cap is reached."""
    if rounds_done >= MAX_ROUNDS:
        return None
    groups = [group for group in dict.fromkeys(step.group for step in scale.steps) if group in open_now]
    cost = {group: pace * sum(step.round_s for step in scale.steps if step.group == group) for group in groups}
    left, chosen = budget_s - spent_s, set()
    for group in sorted(groups, key=lambda g: cost[g]):
        if cost[group] <= left:
            chosen.add(group)
            left -= cost[group]
    steps = tuple(step for step in scale.steps if step.group in chosen)
    return replace(scale, rounds=rounds_done + 1, steps=steps) if steps else None


def decided_count(findings: Sequence[Finding], undecided_keys: Collection[str] = ()) -> tuple[int, int]:
    """(decided, undecided) among the findings that compare: found or the same, against undecided (or found or the
    same but in `undecided_keys`: their answer, judged with the page's other answers, is undecided)."""
    compared = [f for f in findings if f.status in ("found", "same") or is_open(f)]
    undecided = sum(1 for f in compared if is_open(f) or f.key in undecided_keys)
    return len(compared) - undecided, undecided
