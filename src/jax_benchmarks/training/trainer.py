"""What a framework provides to be trained and timed: a `Trainer`, and the figures it hands back.

A backend's trainer builds the model, optimizer and compiled step and keeps the data on its device;
`src/jax_benchmarks/training/cases.py` declares the cases that time, check and record it through the core harness.
This module imports no framework.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import numpy as np

from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.training.settings import Plan

# A trainer's raw epoch and validation outputs (device arrays, not yet read back to the host).
EpochOutput = TypeVar("EpochOutput")
EvalOutput = TypeVar("EvalOutput")


@dataclass(frozen=True)
class EpochResult:
    loss: float  # mean training loss over the epoch's steps
    accuracy: float
    images: int
    step_losses: tuple[float, ...]


@dataclass(frozen=True)
class EvalResult:
    loss: float
    accuracy: float
    images: int
    predictions: np.ndarray  # predicted label of every evaluated image, in order


class Trainer(Protocol[EpochOutput, EvalOutput]):
    backend: str
    device: str
    sync: Sync
    plan: Plan
    # Every process of a job runs each step (each ends in an all-reduce): timed a fixed number of times.
    fixed_count: bool
    # How the step runs, as every record of it says: "eager", "jit" or "compile:<torch.compile mode>".
    mode: str
    # The precision policy it computes in, as every record of it says: "float32", "tf32", or "bf16 (how: autocast,
    # compute dtype)", `mixed_precision_text`.
    precision: str

    def summary(self) -> str: ...
    def parameter_count(self) -> int: ...

    def prepare_step(self) -> Callable[[], object]:
        """The training step on one batch, inputs built; it does not advance training once `end_step` ran.
        Also compiles what the epochs and validation use, so no epoch is timed with a compilation in it."""

    def end_step(self) -> None:
        """Put back whatever the timed steps changed (parameters, optimizer state)."""

    def warm_up(self) -> None:
        """What `prepare_step` and a first step compile, for a run whose step case is not selected."""

    def compile_counts(self) -> dict[str, int]:
        """What the compiler counted for the step so far (its compilations; torch.compile: its graph breaks too);
        nothing where the step is not compiled."""

    def train_epoch(self, steps: int, on_step: Callable[[], None]) -> EpochOutput: ...
    def read_epoch(self, output: EpochOutput) -> EpochResult: ...
    def evaluate(self, limit: int) -> EvalOutput: ...
    def read_eval(self, output: EvalOutput) -> EvalResult: ...
    def save(self, path: Path) -> Path: ...
    def load(self, path: Path) -> None: ...


def mixed_precision_text(how: str) -> str:
    """What a bf16 record says ran: bfloat16 compute by `how`, the parameters in float32."""
    return f"bf16 ({how}, float32 parameters)"


def devices_variant(several: str, devices: int, processes: int = 1, process: int = 0) -> str | None:
    """Column label of a multi-device or multi-process run, shown next to the single-device one; a job's
    processes other than 0 get their own column ("· process I"), so no figure overwrites process 0's. `several`
    is what a backend runs on several devices of one job, as its module declares: "devices" (one process drives
    them all, Flax) or "processes" (one process per device, PyTorch's DistributedDataParallel)."""
    if processes > 1:
        label = f"{processes} processes" + (f" × {devices} devices" if devices > 1 else "")
        return label + (f" · process {process}" if process else "")
    if devices == 1:
        return None
    return f"{devices} {several}"


def parameter_table(title: str, rows: list[tuple[str, str, int]]) -> str:
    """A plain-text table of the model's parameters (name, shape, count) and their total."""
    width = max(len(name) for name, _, _ in rows)
    total = sum(count for _, _, count in rows)
    lines = [title, f"  {'parameter':<{width}}  {'shape':>14}  {'count':>10}"]
    lines += [f"  {name:<{width}}  {shape:>14}  {count:>10,}" for name, shape, count in rows]
    lines.append(f"  {'total':<{width}}  {'':>14}  {total:>10,}")
    return "\n".join(lines)
