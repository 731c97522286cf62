"""benchmarks/crosscheck.py measures the same work as the CLI, or its verdict means nothing.

The timings themselves are the benchmark's business (it prints them); this checks the conditions under which
its independent figures are taken, which once differed from the CLI's and made a correct figure look 2× off on
a CPU, and 15-38 % off for the mnist step on an H200 (docs/gpu.md#what-the-cross-check-compares).
"""

from __future__ import annotations

import gc
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_crosscheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crosscheck", ROOT / "benchmarks" / "crosscheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["crosscheck"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_torch_timer_runs_on_the_process_threads() -> None:
    """torch.utils.benchmark.Timer runs its statement on one thread unless told otherwise; the CLI's figure
    used the process's whole intra-op pool, so the independent one must too."""
    import torch

    crosscheck = load_crosscheck()
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # more than Timer's default of 1, on any machine
    seen: list[int] = []
    try:
        figures = crosscheck.torch_independent(lambda: seen.append(torch.get_num_threads()), torch.device("cpu"),
                                                seconds=0.01)
    finally:
        torch.set_num_threads(before)
    # On a CPU one judged line: CUDA events and the back-to-back lines only on a GPU (PyTorch on a CPU is
    # synchronous: back to back would time the same loop again).
    assert [(f.method, f.how, f.judged) for f in figures] == [("torch.utils.benchmark", crosscheck.SYNC_PER_CALL, True)]
    assert seen and set(seen) == {2}


def test_loop_median_waits_for_every_result() -> None:
    crosscheck = load_crosscheck()
    calls: list[str] = []
    median = crosscheck.loop_median(lambda: calls.append("call"), lambda _: calls.append("wait"), seconds=0.0)
    assert calls[:2] == ["call", "wait"] and calls.count("call") == calls.count("wait") >= 13  # 3 warm-ups + 10
    assert median >= 0.0


@pytest.mark.parametrize("other", ["", "--xla_cpu_enable_fast_math=false"])
def test_cpu_xla_flags_are_the_ones_mnist_flax_sets(other: str) -> None:
    """The independent Flax step runs on the XLA devices and convolution kernels `mnist flax` picks on a CPU
    by default: one device, convolutions on XLA's own kernels rather than jaxlib's default YNNPACK ones."""
    from jax_benchmarks.hardware import xla_flags

    crosscheck = load_crosscheck()
    assert xla_flags.conv_in_effect("") == "ynnpack"  # what JAX would run without the flags
    flags = crosscheck.cpu_xla_flags(f"{other} {xla_flags.HOST_DEVICES}=2")
    assert xla_flags.conv_in_effect(flags) == "xla"
    assert xla_flags.HOST_DEVICES not in flags  # one device, as `mnist flax` without --devices
    assert other in flags  # the user's other flags are kept


def test_back_to_back_waits_once_for_a_block_of_calls() -> None:
    """The back-to-back line makes a block of calls, then waits once for all their results (a GPU's launch
    queue overlaps them): another rule than the core's, so another line."""
    crosscheck = load_crosscheck()
    events: list[Any] = []
    count = iter(range(10**6))

    def call() -> int:
        n = next(count)
        events.append(("call", n))
        return n

    seconds, calls = crosscheck.back_to_back_median(call, lambda result: events.append(("wait", result)),
                                                    seconds=0.0, max_calls=4)
    assert calls == 4 and seconds >= 0.0
    assert events[:6] == [("call", 0), ("wait", 0), ("call", 1), ("wait", 1), ("call", 2), ("wait", 2)]
    blocks = events[6:]
    assert len(blocks) == 3 * 5  # at least 3 blocks: 4 calls, then one wait for the 4 results
    for start in range(0, len(blocks), 5):
        made = [n for kind, n in blocks[start:start + 4] if kind == "call"]
        assert len(made) == 4 and blocks[start + 4] == ("wait", made)


@pytest.mark.parametrize("loop", ["per call", "back to back"])
def test_timed_loops_pause_the_garbage_collector(loop: str) -> None:
    """The core times with the garbage collector paused (and so does timeit, under torch.utils.benchmark):
    the independent loops too, and they turn it back on."""
    crosscheck = load_crosscheck()
    seen: list[bool] = []

    def call() -> None:
        seen.append(gc.isenabled())

    assert gc.isenabled()
    if loop == "per call":
        crosscheck.loop_median(call, lambda _: None, seconds=0.0)
    else:
        crosscheck.back_to_back_median(call, lambda _: None, seconds=0.0, max_calls=2)
    assert seen and not any(seen)
    assert gc.isenabled()


class StubTrainer:
    """What the cross-check uses of a trainer: the step case's own `prepare_step` and `end_step`."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.step: Callable[[], str] = lambda: "stepped"

    def prepare_step(self) -> Callable[[], str]:
        self.events.append("prepare_step")
        return self.step

    def end_step(self) -> None:
        self.events.append("end_step")


def test_the_step_timed_is_the_one_the_step_case_times() -> None:
    """The independent methods time the callable the trainer's `prepare_step` hands the core (the same batch on
    the device, the same index array every call), and `end_step` puts back what the timed steps changed, as
    the step case's teardown does; also when timing fails. Before 2026-11-28 the script built its own call,
    which for Flax made a new index array each call (`jnp.int32(0)`): the H200's 1.60 ms against the CLI's
    1.29 ms."""
    crosscheck = load_crosscheck()
    trainer = StubTrainer()
    timed: list[Callable[[], str]] = []

    def time_step(step: Callable[[], str]) -> list[Any]:
        timed.append(step)
        trainer.events.append("timed")
        return [crosscheck.Figure("m", crosscheck.SYNC_PER_CALL, 1.0)]

    figures = crosscheck.step_figures(trainer, time_step)
    assert [f.seconds for f in figures] == [1.0]
    assert timed == [trainer.step]
    assert trainer.events == ["prepare_step", "timed", "end_step"]

    def fails(_step: Callable[[], str]) -> list[Any]:
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError):
        crosscheck.step_figures(trainer, fails)
    assert trainer.events[-1] == "end_step"


def test_the_mnist_settings_are_the_cli_commands() -> None:
    """The independent trainers are built with the settings the CLI's `mnist <backend> --dry-run --num-epochs 1
    --comet off --data-source embedded` uses (a dry run sizes the step's accumulators to its 3 steps)."""
    crosscheck = load_crosscheck()
    settings = crosscheck.mnist_settings("cpu")
    assert (settings.dry_run, settings.num_epochs, settings.comet, settings.data_source, settings.train_batch_size) == (
        True, 1, "off", "embedded", crosscheck.MNIST_BATCH)


def test_only_figures_under_the_cores_rule_are_judged() -> None:
    crosscheck = load_crosscheck()
    Figure = crosscheck.Figure
    judged = Figure("block_until_ready loop", crosscheck.SYNC_PER_CALL, 1e-3)
    other = Figure("block_until_ready loop", crosscheck.back_to_back(10), 1e-3, judged=False)
    assert crosscheck.verdict(judged, 1.10) == ("ok", "ok")
    assert crosscheck.verdict(judged, 0.81) == ("OFF BY MORE THAN 15 %", "off")
    assert crosscheck.verdict(other, 1.25) == ("not judged (another quantity)", "not judged")
    assert crosscheck.verdict(other, 1.0)[1] != "ok"  # never a pass for what it does not judge
    assert crosscheck.summary(["ok", "not judged", "ok"]) == "all judged figures within 15 %"
    assert crosscheck.summary(["ok", "off", "not judged"]) == "1 judged figure(s) off by more than 15 %"


def test_a_figure_taken_on_a_busy_machine_cannot_pass() -> None:
    """A figure either side took while other processes held the cores says nothing of the core (on this
    shared 2-core machine one loop read the same Flax step at 152 and 289 ms seconds apart): its line cannot be
    judged, and the run does not pass, whatever the ratio."""
    from jax_benchmarks.measure.contention import Contention

    crosscheck = load_crosscheck()
    quiet = Contention(1.0, cores=2, others_cores=0.1, steal_cores=0.0)
    busy = Contention(1.0, cores=2, others_cores=1.6, steal_cores=0.0)
    unknown = Contention(0.5, unknown="too short")
    assert crosscheck.busy_reason(quiet, quiet) is None
    assert crosscheck.busy_reason(None, unknown) is None  # not known to be busy: judged, as the core judges it
    assert crosscheck.busy_reason(busy, quiet) == "CLI: other processes took 1.6 of 2 cores"
    assert crosscheck.busy_reason(quiet, busy) == "independent: other processes took 1.6 of 2 cores"
    judged = crosscheck.Figure("torch.utils.benchmark", crosscheck.SYNC_PER_CALL, 1e-3)
    text, kind = crosscheck.verdict(judged, 1.0, crosscheck.busy_reason(busy, quiet))
    assert kind == "cannot judge" and "other processes took 1.6 of 2 cores" in text
    assert crosscheck.summary(["ok", kind]) == "1 could not be judged (the machine was busy: run again on a quiet one)"


def test_the_environment_is_prepared_as_the_cli_prepares_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a GPU is visible the CLI makes JAX allocate GPU memory on demand before JAX loads
    (XLA_PYTHON_CLIENT_PREALLOCATE=false); the script's process, which runs JAX's independent figures, too."""
    from jax_benchmarks.hardware import devices

    crosscheck = load_crosscheck()
    monkeypatch.setattr(devices, "gpu_names", lambda: ("NVIDIA H200",))
    environ: dict[str, str] = {}
    said = crosscheck.prepare_like_the_cli(environ)
    assert environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
    assert said == {"jax_gpu_memory": "on demand"}


def test_the_scripts_own_process_on_the_gpu_does_not_make_the_cli_busy() -> None:
    """While the CLI runs, this script's process holds a CUDA context (its own figures came first): the CLI's
    record counts it as another process on the GPU. That is not contention; the independent side's reading,
    which knows this process as its own, says whether anyone else was on the GPU."""
    from jax_benchmarks.measure.contention import Contention
    from jax_benchmarks.measure.gpu_contention import GpuSeen

    crosscheck = load_crosscheck()
    quiet_cpu = Contention(1.0, cores=16, others_cores=0.02, steal_cores=0.0)
    with_us = replace(quiet_cpu, gpu=GpuSeen(0, others=1, other_mib=1200.0))
    alone = replace(quiet_cpu, gpu=GpuSeen(0, others=0, other_mib=0.0))
    assert crosscheck.busy_reason(with_us, alone) is None
    someone = replace(quiet_cpu, gpu=GpuSeen(0, others=1, other_mib=500.0))
    assert crosscheck.busy_reason(with_us, someone) == (
        "independent: other processes took 0.0 of 16 cores; 1 other process(es) on GPU 0, 500 MiB")
