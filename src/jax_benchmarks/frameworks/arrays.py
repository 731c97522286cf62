"""One framework's arrays on one device: NumPy in, NumPy out, and the sync; each framework's own is on its
descriptor (`FrameworkDescriptor.arrays`, jax_benchmarks.frameworks.descriptors), NumPy's is here.

Every group that hands the same NumPy input to several frameworks (jit's sweep, autograd) moves it with
a `DeviceArrays`: `to_device` (never timed), `to_numpy` (to check a result), `sync` (waits for a
result before the clock is read). Making one finds no device and imports no framework: the device is
looked up on first use, so declaring (and `--list`ing) a suite computes nothing.

A library that runs on the CPU only (NumPy, SciPy, the project's autodiff engine) follows one rule,
`cpu_only_suites`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.hardware.devices import DeviceKind, DeviceRequest, cpu_library_runs, devices_to_time

if TYPE_CHECKING:
    from jax_benchmarks.measure.harness import Recorder, Suite
from jax_benchmarks.measure.timing import Sync, no_sync

A = TypeVar("A")
Floats = NDArray[np.floating[Any]]


class DeviceArrays(ABC, Generic[A]):
    """How one framework moves NumPy arrays to one device and back, and waits for a result."""

    def __init__(self, kind: DeviceKind) -> None:
        self.kind = kind

    @abstractmethod
    def to_device(self, x: Floats) -> A:
        """The array on the device, in the framework's type (a copy where the device is not the host's)."""

    @abstractmethod
    def to_numpy(self, x: A) -> Floats:
        """The values back on the host, as NumPy."""

    @property
    def sync(self) -> Sync:
        """Waits for a result; a framework that dispatches asynchronously replaces it."""
        return no_sync


class NumpyArrays(DeviceArrays[Floats]):
    """NumPy: the host's memory, computed synchronously."""

    def __init__(self) -> None:
        super().__init__("cpu")

    def to_device(self, x: Floats) -> Floats:
        return np.ascontiguousarray(x)

    def to_numpy(self, x: Floats) -> Floats:
        return np.asarray(x)


def cpu_only_suites(backend: str, library: str, request: DeviceRequest, suites: Callable[[], list[Suite]]) -> list[Suite]:
    """The one rule for a library that runs on the CPU only: under `--device gpu` (GPU figures alone) its
    backend is skipped with the reason; otherwise it runs on the CPU (its records say device cpu), and when
    the other backends time a GPU the log says so. `suites()` declares the CPU suites."""
    # Imported here: the descriptors read this module, and reading them (as `--help` does) loads no harness.
    from jax_benchmarks.measure.harness import Suite, Target

    if not cpu_library_runs(request):
        def skipped(run: Recorder) -> None:
            run.log(f"{backend}: skipped: {library} runs on the CPU only (--device gpu; use --device cpu or auto)")

        return [Suite(Target(backend, "gpu"), [], before=skipped)]
    declared = suites()
    if declared and "gpu" in devices_to_time(request):
        first = declared[0]

        def on_the_cpu(run: Recorder) -> None:
            run.log(f"{backend}: {library} runs on the CPU only: its figures are CPU figures (device cpu)")
            if first.before is not None:
                first.before(run)

        declared[0] = dataclasses.replace(first, before=on_the_cpu)
    return declared
