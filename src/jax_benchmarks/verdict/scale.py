"""What `verdict --scale quick|standard|full` runs, and how long is left while it runs.

Framework-free: the CLI builds `--help` from it. Every step is one group command; each of its rounds is
a fresh process (`--rounds R --round-index i --run-id ID`, the same arguments `--rounds` gives its own
children), so all the records of a verdict share one run id and the regression gate can judge them
(it needs `MIN_ROUNDS` rounds a figure). `round_s` is one round's expected wall time on the reference
machine (AMD EPYC, 2 cores, no GPU) when nothing else runs, measured on 2026-11-24 (a round's wall
time, process start included: quick 2.0 min in all, standard 6.1 min); full's are estimates from the
groups' sizes, not measured. The time-left estimate
scales the remaining rounds' figures by how much slower or faster the finished rounds ran than theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from jax_benchmarks.report.compare import MIN_ROUNDS

ScaleName = Literal["quick", "standard", "full"]
SCALE_NAMES: tuple[ScaleName, ...] = get_args(ScaleName)


@dataclass(frozen=True)
class Step:
    group: str
    command: str
    options: tuple[str, ...]
    round_s: float  # one round on the reference machine, seconds

    @property
    def label(self) -> str:
        return " ".join((self.group, self.command, *self.options))


@dataclass(frozen=True)
class Scale:
    name: ScaleName
    rounds: int
    steps: tuple[Step, ...]
    purpose: str

    @property
    def budget_s(self) -> float:
        return self.rounds * sum(step.round_s for step in self.steps)


SCALES: dict[ScaleName, Scale] = {
    # The cheapest case of each finding: small sizes, one of jit's lengths, a dry-run epoch.
    "quick": Scale("quick", MIN_ROUNDS, (
        Step("xla", "all", ("--quick", "-k", "matmul"), 5.0),
        Step("jit", "all", ("--quick", "-k", "f_100000*"), 12.0),
        Step("autograd", "all", ("--quick",), 7.0),
        Step("scipy", "all", ("--quick", "-k", "solve,agreement"), 7.0),
        Step("mnist", "all", ("--quick", "-k", "train_step,train_epoch,validation"), 14.0),
    ), "every finding once, on small sizes: is the pipeline sound (not a measurement to publish)"),
    "standard": Scale("standard", MIN_ROUNDS, (
        Step("xla", "all", ("--matrix-size", "1000"), 10.5),
        Step("jit", "all", ("--total-items", "1e6"), 15.5),
        Step("jit", "flax", ("--repeats", "3"), 53.0),
        Step("autograd", "all", (), 8.0),
        Step("scipy", "all", (), 7.5),
        Step("mnist", "all", ("--epochs", "1", "--data-source", "embedded", "--comet", "off"), 25.0),
    ), "the README's sizes, scaled to about six minutes on a 2-core CPU"),
    "full": Scale("full", 5, (
        Step("xla", "all", ("--matrix-size", "2000"), 40.0),
        Step("jit", "all", ("--total-items", "1e7"), 120.0),
        Step("jit", "flax", (), 30.0),
        Step("autograd", "all", (), 10.0),
        Step("scipy", "all", ("--array-length", "100000"), 20.0),
        Step("mnist", "all", ("--epochs", "3", "--comet", "off"), 600.0),
    ), "the groups' default sizes and full MNIST for three epochs: hours on a CPU, minutes on a GPU"),
}


def round_argv(step: Step, rounds: int, index: int, run_id: str, results: Path | str) -> list[str]:
    """The group command's arguments for round `index` (prefix them with `self_command()`)."""
    return [step.group, step.command, *step.options, "--rounds", str(rounds), "--round-index", str(index),
            "--run-id", run_id, "--results", str(results)]


def seconds_left(scale: Scale, done: Sequence[float]) -> float:
    """Time left once `len(done)` rounds (in scale order: each step's rounds in turn) took `done` seconds:
    the remaining rounds' reference figures, times how the finished ones compared with theirs."""
    planned = [step.round_s for step in scale.steps for _ in range(scale.rounds)]
    finished = planned[: len(done)]
    pace = sum(done) / sum(finished) if done and sum(finished) > 0 else 1.0
    return pace * sum(planned[len(done):])
