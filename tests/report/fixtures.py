"""Fixture results files: several runs, groups and backends, written as JSON lines."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jax_benchmarks.store.record import Record

ENV: dict[str, Any] = {
    "python": "3.11.9", "numpy": "2.4.0", "scipy": "1.17.0", "jax": "0.10.2", "jaxlib": "0.10.2",
    "flax": "0.12.8", "optax": "0.2.8", "torch": "2.13.0", "cpu": "Fixture CPU 9000", "cpu_cores": 2,
    "gpu": None, "git_commit": "0123456789ab",
}
# Ten samples with a small, realistic spread around 1 (not noisy: IQR < 10 %).
SHAPE = (1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 0.99, 1.03, 0.97)

XLA_OLD = "20250101T100000Z-aaaaaa"
XLA_NEW = "20250102T100000Z-bbbbbb"
JIT_RUN = "20250102T110000Z-cccccc"
MNIST_RUN = "20250102T120000Z-dddddd"


def samples(scale: float, shape: Sequence[float] = SHAPE) -> list[float]:
    return [scale * s for s in shape]


def record(run_id: str, timestamp: str, group: str, backend: str, case: str, times: Sequence[float],
           variant: str | None = None, noisy: bool = False, **extra: Any) -> Record:
    """A record as Run.record writes it; median/IQR/min computed from `times`."""
    iqr = 0.0
    if len(times) > 1:
        q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
        iqr = q3 - q1
    return Record(
        run_id=run_id, timestamp=timestamp, group=group, backend=backend, variant=variant, case=case,
        device="cpu", dtype=case.rsplit("_", 1)[-1], median_s=statistics.median(times), iqr_s=iqr,
        min_s=min(times), repeats=len(times), samples_s=list(times), noisy=noisy, env=ENV,
        metrics=extra.pop("metrics", {"first_call_s": max(times) * 2}), **extra,
    )


def xla_run(run_id: str, timestamp: str, jax_matmul_s: float) -> list[Record]:
    """numpy / pytorch / jax on two cases; only the jax matmul time varies between runs."""
    scales = {
        ("numpy", "matmul_100x100_float64"): 1e-3, ("pytorch", "matmul_100x100_float64"): 1.5e-3,
        ("jax", "matmul_100x100_float64"): jax_matmul_s,
        ("numpy", "inv_100x100_float64"): 4e-3, ("pytorch", "inv_100x100_float64"): 3e-3,
        ("jax", "inv_100x100_float64"): 5e-3,
    }
    return [record(run_id, timestamp, "xla", backend, case, samples(scale))
            for (backend, case), scale in scales.items()]


def jit_run() -> list[Record]:
    ts = "2025-01-02T11:00:00+00:00"
    return [
        record(JIT_RUN, ts, "jit", "numpy", "selu_10000_float32", samples(2e-4)),
        record(JIT_RUN, ts, "jit", "jax", "selu_10000_float32", samples(6e-4), variant="eager"),
        record(JIT_RUN, ts, "jit", "jax", "selu_10000_float32", samples(5e-5), variant="jit",
               compile_s=0.03),
        record(JIT_RUN, ts, "jit", "jax", "mlp_train_64_float32", samples(2e-2), variant="eager"),
        record(JIT_RUN, ts, "jit", "jax", "mlp_train_64_float32", samples(1e-3, (1.0, 1.5, 0.8, 1.4)),
               variant="jit", noisy=True),
    ]


def mnist_run(run_id: str = MNIST_RUN, epoch_s: float = 10.0,
              timestamp: str = "2025-01-02T12:00:00+00:00") -> list[Record]:
    """One sample per figure (an epoch is timed once): only the IQR-overlap rule applies."""
    return [
        record(run_id, timestamp, "mnist", "flax", "epoch_60000_float32", [epoch_s],
               metrics={"accuracy": 0.981}),
        record(run_id, timestamp, "mnist", "pytorch", "epoch_60000_float32", [epoch_s * 1.2],
               metrics={"accuracy": 0.979}),
    ]


def all_records() -> list[Record]:
    return [
        *xla_run(XLA_OLD, "2025-01-01T10:00:00+00:00", jax_matmul_s=5e-4),
        *xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", jax_matmul_s=1.2e-3),  # jax matmul 2.4x slower
        *jit_run(),
        *mnist_run(),
    ]


def write_results(path: Path, records: Sequence[Record]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(rec.model_dump_json() + "\n")
    return path


def xla_rounds(run_id: str, timestamp: str, slowdown: dict[str, float] | None = None, rounds: int = 5,
               drift: float = 1.0, seed: int = 0, env: dict[str, Any] | None = None) -> list[Record]:
    """A --rounds run of numpy matmul and inverse: each round's median jitters ±3 % (as separate processes do
    on a shared machine), every figure is `drift` × slower overall, and case → factor in `slowdown` more."""
    rng = random.Random(seed)
    base = {"matmul_100x100_float64": 1e-3, "inverse_100x100_float64": 4e-3, "sum_100x100_float64": 2e-5}
    out = []
    for index in range(rounds):
        for case, scale in base.items():
            factor = drift * (slowdown or {}).get(case, 1.0) * (1 + rng.uniform(-0.03, 0.03))
            rec = record(run_id, timestamp, "xla", "numpy", case, samples(scale * factor))
            out.append(rec.model_copy(update={"round_index": index, "rounds": rounds, "env": env or ENV}))
    return out
