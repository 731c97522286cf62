"""Energy of a case's timed calls on an NVIDIA GPU: NVML's total-energy counter, read around the samples.

`nvmlDeviceGetTotalEnergyConsumption` (NVML, Volta and later GPUs) counts the millijoules the GPU has used since
the driver was loaded. The core reads it just before a case's first timed sample and just after its last one
(`jax_benchmarks.measure.timing`: around `measure`'s samples, around each sampled run of `time_runs`, around the
one call of work done once), never around the first call, its compile or the warm-up, and records the joules per
timed call: the counter's difference over the number of calls timed (`energy_j_per_call`). Where the record also
knows the images a call trains (`images_per_s` and the median), it records the joules per image
(`energy_j_per_image`). The counter covers the whole GPU: another process's kernels meanwhile count in, as the
record's GPU contention says.

Never a zero where nothing was measured: a CPU figure records no energy at all; a GPU figure where the counter
cannot be read (no nvidia-ml-py, a GPU without the counter, a device NVML does not map) records
`energy_status` "not measured: why", and so does a window over which the counter did not move (shorter than its
update interval). `EnergyMeter` takes the counter as an argument, so tests inject a stand-in.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jax_benchmarks.store.record import Scalar

# Millijoules the GPU used since the driver was loaded (NVML's counter, or a stand-in).
Counter = Callable[[], int]

PER_CALL = "energy_j_per_call"
PER_IMAGE = "energy_j_per_image"
STATUS = "energy_status"
NOT_MEASURED = "not measured"


@dataclass
class EnergyWindow:
    """The counter's difference over the timed calls of one case, added up over its windows (`time_runs` opens one
    a run, so that the untimed work between runs stays out)."""

    counter: Counter
    millijoules: int = 0
    calls: int = 0
    opened_at: int | None = None

    def open(self) -> None:
        self.opened_at = self.counter()

    def close(self, calls: int) -> None:
        if self.opened_at is None:
            raise RuntimeError("an energy window closed that was not opened")
        self.millijoules += self.counter() - self.opened_at
        self.calls += calls
        self.opened_at = None

    def figures(self) -> dict[str, Scalar]:
        if self.calls == 0:
            return {STATUS: f"{NOT_MEASURED}: no timed call was read"}
        if self.millijoules <= 0:
            return {STATUS: f"{NOT_MEASURED}: the counter did not advance over {self.calls} timed call(s) (a window "
                            "shorter than its update interval)"}
        return {PER_CALL: self.millijoules / 1000 / self.calls}


@dataclass(frozen=True)
class EnergyMeter:
    """Where a suite's energy figures come from: a counter, or the reason there is none (`unavailable`); neither
    (a CPU figure): no energy figure at all."""

    counter: Counter | None = None
    unavailable: str | None = None

    def window(self) -> EnergyWindow | None:
        return None if self.counter is None else EnergyWindow(self.counter)

    def figures(self, window: EnergyWindow | None) -> dict[str, Scalar]:
        """The record's energy fields for a case timed through `window` (this meter's)."""
        if window is not None:
            return window.figures()
        return {} if self.unavailable is None else {STATUS: f"{NOT_MEASURED}: {self.unavailable}"}

    @classmethod
    def of_device(cls, device: str) -> EnergyMeter:
        """`device`: the target's ("cpu", "gpu" or "gpu:N"); on a GPU, NVML's counter of the framework's device N."""
        kind, _, index = device.partition(":")
        if kind != "gpu":
            return cls()
        return nvml_meter(int(index or 0), os.environ.get("CUDA_VISIBLE_DEVICES"))


def nvml_meter(device_index: int, visible: str | None, nvml: Any = None) -> EnergyMeter:
    """NVML's energy counter of the framework's device `device_index` (CUDA_VISIBLE_DEVICES, where set, names it by
    index or UUID: `gpu_contention.device_uuid`), read once to see that it answers; else why not. `nvml`: the
    pynvml module (nvidia-ml-py), imported when not given."""
    from jax_benchmarks.measure.gpu_contention import device_uuid

    if nvml is None:
        try:
            nvml = importlib.import_module("pynvml")  # nvidia-ml-py: untyped, on the GPU image
        except ImportError:
            return EnergyMeter(unavailable="nvidia-ml-py (pynvml) is not installed")
    try:
        nvml.nvmlInit()
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        uuids = {str(i): text(nvml.nvmlDeviceGetUUID(handle)) for i, handle in enumerate(handles)}
        uuid = device_uuid(device_index, visible, uuids)
        if uuid is None:
            return EnergyMeter(unavailable=f"device {device_index} is not one NVML lists "
                                           f"(CUDA_VISIBLE_DEVICES={visible!s})")
        handle = handles[next(int(key) for key, value in uuids.items() if value == uuid)]

        def counter() -> int:
            return int(nvml.nvmlDeviceGetTotalEnergyConsumption(handle))

        counter()  # a GPU before Volta answers NVML_ERROR_NOT_SUPPORTED
    except nvml.NVMLError as exc:
        return EnergyMeter(unavailable=f"NVML's energy counter cannot be read: {exc}")
    return EnergyMeter(counter)


def text(value: str | bytes) -> str:
    """NVML's strings: bytes from nvidia-ml-py before 11.5, str after."""
    return value.decode() if isinstance(value, bytes) else value


def energy_metrics(energy: Mapping[str, Scalar], images_per_s: Scalar, median_s: float | None) -> dict[str, Scalar]:
    """The record's energy fields: the measurement's, and the joules per image where the record knows the images a
    call handles (`images_per_s` × the median: the images of one call, as mnist's throughput computes it)."""
    figures = dict(energy)
    per_call = figures.get(PER_CALL)
    if (isinstance(per_call, float) and isinstance(images_per_s, (int, float)) and not isinstance(images_per_s, bool)
            and images_per_s > 0 and median_s):
        figures[PER_IMAGE] = per_call / (images_per_s * median_s)
    return figures
