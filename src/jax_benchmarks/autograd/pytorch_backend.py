"""`autograd pytorch`: one backward() per point (the usual first attempt at f′ at many points), and
torch.func.vmap(torch.func.grad(f))."""

from __future__ import annotations

import torch

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.settings import AutogradSettings
from jax_benchmarks.example_function.in_torch import f
from jax_benchmarks.frameworks.arrays import TorchArrays
from jax_benchmarks.hardware.devices import DeviceKind, devices_to_time
from jax_benchmarks.measure.harness import Suite


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


def suite(settings: AutogradSettings, kind: DeviceKind) -> Suite:
    return gradient_suite("pytorch", TorchArrays(kind), settings, value=value,
                          gradients=[("loop", loop_grad), ("vmap", vmap_grad)])


def suites(settings: AutogradSettings) -> list[Suite]:
    return [suite(settings, kind) for kind in devices_to_time(settings.device)]
