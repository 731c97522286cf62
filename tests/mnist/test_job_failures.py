"""Multi-process jobs that cannot form end within --dist-timeout (plus start-up) with one line.

Each case runs real processes against local ports on this machine: a server that accepts connections and
never answers, a port another program holds, a closed port, a host that does not resolve, a peer that never
comes, SIGTERM while the runtime's C++ code waits, a signal to the --launch-local supervisor, and a local
job's --json stdout. Every one must end with a non-zero exit, one line on stderr naming the cause, no native
stack, no core file and no process of the test left behind.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jax_benchmarks.hardware.network import free_port
from jax_benchmarks.mnist import cluster, distributed
from jax_benchmarks.mnist.distributed import answers_tcpstore_ping, port_is_free, speaks_http2
from tests.conftest import AS_IN_A_TERMINAL, invoke, read_jsonl
from tests.mnist.fixtures import tiny_raw, write_idx

REPO = Path(__file__).resolve().parents[2]
TINY = ("--device", "cpu", "--data-source", "local", "--dry-run", "--train-batch-size", "16",
        "--test-batch-size", "32", "--repeats", "1", "--comet", "off")
TIMEOUT = 10
# Interpreter start, imports (torch or JAX) on a busy machine and the exit: what comes on top of the timeout.
START_S = 12
NATIVE_SIGNS = ("Traceback", "@     0x", "Check failure", "Segmentation fault", "core dumped", "[Gloo]")


@pytest.fixture
def silent_server() -> Iterator[str]:
    """HOST:PORT of a server that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


@pytest.fixture
def tiny_idx(tmp_path: Path) -> Path:
    write_idx(tmp_path / "data" / "mnist", tiny_raw(96, 40))
    return tmp_path


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *AS_IN_A_TERMINAL, str(REPO / "main.py"), *args, "--results", str(tmp_path / "r.jsonl")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={k: v for k, v in os.environ.items() if k != "XLA_FLAGS"},
    )


def processes_of(tmp_path: Path) -> list[int]:
    """Live processes whose command line names this test's folder (its results file)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace")
            state = (entry / "stat").read_text().split(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        if str(tmp_path) in args and state != "Z":
            pids.append(int(entry.name))
    return pids


def failed_alone(tmp_path: Path, backend: str, process_id: int, coordinator: str) -> tuple[str, float]:
    """Run one process of a 2-process job that cannot form; check the clean failure; its line and seconds."""
    began = time.monotonic()
    proc = start(tmp_path, "mnist", backend, "--num-processes", "2", "--process-id", str(process_id),
                 "--coordinator", coordinator, "--dist-timeout", str(TIMEOUT), *TINY)
    _, stderr = proc.communicate(timeout=120)
    elapsed = time.monotonic() - began
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("Error: "), stderr[-3000:]
    assert not any(sign in stderr for sign in NATIVE_SIGNS)
    assert elapsed < TIMEOUT + START_S
    assert not list(tmp_path.glob("core*"))
    assert processes_of(tmp_path) == []
    return lines[0], elapsed


# --------------------------------------------------------------- preflight ---

def test_a_port_with_a_listener_is_not_free(silent_server: str) -> None:
    port = int(silent_server.rsplit(":", 1)[1])
    assert not port_is_free(port)
    assert port_is_free(free_port())


def test_a_silent_server_answers_no_protocol_within_the_deadline(silent_server: str) -> None:
    host, port = silent_server.rsplit(":", 1)
    began = time.monotonic()
    assert not speaks_http2(host, int(port), 1.0)
    assert not answers_tcpstore_ping(host, int(port), 1.0)
    assert time.monotonic() - began < 4


def test_pytorchs_own_store_answers_the_ping() -> None:
    from datetime import timedelta

    import torch.distributed as dist

    port = free_port()
    store = dist.TCPStore(  # type: ignore[attr-defined]  # exported by torch.distributed at run time
        "127.0.0.1", port, 2, True, timedelta(seconds=10), wait_for_workers=False)
    assert answers_tcpstore_ping("127.0.0.1", port, 5.0)
    assert not speaks_http2("127.0.0.1", port, 2.0)
    del store


# ----------------------------------------------- the same failures, in process ---
# Fast twins of the real-process cases below (those run with -m e2e): the preflight and the join's watchdog
# that produce each line, with a 1 s --dist-timeout (a Place is not validated: the CLI's minimum is 5 s).

@pytest.mark.parametrize(("framework", "runtime"), [("torch", "PyTorch TCP store"),
                                                     ("jax", "JAX coordination service (gRPC)")])
def test_preflight_names_a_coordinator_that_accepts_and_never_answers(silent_server: str,
                                                                     framework: distributed.Framework,
                                                                     runtime: str) -> None:
    began = time.monotonic()
    line = distributed.preflight(distributed.Place(framework, 1, 2, silent_server, 1))
    assert line is not None and f"process 1 of 2: the program at {silent_server} accepts connections but did not " \
                                 f"answer as a {runtime}" in line
    assert time.monotonic() - began < 1 + 3


def test_preflight_refuses_process_0_a_coordinator_port_that_is_taken(silent_server: str) -> None:
    port = silent_server.rsplit(":", 1)[1]
    line = distributed.preflight(distributed.Place("jax", 0, 2, silent_server, 1))
    assert line == (f"process 0 of 2: the coordinator's port {port} (--coordinator {silent_server}) is in use by "
                    "another program on this host; choose a free port")


def test_preflight_waits_out_the_timeout_for_a_closed_port() -> None:
    address = f"127.0.0.1:{free_port()}"
    began = time.monotonic()
    line = distributed.preflight(distributed.Place("torch", 1, 2, address, 1))
    assert line is not None and f"process 1 of 2: nothing accepted a connection at the coordinator {address} " \
                                 "within 1 s" in line
    assert 1 <= time.monotonic() - began < 1 + 3


def test_preflight_names_a_host_that_does_not_resolve() -> None:
    line = distributed.preflight(distributed.Place("torch", 1, 2, "no-such-host.invalid:29500", 1))
    assert line is not None and "process 1 of 2: the coordinator's host 'no-such-host.invalid' (--coordinator " \
                                "no-such-host.invalid:29500) does not resolve" in line


# The join's watchdog in a small fresh process (it ends its process with os._exit): a join that never returns.
# A runtime's join waits in C++ code, where Python's signal handlers never run: here they do nothing.
WAITING_JOIN = """
import signal, sys, time
from jax_benchmarks.mnist.distributed import Place, watchdog
for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, lambda *_: None)
with watchdog(Place("torch", 0, 2, sys.argv[1], 1), float(sys.argv[2])):
    print("joining", flush=True)
    time.sleep(60)
"""


def waiting_join(tmp_path: Path, address: str, budget_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, *AS_IN_A_TERMINAL, "-c", WAITING_JOIN, address, str(budget_s),
                             str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO / "src")})


def test_the_watchdog_ends_a_join_that_outlives_the_timeout_with_one_line(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    proc = waiting_join(tmp_path, address, 1.0)
    assert proc.stdout is not None and proc.stdout.readline() == "joining\n"
    began = time.monotonic()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr[-3000:]
    assert stderr.splitlines() == [f"Error: process 0 of 2: the job did not form within 1 s (--dist-timeout): "
                                   f"process 1 did not join the coordinator at {address} (started with the same "
                                   "--coordinator?)"]
    assert time.monotonic() - began < 1 + 3
    assert processes_of(tmp_path) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_watchdog_waits_ends_the_join_at_once(tmp_path: Path, signum: int) -> None:
    proc = waiting_join(tmp_path, f"127.0.0.1:{free_port()}", 120.0)
    assert proc.stdout is not None and proc.stdout.readline() == "joining\n"
    sent = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 5
    assert proc.returncode == 128 + signum
    assert stderr.splitlines() == ["Interrupted: process 0 of 2 was stopped while joining the job; no record was "
                                   "written."]
    assert processes_of(tmp_path) == []


def test_an_interrupted_local_job_says_what_its_run_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's line on Ctrl-C / SIGTERM (the supervisor re-raises it once the processes are stopped)."""
    def interrupted_job(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cluster, "supervise", interrupted_job)
    results = tmp_path / "r.jsonl"
    result = invoke("mnist", "pytorch", "--launch-local", "2", *TINY, "--run-id", "run-1", "--results", str(results))
    assert result.exit_code == 128 + signal.SIGINT, result.output
    assert result.stderr.splitlines()[-1] == (f"Interrupted: the job's 2 processes were stopped; 0 records of run "
                                              f"run-1 are saved in {results}")


# ------------------------------------------------------------ real processes ---

@pytest.mark.e2e
@pytest.mark.parametrize("backend", ["pytorch", "flax"])
def test_a_coordinator_that_accepts_and_never_answers(tmp_path: Path, silent_server: str, backend: str) -> None:
    line, _ = failed_alone(tmp_path, backend, 1, silent_server)
    runtime = "PyTorch TCP store" if backend == "pytorch" else "JAX coordination service"
    assert f"process 1 of 2: the program at {silent_server} accepts connections but did not answer as a {runtime}" \
           in line


@pytest.mark.e2e
def test_a_flax_process_0_whose_coordinator_port_is_taken(tmp_path: Path, silent_server: str) -> None:
    line, elapsed = failed_alone(tmp_path, "flax", 0, silent_server)
    port = silent_server.rsplit(":", 1)[1]
    assert f"process 0 of 2: the coordinator's port {port} (--coordinator {silent_server}) is in use" in line
    assert elapsed < TIMEOUT  # refused before any wait


@pytest.mark.parametrize("backend", [pytest.param("flax", marks=pytest.mark.e2e),
                                     pytest.param("pytorch", marks=pytest.mark.slow)])
def test_a_process_0_whose_peer_never_comes(tmp_path: Path, backend: str) -> None:
    address = f"127.0.0.1:{free_port()}"
    line, elapsed = failed_alone(tmp_path, backend, 0, address)
    assert f"process 0 of 2: the job did not form within {TIMEOUT} s (--dist-timeout): process 1 did not join " \
           f"the coordinator at {address}" in line
    assert elapsed >= TIMEOUT


@pytest.mark.e2e
def test_a_pytorch_process_to_a_closed_port(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    line, elapsed = failed_alone(tmp_path, "pytorch", 1, address)
    assert f"process 1 of 2: nothing accepted a connection at the coordinator {address} within {TIMEOUT} s" in line
    assert elapsed >= TIMEOUT


@pytest.mark.e2e
def test_a_pytorch_process_to_a_host_that_does_not_resolve(tmp_path: Path) -> None:
    line, elapsed = failed_alone(tmp_path, "pytorch", 1, "no-such-host.invalid:29500")
    assert "the coordinator's host 'no-such-host.invalid' (--coordinator no-such-host.invalid:29500) does not " \
           "resolve" in line
    assert elapsed < TIMEOUT


@pytest.mark.e2e
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_the_runtime_waits_ends_the_process_at_once(tmp_path: Path, signum: int) -> None:
    address = f"127.0.0.1:{free_port()}"
    proc = start(tmp_path, "mnist", "pytorch", "--num-processes", "2", "--process-id", "0", "--coordinator", address,
                 "--dist-timeout", "120", *TINY)
    # Process 0's store listens once the runtime's join has begun: the watchdog runs from then on.
    assert cluster.wait_for_listener(address, 60)
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 5
    assert proc.returncode == 128 + signum
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines == ["Interrupted: process 0 of 2 was stopped while joining the job; no record was written."]
    assert not (tmp_path / "r.jsonl").exists() or read_jsonl(tmp_path / "r.jsonl") == []
    assert processes_of(tmp_path) == []


@pytest.mark.e2e
def test_sigterm_to_the_launcher_says_truly_what_the_job_saved(tiny_idx: Path) -> None:
    results = tiny_idx / "r.jsonl"
    launcher = start(tiny_idx, "mnist", "pytorch", "--launch-local", "2", *TINY, "--num-epochs", "500")
    deadline = time.monotonic() + 300
    while not (results.exists() and read_jsonl(results)):
        assert launcher.poll() is None and time.monotonic() < deadline, "the job ended before its first record"
        time.sleep(0.3)
    launcher.send_signal(signal.SIGTERM)
    _, stderr = launcher.communicate(timeout=60)
    assert launcher.returncode == 128 + signal.SIGTERM
    records = read_jsonl(results)
    (run_id,) = {r["run_id"] for r in records}
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1] == (f"Interrupted: the job's 2 processes were stopped; {len(records)} records of run {run_id} "
                         f"are saved in {results}")
    assert "no record was written" not in stderr
    assert processes_of(tiny_idx) == []


@pytest.mark.e2e
def test_a_local_jobs_json_stdout_is_json_alone(tiny_idx: Path) -> None:
    proc = start(tiny_idx, "mnist", "flax", "--launch-local", "2", "--json", *TINY, "--num-epochs", "1",
                 "--dist-timeout", "120")
    stdout, stderr = proc.communicate(timeout=420)
    assert proc.returncode == 0, stderr[-3000:]
    records = json.loads(stdout)  # nothing but the records: the collective library's lines stay off stdout
    assert {r["params"]["process_index"] for r in records} == {0}
    assert len(records) == len([r for r in read_jsonl(tiny_idx / "r.jsonl") if r["params"]["process_index"] == 0])


@pytest.mark.slow  # a two-process Flax training run
def test_a_flax_process_whose_peer_dies_mid_run_ends_with_one_line(tiny_idx: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    results = tiny_idx / "r.jsonl"
    job = [start(tiny_idx, "mnist", "flax", "--num-processes", "2", "--process-id", str(i), "--coordinator", address,
                 "--dist-timeout", str(TIMEOUT), *TINY, "--num-epochs", "500") for i in (0, 1)]
    deadline = time.monotonic() + 300
    while not (results.exists() and any(r["case"].startswith("train_epoch") for r in read_jsonl(results))):
        assert job[0].poll() is None and time.monotonic() < deadline, "the job ended before its first epoch"
        time.sleep(0.3)
    job[1].kill()
    killed = time.monotonic()
    _, stderr = job[0].communicate(timeout=120)
    job[1].communicate()
    assert time.monotonic() - killed < TIMEOUT + 5
    assert job[0].returncode == 1, stderr[-3000:]
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: process 0 of 2 stopped: "), stderr[-3000:]
    assert not any(sign in stderr for sign in NATIVE_SIGNS)
    assert not list(tiny_idx.glob("core*"))
    assert read_jsonl(results)  # every line parses: no torn record
    assert processes_of(tiny_idx) == []
