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
# A quiet machine's drift between rounds, ±0.4 %: 8 such rounds tell a 3 % difference from a 5 % one.
QUIET_DRIFT = (1.000, 1.004, 0.998, 1.002, 0.997, 1.001, 1.003, 0.999)


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


def epochs(backend: str, epoch_s: float | Sequence[float], accuracies: Sequence[float] | Sequence[Sequence[float]],
           rounds: int = 3, *, compile_s: float | None = None, full_mnist: bool = False, mode: str | None = None,
           batch: int = 128, run_id: str = RUN) -> list[Record]:
    """Per round (seed = the round's index): the train step, then each epoch (12,800 images) and its validation.
    `epoch_s` and `accuracies` are one for every round, or one per round (a sequence of per-epoch accuracies).
    `mode`: how the step ran (compile:<mode> is also the records' variant, as `mnist pytorch --compile` writes it);
    None: a record written before the mode was recorded."""
    per_round_s = [epoch_s] * rounds if isinstance(epoch_s, (int, float)) else list(epoch_s)
    per_round_acc: list[list[float]] = [
        [float(a) for a in accuracies] if all(isinstance(a, (int, float)) for a in accuracies)  # type: ignore[arg-type]
        else [float(a) for a in accuracies[index]] for index in range(rounds)]  # type: ignore[union-attr]
    data: dict[str, Any] = {"dataset": "mnist", "dry_run": False, "train_images": 60_000 if full_mnist else 4_000,
                            "batch": batch, **({"mode": mode} if mode is not None else {})}
    variant = mode if mode is not None and mode.startswith("compile:") else None
    out = []
    for index in range(rounds):
        out += figure("mnist", backend, f"train_step_{batch}x28x28_float32", per_round_s[index] / 100, rounds=rounds,
                      compile_s=compile_s, metrics={"images_per_s": 12800 / per_round_s[index]}, variant=variant,
                      run_id=run_id, params={"train_batch_size": batch, "seed": index, **data})[index:index + 1]
        for epoch, accuracy in enumerate(per_round_acc[index], start=1):
            common = dict(run_id=run_id, timestamp="2026-11-24T12:02:00+00:00", group="mnist", backend=backend,
                          variant=variant, device="cpu", round_index=index, rounds=rounds,
                          params={"epoch": epoch, "seed": index, **data}, env=ENV)
            out.append(Record(case=f"train_epoch_{batch}x28x28_float32", median_s=per_round_s[index], repeats=1,
                              metrics={"accuracy": accuracy, "images_per_s": 12800 / per_round_s[index]},
                              **common))  # type: ignore[arg-type]
            out.append(Record(case="validation_1000x28x28_float32", median_s=per_round_s[index] / 10, repeats=1,
                              metrics={"accuracy": accuracy}, **common))  # type: ignore[arg-type]
    return out
