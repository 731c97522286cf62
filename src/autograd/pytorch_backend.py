"""`autograd pytorch`: the seed's per-element backward() loop, and torch.func.vmap(torch.func.grad(f))."""

from __future__ import annotations

import numpy as np
import torch

from src.autograd.harness import Target, Variant, run_target
from src.autograd.reference import Floats
from src.autograd.settings import AutogradSettings
from src.core.devices import DeviceKind, devices_to_time, torch_device
from src.core.results import Run
from src.core.timing import torch_sync


def f(x: torch.Tensor) -> torch.Tensor:
    return 0.2 * x + torch.sin(x) + torch.cos(2 * x)


def value(x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return f(x)


def loop_grad(x: torch.Tensor) -> torch.Tensor:
    """One scalar graph and one backward() per point, as the seed did."""
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


def target(kind: DeviceKind) -> Target[torch.Tensor]:
    device = torch_device(kind)
    return Target[torch.Tensor](
        backend="pytorch",
        device=kind,
        value=value,
        variants=(Variant("loop", loop_grad), Variant("vmap", vmap_grad)),
        to_native=lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(device),
        to_numpy=to_numpy,
        sync=torch_sync(device),
    )


def run(settings: AutogradSettings, run: Run) -> None:
    for kind in devices_to_time(settings.device):
        run_target(run, settings, target(kind))
