"""`mnist pytorch`: the CNN of PyTorch's MNIST example, trained like the Flax one (the model and its trainer:
`jax_benchmarks.training.pytorch_trainer`).

With `--devices N` (N > 1) training is data-parallel with
DistributedDataParallel: the CLI process is rank 0 (it times, records and
draws), and starts ranks 1..N-1 itself through torch.multiprocessing; gloo on
CPU, NCCL on GPU; each rank takes its rows of every global batch (the same
shuffled order on every rank, so the global batches are the single-process
ones). As one process of a multi-process job (`--num-processes`, torchrun,
`--launch-local`) every process runs the same driver as a DDP rank, joined by
the CLI through `src/jax_benchmarks/mnist/distributed.py`.
"""

from __future__ import annotations

import signal
import sys
import warnings
from collections.abc import Callable, Collection, Sequence
from multiprocessing.process import BaseProcess
from pathlib import Path

import click
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from jax_benchmarks.errors import SettingsError, first_line
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.frameworks.torch_compile import compile_failures, execution_mode, inductor_refusal
from jax_benchmarks.hardware.devices import cpu_count
from jax_benchmarks.hardware.gpu_policy import applied
from jax_benchmarks.hardware.network import free_port
from jax_benchmarks.measure.harness import Suite, run_suite, select
from jax_benchmarks.mnist.cases import mnist_suites
from jax_benchmarks.mnist.cluster import describe_exit
from jax_benchmarks.mnist.distributed import JobFailed, Place, guarded_join, no_core_dumps, torch_group
from jax_benchmarks.mnist.settings import MnistSettings, trained_settings
from jax_benchmarks.run import Run
from jax_benchmarks.training.cases import Log
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.training.names import TrainedCase
from jax_benchmarks.training.pytorch_trainer import BACKEND, EpochOutput, TorchTrainer, make_optimizer
from jax_benchmarks.training.settings import EvaluateSettings
from jax_benchmarks.training.trainer import EpochResult, devices_variant

# `--devices N` runs N processes, one per device (DistributedDataParallel).
SEVERAL = "processes"
















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
    (suite,) = mnist_suites(follower, BACKEND, None, build_trainer(follower), compiled=False, data=data)
    run = Run("mnist", follower.results, recording=False)
    trained = [name for name in selected if TrainedCase.of(name) is not None]  # not the load, not the peak
    run_suite(run, suite, repeats=settings.repeats, patterns=trained, memory=False, min_time_s=settings.min_time)


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
    trained = trained_settings(settings)
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
