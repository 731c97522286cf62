"""Multi-process jobs: options, launchers' environments, the local supervisor, and real 2-process runs.

The real runs start fresh interpreters (JAX's runtime is joined once per process) on tiny IDX files
(tests/mnist/fixtures.py) in the test's own folder, on the CPU on any machine (`--device cpu`): two
processes share one machine's cores over gloo, where on a one-GPU machine NCCL would refuse two ranks on
the same GPU.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.hardware.network import free_port
from jax_benchmarks.settings import command_line
from jax_benchmarks.mnist import cluster
from jax_benchmarks.mnist.settings import FlaxSettings
from jax_benchmarks.training.trainer import devices_variant
from tests.conftest import invoke, read_jsonl
from tests.mnist.fixtures import tiny_raw, write_idx

REPO = Path(__file__).resolve().parents[2]
TINY = ("--device", "cpu", "--data-source", "local", "--dry-run", "--train-batch-size", "16",
        "--test-batch-size", "32", "--repeats", "1", "--comet", "off")
LOAD, STEP = "load_mnist_28x28_uint8", "train_step_16x28x28_float32"
EPOCH, VALIDATION = "train_epoch_16x28x28_float32", "validation_32x28x28_float32"


# ---------------------------------------------------------------- options ---

@pytest.mark.parametrize(
    ("args", "option", "allowed"),
    [
        (("--num-processes", "2", "--process-id", "2"), "--process-id", "allowed: 0–1"),
        (("--num-processes", "2", "--coordinator", "nohost"), "--coordinator", "HOST:PORT"),
        (("--launch-local", "2", "--num-processes", "2"), "--launch-local", "leave out --num-processes"),
        (("--num-processes", "2", "--train-batch-size", "15"), "--train-batch-size", "multiple of 2"),
        (("--run-id", "a b"), "--run-id", "letters, digits"),
        (("--dist-timeout", "1"), "--dist-timeout", "5 ≤ value ≤ 3600"),
    ],
)
def test_bad_process_options_exit_2_naming_the_option(args: tuple[str, ...], option: str, allowed: str) -> None:
    result = invoke("mnist", "pytorch", *args)
    assert result.exit_code == 2, result.output
    assert option in result.stderr and allowed in result.stderr
    assert "Traceback" not in result.output


def test_all_refuses_a_multi_process_job() -> None:
    result = invoke("mnist", "all", "--num-processes", "2", "--coordinator", "127.0.0.1:1", "--train-batch-size", "16")
    assert result.exit_code == 2
    assert "one backend" in result.stderr


def test_torchrun_environment_fills_the_process_options() -> None:
    env = {"WORLD_SIZE": "4", "RANK": "3", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500"}
    torch_values = cluster.from_launcher({"num_processes": 1}, env, "torch")
    assert (torch_values["num_processes"], torch_values["process_id"], torch_values["local_rank"]) == (4, 3, 1)
    assert torch_values["coordinator"] is None  # PyTorch joins torchrun's own store through env://
    assert cluster.from_launcher({"num_processes": 1}, env, "jax")["coordinator"] == "10.0.0.1:29501"
    # Options on the command line win over the launcher's environment.
    explicit = {"num_processes": 2, "process_id": 1, "coordinator": "h:1"}
    assert cluster.from_launcher(explicit, env, "torch") == explicit


def test_slurm_environment_fills_the_process_options_and_jax_finds_its_coordinator() -> None:
    env = {"SLURM_NTASKS": "8", "SLURM_PROCID": "5", "SLURM_LOCALID": "1"}
    values = cluster.from_launcher({"num_processes": 1, "coordinator": None}, env, "jax")
    placed = (values["num_processes"], values["process_id"], values["local_rank"], values["coordinator"])
    assert placed == (8, 5, 1, None)
    assert cluster.from_launcher({"num_processes": 1}, {"SLURM_NTASKS": "1", "SLURM_PROCID": "0"}, "jax") == {
        "num_processes": 1
    }


def test_launched_processes_get_the_same_options_and_their_place_in_the_job() -> None:
    launching = FlaxSettings.model_validate({"num_epochs": 3, "dry_run": True, "comet": "auto", "launch_local": 2,
                                             "optimizer": "sgd"})
    base = command_line(launching, skip=("launch_local", "run_id"))
    assert base == ["--dry-run", "--epochs", "3", "--optimizer", "sgd"]  # defaults left out
    commands = cluster.process_commands(["main.py", *base], 2, "run-1", 4321)
    assert commands[1][-10:] == ["--num-processes", "2", "--process-id", "1", "--local-rank", "1",
                                 "--coordinator", "127.0.0.1:4321", "--run-id", "run-1"]
    settings = FlaxSettings.model_validate(
        {"num_epochs": 3, "dry_run": True, "optimizer": "sgd", "num_processes": 2, "process_id": 1,
         "local_rank": 1, "coordinator": "127.0.0.1:4321", "run_id": "run-1"}
    )
    assert settings.multi_process and not settings.lead


def test_process_columns_never_overwrite_process_0s() -> None:
    assert devices_variant("processes", 1, 2, 0) == "2 processes"
    assert devices_variant("devices", 1, 2, 1) == "2 processes · process 1"
    assert devices_variant("devices", 2, 2, 0) == "2 processes × 2 devices"
    assert devices_variant("devices", 1) is None
    assert (devices_variant("devices", 2), devices_variant("processes", 2)) == ("2 devices", "2 processes")


# -------------------------------------------------------------- supervisor ---

def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_failing_process_stops_the_others_at_once_with_one_line() -> None:
    start = time.monotonic()
    result = cluster.supervise(
        [python("import time; time.sleep(60)"),
         python("import sys, time; time.sleep(0.5); print('Error: out of luck', file=sys.stderr); sys.exit(3)")],
        os.environ,
    )
    assert not result.ok
    assert result.message == "process 1 of 2 exited with code 3; stopped process(es) 0 (Error: out of luck)"
    assert time.monotonic() - start < 20  # the sleeper did not run its 60 s


def test_a_killed_process_is_named_with_its_signal() -> None:
    result = cluster.supervise(
        [python("import os, signal; os.kill(os.getpid(), signal.SIGKILL)"), python("import time; time.sleep(60)")],
        os.environ,
    )
    assert not result.ok
    assert result.message.startswith("process 0 of 2 was killed by SIGKILL; stopped process(es) 1")


def test_a_job_whose_processes_all_succeed_is_ok() -> None:
    assert cluster.supervise([python("pass"), python("pass")], os.environ).ok


def test_the_launcher_environment_shares_the_cores_like_torchrun() -> None:
    env = cluster.child_environment({"PATH": "/bin"}, 2, 2)
    assert env["OMP_NUM_THREADS"] == "1"
    assert cluster.child_environment({"OMP_NUM_THREADS": "3"}, 2, 2)["OMP_NUM_THREADS"] == "3"


# --------------------------------------------------------------- real runs ---

def start_main_py(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """`python main.py ARGS` in the test's folder (where the tiny IDX files are)."""
    return subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={k: v for k, v in os.environ.items() if k != "XLA_FLAGS"},
    )


def finish(proc: subprocess.Popen[str], timeout: float = 420) -> subprocess.CompletedProcess[str]:
    stdout, stderr = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def main_py(tmp_path: Path, *args: str, timeout: float = 420) -> subprocess.CompletedProcess[str]:
    return finish(start_main_py(tmp_path, *args), timeout)


@pytest.fixture
def tiny_idx(tmp_path: Path) -> Path:
    write_idx(tmp_path / "data" / "mnist", tiny_raw(96, 40))
    return tmp_path


def by_process(records: list[dict[str, Any]], case: str) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        if r["case"] == case:
            out.setdefault(r["params"]["process_index"], []).append(r)
    return out


def check_one_job_record(records: list[dict[str, Any]], stdout: str) -> str:
    """One run id; every process's figures with its index and the world size; run-level records once;
    only process 0 printed (one header, one table)."""
    run_ids = {r["run_id"] for r in records}
    assert len(run_ids) == 1
    run_id = run_ids.pop()
    assert all(r["params"]["world_size"] == 2 for r in records)
    for case in (LOAD, "matmul_peak_2048x2048_float32", STEP):
        assert sorted(by_process(records, case)) == [0, 1], case
    assert sorted(by_process(records, VALIDATION)) == [0]  # the same replicated model: recorded once
    variants = {r["params"]["process_index"]: r["variant"] for r in records}
    assert variants == {0: "2 processes", 1: "2 processes · process 1"}
    assert stdout.count(f"run {run_id} · device") == 1
    assert stdout.count("records appended") == 1
    return run_id


def epoch_losses(records: list[dict[str, Any]], process: int = 0) -> list[float]:
    return [r["metrics"]["loss"] for r in by_process(records, EPOCH)[process]]


def validation_losses(records: list[dict[str, Any]]) -> list[float]:
    return [r["metrics"]["loss"] for r in by_process(records, VALIDATION)[0]]


@pytest.mark.e2e  # two processes and a reference run that train
def test_flax_two_processes_reach_the_one_process_loss_curve(tiny_idx: Path) -> None:
    # Both at once (the reference run's timings do not matter here, its losses do).
    reference = start_main_py(tiny_idx, "mnist", "flax", *TINY, "--num-epochs", "2", "--results", "one.jsonl")
    job = main_py(tiny_idx, "mnist", "flax", "--launch-local", "2", *TINY, "--num-epochs", "2",
                  "--dist-timeout", "120", "--results", "two.jsonl")
    single = finish(reference)
    assert single.returncode == 0, single.stderr[-3000:]
    assert job.returncode == 0, job.stderr[-3000:] + job.stdout[-3000:]
    one, two = read_jsonl(tiny_idx / "one.jsonl"), read_jsonl(tiny_idx / "two.jsonl")
    run_id = check_one_job_record(two, job.stdout)
    assert f"launching 2 local processes of `mnist flax` (run {run_id})" in job.stdout
    assert "2 processes (jax.distributed), 2 devices in one mesh; this is process 0" in job.stdout
    assert len(epoch_losses(two)) == 2
    # Same seed, same global batches, same dropout masks (one SPMD program): float rounding only.
    assert epoch_losses(two) == pytest.approx(epoch_losses(one), rel=1e-4)
    assert epoch_losses(two, process=1) == pytest.approx(epoch_losses(two), rel=1e-6)
    assert validation_losses(two) == pytest.approx(validation_losses(one), rel=1e-4)
    assert (tiny_idx / "data" / "checkpoints" / "flax_mnist").is_dir()
    # The job saved under a name of its own (the reference run saved beside it, at once): no temporary left.
    assert not [p.name for p in (tiny_idx / "data" / "checkpoints").iterdir() if "tmp" in p.name]


# Dropout draws its masks from each process's own generator in PyTorch, so the probe switches it off
# to compare everything else (the global batches, DDP's gradient average, Adam, the schedule).
TORCH_PROBE = """
import json, sys
from jax_benchmarks.training import model_spec
model_spec.DROPOUT_CONV = model_spec.DROPOUT_DENSE = 0.0
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.mnist.distributed import join_torch, leave
from jax_benchmarks.mnist.pytorch_backend import DDPTrainer
from jax_benchmarks.training.pytorch_trainer import TorchTrainer
from jax_benchmarks.mnist.settings import MnistSettings
from tests.mnist.conftest import synthetic_data

count, process, port = map(int, sys.argv[1:])
settings = MnistSettings.model_validate({
    "device": "cpu", "num_processes": count, "process_id": process, "coordinator": f"127.0.0.1:{port}",
    "dry_run": True, "num_epochs": 2, "train_batch_size": 16, "comet": "off", "dist_timeout": 120})
if count == 1:
    trainer = TorchTrainer(settings, synthetic_data(), RNG_Provider(0))
else:
    join_torch(settings)
    trainer = DDPTrainer(settings, synthetic_data(), RNG_Provider(0), process, count)
losses = []
for epoch in range(2):
    losses += trainer.read_epoch(trainer.train_epoch(3, lambda: None)).step_losses
leave("torch")
print("RESULT", json.dumps(losses))
"""


@pytest.mark.e2e  # three processes that train
def test_pytorch_two_processes_reach_the_one_process_loss_curve() -> None:
    port = str(free_port())
    procs = [
        subprocess.Popen([sys.executable, "-c", TORCH_PROBE, *args], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for args in (("1", "0", port), ("2", "0", port), ("2", "1", port))
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), [err[-2000:] for _, err in outputs]
    one, two_0, two_1 = (json.loads(out.split("RESULT", 1)[1]) for out, _ in outputs)
    assert len(one) == 6
    assert two_0 == two_1  # every rank reports the job's (all-reduced) losses
    assert two_0 == pytest.approx(one, rel=1e-4)


@pytest.mark.slow  # the Flax job above checks the same records; this one runs in the slow suite
def test_pytorch_local_job_records_once_and_prints_once(tiny_idx: Path) -> None:
    job = main_py(tiny_idx, "mnist", "pytorch", "--launch-local", "2", *TINY, "--num-epochs", "1",
                  "--dist-timeout", "120", "--results", "two.jsonl")
    assert job.returncode == 0, job.stderr[-3000:] + job.stdout[-3000:]
    records = read_jsonl(tiny_idx / "two.jsonl")
    check_one_job_record(records, job.stdout)
    assert "DistributedDataParallel: 2 processes (gloo), this is process 0" in job.stdout
    assert epoch_losses(records, 1) == epoch_losses(records, 0)
    epoch = by_process(records, EPOCH)[0][0]
    assert epoch["params"]["batch"] == 16 and epoch["metrics"]["images_per_s"] > 0
    assert (tiny_idx / "data" / "checkpoints" / "pytorch_mnist.pt").exists()


# twin: tests/mnist/test_job_failures.py::test_preflight_waits_out_the_timeout_for_a_closed_port
@pytest.mark.parametrize("backend", [pytest.param("flax", marks=pytest.mark.e2e),
                                     pytest.param("pytorch", marks=pytest.mark.slow)])
def test_a_process_whose_peers_never_come_fails_within_the_timeout(tiny_idx: Path, backend: str) -> None:
    start = time.monotonic()
    alone = main_py(tiny_idx, "mnist", backend, "--num-processes", "2", "--process-id", "1", "--coordinator",
                    f"127.0.0.1:{free_port()}", "--dist-timeout", "5", *TINY, "--results", "r.jsonl",
                    timeout=120)
    assert alone.returncode == 1
    errors = [line for line in alone.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "process 1 of 2: nothing accepted a connection at the coordinator" in errors[0], \
        alone.stderr[-2000:]
    assert "within 5 s (--dist-timeout)" in errors[0]
    assert time.monotonic() - start < 90


def pids_of(marker: str, process_id: str) -> list[int]:
    """Processes of this test (their command line names its own results file) with this --process-id."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        if marker in args and "--process-id" in args and args[args.index("--process-id") + 1] == process_id:
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
def test_a_killed_worker_ends_the_job_and_the_records_stay_valid(tiny_idx: Path) -> None:
    results = str(tiny_idx / "killed.jsonl")
    launcher = subprocess.Popen(
        [sys.executable, str(REPO / "main.py"), "mnist", "pytorch", "--launch-local", "2", *TINY,
         "--num-epochs", "500", "--results", results],
        cwd=tiny_idx, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 300
    while not any(r["case"] == EPOCH for r in (read_jsonl(Path(results)) if Path(results).exists() else [])):
        assert launcher.poll() is None and time.monotonic() < deadline, "the job ended before its first epoch"
        time.sleep(0.5)
    (worker,) = pids_of(results, "1")
    os.kill(worker, signal.SIGKILL)
    killed = time.monotonic()
    _, stderr = launcher.communicate(timeout=120)
    assert launcher.returncode == 1
    assert time.monotonic() - killed < 30
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "process 1 of 2 was killed by SIGKILL; stopped process(es) 0" in errors[0]
    assert f"the records written before stay in {results}" in errors[0]
    records = read_jsonl(Path(results))  # every line parses: no torn record
    assert len({r["run_id"] for r in records}) == 1 and any(r["case"] == EPOCH for r in records)
    assert pids_of(results, "0") == []  # process 0 was stopped, not left behind
