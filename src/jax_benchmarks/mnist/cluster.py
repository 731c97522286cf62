"""Several processes, one training job: the launchers' environments, `--launch-local` (the options are
`MnistSettings`', `src/jax_benchmarks/mnist/settings.py`).

Framework-free (imported by the CLI before torch or JAX): the runtimes
themselves are joined in `src/jax_benchmarks/mnist/distributed.py`.

- `--num-processes N --process-id I --coordinator HOST:PORT` name this
  process's place in a job explicitly (one command per process, on any host).
- Under `torchrun` the same command reads torchrun's environment (RANK,
  WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); under Slurm's `srun` it
  reads SLURM_NTASKS / SLURM_PROCID / SLURM_LOCALID, and JAX finds its
  coordinator itself. Options given on the command line win.
- `--launch-local N` starts N processes of this same command on this host and
  supervises them: the first process that fails ends the job.
"""

from __future__ import annotations

import re
import socket
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from jax_benchmarks.cli.relaunch import Child, killed_by, start, stop
from jax_benchmarks.store.location import ResultsLocation

POLL_S = 0.2
STOP_GRACE_S = 5.0


# ------------------------------------------------------- launchers' environment ---

def from_launcher(values: dict[str, Any], environ: Mapping[str, str], framework: str) -> dict[str, Any]:
    """Fill the process options from torchrun's or Slurm's environment when the command line left them out.

    torchrun: its rendezvous store already listens on MASTER_PORT, so PyTorch joins it through env://
    (coordinator left empty) and JAX's coordinator takes the next port on MASTER_ADDR."""
    explicit = values.get("num_processes", 1) != 1 or values.get("coordinator") is not None
    if explicit or values.get("launch_local") is not None:
        return values
    if "WORLD_SIZE" in environ and "RANK" in environ:
        filled: dict[str, Any] = {
            "num_processes": int(environ["WORLD_SIZE"]),
            "process_id": int(environ["RANK"]),
            "local_rank": int(environ.get("LOCAL_RANK", "0")),
            "coordinator": None,
        }
        if framework == "jax" and "MASTER_ADDR" in environ and "MASTER_PORT" in environ:
            filled["coordinator"] = f"{environ['MASTER_ADDR']}:{int(environ['MASTER_PORT']) + 1}"
        return {**values, **filled}
    if int(environ.get("SLURM_NTASKS", "1")) > 1 and "SLURM_PROCID" in environ:
        return {
            **values,
            "num_processes": int(environ["SLURM_NTASKS"]),
            "process_id": int(environ["SLURM_PROCID"]),
            "local_rank": int(environ.get("SLURM_LOCALID", "0")),
        }
    return values


# ------------------------------------------------------------ --launch-local ---

def wait_for_listener(address: str, timeout_s: float) -> bool:
    """Whether something accepts TCP connections at HOST:PORT within `timeout_s` (tried every 0.2 s)."""
    host, _, port = address.rpartition(":")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=max(0.1, min(1.0, timeout_s))):
                return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S)


def process_commands(base: Sequence[str], count: int, run_id: str, port: int) -> list[list[str]]:
    """The command line of each of `count` local processes: `base` plus its place in the job."""
    return [
        [*base, "--num-processes", str(count), "--process-id", str(i), "--local-rank", str(i),
         "--coordinator", f"127.0.0.1:{port}", "--run-id", run_id]
        for i in range(count)
    ]


@dataclass(frozen=True)
class JobResult:
    ok: bool
    message: str  # one line: what ended the job


def describe_exit(code: int) -> str:
    signal_name = killed_by(code)
    return f"exited with code {code}" if signal_name is None else f"was killed by {signal_name}"


def last_error_line(log: IO[bytes]) -> str:
    """The last line of a process's stderr that says what went wrong ('Error: ...' first)."""
    log.seek(0)
    lines = [line.strip() for line in log.read().decode(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    # A runtime that aborts (JAX's coordination service) says why in a glog FATAL line: "F1123 07:57:45 ...".
    fatal = [line.split("] ", 1)[-1] for line in lines if re.match(r"F\d{4} ", line)]
    pick = errors[-1] if errors else fatal[-1] if fatal else (lines[-1] if lines else "")
    return pick[:300]


def supervise(commands: Sequence[Sequence[str]], env: Mapping[str, str], cwd: str | None = None) -> JobResult:
    """Run one process per command; the first that fails (or is killed) ends the others at once.

    Process 0 writes to this terminal; the others' output is kept in temporary files, and the failing
    process's last error line goes into the message. A stopped process gets SIGTERM, then SIGKILL."""
    logs = [tempfile.TemporaryFile() for _ in commands]
    children: list[Child] = []
    try:
        for i, (command, log) in enumerate(zip(commands, logs, strict=True)):
            # Each process leads its own process group: a terminal's Ctrl-C reaches the supervisor alone, which
            # stops them, and stopping a group also ends what a process started (a runtime's helpers).
            children.append(start(command, env=env, cwd=cwd, stdout=None if i == 0 else log, stderr=log,
                                  own_group=True))
        while True:
            codes = [child.poll() for child in children]
            failed = [(i, code) for i, code in enumerate(codes) if code not in (None, 0)]
            if failed:
                i, code = failed[0]
                stopped = stop(children, grace_s=STOP_GRACE_S)
                detail = last_error_line(logs[i])
                others = f"; stopped process(es) {', '.join(map(str, stopped))}" if stopped else ""
                return JobResult(
                    False,
                    f"process {i} of {len(children)} {describe_exit(code)}{others}"
                    + (f" ({detail})" if detail else ""),
                )
            if all(code == 0 for code in codes):
                stop(children)  # nothing they started stays behind
                return JobResult(True, f"{len(children)} processes finished")
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        stop(children, grace_s=STOP_GRACE_S)
        raise
    finally:
        for log in logs:
            log.close()


def saved_records(results: ResultsLocation, run_id: str) -> str:
    """What the run has in the results store, said truly: "N records of run X are saved in PLACE"."""
    from jax_benchmarks.store.location import saved_count

    return f"{saved_count(results, run_id)} records of run {run_id} are saved in {results}"


def child_environment(environ: Mapping[str, str], count: int, cores: int) -> dict[str, str]:
    """The processes' environment: like torchrun, one share of the cores per process for OpenMP
    (PyTorch's CPU threads) unless the user set OMP_NUM_THREADS."""
    env = dict(environ)
    env.setdefault("OMP_NUM_THREADS", str(max(1, cores // count)))
    return env


