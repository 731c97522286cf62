"""What `verdict --scale quick|standard|gpu|full` runs, and how long is left while it runs.

Framework-free: the CLI builds `--help` from it. Each group declares its steps per scale on its `GroupFindings`
(verdict/findings.py; its entry in jax_benchmarks.groups says where). Every step is one group command; each of its rounds is
a fresh process (`--rounds R --round-index i --run-id ID`, the same arguments `--rounds` gives its own
children), so all the records of a verdict share one run id and the regression gate can judge them
(it needs `MIN_ROUNDS` rounds a figure). `round_s` is one round's expected wall time on the reference
machine (AMD EPYC, 2 cores, no GPU) when nothing else runs, a round's wall time, process start included,
measured again on 2026-11-26 for quick and standard (each group's findings module gives the range); full's
are estimates from the groups' sizes, not measured. `gpu` runs those of standard's steps that fit its share of a short
GPU lease (the same commands and cases, so its findings stand beside the CPU headline's: `verdict --from GPU --against
CPU`), with each round's wall time on one GPU as measured on an H200 (each group's `gpu_round_s`; `gpu_left_out` says
why a step stays out: docs/gpu.md). The time-left estimate scales the remaining rounds' figures by how much slower or
faster the finished rounds ran than theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from jax_benchmarks.cli.rounds import ROUND_INDEX, Step as Step, round_options as round_options
from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.report.compare import MIN_ROUNDS
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import group_findings

ScaleName = Literal["quick", "standard", "gpu", "full"]
SCALE_NAMES: tuple[ScaleName, ...] = get_args(ScaleName)


@dataclass(frozen=True)
class Scale:
    name: ScaleName
    rounds: int
    steps: tuple[Step, ...]
    purpose: str
    # `verdict --budget`'s default: the wall time (seconds) a measuring verdict may take in all, the rounds it adds
    # to undecided findings included (verdict/sequential.py).
    default_budget_s: float = 0.0
    # The machine its round times (`Step.round_s`) are of.
    reference: str = "a quiet 2-core CPU"

    @property
    def budget_s(self) -> float:
        """The expected wall time of the scale's first `rounds` rounds on the reference machine."""
        return self.rounds * sum(step.round_s for step in self.steps)

    @property
    def one_round_s(self) -> float:
        """One round of every step on the reference machine: the least a --budget must allow."""
        return sum(step.round_s for step in self.steps)

    def group_round_s(self, group: str) -> float:
        """One round of `group`'s steps on the reference machine (jit has two commands)."""
        return sum(step.round_s for step in self.steps if step.group == group)


def group_steps(scale: ScaleName) -> tuple[Step, ...]:
    """The scale's steps, group by group in `BENCHMARK_GROUPS`' order, as each group declares them
    (`GroupFindings.verdict_steps`)."""
    return tuple(Step(group, command, options, round_s) for group in BENCHMARK_GROUPS
                 if (declared := group_findings(group)) is not None
                 for command, options, round_s in declared.verdict_steps.get(scale, ()))


def gpu_round_times() -> tuple[tuple[Step, str], ...]:
    """Each of standard's steps with one round's wall time on one GPU (`GroupFindings.gpu_round_s`, declared by each
    group beside its steps), and why the gpu scale leaves it out (`GroupFindings.gpu_left_out`; "" where it runs
    it). A standard step without a GPU round time is left out: its time is what the 8-minute GPU plan is sized by
    (benchmarks/gpu_plan.py), and a step without one would overrun it unseen (tests/verdict/test_scale_gpu.py
    requires one of every step).

    The round times are those of `verdict --scale gpu` on an NVIDIA H200 on 2026-11-28
    (benchmarks/gpu_runs/2026-11-28-h200/verdict.jsonl: from a round's first record to the next round's first, the
    process's start included; `benchmarks/gpu_plan.py --round-times` reads them), estimated from the plan's measured
    steps where no round ran (each group says how). An H100 is the same Hopper chip with less and slower memory
    (80 GB of HBM3 at 3.35 TB/s against 141 GB of HBM3e at 4.8 TB/s): a round is mostly the start of a fresh process
    (imports, a CUDA context a framework), the compiles and the CPU's own work (NumPy, the project's engine), its
    arithmetic milliseconds, so it should take about as long there."""
    out = []
    for step in group_steps("standard"):
        declared = group_findings(step.group)
        gpu_s = declared.gpu_round_s if declared is not None else {}
        left_out = declared.gpu_left_out if declared is not None else {}
        if step.command in gpu_s:
            out.append((replace(step, round_s=gpu_s[step.command]), left_out.get(step.command, "")))
        else:
            out.append((step, "no round time on a GPU declared (`gpu_round_s`)"))
    return tuple(out)


def gpu_steps() -> tuple[Step, ...]:
    """The gpu scale's steps: standard's that `gpu_round_times` does not leave out, each with its GPU round time."""
    return tuple(step for step, left_out in gpu_round_times() if not left_out)


SCALES: dict[ScaleName, Scale] = {
    # The cheapest case of each finding: small sizes, one of jit's lengths, a dry-run epoch.
    # Budgets: quick 5 min (its 3 rounds: 3.8 min from the groups' round times measured quietly on 2026-11-26; 5
    # min leaves one added round of most groups: 5.0 min with it, measured), standard
    # 8 min (its 3 rounds: 7.6 min from the groups' round times measured quietly on 2026-11-26, jit flax on 1,024
    # images; the goal of issue 37 is a standard verdict within 8 minutes on 2 cores), full twice its estimate.
    "quick": Scale("quick", MIN_ROUNDS, group_steps("quick"),
                   "every finding once, on small sizes: is the pipeline sound (not a measurement to publish)", 300.0),
    "standard": Scale("standard", MIN_ROUNDS, group_steps("standard"),
                      "the README's sizes, scaled to about seven minutes on a 2-core CPU", 480.0),
    # gpu: standard's steps that fit on one GPU; its budget is its three rounds' time: no round is added unless the
    # rounds ran faster than on the H200 (benchmarks/gpu_session.sh gives the verdict a share of a short GPU lease).
    "gpu": Scale("gpu", MIN_ROUNDS, gpu_steps(),
                 "standard's matmul and inverse, jit and BFGS fit on a CUDA GPU: the headline's GPU column, within its "
                 "share of a short GPU lease (benchmarks/gpu_plan.py)", MIN_ROUNDS * sum(step.round_s for step in gpu_steps()),
                 "one H200, as measured on 2026-11-28"),
    "full": Scale("full", 5, group_steps("full"),
                  "the groups' default sizes and full MNIST for three epochs: hours on a CPU, minutes on a GPU",
                  2 * 5 * sum(step.round_s for step in group_steps("full"))),
}


def seconds_left(scale: Scale, done: Sequence[float]) -> float:
    """Time left once `len(done)` rounds (in scale order: each step's rounds in turn) took `done` seconds:
    the remaining rounds' reference figures, times how the finished ones compared with theirs."""
    planned = [step.round_s for step in scale.steps for _ in range(scale.rounds)]
    finished = planned[: len(done)]
    pace = sum(done) / sum(finished) if done and sum(finished) > 0 else 1.0
    return pace * sum(planned[len(done):])


def option_params(step: Step) -> dict[str, str]:
    """The step's options that a record's params keep ('--matrix-size 1000' -> {'matrix_size': '1000'}): an option
    followed by a value, the round's own index left out."""
    out = {}
    options = list(step.options)
    for name, value in zip(options, options[1:]):
        if name.startswith("--") and not value.startswith("-") and ROUND_INDEX not in value:
            out[name[2:].replace("-", "_")] = value
    return out


def same_value(recorded: object, given: str) -> bool:
    """A recorded param equals an option's text (numbers compared as numbers: 1e6 is 1000000)."""
    if isinstance(recorded, bool):
        return False
    if isinstance(recorded, (int, float)):
        try:
            return float(recorded) == float(given)
        except ValueError:
            return False
    return str(recorded) == given


def derived_scale(records: Sequence[Record]) -> ScaleName | None:
    """The scale whose steps' options the records' params show (each group's records against the options its steps
    of that scale give, where a record keeps them: `xla --matrix-size 1000`, `mnist --epochs 1`), for records that do
    not name their scale; None where no scale agrees with every option checked, or none could be checked."""
    found = []
    for name, scale in SCALES.items():
        checked, agrees = 0, True
        for step in scale.steps:
            params = [r.params for r in records if r.group == step.group]
            for key, value in option_params(step).items():
                values = [p[key] for p in params if key in p]
                if values:
                    checked += 1
                    agrees = agrees and all(same_value(v, value) for v in values)
        if checked and agrees:
            found.append(name)
    if set(found) == {"standard", "gpu"}:  # the gpu scale is standard's cases on one GPU: the records' device tells
        return "gpu" if any(r.device != "cpu" for r in records) else "standard"
    return found[0] if len(found) == 1 else None
