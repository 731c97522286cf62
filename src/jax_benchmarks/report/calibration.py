"""The gate against this machine's A/A calibration: what `--fail-on-regression` can resolve here.

`calibrate GROUP...` (src/jax_benchmarks/verdict/calibrate.py) runs rounds of unchanged code and records
them in the results store under a run id ending in CALIBRATION_SUFFIX: the store keeps the A/A rounds
themselves, and their false-alarm rate and detectable change are computed from them, the same way each
time (`compare.calibrate`, a fixed seed), by `calibrate` when it prints them and by the gate when it
reads them back. So what the gate warns about is what `calibrate` printed, and it follows the rounds,
not a copy of a figure derived from them.

The gate's warning: for each compared figure with a calibration on the same machine, the smallest
change the gate resolves with the rounds the comparison has (`compare.resolvable_pct`, from the
calibration's spread between rounds); a `--fail-on-regression` below it asks for changes this machine
cannot tell from its own noise with those rounds. A figure whose calibration raised more false alarms
than ALPHA at the threshold is named too: its rounds were not alike (drift, load), so a "slower" there
may be the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.report.compare import ALPHA, MAX_ROUNDS_NEEDED, MIN_ROUNDS, calibrate, resolvable_pct, rounds_needed
from jax_benchmarks.report.rows import FigureRow
from jax_benchmarks.report.select import FigureKey, figure_key
from jax_benchmarks.store.record import Record, Scalar, new_run_id

# The run id of calibration rounds ends with this (a run id is letters, digits and dashes).
CALIBRATION_SUFFIX = "-calibration"
Env = Mapping[str, Scalar]


def calibration_run_id() -> str:
    """A new run id that marks its rounds as an A/A calibration (still sortable by time)."""
    return new_run_id() + CALIBRATION_SUFFIX


def is_calibration_run(run_id: str) -> bool:
    return run_id.endswith(CALIBRATION_SUFFIX)


def latest_calibrations(records: Iterable[Record], env: Env,
                        same_machine: Callable[[Env, Env], bool]) -> dict[FigureKey, list[Record]]:
    """Each figure's records from the latest calibration run that measured it on the machine of `env`
    (run ids begin with their UTC start time, so they sort by it)."""
    by_run: dict[str, dict[FigureKey, list[Record]]] = {}
    for record in records:
        if is_calibration_run(record.run_id) and same_machine(record.env, env):
            by_run.setdefault(record.run_id, {}).setdefault(figure_key(record), []).append(record)
    latest: dict[FigureKey, list[Record]] = {}
    for run_id in sorted(by_run):
        latest.update(by_run[run_id])
    return latest


@dataclass(frozen=True)
class Limit:
    """What this machine's calibration says of one compared figure at the gate's threshold."""

    figure: str
    calibration_run: str
    rounds: int  # rounds a side in the comparison (the fewer of the two runs')
    resolvable_pct: float  # the smallest change those rounds resolve here
    rounds_needed: int | None  # rounds a side the threshold needs here (None: more than compare allows)
    false_alarm_rate: float  # the calibration's A/A false-alarm rate at the threshold


def machine_limits(rows: Sequence[FigureRow], calibrations: Mapping[FigureKey, Sequence[Record]],
                   threshold_pct: float) -> list[Limit]:
    """One Limit per compared figure that has a calibration of 2 · MIN_ROUNDS quiet rounds or more."""
    limits = []
    for row in rows:
        comparison = row.comparison
        found = calibrations.get(figure_key(row.record))
        if comparison is None or not found:
            continue
        rounds = min(comparison.rounds, comparison.baseline_rounds)
        measured = calibrate(found, threshold_pct)
        if measured is None or rounds < 2:
            continue
        limits.append(Limit(f"{row.group} {row.case} {row.column}", found[0].run_id, rounds,
                            resolvable_pct(measured.spread, rounds), rounds_needed(measured.spread, threshold_pct),
                            measured.false_alarm_rate))
    return limits


def limit_lines(limits: Sequence[Limit], threshold_pct: float) -> list[str]:
    """The gate's warnings from the calibration: thresholds below what the machine resolves, and figures
    whose A/A rounds raised more false alarms than ALPHA; nothing where neither holds."""
    lines = []
    blind = [limit for limit in limits if limit.resolvable_pct > threshold_pct]
    if blind:
        worst = max(blind, key=lambda limit: limit.resolvable_pct)
        needed = (f"{worst.rounds_needed} rounds a side" if worst.rounds_needed is not None
                  else f"more than {MAX_ROUNDS_NEEDED} rounds a side")
        lines.append(f"warning: --fail-on-regression {threshold_pct:g} % is below what this machine resolves for "
                     f"{len(blind)} of {len(limits)} calibrated figure(s) (A/A calibration run "
                     f"{worst.calibration_run}): e.g. {worst.figure} resolves only changes of "
                     f"{worst.resolvable_pct:.3g} % or more with {worst.rounds} rounds a side ({threshold_pct:g} % "
                     f"needs {needed}); record more --rounds, sample longer (--min-time, e.g. 1: steadier rounds on a "
                     f"shared host) or raise the threshold")
    alarming = [limit for limit in limits if limit.false_alarm_rate > ALPHA]
    if alarming:
        worst = max(alarming, key=lambda limit: limit.false_alarm_rate)
        lines.append(f"warning: unchanged code raised false alarms at {threshold_pct:g} % in the A/A calibration "
                     f"for {len(alarming)} of {len(limits)} calibrated figure(s), more often than α {ALPHA:g}: e.g. "
                     f"{worst.figure} in {worst.false_alarm_rate:.0%} of the splits (run {worst.calibration_run}); "
                     f"a regression there may be the machine's drift")
    return lines
