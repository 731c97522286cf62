"""Join a multi-process job on the framework's own runtime, and leave it.

- JAX: `jax.distributed.initialize(coordinator, num_processes, process_id)`
  (JAX detects Slurm's coordinator itself when none is given); on CPU the
  cross-process collectives run over gloo. Afterwards `jax.devices()` lists
  every process's devices and one mesh spans them all.
- PyTorch: `torch.distributed.init_process_group` over the TCP store at
  `--coordinator`, or over `env://` (torchrun's MASTER_ADDR / MASTER_PORT);
  NCCL on GPUs, gloo on CPUs.

Every wait is bounded by `--dist-timeout`: the rendezvous, each collective
(PyTorch's process-group timeout) and JAX's heartbeat, after which a process
whose peer went silent stops. Process 0 names the run: its id reaches the
other processes through the runtime (a broadcast), so every record of the job
carries one run id.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Literal

import click
import numpy as np

from jax_benchmarks.errors import first_line
from jax_benchmarks.store.results import new_run_id
from jax_benchmarks.mnist.cluster import wait_for_listener
from jax_benchmarks.mnist.settings import MnistSettings

Framework = Literal["jax", "torch"]
RUN_ID_BYTES = 64


class JobFailed(click.ClickException):
    """This process could not join the job, or a collective failed (a peer ended): exit 1, one line."""

    exit_code = 1


def where(settings: MnistSettings) -> str:
    return f"process {settings.process_id} of {settings.num_processes}"


@contextmanager
def joined(settings: MnistSettings, framework: Framework) -> Iterator[str]:
    """Join the job's runtime; yield the run id process 0 chose; leave the runtime at the end.

    Any error inside (a peer that died breaks the next collective) ends this process with one line."""
    try:
        run_id = join_jax(settings) if framework == "jax" else join_torch(settings)
    except click.ClickException:
        raise
    except Exception as exc:
        address = settings.coordinator or "the address from torchrun / Slurm (or give --coordinator)"
        raise JobFailed(
            f"{where(settings)} could not join the job at {address} "
            f"within {settings.dist_timeout} s (--dist-timeout): {first_line(exc)}"
        ) from None
    try:
        yield run_id
    except click.ClickException:
        raise
    except Exception as exc:
        raise JobFailed(f"{where(settings)} stopped: {first_line(exc)}") from None
    finally:
        leave(framework)


def encode_run_id(run_id: str) -> np.ndarray:
    return np.frombuffer(run_id.encode().ljust(RUN_ID_BYTES, b"\0"), dtype=np.uint8).copy()


def decode_run_id(buffer: np.ndarray) -> str:
    return bytes(np.asarray(buffer, dtype=np.uint8)).rstrip(b"\0").decode()


def join_jax(settings: MnistSettings) -> str:
    import jax
    from jax.experimental import multihost_utils

    if settings.process_id > 0 and settings.coordinator and not wait_for_listener(
        settings.coordinator, settings.dist_timeout
    ):
        # JAX ends the process (a C++ abort, no exception) when registration times out: say why first.
        raise JobFailed(
            f"{where(settings)} could not join the job: no JAX coordinator answered at {settings.coordinator} "
            f"within {settings.dist_timeout} s (--dist-timeout); is process 0 running?"
        )
    if settings.device_kind == "cpu":
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # type: ignore[no-untyped-call]
    local = [settings.local_rank] if settings.device_kind == "gpu" and settings.local_rank is not None else None
    jax.distributed.initialize(
        coordinator_address=settings.coordinator,
        num_processes=settings.num_processes,
        process_id=settings.process_id,
        local_device_ids=local,
        initialization_timeout=settings.dist_timeout,
        heartbeat_timeout_seconds=settings.dist_timeout,
        shutdown_timeout_seconds=settings.dist_timeout,
    )
    mine = encode_run_id(settings.run_id or new_run_id())
    return decode_run_id(multihost_utils.broadcast_one_to_all(mine))


def join_torch(settings: MnistSettings) -> str:
    import torch
    import torch.distributed as dist

    gpu = settings.device_kind == "gpu"
    if gpu:
        torch.cuda.set_device(settings.local_rank or 0)
    init = f"tcp://{settings.coordinator}" if settings.coordinator else "env://"
    dist.init_process_group(
        "nccl" if gpu else "gloo", init_method=init, rank=settings.process_id,
        world_size=settings.num_processes, timeout=timedelta(seconds=settings.dist_timeout),
    )
    mine: list[str | None] = [settings.run_id or new_run_id()]
    dist.broadcast_object_list(mine, src=0)
    assert isinstance(mine[0], str)
    return mine[0]


def leave(framework: Framework) -> None:
    """Leave the runtime (a no-op when it was never joined)."""
    if framework == "jax":
        import jax

        jax.distributed.shutdown()  # type: ignore[no-untyped-call]  # a no-op unless initialize() succeeded
        return
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
