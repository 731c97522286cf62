"""Do implementations compute the same values? One mechanism for every group.

A case whose values other implementations must match hands them on as its judgement's `output`, a
`Computed` (named NumPy arrays); the harness keeps it next to the case's record on `run.outputs`. After
the backends ran, the group's `after` calls `record_agreement`, which compares every `Computed` of the
run of that kind, records one `agreement_{case}` record (backend `all`: it compares all of them) holding
the widest differences, logs them, and fails the run when one is above the tolerance. A single
implementation compares with nothing: no record.

`compare` alone serves a check inside one backend (jit: f, jax.jit(f) and typed_jit(f) at six points,
each against NumPy float64, before anything is timed).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from jax_benchmarks.measure.harness import Recorder
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.relative import relative_difference
from jax_benchmarks.store.record import Record, Scalar

BACKEND = "all"
Difference = Literal["abs", "rel"]  # |a − b|, or |a − b| relative to the larger magnitude
Values = Mapping[str, npt.ArrayLike]  # quantity name -> values at the compared points


class Computed(NamedTuple):
    """What one implementation computed (`kind` says which comparison it belongs to), as a case's output."""

    kind: str
    values: Values


@dataclass(frozen=True)
class Gap:
    """The widest difference of one quantity and the two implementations it lies between."""

    size: float
    pair: tuple[str, str]


def differences(a: npt.ArrayLike, b: npt.ArrayLike, difference: Difference) -> npt.NDArray[np.float64]:
    if difference == "rel":
        return relative_difference(a, b)
    return np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))


def widest_gap(values: Mapping[str, npt.ArrayLike], difference: Difference, reference: str | None = None) -> Gap:
    """The largest difference at any point between two implementations (every pair, or each one and
    `reference`); NaN anywhere makes it infinite."""
    labels = list(values)
    pairs = [(reference, label) for label in labels if label != reference] if reference is not None \
        else list(itertools.combinations(labels, 2))
    widest = Gap(0.0, (labels[0], labels[0]) if labels else ("", ""))
    for a, b in pairs:
        gaps = differences(values[a], values[b], difference)
        size = float(np.max(gaps)) if gaps.size else 0.0
        if not np.isfinite(size) or np.isnan(gaps).any():
            size = float("inf")
        if size >= widest.size:
            widest = Gap(size, (a, b))
    return widest


@dataclass(frozen=True)
class Agreement:
    """The widest gap of every quantity between the compared implementations, against a tolerance."""

    labels: tuple[str, ...]
    gaps: Mapping[str, Gap]
    tolerance: float
    difference: Difference

    @property
    def largest(self) -> float:
        return max((gap.size for gap in self.gaps.values()), default=0.0)

    @property
    def passed(self) -> bool:
        return self.largest <= self.tolerance

    def checks(self) -> dict[str, Scalar]:
        """The record's checks: `max_{abs|rel}_diff_{quantity}` and its pair, the largest, the tolerance."""
        fields: dict[str, Scalar] = {}
        for name, gap in self.gaps.items():
            fields[f"max_{self.difference}_diff_{name}"] = gap.size
            fields[f"{name}_pair"] = " vs ".join(gap.pair)
        return {**fields, f"max_{self.difference}_diff": self.largest, "tolerance": self.tolerance,
                "passed": self.passed}

    def describe(self) -> str:
        widths = ", ".join(f"{name} {gap.size:.3g} ({' vs '.join(gap.pair)})" for name, gap in self.gaps.items())
        kind = "absolute" if self.difference == "abs" else "relative"
        return f"largest disagreement ({kind}) {widths}; tolerance {self.tolerance:g}"


def compare(implementations: Mapping[str, Values], tolerance: float, difference: Difference,
            reference: str | None = None) -> Agreement:
    """The widest gap of each quantity the implementations all computed (against `reference` if given)."""
    quantities = [q for q in next(iter(implementations.values()), {}) if all(q in v for v in implementations.values())]
    gaps = {q: widest_gap({label: values[q] for label, values in implementations.items()}, difference, reference)
            for q in quantities}
    return Agreement(tuple(implementations), gaps, tolerance, difference)


def computed(run: Recorder, kind: str) -> list[tuple[Record, Values]]:
    """What this run's cases handed on for the `kind` comparison, in the order they were recorded."""
    return [(o.record, o.value.values) for o in run.outputs if isinstance(o.value, Computed) and o.value.kind == kind]


def implementation(record: Record) -> str:
    """How an implementation is named in a comparison: backend, variant (if any) and device."""
    return " ".join(part for part in (record.backend, record.variant, f"@{record.device}") if part)


def record_agreement(run: Recorder, kind: str, *, tolerance: float, difference: Difference,
                     params: Mapping[str, Any] | None = None, hint: str = "", case: str | None = None,
                     ) -> Agreement | None:
    """Compare the run's `kind` values across its backends: record `agreement_{case}` (by default the
    compared records' case), log it, then fail (the message ends with `hint`) if the gap is above
    `tolerance`. Nothing (None) when fewer than two backends computed them."""
    kept = computed(run, kind)
    if len({record.backend for record, _ in kept}) < 2:
        return None
    labelled: dict[str, Values] = {}
    for record, values in kept:
        label = implementation(record)
        labelled[label if label not in labelled else f"{label} #{len(labelled) + 1}"] = values
    agreement = compare(labelled, tolerance, difference)
    first: Sequence[Record] = [record for record, _ in kept]
    run.record(
        backend=BACKEND, case=f"agreement_{case or first[0].case}", device="+".join(sorted({r.device for r in first})),
        dtype=first[0].dtype, params={**(params or {}), "compared": list(agreement.labels)},
        metrics={f"max_{difference}_diff": agreement.largest}, checks=agreement.checks(),
    )
    mark = "[green]agree[/]" if agreement.passed else "[red]DISAGREE[/]"
    run.log(f"{agreement.describe()}: {mark} ({len(agreement.labels)} implementations: "
            f"{', '.join(agreement.labels)})")
    if not agreement.passed:
        raise CheckFailed(f"backends disagree: {agreement.describe()}{'; ' + hint if hint else ''}")
    return agreement
