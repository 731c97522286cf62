"""Machines side by side: what moving the work from this machine to another gains, per framework; and the fleet,
one column per machine, each against the first.

A figure is the same work on both machines when its group, case, backend and variant agree (the device
may differ: the laptop's CPU against the GPU box's GPU). Each shared figure is compared with the
regression gate's test (`findings.contrasts`: rounds' fastest samples, Welch, Benjamini–Hochberg over
all shared figures); a framework's gain is the geometric mean of its figures' ratios, with their range.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.report.envdiff import cpu_text
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, DEFAULT_MARGIN_PCT
from jax_benchmarks.verdict.findings import Contrast, Finding, Status, contrasts, figures, run_ids

WorkKey = tuple[str, str, str, str | None]  # group, case, backend, variant


@dataclass(frozen=True)
class MachineRatio:
    """One framework: time here / time there over its shared figures (above 1: the other machine is faster)."""

    framework: str
    shared: tuple[Contrast, ...]  # a = there, b = here
    cases: tuple[str, ...]  # the case of each shared figure, in the same order

    @property
    def geomean(self) -> float:
        return math.exp(statistics.fmean(math.log(c.speedup) for c in self.shared))

    @property
    def low(self) -> float:
        return min(c.speedup for c in self.shared)

    @property
    def high(self) -> float:
        return max(c.speedup for c in self.shared)

    def count(self, judged: str) -> int:
        return sum(1 for c in self.shared if c.judged == judged)

    @property
    def cell(self) -> str:
        """'×3.20 (7 figure(s), ×1.10–×9.00)': the fleet table's cell."""
        spread = f", ×{self.low:.2f}–×{self.high:.2f}" if len(self.shared) > 1 else ""
        return f"×{self.geomean:.2f} ({len(self.shared)} figure(s){spread})"

    @property
    def text(self) -> str:
        """'pytorch ×3.20 (7 figures, ×1.10–×9.00; 5 faster there, 2 the same)'."""
        counts = [f"{n} {word}" for n, word in ((self.count("faster"), "faster there"), (self.count("same"), "the same"),
                                                (self.count("slower"), "slower there"),
                                                (self.count("undecided"), "undecided")) if n]
        spread = f", ×{self.low:.2f}–×{self.high:.2f}" if len(self.shared) > 1 else ""
        return f"{self.framework} ×{self.geomean:.2f} ({len(self.shared)} figure(s){spread}; {', '.join(counts)})"


def work_key(record: Record) -> WorkKey:
    return (record.group, record.case, record.backend, record.variant)


def machine_name(env: Mapping[str, Scalar]) -> str:
    """'AMD EPYC (2 cores, AVX-512), no GPU': the CPU (`cpu_text`) and the GPU, from a record's env."""
    return f"{cpu_text(env)}, {env.get('gpu') or 'no GPU'}"


def machine_ratios(here: Mapping[str, Sequence[Record]], there: Mapping[str, Sequence[Record]],
                   margin_pct: float = DEFAULT_MARGIN_PCT) -> list[MachineRatio]:
    """Per framework (backend), every figure measured on both machines, judged as one family."""
    mine: dict[WorkKey, list[Record]] = {}
    for records in figures(r for rs in here.values() for r in rs).values():
        mine[work_key(records[-1])] = records
    theirs: dict[WorkKey, list[Record]] = {}
    for records in figures(r for rs in there.values() for r in rs).values():
        theirs[work_key(records[-1])] = records
    shared = [key for key in mine if key in theirs]
    judged = contrasts([(f"{key[2]} {key[1]} there", theirs[key], f"{key[2]} {key[1]} here", mine[key])
                        for key in shared], margin_pct)
    per_framework: dict[str, list[tuple[str, Contrast]]] = {}
    for key, contrast in zip(shared, judged, strict=True):
        per_framework.setdefault(key[2], []).append((key[1], contrast))
    return [MachineRatio(name, tuple(c for _, c in found), tuple(case for case, _ in found))
            for name, found in per_framework.items()]


def against_finding(here: Mapping[str, Sequence[Record]], there: Mapping[str, Sequence[Record]],
                    margin_pct: float = DEFAULT_MARGIN_PCT) -> Finding:
    """One sentence: the gain per framework of moving the work there, with the evidence per figure."""
    ratios = machine_ratios(here, there, margin_pct)
    here_env = next((rs[-1].env for rs in here.values() if rs), {})
    there_env = next((rs[-1].env for rs in there.values() if rs), {})
    name = f"{machine_name(there_env)} against {machine_name(here_env)}"
    every = tuple(r for rs in (*here.values(), *there.values()) for r in rs)
    if not ratios:
        return Finding("against", "the other machine", f"{name}: no figure was measured on both machines "
                       "(same group, case, backend and variant), so none is compared.", "missing", run_ids(every), ())
    rows = tuple((ratio.framework, case, f"{c.speedup:.2f}",
                  "—" if c.interval is None else f"{c.interval[0]:.2f}–{c.interval[1]:.2f}", c.judged)
                 for ratio in ratios for case, c in zip(ratio.cases, ratio.shared, strict=True))
    sentence = (f"Time here / time there ({name}), geometric mean per framework: "
                + "; ".join(ratio.text for ratio in ratios) + ". Above 1: the other machine is faster.")
    cases = tuple(dict.fromkeys(row[1] for row in rows))
    any_judged = any(c.judged in ("faster", "slower") for ratio in ratios for c in ratio.shared)
    return Finding("against", "the other machine", sentence, "found" if any_judged else "measured",
                   run_ids(every), cases, ("framework", "case", "time here / there", f"{DECISION_CONFIDENCE * 100:g} % CI", "judged"), rows)


def missing_groups(name: str, chosen: Mapping[str, Sequence[Record]], groups: Sequence[str]) -> str | None:
    """'gpu-box has no records of mnist, scipy: …', one line; None when the machine has every group of `groups`."""
    absent = [group for group in groups if not chosen.get(group)]
    if not absent:
        return None
    return (f"{name} has no records of {', '.join(absent)}: "
            f"{'that group is' if len(absent) == 1 else 'those groups are'} not compared there.")


def fleet_finding(columns: Sequence[tuple[str, Mapping[str, Sequence[Record]]]],
                  margin_pct: float = DEFAULT_MARGIN_PCT) -> Finding:
    """One column per machine (name, its chosen records per group), the first the reference: per framework, time
    on the first ÷ time on this one, the geometric mean over the figures both measured (above 1: this machine is
    faster), judged as `machine_ratios` judges two machines. A machine without records of a group another one
    has says so in one line; a framework no other machine shares with the first gets "—"."""
    (first_name, first), rest = columns[0], columns[1:]
    per_machine = [{ratio.framework: ratio for ratio in machine_ratios(first, chosen, margin_pct)}
                   for _, chosen in rest]
    own: dict[str, int] = {}
    for records in figures(r for rs in first.values() for r in rs).values():
        own[records[-1].backend] = own.get(records[-1].backend, 0) + 1
    frameworks = list(dict.fromkeys([*own, *(name for ratios in per_machine for name in ratios)]))
    rows = tuple((framework, f"×1 ({own.get(framework, 0)} figure(s))",
                  *(ratios[framework].cell if framework in ratios else "—" for ratios in per_machine))
                 for framework in frameworks)
    groups = [g for g in BENCHMARK_GROUPS if any(chosen.get(g) for _, chosen in columns)]
    gaps = [line for name, chosen in columns if (line := missing_groups(name, chosen, groups)) is not None]
    every = tuple(r for _, chosen in columns for rs in chosen.values() for r in rs)
    shared = [f"{name}: " + (", ".join(f"{r.framework} ×{r.geomean:.2f}" for r in ratios.values()) or
                             "no figure shared with the first")
              for (name, _), ratios in zip(rest, per_machine, strict=True)]
    sentence = (f"One column per machine, each against the first ({first_name}): time there ÷ time on that machine, "
                "the geometric mean per framework over the figures both measured (above 1: that machine is faster). "
                + "; ".join(shared) + "." + "".join(f" {line}" for line in gaps))
    status: Status = "measured" if any(per_machine) else "missing"
    return Finding("fleet", "the fleet", sentence, status, run_ids(every),
                   tuple(dict.fromkeys(r.case for r in every if r.median_s)),
                   ("framework", *(name for name, _ in columns)), rows)
