"""Join a multi-process job on the framework's own runtime, and leave it.

- JAX: `jax.distributed.initialize(coordinator, num_processes, process_id)`
  (JAX detects Slurm's coordinator itself when none is given); on CPU the
  cross-process collectives run over gloo. Afterwards `jax.devices()` lists
  every process's devices and one mesh spans them all.
- PyTorch: `torch.distributed.init_process_group` over the TCP store at
  `--coordinator`, or over `env://` (torchrun's MASTER_ADDR / MASTER_PORT);
  NCCL on GPUs, gloo on CPUs. `--devices N` on one process (ranks started
  by the CLI process itself) joins its ranks through the same guarded join.

Every wait is bounded by `--dist-timeout`: the rendezvous, each collective
(PyTorch's process-group timeout) and JAX's heartbeat, after which a process
whose peer went silent stops. Process 0 names the run: its id reaches the
other processes through the runtime (a broadcast), so every record of the job
carries one run id.

The runtimes' own failure paths end a process badly (a segfault when JAX's
coordinator port is taken, a C++ abort with a stack when registration times
out, PyTorch waiting on a silent peer past its timeout and past SIGTERM), so
the join is guarded (`guarded_join`):
- a preflight first: the coordinator's host resolves; process 0's port is
  free; any other process finds a listener there that speaks the runtime's
  protocol (JAX: HTTP/2, PyTorch: its TCP store's ping), each within the
  deadline;
- then the native join runs with its stdout/stderr (file descriptors 1 and
  2) kept in a log, core dumps off, and a watchdog thread that ends the
  process with one line at `--dist-timeout` (the runtimes' own deadlines are
  set `NATIVE_GRACE_S` later) or on Ctrl-C / SIGTERM, which Python cannot
  deliver while the main thread waits inside the runtime's C++ code.
"""

from __future__ import annotations

import errno
import os
import re
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Literal, NoReturn, TypeVar

import click
import numpy as np

from jax_benchmarks.errors import Failed, first_line
from jax_benchmarks.store.record import new_run_id
from jax_benchmarks.mnist.cluster import wait_for_listener
from jax_benchmarks.mnist.settings import MnistSettings

Framework = Literal["jax", "torch"]
T = TypeVar("T")
RUN_ID_BYTES = 64
# The runtimes' own deadlines fall this much after --dist-timeout: the watchdog names the cause first.
NATIVE_GRACE_S = 5
POLL_S = 0.2
# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113 §3.4): a gRPC server (JAX's
# coordination service) answers with a SETTINGS frame (type 4) of its own.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
HTTP2_SETTINGS = 4
# PyTorch's TCP store (torch/csrc/distributed/c10d/TCPStoreBackend.hpp): a client first sends VALIDATE (0)
# with this magic number, then PING (13) with a nonce, which the server sends back.
TCPSTORE_MAGIC = 0x3C85F7CE
TCPSTORE_VALIDATE, TCPSTORE_PING = 0, 13


class JobFailed(Failed):
    """This process could not join the job, or a collective failed (a peer ended): exit 1, one line."""


@dataclass(frozen=True)
class Place:
    """One process's place in a job, as the guarded join needs it."""

    framework: Framework
    process_id: int
    num_processes: int
    coordinator: str | None  # HOST:PORT; None: the launcher's environment (env://, Slurm) names it
    timeout_s: int
    saved: str = "no record was written"  # what an interrupted join leaves: true of this process

    @property
    def who(self) -> str:
        return f"process {self.process_id} of {self.num_processes}"

    def deadline_message(self) -> str:
        """What did not happen by --dist-timeout, from this process's side."""
        at = self.coordinator or "the launcher's address"
        if self.process_id == 0:
            others = "process 1" if self.num_processes == 2 else f"processes 1–{self.num_processes - 1}"
            return (f"{self.who}: the job did not form within {self.timeout_s} s (--dist-timeout): "
                    f"{others} did not join the coordinator at {at} (started with the same --coordinator?)")
        return (f"{self.who}: the job did not form within {self.timeout_s} s (--dist-timeout): the coordinator at "
                f"{at} answered, but not every process joined (is every process of the job running?)")


def place_of(settings: MnistSettings, framework: Framework) -> Place:
    return Place(framework, settings.process_id, settings.num_processes, settings.coordinator, settings.dist_timeout)


@contextmanager
def joined(settings: MnistSettings, framework: Framework) -> Iterator[str]:
    """Join the job's runtime; yield the run id process 0 chose; leave the runtime at the end.

    Any error inside (a peer that died breaks the next collective) ends this process with one line. JAX's
    shutdown then waits at a barrier for the peer that is gone and aborts the process with a C++ stack
    (exit 134), as its exit handler would: a JAX process in that state says its line and ends at once."""
    no_core_dumps()
    place = place_of(settings, framework)
    run_id = guarded_join(place, lambda: join_jax(settings) if framework == "jax" else join_torch(settings))
    try:
        yield run_id
    except click.ClickException:
        leave(framework)
        raise
    except Exception as exc:
        failure = JobFailed(f"{place.who} stopped: {first_line(exc)}")
        if framework == "jax":
            end_now(failure)
        leave(framework)
        raise failure from None
    except BaseException:  # Ctrl-C, SIGTERM: the run says what it saved
        leave(framework)
        raise
    leave(framework)


def end_now(failure: click.ClickException) -> NoReturn:
    """Write the failure's `Error:` line and end the process now, skipping the runtime's own shutdown and exit
    handlers (the records are on disk already: each was appended whole)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(2, f"Error: {' '.join(failure.format_message().split())}\n".encode(errors="replace"))
    kill_children()
    os._exit(failure.exit_code)


def no_core_dumps() -> None:
    """A runtime that aborts (a peer vanished) leaves no core file: the process's message says why."""
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (0, hard))


def guarded_join(place: Place, join: Callable[[], T]) -> T:
    """Preflight the coordinator, then run the runtime's `join` under the watchdog; its result (the run id).
    Every failure ends in JobFailed (one line) or, from the watchdog, in one line and os._exit."""
    started = time.monotonic()
    problem = preflight(place)
    if problem is not None:
        raise JobFailed(problem)
    # --dist-timeout bounds the whole join, the preflight's waiting included (the native call gets a few
    # seconds at least, for a coordinator that appeared at the last moment).
    budget = max(float(NATIVE_GRACE_S), place.timeout_s - (time.monotonic() - started))
    log = tempfile.TemporaryFile()
    try:
        with watchdog(place, budget), native_output_kept(log):
            return join()
    except click.ClickException:
        raise
    except Exception as exc:
        detail = log_error_line(log)
        at = place.coordinator or "the address from torchrun / Slurm (or give --coordinator)"
        raise JobFailed(
            f"{place.who} could not join the job at {at} within {place.timeout_s} s (--dist-timeout): "
            f"{first_line(exc)}" + (f" [{detail}]" if detail and detail not in str(exc) else "")
        ) from None
    finally:
        log.close()


def kill_children() -> None:
    """SIGKILL every process whose parent is this one (Linux: read from /proc; elsewhere nothing to read)."""
    me = str(os.getpid())
    try:
        entries = os.listdir("/proc")
    except OSError:
        return
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                parent = fh.read().rsplit(b")", 1)[1].split()[1].decode()
        except (OSError, IndexError):
            continue
        if parent == me:
            try:
                os.kill(int(entry), signal.SIGKILL)
            except OSError:
                pass


# ------------------------------------------------------------- preflight ---

def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def preflight(place: Place) -> str | None:
    """Why this process cannot join at its coordinator, found before the runtime is called (None: go on)."""
    if place.coordinator is None:
        return None
    host, port = split_address(place.coordinator)
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"{place.who}: the coordinator's host {host!r} (--coordinator {place.coordinator}) does not resolve: " \
               f"{exc.strerror or exc}"
    if place.process_id == 0:
        if not port_is_free(port):
            return (f"{place.who}: the coordinator's port {port} (--coordinator {place.coordinator}) is in use by "
                    "another program on this host; choose a free port")
        return None
    start = time.monotonic()
    if not wait_for_listener(place.coordinator, place.timeout_s):
        return (f"{place.who}: nothing accepted a connection at the coordinator {place.coordinator} within "
                f"{place.timeout_s} s (--dist-timeout); is process 0 running there?")
    left = max(1.0, place.timeout_s - (time.monotonic() - start))
    answered = speaks_http2(host, port, left) if place.framework == "jax" else answers_tcpstore_ping(host, port, left)
    if answered:
        return None
    runtime = "JAX coordination service (gRPC)" if place.framework == "jax" else "PyTorch TCP store"
    return (f"{place.who}: the program at {place.coordinator} accepts connections but did not answer as a {runtime} "
            f"within {left:.0f} s (--dist-timeout); is it process 0 of this job, of the same framework?")


def port_is_free(port: int) -> bool:
    """Whether a server could listen on `port` on every interface (JAX's coordinator binds [::]:PORT)."""
    for family, address in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed one's TIME_WAIT is no owner
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                sock.bind((address, port))
                return True
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            # No IPv6 on this host: the IPv4 wildcard decides.
    return True


def exchange(host: str, port: int, timeout_s: float, request: bytes, size: int) -> bytes:
    """Send `request`, read `size` bytes (fewer if the peer closes); b"" when nothing came in time."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.settimeout(timeout_s)
            sock.sendall(request)
            reply = b""
            while len(reply) < size:
                chunk = sock.recv(size - len(reply))
                if not chunk:
                    break
                reply += chunk
            return reply
    except OSError:
        return b""


def speaks_http2(host: str, port: int, timeout_s: float) -> bool:
    reply = exchange(host, port, timeout_s, HTTP2_PREFACE, 9)
    return len(reply) == 9 and reply[3] == HTTP2_SETTINGS


def answers_tcpstore_ping(host: str, port: int, timeout_s: float) -> bool:
    nonce = os.getpid() & 0xFFFFFFFF
    request = struct.pack("=BI", TCPSTORE_VALIDATE, TCPSTORE_MAGIC) + struct.pack("=BI", TCPSTORE_PING, nonce)
    return exchange(host, port, timeout_s, request, 4) == struct.pack("=I", nonce)


# ---------------------------------------------------- the guarded native call ---

@contextmanager
def native_output_kept(log: IO[bytes]) -> Iterator[None]:
    """File descriptors 1 and 2 go to `log` for the block: what the runtime's C++ code prints (connection
    lines, glog, stack frames) stays off the terminal and off stdout (which may carry --json)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def log_error_line(log: IO[bytes]) -> str:
    """The runtime's own last error line in the kept log (a glog E/F line's text), or ""."""
    log.seek(0)
    lines = [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
    glog = [line.split("] ", 1)[-1] for line in lines if re.match(r"[EF]\d{4} ", line)]
    return glog[-1][:200] if glog else ""


@contextmanager
def watchdog(place: Place, budget_s: float) -> Iterator[None]:
    """End this process with one line if the block outlives `budget_s` (what is left of --dist-timeout), or on
    Ctrl-C / SIGTERM.

    The runtime's C++ code waits with the GIL released, so a Python thread still runs; Python's own signal
    handlers run only when the main thread returns to the interpreter, so the signals reach this thread
    through signal.set_wakeup_fd (the C-level handler writes the signal's number there, whichever thread
    received it). The line goes to stderr as it is on entry (enter this before `native_output_kept`)."""
    stderr = os.dup(2)
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except ValueError:  # not the main thread: no signal reaches Python here anyway
        previous = None
    done = threading.Event()

    def end(text: str, code: int) -> NoReturn:
        os.write(stderr, (" ".join(text.split()) + "\n").encode(errors="replace"))
        kill_children()  # os._exit runs no cleanup: the ranks this process started (--devices N) end with it
        os._exit(code)

    def watch() -> None:
        end_at = time.monotonic() + budget_s
        while not done.is_set():
            left = end_at - time.monotonic()
            if left <= 0:
                end(f"Error: {place.deadline_message()}", JobFailed.exit_code)
            ready, _, _ = select.select([read_end], [], [], min(POLL_S, left))
            if ready and not done.is_set():
                signums = [s for s in os.read(read_end, 64) if s in (signal.SIGINT, signal.SIGTERM)]
                if signums:
                    end(f"Interrupted: {place.who} was stopped while joining the job; {place.saved}.",
                        128 + signums[0])

    thread = threading.Thread(target=watch, name="join-watchdog", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if previous is not None:
            signal.set_wakeup_fd(previous)
        for fd in (read_end, write_end, stderr):
            os.close(fd)


def encode_run_id(run_id: str) -> np.ndarray:
    return np.frombuffer(run_id.encode().ljust(RUN_ID_BYTES, b"\0"), dtype=np.uint8).copy()


def decode_run_id(buffer: np.ndarray) -> str:
    return bytes(np.asarray(buffer, dtype=np.uint8)).rstrip(b"\0").decode()


def join_jax(settings: MnistSettings) -> str:
    import jax
    from jax.experimental import multihost_utils

    if settings.device_kind == "cpu":
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # type: ignore[no-untyped-call]
    local = [settings.local_rank] if settings.device_kind == "gpu" and settings.local_rank is not None else None
    jax.distributed.initialize(
        coordinator_address=settings.coordinator,
        num_processes=settings.num_processes,
        process_id=settings.process_id,
        local_device_ids=local,
        initialization_timeout=settings.dist_timeout + NATIVE_GRACE_S,
        heartbeat_timeout_seconds=settings.dist_timeout,
        shutdown_timeout_seconds=settings.dist_timeout,
    )
    mine = encode_run_id(settings.run_id or new_run_id())
    return decode_run_id(multihost_utils.broadcast_one_to_all(mine))


def join_torch(settings: MnistSettings) -> str:
    import torch.distributed as dist

    init = f"tcp://{settings.coordinator}" if settings.coordinator else "env://"
    torch_group(init, settings.process_id, settings.num_processes, settings.device_kind == "gpu",
                settings.local_rank or 0, settings.dist_timeout)
    mine: list[str | None] = [settings.run_id or new_run_id()]
    dist.broadcast_object_list(mine, src=0)
    assert isinstance(mine[0], str)
    return mine[0]


def torch_group(init: str, rank: int, world: int, gpu: bool, local_rank: int, timeout_s: int) -> None:
    """Join PyTorch's process group (NCCL on GPUs, gloo on CPUs): a job's process or a `--devices N` rank."""
    import torch
    import torch.distributed as dist

    if gpu:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if gpu else "gloo", init_method=init, rank=rank, world_size=world,
                            timeout=timedelta(seconds=timeout_s))


def leave(framework: Framework) -> None:
    """Leave the runtime (a no-op when it was never joined)."""
    if framework == "jax":
        import jax

        jax.distributed.shutdown()  # type: ignore[no-untyped-call]  # a no-op unless initialize() succeeded
        return
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
