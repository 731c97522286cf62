"""`autograd pytorch`: one backward() per point (the usual first attempt at f′ at many points),
torch.func.vmap(torch.func.grad(f)), and one backward() on the sum of f over every point (what PyTorch's users
write for an elementwise f; with `--compile`, also with f compiled by torch.compile); and the mnist CNN's train
step in eager mode (mnist's own `Net`)."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.cnn_cases import Batch, cnn_suite
from jax_benchmarks.autograd.settings import TorchCnnSettings
from jax_benchmarks.errors import SettingsError
from jax_benchmarks.example_function.in_torch import f
from jax_benchmarks.frameworks.descriptors import TorchArrays
from jax_benchmarks.frameworks.torch_compile import CompiledFunction, compile_failures, execution_mode, inductor_refusal
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


def sum_backward(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
    """f′ at every point from one backward() on the sum of fn over them: fn is elementwise, so the gradient of the
    sum with respect to each point is f′ there (the engine's vectorised gradient, as PyTorch's users write it)."""

    def grad(x: torch.Tensor) -> torch.Tensor:
        leaf = x.detach().requires_grad_(True)
        fn(leaf).sum().backward()  # type: ignore[no-untyped-call]
        assert leaf.grad is not None
        return leaf.grad

    return grad


def compiled_sum_backward(mode: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """`sum_backward` of f compiled by torch.compile (AOTAutograd compiles its backward too); compiled on the first
    call, once per shape."""
    return sum_backward(CompiledFunction(f, mode))


class TorchCnnBench:
    """The mnist CNN's train step in PyTorch eager: the mnist group's `Net` (read, not changed here), Adam
    1e-3, F.nll_loss, as that group's training step."""

    def __init__(self, batch: Batch, arrays: TorchArrays) -> None:
        from jax_benchmarks.training.pytorch_trainer import Net

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


SUM_BACKWARD = "backward(sum)"


def suite(settings: TorchCnnSettings, kind: DeviceKind) -> list[Suite]:
    arrays = TorchArrays(kind)
    gradients = [("loop", loop_grad), ("vmap", vmap_grad), (SUM_BACKWARD, sum_backward(f))]
    compiled = []
    if settings.compile_mode is not None:
        variant = f"{SUM_BACKWARD} {execution_mode(settings.compile_mode)}"
        # Made on this device's first call: one compile per device suite, timed apart.
        made: list[Callable[[torch.Tensor], torch.Tensor]] = []

        def compiled_grad(x: torch.Tensor) -> torch.Tensor:
            if not made:
                made.append(compiled_sum_backward(str(settings.compile_mode)))
            return made[0](x)

        gradients.append((variant, compiled_grad))
        compiled.append(variant)
    return [gradient_suite("pytorch", arrays, settings, value=value, gradients=gradients, compiled=compiled,
                           cannot_run=compile_failures()),
            cnn_suite("pytorch", arrays.kind, settings, lambda batch: TorchCnnBench(batch, arrays), sync=arrays.sync)]


def suites(settings: TorchCnnSettings) -> list[Suite]:
    kinds = devices_to_time(settings.device)
    if settings.compile_mode is not None:  # before any work
        refusal = next((reason for kind in kinds if (reason := inductor_refusal(kind)) is not None), None)
        if refusal is not None:
            raise SettingsError("--compile", refusal)
    return [each for kind in kinds for each in suite(settings, kind)]
