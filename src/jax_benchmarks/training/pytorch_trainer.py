"""The PyTorch side of the CNN: the model of PyTorch's MNIST example (`Net`) and its trainer, used by `mnist pytorch`
(one process, or one rank of DistributedDataParallel: `jax_benchmarks.mnist.pytorch_backend`) and autograd's CNN case.

Batches are sliced from tensors that hold the whole (already normalized) data
set, like the Flax trainer's device-resident arrays, rather than through a
DataLoader: both trainers then do the same work per step.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from jax_benchmarks.frameworks.descriptors import torch_device, torch_sync
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.frameworks.torch_compile import CompiledFunction, execution_mode
from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.settings import CompileMode
from jax_benchmarks.training import model_spec as spec
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.training.settings import TrainingSettings
from jax_benchmarks.training.trainer import EpochResult, EvalResult, mixed_precision_text, parameter_table

BACKEND = "pytorch"


class Net(nn.Module):
    """conv 32 → relu → conv 64 → relu → max-pool → dropout → dense 256 → relu → dropout → dense 10."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, spec.CONV1, spec.KERNEL, 1)
        self.conv2 = nn.Conv2d(spec.CONV1, spec.CONV2, spec.KERNEL, 1)
        self.dropout1 = nn.Dropout(spec.DROPOUT_CONV)
        self.dropout2 = nn.Dropout(spec.DROPOUT_DENSE)
        self.fc1 = nn.Linear(spec.FLAT, spec.HIDDEN)
        self.fc2 = nn.Linear(spec.HIDDEN, spec.CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def parameter_count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def make_optimizer(
    settings: TrainingSettings, model: nn.Module, total_steps: int
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler | None]:
    """Adam or SGD; the one-cycle schedule spans the whole run (epochs × steps)."""
    optimizer: torch.optim.Optimizer
    if settings.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=(settings.momentum, 0.999))
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=settings.lr, momentum=settings.momentum)
    if settings.lr_schedule == "constant":
        return optimizer, None
    # cycle_momentum=False: optax's one-cycle schedule changes only the learning rate.
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=settings.lr, total_steps=max(total_steps, 2), pct_start=0.3,
        anneal_strategy="cos", cycle_momentum=False, div_factor=25.0, final_div_factor=1e4,
    )
    return optimizer, scheduler


# torch's global generators' states: the CPU's, and each CUDA device's where the model is on a GPU.
RandomState = tuple[torch.Tensor, list[torch.Tensor] | None]


def random_state(device: torch.device) -> RandomState:
    """The global generators' states as they are now (dropout draws from the generator of the model's device)."""
    return torch.get_rng_state(), torch.cuda.get_rng_state_all() if device.type == "cuda" else None


def restore_random_state(state: RandomState) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)


def to_nchw(x: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(np.asarray(x, np.float32).transpose(0, 3, 1, 2))).to(device)


class EpochOutput(TypedDict):
    losses: torch.Tensor  # every step's loss, on the device
    correct: torch.Tensor  # correct predictions, summed on the device


EvalOutput = tuple[float, int, np.ndarray, int]  # loss sum, correct, predictions, images


class TorchTrainer:
    backend = BACKEND
    fixed_count = False

    def __init__(self, settings: TrainingSettings, data: MnistData, rng: RNG_Provider,
                 compile_mode: CompileMode | None = None) -> None:
        self.settings = settings
        self.plan = settings.plan(len(data.y_train), len(data.y_test))
        self.torch_device = torch_device(settings.device_kind)
        self.device: str = settings.device_kind
        self.sync: Sync = torch_sync(self.torch_device)
        self.generator = rng.seed_torch()
        self.model: nn.Module = Net().to(self.torch_device)
        self.optimizer, self.scheduler = make_optimizer(settings, self.model, settings.num_epochs * self.plan.steps)
        self.x_train = to_nchw(data.x_train, self.torch_device)
        self.y_train = torch.from_numpy(np.asarray(data.y_train, np.int64)).to(self.torch_device)
        self.x_test = to_nchw(data.x_test, self.torch_device)
        self.y_test = torch.from_numpy(np.asarray(data.y_test, np.int64)).to(self.torch_device)
        # While the step is timed: the parameters, the optimizer's state and the random number generators' states
        # (dropout draws from torch's global generators), put back by `end_step`.
        self.saved: tuple[dict[str, torch.Tensor], dict[str, object], RandomState] | None = None
        # `--compile MODE`: the forward pass and the loss compiled by torch.compile (AOTAutograd compiles their
        # backward too); the optimizer's update stays eager, as `model = torch.compile(model)` leaves it (compiled,
        # the one-cycle schedule's new learning rate each step recompiles it every step).
        self.compiled = None if compile_mode is None else CompiledFunction(self._forward_loss, compile_mode)
        self.mode = execution_mode(compile_mode)
        # bf16: the forward pass under torch.autocast, as PyTorch's users write mixed precision (the parameters,
        # their gradients and the optimizer's state stay float32; autocast runs the loss's log-softmax in float32).
        self.autocast = settings.mixed_bf16
        self.precision = mixed_precision_text("torch.autocast bfloat16") if self.autocast else settings.precision
        self.forward_loss: Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]] = (
            self._forward_loss if self.compiled is None else self.compiled)

    @property
    def local_batch(self) -> int:
        """Images this process computes per step (the global batch on one process)."""
        return self.plan.batch

    @property
    def net(self) -> nn.Module:
        """The plain model (unwrapped from DistributedDataParallel)."""
        return self.model

    def _forward_loss(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        with torch.autocast(self.torch_device.type, dtype=torch.bfloat16, enabled=self.autocast):
            output = self.model(x)
            return F.nll_loss(output, y), output

    def _step(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.optimizer.zero_grad(set_to_none=True)
        loss, output = self.forward_loss(x, y)
        loss.backward()  # type: ignore[no-untyped-call]
        self.optimizer.step()
        return loss.detach(), (output.argmax(dim=1) == y).sum()

    # ------------------------------------------------------------ Trainer ---

    def summary(self) -> str:
        rows = [(name, "×".join(map(str, p.shape)), p.numel()) for name, p in self.net.named_parameters()]
        return parameter_table(f"PyTorch CNN ({type(self.optimizer).__name__})", rows)

    def parameter_count(self) -> int:
        return parameter_count(self.net)

    def prepare_step(self) -> Callable[[], object]:
        """One step on one batch (this process's rows); `end_step` restores the parameters, the optimizer's state and
        the random state, so the training after it is the same however many steps were timed."""
        self.saved = (copy.deepcopy(self.net.state_dict()), copy.deepcopy(self.optimizer.state_dict()),
                      random_state(self.torch_device))
        self.model.train()
        x, y = self.x_train[: self.local_batch], self.y_train[: self.local_batch]
        return lambda: self._step(x, y)

    def end_step(self) -> None:
        if self.saved is not None:
            self.net.load_state_dict(self.saved[0])
            self.optimizer.load_state_dict(self.saved[1])
            restore_random_state(self.saved[2])
            self.saved = None

    def warm_up(self) -> None:
        """Eager: nothing to compile. Compiled: one step on the step's batch compiles it, then the parameters and
        the optimizer's state are put back."""
        if self.compiled is None:
            return
        step = self.prepare_step()
        try:
            self.sync(step())
        finally:
            self.end_step()

    def compile_counts(self) -> dict[str, int]:
        """torch.compile's compilations of the step and the graph breaks in it so far; nothing when eager."""
        return {} if self.compiled is None else self.compiled.counts()

    def epoch_order(self) -> tuple[torch.Tensor, int]:
        """This epoch's shuffled image indices and the batch size of one step."""
        return torch.randperm(self.x_train.shape[0], generator=self.generator).to(self.torch_device), self.plan.batch

    def train_epoch(self, steps: int, on_step: Callable[[], None]) -> EpochOutput:
        self.model.train()
        order, batch = self.epoch_order()
        losses = []
        correct = torch.zeros((), dtype=torch.int64, device=self.torch_device)
        for i in range(steps):
            index = order[i * batch:(i + 1) * batch]
            loss, hits = self._step(self.x_train[index], self.y_train[index])
            if self.scheduler is not None:
                self.scheduler.step()
            losses.append(loss)
            correct += hits
            on_step()
        return {"losses": torch.stack(losses), "correct": correct}

    def read_epoch(self, output: EpochOutput) -> EpochResult:
        losses = output["losses"].cpu().numpy()
        # Loss and accuracy are this process's share; the throughput counts every process's images.
        local_images = len(losses) * self.local_batch
        return EpochResult(float(losses.mean()), int(output["correct"].item()) / local_images,
                           len(losses) * self.plan.batch, tuple(float(v) for v in losses))

    def evaluate(self, limit: int) -> EvalOutput:
        self.model.eval()
        net = self.net  # rank 0 validates alone: no collectives in the way
        batch = self.settings.test_batch_size
        loss, correct, predictions = 0.0, 0, []
        with torch.inference_mode(), torch.autocast(self.torch_device.type, dtype=torch.bfloat16,
                                                    enabled=self.autocast):
            for start in range(0, limit, batch):
                stop = min(start + batch, limit)
                output = net(self.x_test[start:stop])
                y = self.y_test[start:stop]
                loss += float(F.nll_loss(output, y, reduction="sum"))
                predicted = output.argmax(dim=1)
                correct += int((predicted == y).sum())
                predictions.append(predicted.cpu().numpy())
        return loss, correct, np.concatenate(predictions), limit

    def read_eval(self, output: EvalOutput) -> EvalResult:
        loss, correct, predictions, limit = output
        return EvalResult(loss / limit, correct / limit, limit, predictions)

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(self.net.state_dict(), path.with_suffix(".pt"))
        return path.with_suffix(".pt")

    def load(self, path: Path) -> None:
        state = torch.load(path.with_suffix(".pt"), map_location=self.torch_device, weights_only=True)
        self.net.load_state_dict(state)
