"""`autograd pytorch`: one backward() per point (the usual first attempt at f′ at many points), and
torch.func.vmap(torch.func.grad(f))."""

from __future__ import annotations

import numpy as np
import torch

from jax_benchmarks.autograd.cases import Arrays, gradient_suite
from jax_benchmarks.autograd.reference import Floats
from jax_benchmarks.autograd.settings import AutogradSettings
from jax_benchmarks.hardware.devices import DeviceKind, devices_to_time, torch_device
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.measure.timing import torch_sync
from jax_benchmarks.example_function.in_torch import f


def value(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return f(x)


def loop_grad(x: torch.Tensor) -> torch.Tensor:
    """One scalar graph and one backward() per point."""
    grads = []
    for point in x:
        leaf = point.detach().requires_grad_(True)
        torch.autograd.backward(f(leaf))
        assert leaf.grad is not None
        grads.append(leaf.grad)
    return torch.stack(grads)


vmap_grad = torch.func.vmap(torch.func.grad(f))


def to_numpy(t: torch.Tensor) -> Floats:
    return np.asarray(t.detach().cpu().numpy())


def arrays(kind: DeviceKind) -> Arrays[torch.Tensor]:
    device = torch_device(kind)
    return Arrays(
        to_native=lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device),
        to_numpy=to_numpy,
        sync=torch_sync(device),
    )


def suite(settings: AutogradSettings, kind: DeviceKind) -> Suite:
    return gradient_suite("pytorch", kind, settings, arrays=lambda: arrays(kind), value=value,
                          gradients=[("loop", loop_grad), ("vmap", vmap_grad)])


def suites(settings: AutogradSettings) -> list[Suite]:
    return [suite(settings, kind) for kind in devices_to_time(settings.device)]
