"""`jit pytorch`: PyTorch eager vs `torch.compile` (inductor) on every device.

On the CPU, inductor generates C++ and needs a working compiler; when
torch.compile cannot run, the compile variant is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import torch

from jax_benchmarks.measure.memory import TORCH_COMPILE
from jax_benchmarks.example_function.in_torch import f
from jax_benchmarks.frameworks.descriptors import TorchArrays
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.frameworks.torch_compile import compile_failures
from jax_benchmarks.hardware.devices import devices_to_time
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import SweepVariant, X1Check, log_skipped_lengths, sweep_suite, x1
from jax_benchmarks.measure.harness import Recorder, Suite

BACKEND = "pytorch"


def compiled_f() -> Callable[[torch.Tensor], torch.Tensor]:
    """torch.compile(f), specialized per shape like jax.jit (no dynamic-shape graph)."""
    compiled: Callable[[torch.Tensor], torch.Tensor] = torch.compile(f, dynamic=False)
    return compiled


def inference() -> AbstractContextManager[object]:
    return torch.inference_mode()


def variants() -> list[SweepVariant[torch.Tensor]]:
    # `compiled_f` is looked up when the case first runs (tests replace it with a failing compiler).
    return [
        SweepVariant("eager", lambda: f),
        SweepVariant("compile", lambda: compiled_f(), compiled=True, cannot_run=compile_failures(),
                     program=lambda _f, _x: lambda: TORCH_COMPILE),
    ]


def suites(settings: SweepSettings) -> list[Suite]:
    kinds = devices_to_time(settings.device)
    x1_check = X1Check(lambda: {"f(x1)": f(torch.from_numpy(x1())).numpy()})

    def before(run: Recorder) -> None:
        RNG_Provider(settings.seed).seed_torch()
        # Start cold: compilations cached in this process by an earlier run (tests) would
        # otherwise be counted as free. Inductor's on-disk cache still applies.
        torch._dynamo.reset()
        run.log("f(x) = 0.2·x + sin(x) + cos(2x) in PyTorch, float32:")
        x1_check.check(run)
        log_skipped_lengths(run, BACKEND, settings)
        run.log(f"pytorch: torch.compile (inductor) on {', '.join(kinds)}; "
                f"its first call per length is the compile time, reported apart")

    return [
        sweep_suite(
            BACKEND, TorchArrays(kind), settings, variants(), x1_check,
            before=before if i == 0 else None, call_context=inference,
            # PyTorch splits even small element-wise ops over its intra-op threads; on a busy
            # machine that costs a lot, so the count is part of the figure.
            params={"torch_threads": torch.get_num_threads()},
        )
        for i, kind in enumerate(kinds)
    ]
