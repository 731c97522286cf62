"""Energy beside time: NVML's counter read around a case's timed samples alone, joules per call (and per image),
"not measured" where it cannot be read, never 0. On the CPU, with a stand-in counter injected explicitly."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from jax_benchmarks.cli.tables import memory_rows
from jax_benchmarks.measure.energy import (NOT_MEASURED, PER_CALL, PER_IMAGE, STATUS, EnergyMeter, EnergyWindow,
                                           nvml_meter)
from jax_benchmarks.measure.harness import Case, Judgement, Target, Timed, run_cases
from jax_benchmarks.measure.timing import measure, time_runs
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records

GPU = Target("pytorch", "gpu")  # the harness takes the device from the target; the counter is the stand-in


class Joulemeter:
    """A stand-in for NVML's counter: each timed call adds `per_call_mj` millijoules, everything else (the first
    call, the warm-up, untimed work) `other_mj`, so a window that takes in more than the samples reads too high."""

    def __init__(self, per_call_mj: int = 500, other_mj: int = 0) -> None:
        self.per_call_mj, self.other_mj = per_call_mj, other_mj
        self.total_mj = 1_000_000  # the counter counts since the driver loaded: never from 0
        self.reads: list[int] = []  # calls made at each read
        self.calls = 0

    def __call__(self) -> int:
        self.reads.append(self.calls)
        return self.total_mj

    def call(self, timed: bool = True) -> int:
        self.calls += 1
        self.total_mj += self.per_call_mj if timed else self.other_mj
        return self.calls


def run_in(tmp_path: Path) -> Run:
    return Run("test", tmp_path / "results.jsonl", log=lambda line: None)


def test_the_window_opens_after_the_first_call_and_warm_up_and_closes_after_the_last_sample() -> None:
    meter = Joulemeter()
    window = EnergyWindow(meter)
    measurement = measure(meter.call, repeats=5, warmup=2, min_time_s=0.0, block_s=0.0, window=window)
    calls = measurement.repeats * measurement.calls_per_sample
    assert meter.reads == [3, 3 + calls]  # after the first call and two warm-ups; after every sample
    assert window.figures() == {PER_CALL: 0.5}  # 500 mJ a call


def test_fixed_runs_read_each_sampled_run_alone() -> None:
    """Epochs: the first run (compile) and the untimed preparation before each run stay out of the window."""
    meter = Joulemeter(per_call_mj=2000, other_mj=7000)
    window = EnergyWindow(meter)
    time_runs(lambda: meter.call(), lambda _: None, 3, before_each=lambda: meter.call(timed=False), window=window)
    # prepare (untimed, 7 J), run 1 (2 J, apart), then twice: prepare, run: the runs' 2 J each are all the window saw
    assert window.figures() == {PER_CALL: 2.0}
    assert window.calls == 2


def test_joules_per_call_and_per_image_reach_the_record(tmp_path: Path) -> None:
    meter = Joulemeter(per_call_mj=300)
    run = run_in(tmp_path)

    def judge(_result: object, measurement: object) -> Judgement:
        return Judgement(metrics={"images_per_s": 128 / measurement.median_s})  # type: ignore[attr-defined]

    run_cases(run, GPU, [Case("train_step_128x28x28_float32", lambda: Timed(meter.call), judge),
                         Case("matmul_8x8_float32", lambda: Timed(meter.call))],
              repeats=3, memory=False, energy=EnergyMeter(meter))
    step, product = read_records(run.results.path, warn=pytest.fail)
    assert step.metrics[PER_CALL] == pytest.approx(0.3)
    assert step.metrics[PER_IMAGE] == pytest.approx(0.3 / 128)  # a call trains 128 images
    assert product.metrics[PER_CALL] == pytest.approx(0.3) and PER_IMAGE not in product.metrics


def test_no_counter_is_not_measured_never_zero(tmp_path: Path) -> None:
    run = run_in(tmp_path)
    run_cases(run, GPU, [Case("matmul_8x8_float32", lambda: Timed(lambda: 1))], repeats=3, memory=False,
              energy=EnergyMeter(unavailable="nvidia-ml-py (pynvml) is not installed"))
    [record] = run.records
    assert PER_CALL not in record.metrics
    assert record.metrics[STATUS] == f"{NOT_MEASURED}: nvidia-ml-py (pynvml) is not installed"


def test_a_counter_that_did_not_move_is_not_a_zero(tmp_path: Path) -> None:
    run = run_in(tmp_path)
    run_cases(run, GPU, [Case("matmul_8x8_float32", lambda: Timed(lambda: 1))], repeats=3, memory=False,
              energy=EnergyMeter(lambda: 42))
    [record] = run.records
    assert PER_CALL not in record.metrics and str(record.metrics[STATUS]).startswith(NOT_MEASURED)


def test_a_cpu_figure_records_no_energy(tmp_path: Path) -> None:
    run = run_in(tmp_path)
    run_cases(run, Target("numpy", "cpu"), [Case("matmul_8x8_float32", lambda: Timed(lambda: 1))], repeats=3,
              memory=False)
    [record] = run.records
    assert not {PER_CALL, PER_IMAGE, STATUS} & set(record.metrics)
    assert EnergyMeter.of_device("cpu") == EnergyMeter()


class FakeNvml:
    """The parts of pynvml the meter uses, for two GPUs; `supported` False answers as a GPU before Volta."""

    class NVMLError(Exception):
        pass

    def __init__(self, supported: bool = True) -> None:
        self.supported = supported
        self.total = {0: 10_000, 1: 20_000}

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> SimpleNamespace:
        return SimpleNamespace(index=index)

    def nvmlDeviceGetUUID(self, handle: SimpleNamespace) -> bytes:
        return f"GPU-{handle.index}aaa".encode()  # bytes, as nvidia-ml-py before 11.5 returns

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: SimpleNamespace) -> int:
        if not self.supported:
            raise self.NVMLError("Not Supported")
        return int(self.total[handle.index])


def test_nvml_reads_the_frameworks_device_as_cuda_visible_devices_maps_it() -> None:
    nvml = FakeNvml()
    meter = nvml_meter(0, "GPU-1aaa", nvml)  # the framework's device 0 is NVML's GPU 1
    assert meter.counter is not None and meter.counter() == 20_000
    assert nvml_meter(0, None, nvml).counter() == 10_000  # type: ignore[misc]


def test_nvml_without_the_counter_or_the_device_says_why() -> None:
    assert "cannot be read: Not Supported" in str(nvml_meter(0, None, FakeNvml(supported=False)).unavailable)
    assert "not one NVML lists" in str(nvml_meter(3, None, FakeNvml()).unavailable)


def test_tables_show_energy_beside_device_memory_only_where_a_gpu_figure_has_it(tmp_path: Path) -> None:
    run = run_in(tmp_path)
    meter = Joulemeter(1500)
    step = Case("train_step_128x28x28_float32", lambda: Timed(meter.call),
                lambda _r, m: Judgement(metrics={"images_per_s": 128 / m.median_s}))
    run_cases(run, GPU, [step], repeats=3, memory=False, energy=EnergyMeter(meter))
    run_cases(run, Target("flax", "gpu"), [step], repeats=3, memory=False,
              energy=EnergyMeter(unavailable="no counter"))
    run_cases(run, Target("numpy", "cpu"), [step], repeats=3, memory=False)
    rows = memory_rows(step.name, run.records)
    assert rows == [[f"{step.name} · energy", "1.5 J/call · 11.7 mJ/image", NOT_MEASURED, "—"]]
    assert memory_rows(step.name, run.records[2:]) == []  # a CPU's figures: no energy row


def test_report_shows_the_energy_once_per_case_and_the_csv_keeps_its_columns(tmp_path: Path) -> None:
    """The energy is drawn on the case's memory rows (beside the device's memory), not a second time as metric
    rows; the CSV, one line per figure, keeps every metric as its own column."""
    from tests.conftest import invoke

    run = run_in(tmp_path)
    meter = Joulemeter(1500)
    step = Case("train_step_128x28x28_float32", lambda: Timed(meter.call),
                lambda _r, m: Judgement(metrics={"images_per_s": 128 / m.median_s}))
    run_cases(run, GPU, [step], repeats=3, memory=False, energy=EnergyMeter(meter))
    where = ["--results", str(tmp_path / "results.jsonl")]
    for output in ("table", "markdown", "html"):
        shown = invoke("report", *where, "--format", output).stdout
        assert shown.count("J/call") == 1 and "energy per timed call" not in shown, (output, shown)
    csv_head = invoke("report", *where, "--format", "csv").stdout.splitlines()[0]
    assert f"metric.{PER_CALL}" in csv_head and f"metric.{PER_IMAGE}" in csv_head
