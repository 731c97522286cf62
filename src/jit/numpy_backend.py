"""`jit numpy`: NumPy eager, the baseline of the sweep (CPU only)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from src.core.devices import cpu_library_runs
from src.core.results import Run
from src.core.timing import no_sync
from src.jit.settings import SweepSettings
from src.jit.sweep import F32, SweepTarget, Variant, check_x1, f, log_skipped_lengths, run_sweep, x1

BACKEND = "numpy"


def as_numpy(x: F32) -> NDArray[np.floating]:
    return x


def run(settings: SweepSettings, run: Run) -> None:
    if not cpu_library_runs(settings.device):
        run.log("numpy: skipped: NumPy runs on the CPU only (--device gpu)")
        return
    run.log("f(x) = 0.2·x + sin(x) + cos(2x) in NumPy, float32:")
    x1_error = check_x1(run, {"f(x1)": f(x1())})
    log_skipped_lengths(run, BACKEND, settings)
    target: SweepTarget[F32] = SweepTarget(
        backend=BACKEND, device="cpu", to_device=np.ascontiguousarray, to_numpy=as_numpy, sync=no_sync,
        variants=[Variant("eager", f)], checks={"x1_max_abs_err": x1_error},
    )
    run_sweep(run, settings, target)
