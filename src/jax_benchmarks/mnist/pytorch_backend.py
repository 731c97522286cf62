"""`mnist pytorch`: the same CNN as in PyTorch's MNIST example, trained like the Flax one.

With `--devices N` (N > 1) training is data-parallel with
DistributedDataParallel: the CLI process is rank 0 (it times, records and
draws), and starts ranks 1..N-1 itself through torch.multiprocessing; gloo on
CPU, NCCL on GPU; each rank takes its rows of every global batch (the same
shuffled order on every rank, so the global batches are the single-process
ones). As one process of a multi-process job (`--num-processes`, torchrun,
`--launch-local`) every process runs the same driver as a DDP rank, joined by
the CLI through `src/jax_benchmarks/mnist/distributed.py`.

Batches are sliced from tensors that hold the whole (already normalized) data
set, like the Flax backend's device-resident arrays, rather than through a
DataLoader: both backends then do the same work per step.
"""

from __future__ import annotations

import copy
import signal
import sys
import warnings
from collections.abc import Callable, Collection, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TypedDict

import click
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from jax_benchmarks.hardware.devices import cpu_count
from jax_benchmarks.frameworks.descriptors import torch_device, torch_sync
from jax_benchmarks.hardware.gpu_policy import applied
from jax_benchmarks.hardware.network import free_port
from jax_benchmarks.measure.harness import Suite, run_suite, select
from jax_benchmarks.run import Run
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.frameworks.torch_compile import CompiledFunction, compile_failures, execution_mode, inductor_refusal
from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.mnist import model_spec as spec
from jax_benchmarks.errors import SettingsError, first_line
from jax_benchmarks.mnist.cases import CaseNames, Log, mnist_suites
from jax_benchmarks.mnist.cluster import describe_exit
from jax_benchmarks.mnist.data import MnistData
from jax_benchmarks.mnist.distributed import JobFailed, Place, guarded_join, no_core_dumps, torch_group
from jax_benchmarks.mnist.settings import EvaluateSettings, MnistSettings, TrainingSettings
from jax_benchmarks.settings import CompileMode
from jax_benchmarks.mnist.trainer import EpochResult, EvalResult, devices_variant, mixed_precision_text, parameter_table

BACKEND = "pytorch"
# `--devices N` runs N processes, one per device (DistributedDataParallel).
SEVERAL = "processes"


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
        self.saved: tuple[dict[str, torch.Tensor], dict[str, object]] | None = None  # while the step is timed
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
        """One step on one batch (this process's rows); `end_step` restores the parameters and optimizer state."""
        self.saved = copy.deepcopy(self.net.state_dict()), copy.deepcopy(self.optimizer.state_dict())
        self.model.train()
        x, y = self.x_train[: self.local_batch], self.y_train[: self.local_batch]
        return lambda: self._step(x, y)

    def end_step(self) -> None:
        if self.saved is not None:
            self.net.load_state_dict(self.saved[0])
            self.optimizer.load_state_dict(self.saved[1])
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


class DDPTrainer(TorchTrainer):
    """One rank of DistributedDataParallel training; rank 0 is the reporting process."""

    # Every rank must run exactly as many steps (each ends in an all-reduce): a fixed count, never
    # calibrated by time.
    fixed_count = True

    def __init__(self, settings: MnistSettings, data: MnistData, rng: RNG_Provider, rank: int, world: int) -> None:
        self.rank, self.world = rank, world
        super().__init__(settings, data, rng)
        torch.manual_seed(settings.seed + rank)  # same initial weights (DDP broadcasts rank 0's), own dropout
        # conv1 has one input channel, so the stride of that size-1 dimension is arbitrary and DDP's
        # "grad strides do not match bucket view strides" warning about it costs nothing.
        warnings.filterwarnings("ignore", message="Grad strides do not match bucket view strides")
        ids = [torch.cuda.current_device()] if self.torch_device.type == "cuda" else None
        self.model = DistributedDataParallel(self.model, device_ids=ids)
        self.optimizer, self.scheduler = make_optimizer(settings, self.model, settings.num_epochs * self.plan.steps)

    @property
    def local_batch(self) -> int:
        return self.plan.batch // self.world

    @property
    def net(self) -> nn.Module:
        module = self.model.module
        assert isinstance(module, nn.Module)
        return module

    def epoch_order(self) -> tuple[torch.Tensor, int]:
        """This rank's rows of every global batch and its local batch. Every rank draws the same shuffled
        order (same seed) as one process would, so the global batches are the single-process ones."""
        order, batch = super().epoch_order()
        steps, local = self.plan.steps, self.local_batch
        by_step = order[: steps * batch].view(steps, batch)
        return by_step[:, self.rank * local:(self.rank + 1) * local].reshape(-1), local

    def read_epoch(self, output: EpochOutput) -> EpochResult:
        """The job's figures, the same on every rank: step losses averaged over the ranks (equal shares, so
        the mean over the global batch) and correct predictions summed (one all-reduce each)."""
        losses = output["losses"].detach().clone()
        correct = output["correct"].detach().clone()
        dist.all_reduce(losses, op=dist.ReduceOp.SUM)
        dist.all_reduce(correct, op=dist.ReduceOp.SUM)
        step_losses = (losses / self.world).cpu().numpy()
        images = len(step_losses) * self.plan.batch
        return EpochResult(float(step_losses.mean()), int(correct.item()) / images, images,
                           tuple(float(v) for v in step_losses))

    def save(self, path: Path) -> Path:
        """Rank 0 writes the (identical on every rank) parameters."""
        return super().save(path) if self.rank == 0 else path.with_suffix(".pt")


def init_rank(settings: MnistSettings, rank: int, world: int, port: int) -> None:
    """Join the `--devices N` ranks' process group through the same guarded join as a multi-process job
    (preflight, --dist-timeout, one line on failure)."""
    if settings.device_kind != "gpu":
        torch.set_num_threads(max(1, cpu_count() // world))  # one core's share each, no oversubscription
    coordinator = f"127.0.0.1:{port}"
    saved = f"the records so far are saved in {settings.results}" if rank == 0 else "this rank writes no record"
    guarded_join(Place("torch", rank, world, coordinator, settings.dist_timeout, saved),
                 lambda: torch_group(f"tcp://{coordinator}", rank, world, settings.device_kind == "gpu", rank,
                                     settings.dist_timeout))


def worker(rank: int, world: int, settings: MnistSettings, data: MnistData, port: int,
           selected: frozenset[str]) -> None:
    """Entry point of ranks 1..N-1 (started with torch.multiprocessing): a failure ends it with one line."""
    no_core_dumps()
    try:
        init_rank(settings, rank, world, port)
        try:
            # A spawned process starts with torch's defaults: the run's GPU policy must be set here too, or
            # the ranks would compute in different precisions (rank 0 runs under the CLI's policy).
            with applied(settings.precision, ["torch"]):
                follow(settings, data, rank, world, selected)
        finally:
            dist.destroy_process_group()
    except click.ClickException as exc:
        print(f"Error: {exc.format_message()}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:  # the CLI process (rank 0) was interrupted too and says what it saved
        sys.exit(128 + signal.SIGINT)
    except Exception as exc:
        print(f"Error: rank {rank} of {world} stopped: {first_line(exc)}", file=sys.stderr)
        sys.exit(1)


def follow(settings: MnistSettings, data: MnistData, rank: int, world: int, selected: Collection[str]) -> None:
    """Ranks > 0: rank 0's suite, declared the same way as a rank of a multi-process job (this rank's place in
    it, no validation: process 0 validates), run with recording off, so every collective step (the step
    case's fixed count, each epoch and the all-reduce of its figures) comes in rank 0's order. Rank 0 alone
    reads the data (it hands it over) and measures the float32 peak, which would otherwise run while rank 0
    times its step."""
    follower = settings.model_copy(update={"process_id": rank, "num_processes": world, "comet": "off"})
    names = CaseNames(settings)
    (suite,) = mnist_suites(follower, BACKEND, None, build_trainer(follower), compiled=False, data=data)
    run = Run("mnist", follower.results, recording=False)
    run_suite(run, suite, repeats=settings.repeats, patterns=[n for n in selected if n not in (names.load, names.peak)],
              memory=False, min_time_s=settings.min_time)


class SpawnedRanks:
    """`--devices N` on one process: this process is rank 0 and starts ranks 1..N-1 once the data is loaded."""

    def __init__(self, settings: MnistSettings) -> None:
        self.settings = settings
        self.world = settings.device_count
        self.others: list[BaseProcess] = []
        self.selected: frozenset[str] = frozenset()  # the names of rank 0's selected cases

    def following(self, suite: Suite) -> Suite:
        """Rank 0's suite; the other ranks follow its cases that `-k` selects."""
        self.selected = frozenset(case.name for case in select(suite.cases, self.settings.case_patterns))
        return suite

    def build(self, data: MnistData, log: Log) -> DDPTrainer:
        port, context = free_port(), mp.get_context("spawn")
        self.others = [
            context.Process(target=worker, args=(rank, self.world, self.settings, data, port, self.selected),
                            daemon=True)
            for rank in range(1, self.world)
        ]
        for process in self.others:
            process.start()
        backend = "nccl" if self.settings.device_kind == "gpu" else "gloo"
        log(f"DistributedDataParallel: {self.world} processes ({backend}), this one is rank 0")
        init_rank(self.settings, 0, self.world, port)
        return DDPTrainer(self.settings, data, RNG_Provider(self.settings.seed), 0, self.world)

    def finish(self) -> None:
        """Leave the process group and wait for the other ranks (they end after their last collective)."""
        if dist.is_initialized():
            dist.destroy_process_group()
        for process in self.others:
            process.join(timeout=60)
            if process.is_alive():
                process.terminate()
        failed = [f"rank {rank} {describe_exit(p.exitcode)}" for rank, p in enumerate(self.others, start=1)
                  if p.exitcode not in (0, None)]
        if failed:
            raise JobFailed(f"DistributedDataParallel: {', '.join(failed)}; the records so far are saved")


def build_trainer(settings: MnistSettings) -> Callable[[MnistData, Log], TorchTrainer]:
    def build(data: MnistData, log: Log) -> TorchTrainer:
        rng = RNG_Provider(settings.seed)
        if settings.multi_process:  # the runtime was joined by the CLI (src/jax_benchmarks/mnist/distributed.py)
            log(f"DistributedDataParallel: {settings.num_processes} processes ({dist.get_backend()}), "
                f"this is process {settings.process_id}")
            return DDPTrainer(settings, data, rng, settings.process_id, settings.num_processes)
        return TorchTrainer(settings, data, rng, settings.compile_mode)

    return build


def suites(settings: EvaluateSettings) -> Sequence[Suite]:
    """Training (`mnist pytorch|all`; `--devices N`: this process is rank 0 of N), or `mnist evaluate pytorch`: the
    trainer of the training settings' defaults."""
    trained = settings if isinstance(settings, MnistSettings) else settings.trained()
    if trained.device_count > 1 and not trained.multi_process:
        ranks = SpawnedRanks(trained)
        return [ranks.following(suite) for suite in mnist_suites(
            settings, BACKEND, devices_variant(SEVERAL, ranks.world), ranks.build, compiled=False, finish=ranks.finish)]
    if trained.mixed_bf16 and trained.device_kind == "gpu" and not torch.cuda.is_bf16_supported():
        raise SettingsError("--precision", f"bf16: PyTorch computes no bfloat16 on {torch.cuda.get_device_name()}; "
                                           "allowed on this device: float32, tf32")
    if trained.compile_mode is not None:  # one process, one device (the settings refuse more)
        refusal = inductor_refusal(trained.device_kind)
        if refusal is not None:
            raise SettingsError("--compile", refusal)
        return mnist_suites(settings, BACKEND, execution_mode(trained.compile_mode), build_trainer(trained),
                            compiled=True, cannot_run=compile_failures())
    variant = devices_variant(SEVERAL, trained.device_count, trained.num_processes, trained.process_id)
    return mnist_suites(settings, BACKEND, variant, build_trainer(trained), compiled=False)
