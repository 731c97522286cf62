"""`jit numpy`: NumPy eager, the baseline of the sweep (CPU only)."""

from __future__ import annotations

from jax_benchmarks.example_function.in_numpy import f
from jax_benchmarks.frameworks.arrays import NumpyArrays, cpu_only_suites
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import SweepVariant, X1Check, log_skipped_lengths, sweep_suite, x1
from jax_benchmarks.measure.harness import Recorder, Suite

BACKEND = "numpy"


def suites(settings: SweepSettings) -> list[Suite]:
    x1_check = X1Check(lambda: {"f(x1)": f(x1())})

    def before(run: Recorder) -> None:
        run.log("f(x) = 0.2·x + sin(x) + cos(2x) in NumPy, float32:")
        x1_check.check(run)
        log_skipped_lengths(run, BACKEND, settings)

    return cpu_only_suites(BACKEND, "NumPy", settings.device, lambda: [
        sweep_suite(BACKEND, NumpyArrays(), settings, [SweepVariant("eager", lambda: f)], x1_check, before=before)])
