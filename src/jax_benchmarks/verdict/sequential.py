"""Sequential rounds: after a measuring verdict's first rounds, one more round of each group whose findings are
still undecided and could be decided within the budget (`verdict --budget`), again and again, until every finding
is decided, none left open can be decided within what is left, or the budget is spent.

Each added round is a fresh process per group command, run by the verdict's own round launcher
(`verdict.cli.measure`) with the next round index; a group command runs every framework it compares in each
round, one after the other, so the frameworks stay interleaved round by round. Of a group with two commands
(jit: `all` and `flax`), only those whose rounds record a backend its open findings rest on run (`next_round`),
and each runs only the cases its open findings rest on (its `-k`): a round of `xla all --matrix-size 1000` runs six
cases of three frameworks in 9.7 s, one of only the matmul they ask for in 4.6 s (benchmarks/case_rounds.py,
docs/verdict.md). The first such round is costed as a whole one; later ones at what they took.
A round is started only when it fits what is left of the budget at what the step's finished rounds of this verdict
took (the median; a step with none yet: its reference figure at the pace the finished rounds ran against theirs);
where the rounds of every open group do not fit, those that do (the cheapest first) run.
A refused comparison (the records are not the same work) is never a reason to add rounds: more rounds cannot
make it comparable.

Which groups are worth a round: each undecided comparison names the rounds a side that would decide it at its
spread and observed ratio (`Decision.rounds_to_decide`, verdict/decide.py; an estimate from the rounds so far,
at 80 % power). A group gets a round only where one of its open comparisons asks for rounds that fit what is left
of the budget at its round's cost (`rounds_wanted`); the cheapest decision first. A comparison whose ratio sits
within the rounds' noise of the margin (more than 100 rounds a side) or that asks for more rounds than the budget
leaves is not given rounds that cannot decide it: the verdict stops sooner and says so. One not yet tested (too
few rounds, or taken on a busy machine) asks for one round.

Pure functions of records and figures: the CLI runs the rounds.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.answer import Answer, answers
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT, MAX_ROUNDS, Decision
from jax_benchmarks.verdict.findings import Finding, group_findings
from jax_benchmarks.verdict.scale import Scale, Step


def is_open(finding: Finding) -> bool:
    """Undecided, and not because its records are unlike (a refusal names what differs: rounds cannot fix it)."""
    return finding.status == "undecided"


def more_rounds(decision: Decision) -> int | None:
    """The rounds a side more that an undecided comparison asks for: one where it was not tested yet (too few rounds,
    a busy machine), else those its rounds name (`rounds_to_decide`) beyond the ones done; None: decided, refused
    (more rounds cannot make unlike work comparable), or more than 100 rounds a side."""
    if decision.word != "undecided" or decision.refused:
        return None
    if decision.detectable_pct is None:
        return 1
    if decision.rounds_to_decide is None:
        return None
    return max(1, decision.rounds_to_decide - decision.rounds)


def finding_wants(finding: Finding) -> int | None:
    """The fewest more rounds that would decide an open finding (any of the comparisons its status rests on);
    one where its status is not one comparison's (e.g. a time to accuracy no run reached); None when decided or
    when no more rounds would decide it."""
    if not is_open(finding):
        return None
    if not finding.decisions:
        return 1
    wanted = [n for n in map(more_rounds, finding.decisions) if n is not None]
    return min(wanted) if wanted else None


def group_findings_of(chosen: Mapping[str, Sequence[Record]], target: float | None,
                      margin_pct: float = DEFAULT_MARGIN_PCT) -> dict[str, list[Finding]]:
    """Per group of `chosen` (per group, the run's records) that declares findings and has records: its findings,
    decided at ±`margin_pct` %."""
    out = {}
    for group, records in chosen.items():
        declared = group_findings(group)
        if declared is not None and records:
            out[group] = declared.findings(records, target, margin_pct)
    return out


def rounds_to_settle(finding: Finding, answer: Answer | None) -> int | None:
    """The more rounds after which the page would count `finding` decided (`decided_count`): its own status and its
    answer (JAX against the fastest other framework, `answer`, where it has one) both decided; 0 when they are,
    None when no number of rounds within MAX_ROUNDS would decide one of them. An answer with too few rounds to be
    tested asks for one more round (`more_rounds`), though the page does not count it undecided (`undecided_keys`
    takes only tested answers): one round more is what lets it be judged at all."""
    parts = [finding_wants(finding)] if is_open(finding) else []
    if answer is not None and answer.word == "undecided" and not answer.contrast.decision.refused:
        parts.append(more_rounds(answer.contrast.decision))
    if not parts:
        return 0
    wanted = [n for n in parts if n is not None]
    return max(wanted) if len(wanted) == len(parts) else None


@dataclass(frozen=True)
class Settle:
    """What one finding asks of more rounds: `rounds`, its `rounds_to_settle` (0: decided; None: more than 100
    rounds); `figures`, the (backend, case) of the records it and its answer rest on (the steps whose rounds can move
    it, and the cases those rounds need to run)."""

    rounds: int | None
    figures: frozenset[tuple[str, str]] = frozenset()


def settle_by_group(chosen: Mapping[str, Sequence[Record]], target: float | None,
                    margin_pct: float = DEFAULT_MARGIN_PCT) -> dict[str, list[Settle]]:
    """Per group of `chosen` (per group, the run's records): what each of its findings asks of more rounds
    (`rounds_to_settle` and the backends it rests on), the answers judged together, as the page judges them (one
    family), at the page's margin ±`margin_pct` %."""
    per_group = group_findings_of(chosen, target, margin_pct)
    answer_of = {a.key: a for a in answers([f for found in per_group.values() for f in found], margin_pct)}
    return {group: [Settle(rounds_to_settle(f, answer_of.get(f.key)), rests_on(f, answer_of.get(f.key)))
                    for f in found] for group, found in per_group.items()}


def rests_on(finding: Finding, answer: Answer | None) -> frozenset[tuple[str, str]]:
    """The (backend, case) of the records behind `finding` and its answer (JAX against the fastest other
    framework)."""
    records = [*finding.records, *((*answer.contrast.a_records, *answer.contrast.b_records) if answer else ())]
    return frozenset((record.backend, record.case) for record in records)


def rounds_wanted(settle: Mapping[str, Sequence[Settle]]) -> dict[str, int]:
    """Per group (`settle`: `settle_by_group`) with a finding that is not decided yet and that more rounds may
    decide: the fewest more rounds after which one of them would be. A group none of whose open findings 100 rounds
    would decide is left out."""
    return {group: min(wanted) for group, values in settle.items()
            if (wanted := [s.rounds for s in values if s.rounds])}


def figures_wanted(settle: Mapping[str, Sequence[Settle]]) -> dict[str, frozenset[tuple[str, str]]]:
    """Per group in `rounds_wanted`: the (backend, case) of the figures its findings that more rounds may decide rest
    on (a group's step whose rounds record none of those backends cannot move them, and a round needs to run only
    those cases: `next_round`). A group with such a finding that rests on no record (e.g. a time to accuracy no run
    reached) is left out: any of its steps and cases may move it."""
    out = {}
    for group, values in settle.items():
        wanting = [s.figures for s in values if s.rounds]
        if wanting and all(wanting):
            out[group] = frozenset().union(*wanting)
    return out


def figures_measured(chosen: Mapping[str, Sequence[Record]]) -> dict[str, frozenset[tuple[str, str]]]:
    """Per group of `chosen` (per group, the run's records), the (backend, case) of its timed records: what its
    steps' whole rounds measure (`next_round`)."""
    return {group: frozenset((r.backend, r.case) for r in records if r.median_s is not None)
            for group, records in chosen.items()}


def open_groups(settle: Mapping[str, Sequence[Settle]]) -> list[str]:
    """The groups (`settle`: `settle_by_group`) with at least one finding the page counts undecided, whether or not
    more rounds may decide it."""
    return [group for group, values in settle.items() if any(s.rounds != 0 for s in values)]


RoundKey = tuple[str, str, tuple[str, ...]]  # a step's rounds of one kind: (group, command, the cases run; (): all)


def measured_round_s(rounds: Sequence[tuple[RoundKey, float]]) -> dict[RoundKey, float]:
    """Per step and cases run (group, command, cases), what one of its rounds took in this verdict: the median of the
    seconds its rounds took (`rounds`: each round run, its key and seconds; a round run again after its process died
    is one). A step's reference figure can be far from it: `mnist all` with `mnist pytorch --compile` joined to its
    turns (the two steps' figures added) took 44 s a round on an Intel Xeon where the figures said 99 s."""
    by_step: dict[RoundKey, list[float]] = defaultdict(list)
    for key, seconds in rounds:
        by_step[key].append(seconds)
    return {key: statistics.median(took) for key, took in by_step.items()}


def next_round(scale: Scale, rounds_done: int, wanted: Mapping[str, int], spent_s: float, budget_s: float,
               pace: float, measured: Mapping[RoundKey, float] | None = None,
               needs: Mapping[str, frozenset[tuple[str, str]]] | None = None,
               runs: Mapping[tuple[str, str], frozenset[str]] | None = None,
               measures: Mapping[str, frozenset[tuple[str, str]]] | None = None) -> Scale | None:
    """The scale to run round `rounds_done` (0-based index) of: of each group in `wanted` (group: the more rounds its
    cheapest open decision asks for), the steps that can move its open findings, each running only the cases they
    rest on, where its wanted rounds of them fit what is left of the budget.

    A step can move them where the backends its rounds record (`runs`, per (group, command); unknown: any) include
    one its open findings rest on (`needs`: `figures_wanted`, their (backend, case); unknown: any): `jit flax`, 30–40
    s a round, is not run again for jit's open `jax jit against eager`, which `jit all` records. A step whose
    backends are known runs only the cases of those backends' figures (`Step.cases`: its `-k`), unless those are all
    the cases its backends' records hold (`measures`: `figures_measured`; then the round is a whole one); one whose
    backends are not known runs every case (a `-k` that selects none of its cases would fail the round).

    A step's round costs what its rounds of this verdict with the same cases took (`measured`: `measured_round_s`),
    else what its whole rounds took (an upper bound), else its reference figure at `pace` (seconds taken per
    reference second); the cheapest decision first, each taking one round's cost from what is left, so that a budget
    too small for every open group still buys rounds for some; `rounds` one more than done. None when none is
    wanted, none fits, or the rounds' cap is reached."""
    if rounds_done >= MAX_ROUNDS:
        return None
    known, needed, recorded, held = measured or {}, needs or {}, runs or {}, measures or {}

    def serving(step: Step) -> Step | None:
        """`step` as a round for its group's open figures: None where its rounds record none of their backends;
        narrowed to their cases (`Step.cases`) where its backends and theirs are known and those cases are not all
        that its backends measured; else whole."""
        backends = recorded.get((step.group, step.command), frozenset())
        if not backends or step.group not in needed:
            return step
        cases = {case for backend, case in needed[step.group] if backend in backends}
        if not cases:
            return None
        whole = {case for backend, case in held.get(step.group, frozenset()) if backend in backends}
        return step if whole and cases >= whole else replace(step, cases=tuple(sorted(cases)))

    def cost(step: Step) -> float:
        whole = known.get((step.group, step.command, ()), pace * step.round_s)
        return known.get((step.group, step.command, step.cases), whole)

    groups = [group for group in dict.fromkeys(step.group for step in scale.steps) if group in wanted]
    serve = {group: [served for s in scale.steps if s.group == group and (served := serving(s)) is not None]
             or [s for s in scale.steps if s.group == group] for group in groups}
    group_cost = {group: sum(map(cost, serve[group])) for group in groups}
    left, chosen = budget_s - spent_s, set[str]()
    for group in sorted(groups, key=lambda g: (wanted[g] * group_cost[g], group_cost[g])):
        if wanted[group] * group_cost[group] <= left:
            chosen.add(group)
            left -= group_cost[group]
    steps = tuple(step for group in groups if group in chosen for step in serve[group])
    return replace(scale, rounds=rounds_done + 1, steps=steps) if steps else None


def counted(finding: Finding) -> bool:
    """A finding the page counts as a comparison (decided or not): found, the same, or undecided."""
    return finding.status in ("found", "same") or is_open(finding)


def counted_undecided(finding: Finding, undecided_keys: Collection[str] = ()) -> bool:
    """A finding that compares (`counted`) and stays undecided: its own status, or its answer (judged with the
    page's other answers: its key in `undecided_keys`)."""
    return counted(finding) and (is_open(finding) or finding.key in undecided_keys)


def decided_count(findings: Sequence[Finding], undecided_keys: Collection[str] = ()) -> tuple[int, int]:
    """(decided, undecided) among the findings that compare (`counted`): found or the same, against undecided
    (`counted_undecided`)."""
    undecided = sum(1 for f in findings if counted_undecided(f, undecided_keys))
    return sum(1 for f in findings if counted(f)) - undecided, undecided
