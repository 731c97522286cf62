"""`autograd pytorch`: one backward() per point (the usual first attempt at f′ at many points), and
torch.func.vmap(torch.func.grad(f)); and the mnist CNN's train step in eager mode (mnist's own `Net`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.cnn_cases import Batch, cnn_suite
from jax_benchmarks.autograd.settings import CnnSettings
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


class TorchCnnBench:
    """The mnist CNN's train step in PyTorch eager: the mnist group's `Net` (read, not changed here), Adam
    1e-3, F.nll_loss, as that group's training step."""

    def __init__(self, batch: Batch, arrays: TorchArrays) -> None:
        from jax_benchmarks.mnist.pytorch_backend import Net

        torch.manual_seed(0)
        self.net = Net().to(arrays.device, getattr(torch, str(batch.images.dtype)))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        self.images = arrays.to_device(batch.images)
        self.labels = torch.from_numpy(batch.labels).to(arrays.device)

    def step(self) -> torch.Tensor:
        self.net.train()
        self.optimizer.zero_grad(set_to_none=True)
        loss = F.nll_loss(self.net(self.images), self.labels)
        loss.backward()  # type: ignore[no-untyped-call]
        self.optimizer.step()
        return loss.detach()

    def batch_loss(self) -> float:
        self.net.eval()
        with torch.no_grad():
            return float(F.nll_loss(self.net(self.images), self.labels))


def suite(settings: CnnSettings, kind: DeviceKind) -> list[Suite]:
    arrays = TorchArrays(kind)
    return [gradient_suite("pytorch", arrays, settings, value=value, gradients=[("loop", loop_grad), ("vmap", vmap_grad)]),
            cnn_suite("pytorch", arrays.kind, settings, lambda batch: TorchCnnBench(batch, arrays), sync=arrays.sync)]


def suites(settings: CnnSettings) -> list[Suite]:
    return [each for kind in devices_to_time(settings.device) for each in suite(settings, kind)]
