"""benchmarks/crosscheck.py measures the same work as the CLI, or its verdict means nothing.

The timings themselves are the benchmark's business (it prints them); this checks the conditions under which
its independent figures are taken, which once differed from the CLI's and made a correct figure look 2× off.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_crosscheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("crosscheck", ROOT / "benchmarks" / "crosscheck.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
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
        figures = crosscheck.torch_independent(lambda: seen.append(torch.get_num_threads()), torch.device("cpu"))
    finally:
        torch.set_num_threads(before)
    assert set(figures) == {"torch.utils.benchmark"}  # CUDA events only on a GPU
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
