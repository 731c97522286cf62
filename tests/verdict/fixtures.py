"""Synthetic records with known answers for the verdict's tests."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from jax_benchmarks.store.record import Record

RUN = "20261124T120000Z-aaaaaa"
ENV: dict[str, Any] = {"cpu": "Test CPU", "cpu_cores": 2, "gpu": None, "numpy": "2.4.6", "jax": "0.10.2",
                       "torch": "2.13.0", "blas": "openblas 0.3.31 (pthreads)", "precision": "float32",
                       "jax_matmul_precision": "float32", "torch_matmul_precision": "ieee", "git_commit": "abc"}
# Per round: a multiplier of every sample (the machine's drift between processes).
DRIFT = (1.00, 1.03, 0.98, 1.01, 0.99)


def figure(group: str, backend: str, case: str, seconds: float, *, variant: str | None = None, rounds: int = 3,
           run_id: str = RUN, compile_s: float | None = None, drift: Sequence[float] = DRIFT,
           env: dict[str, Any] | None = None, **extra: Any) -> list[Record]:
    """One record per round of a figure whose typical time is `seconds` (five samples a round, ±2 %)."""
    out = []
    for index in range(rounds):
        samples = [seconds * drift[index % len(drift)] * (1 + step) for step in (-0.02, -0.01, 0.0, 0.01, 0.02)]
        out.append(Record(
            run_id=run_id, timestamp=f"2026-11-24T12:00:{index:02d}+00:00", group=group, backend=backend,
            variant=variant, case=case, device="cpu", dtype="float32", median_s=statistics.median(samples),
            iqr_s=seconds * 0.02, min_s=min(samples), repeats=len(samples), samples_s=samples,
            compile_s=compile_s, round_index=index, rounds=rounds, env=dict(env or ENV), **extra))
    return out


def record(group: str, backend: str, case: str, **fields: Any) -> Record:
    """An untimed record (a parity or agreement check)."""
    return Record(run_id=fields.pop("run_id", RUN), timestamp="2026-11-24T12:01:00+00:00", group=group,
                  backend=backend, case=case, device="cpu", env=dict(ENV), **fields)


def matmul(numpy_s: float, jax_s: float, pytorch_s: float | None = None, **kwargs: Any) -> list[Record]:
    case = "matmul_1000x1000_float64"
    out = figure("xla", "numpy", case, numpy_s, **kwargs) + figure("xla", "jax", case, jax_s, **kwargs)
    return out + (figure("xla", "pytorch", case, pytorch_s, **kwargs) if pytorch_s is not None else [])


def epochs(backend: str, epoch_s: float, accuracies: Sequence[float], rounds: int = 3) -> list[Record]:
    """Per round: the train step, then each epoch and its validation."""
    out = figure("mnist", backend, "train_step_128x28x28_float32", epoch_s / 100, rounds=rounds,
                 metrics={"images_per_s": 12800 / epoch_s}, params={"train_batch_size": 128})
    for index in range(rounds):
        for epoch, accuracy in enumerate(accuracies, start=1):
            common = dict(run_id=RUN, timestamp="2026-11-24T12:02:00+00:00", group="mnist", backend=backend,
                          device="cpu", round_index=index, rounds=rounds, params={"epoch": epoch}, env=ENV)
            out.append(Record(case="train_epoch_128x28x28_float32", median_s=epoch_s, repeats=1,
                              metrics={"accuracy": accuracy}, **common))  # type: ignore[arg-type]
            out.append(Record(case="validation_1000x28x28_float32", median_s=epoch_s / 10, repeats=1,
                              metrics={"accuracy": accuracy}, **common))  # type: ignore[arg-type]
    return out
