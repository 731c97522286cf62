"""`jit numpy`: NumPy eager, the baseline of the sweep (CPU only)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.hardware.devices import cpu_library_runs
from jax_benchmarks.measure.harness import Suite, Target
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import no_sync
from jax_benchmarks.example_function.in_numpy import f
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import F32, OnDevice, SweepVariant, X1Agreement, log_skipped_lengths, sweep_suite, x1

BACKEND = "numpy"


Array = NDArray[np.floating]


def as_numpy(x: Array) -> Array:
    return x


def to_cpu(x: F32) -> Array:
    return np.ascontiguousarray(x)


def on_cpu() -> OnDevice[Array]:
    return OnDevice(to_device=to_cpu, to_numpy=as_numpy, sync=no_sync)


def suites(settings: SweepSettings) -> list[Suite]:
    if not cpu_library_runs(settings.device):
        def say_skipped(run: Run) -> None:
            run.log("numpy: skipped: NumPy runs on the CPU only (--device gpu)")

        return [Suite(Target(BACKEND, "gpu"), [], before=say_skipped)]
    agreement = X1Agreement(lambda: {"f(x1)": f(x1())})

    def before(run: Run) -> None:
        run.log("f(x) = 0.2·x + sin(x) + cos(2x) in NumPy, float32:")
        agreement.check(run)
        log_skipped_lengths(run, BACKEND, settings)

    return [sweep_suite(BACKEND, "cpu", settings, on_cpu, [SweepVariant("eager", lambda: f)], agreement, before)]
