"""`jit pytorch`: PyTorch eager vs `torch.compile` (inductor) on every device.

On the CPU, inductor generates C++ and needs a working compiler; when
torch.compile cannot run, the compile variant is skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from numpy.typing import NDArray

from src.core.devices import DeviceKind, devices_to_time, torch_device
from src.core.results import Run
from src.core.rng import RNG_Provider
from src.core.timing import torch_sync
from src.jit.settings import SweepSettings
from src.jit.sweep import F32, SweepTarget, Variant, check_x1, log_skipped_lengths, run_sweep, x1

BACKEND = "pytorch"


def f(x: torch.Tensor) -> torch.Tensor:
    return 0.2 * x + torch.sin(x) + torch.cos(2 * x)


def to_numpy(x: torch.Tensor) -> NDArray[np.floating]:
    return x.detach().cpu().numpy()


def compiled_f() -> Callable[[torch.Tensor], torch.Tensor]:
    """torch.compile(f), specialized per shape like jax.jit (no dynamic-shape graph)."""
    compiled: Callable[[torch.Tensor], torch.Tensor] = torch.compile(f, dynamic=False)
    return compiled


def compile_failures() -> tuple[type[Exception], ...]:
    """What torch.compile raises when it cannot build code here (compiler missing, ...)."""
    import torch._dynamo.exc as dynamo_exc

    # RuntimeError/OSError: inductor's C++ build or a missing toolchain surface as these.
    return (dynamo_exc.TorchDynamoException, RuntimeError, OSError)


def target_on(kind: DeviceKind, x1_error: float) -> SweepTarget[torch.Tensor]:
    device = torch_device(kind)

    def to_device(x: F32) -> torch.Tensor:
        return torch.from_numpy(x).to(device)

    return SweepTarget(
        backend=BACKEND, device=kind, to_device=to_device, to_numpy=to_numpy, sync=torch_sync(device),
        variants=[
            Variant("eager", f),
            Variant("compile", compiled_f(), compiled=True, cannot_run=compile_failures()),
        ],
        checks={"x1_max_abs_err": x1_error},
        # PyTorch splits even small element-wise ops over its intra-op threads; on a busy
        # machine that costs a lot, so the count is part of the figure.
        params={"torch_threads": torch.get_num_threads()},
    )


def run(settings: SweepSettings, run: Run) -> None:
    RNG_Provider(settings.seed).seed_torch()
    # Start cold: compilations cached in this process by an earlier run (tests) would
    # otherwise be counted as free. Inductor's on-disk cache still applies.
    torch._dynamo.reset()
    run.log("f(x) = 0.2·x + sin(x) + cos(2x) in PyTorch, float32:")
    x1_error = check_x1(run, {"f(x1)": to_numpy(f(torch.from_numpy(x1())))})
    log_skipped_lengths(run, BACKEND, settings)
    run.log(f"pytorch: torch.compile (inductor) on {', '.join(devices_to_time(settings.device))}; "
            f"its first call per length is the compile time, reported apart")
    with torch.inference_mode():
        for kind in devices_to_time(settings.device):
            run_sweep(run, settings, target_on(kind, x1_error))
