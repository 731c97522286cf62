"""The measurement core: statistics, first call apart, and above all the device sync."""

from __future__ import annotations

import time

import pytest

from jax_benchmarks.hardware.devices import gpu_names
from jax_benchmarks.frameworks.descriptors import jax_sync
from jax_benchmarks.measure.timing import Measurement, measure, no_sync, single, time_call


def test_statistics_of_known_samples() -> None:
    m = Measurement((1.0, 2.0, 3.0, 4.0, 100.0), first_call_s=10.0)
    assert m.median_s == 3.0
    assert m.min_s == 1.0
    assert m.repeats == 5
    assert m.iqr_s == pytest.approx(2.0)  # inclusive quartiles: 2.0 and 4.0
    assert m.noisy  # IQR is 67 % of the median
    assert m.compile_s == pytest.approx(7.0)


def test_quiet_figure_is_not_noisy() -> None:
    m = Measurement((1.00, 1.01, 1.02, 1.01, 1.00))
    assert not m.noisy
    assert single(2.5).median_s == 2.5 and single(2.5).compile_s is None


def test_first_call_is_reported_apart_and_warmup_not_counted() -> None:
    calls: list[int] = []

    def slow_first() -> None:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(0.2)  # stands for tracing + compilation

    m = measure(slow_first, repeats=3, warmup=2, min_time_s=0.0)
    assert m.first_call_s is not None and m.first_call_s >= 0.2
    assert m.median_s < 0.1  # the compile cost did not leak into the steady state
    assert len(calls) == 1 + 2 + m.repeats * m.calls_per_sample


def test_short_calls_are_grouped_and_repeats_reach_min_time() -> None:
    m = measure(lambda: None, repeats=5, min_time_s=0.05)
    assert m.calls_per_sample > 1
    assert m.repeats >= 5
    assert sum(m.samples_s) * m.calls_per_sample >= 0.05


def test_every_call_is_synced_before_the_clock_is_read() -> None:
    synced: list[object] = []
    m = measure(lambda: "result", lambda r: synced.append(r), repeats=4, warmup=1, min_time_s=0.0)
    assert len(synced) == 1 + 1 + m.repeats * m.calls_per_sample


def test_invalid_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        measure(lambda: None, repeats=0)


# A generous upper bound on any CPU core's float32 throughput: 5 GHz x 64
# FLOP/cycle (two AVX-512 FMA units). Nothing this machine has can beat it,
# so FLOPs / (cores x this) is a physical floor for the matmul's duration.
# On a GPU the floor comes from its datasheet peak for IEEE float32 products
# (src/jax_benchmarks/hardware/peaks.py), the precision the product is computed in here.
MAX_FLOPS_PER_CORE = 5e9 * 64
N = 3000
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not gpu_names(), reason="no NVIDIA GPU visible"))]


def _matmul_and_floor(kind: str):  # type: ignore[no-untyped-def]
    import jax
    import jax.numpy as jnp

    from jax_benchmarks.frameworks.descriptors import jax_device
    from jax_benchmarks.hardware.devices import cpu_count, gpu_name
    from jax_benchmarks.hardware.peaks import datasheet_peak

    flops = 2 * N**3
    if kind == "cpu":
        floor = flops / (cpu_count() * MAX_FLOPS_PER_CORE)
    else:
        peak = datasheet_peak(gpu_name(), "float32", "float32")
        if peak is None:
            pytest.skip(f"no datasheet peak for {gpu_name()} in src/jax_benchmarks/hardware/peaks.py")
        floor = flops / (peak.gflops * 1e9)
    # Committed to the device, so the product runs there (the CPU floor means nothing for a GPU product).
    a = jax.device_put(jax.random.uniform(jax.random.key(0), (N, N), dtype=jnp.float32), jax_device(kind))
    with jax.default_matmul_precision("float32"):
        matmul = jax.jit(lambda x: x @ x).lower(a).compile()
    return (lambda: matmul(a)), floor


@pytest.mark.parametrize("kind", DEVICES)
def test_jax_workload_is_never_reported_faster_than_its_floor(kind: str) -> None:
    work, floor = _matmul_and_floor(kind)
    m = measure(work, jax_sync, repeats=3, warmup=1, min_time_s=0.0)
    assert m.min_s >= floor, (m.min_s, floor)


@pytest.mark.parametrize("kind", DEVICES)
def test_without_sync_async_dispatch_reports_impossible_times(kind: str) -> None:
    """The async-dispatch trap: the clock is read before the result exists.

    This is the control for the test above: it shows that the floor test
    would catch a measurement core that forgot to synchronize.
    """
    work, floor = _matmul_and_floor(kind)
    time_call(work, jax_sync)  # compile first
    unsynced, seconds = time_call(work, no_sync)
    jax_sync(unsynced)
    assert seconds < floor, (seconds, floor)
