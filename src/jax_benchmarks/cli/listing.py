"""`--list`: the cases a command would run with its options, built from each backend's `suites(settings)`.

Building suites computes and allocates nothing (see `jax_benchmarks.measure.harness`), so listing costs the backend's
import only; nothing is prepared, timed or recorded. `-k/--case` applies as it would to the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from jax_benchmarks.cli.console import visible
from jax_benchmarks.measure.harness import BackendModule, matches
from jax_benchmarks.settings import BenchSettings


@dataclass(frozen=True)
class ListedCase:
    group: str
    backend: str  # the suite's target backend (the record's column)
    device: str
    case: str
    variant: str | None
    dtype: str | None
    selected: bool  # by -k/--case (every case without patterns)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BackendCases:
    command: str  # the backend subcommand (xla numpy, ...)
    cases: list[ListedCase]


def declared_cases(group: str, modules: Sequence[tuple[str, BackendModule]], settings: BenchSettings
                   ) -> list[BackendCases]:
    """Per backend subcommand (name, imported module), the cases its suites declare for `settings`."""
    listed: list[BackendCases] = []
    for name, module in modules:
        listed.append(BackendCases(name, [
            ListedCase(group, suite.target.backend, suite.target.device, case.name, case.variant, case.dtype,
                       matches(case, settings.case_patterns))
            for suite in module.suites(settings) for case in suite.cases
        ]))
    return listed


def case_lines(group: str, listed: Sequence[BackendCases], patterns: Sequence[str]) -> list[str]:
    """Human lines: per target `backend @device`, its selected cases with their variants."""
    lines: list[str] = []
    for backend in listed:
        targets: dict[tuple[str, str], list[ListedCase]] = {}
        for case in backend.cases:
            targets.setdefault((case.backend, case.device), []).append(case)
        if not targets:
            lines.append(f"{group} {backend.command}: no cases with these options")
        for (name, device), cases in targets.items():
            chosen = [c for c in cases if c.selected]
            count = f"{len(chosen)} of {len(cases)} cases" if patterns else f"{len(cases)} cases"
            lines.append(f"{group} {name} @{device}: {count}")
            lines += [f"  {c.case}" + (f" [{c.variant}]" if c.variant else "") for c in chosen]
    if patterns:
        # The user's text, control characters as escapes: a newline in it cannot fake a case line.
        lines.append(f"(-k {visible(','.join(patterns))}: cases not selected are not shown)")
    return lines
