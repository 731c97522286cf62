"""The results store under hostile conditions: torn lines, binary files, full disks, FIFOs, devices, signals.

Each hostile condition a results file has met has a test here; the suite fails if one comes back.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.store import jsonl as store
from jax_benchmarks.errors import ResultsWriteError
from jax_benchmarks.store.record import SCHEMA_VERSION, Record
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import append_record, check_results_path, read_records
from jax_benchmarks.measure.timing import Measurement
from tests.conftest import AS_IN_A_TERMINAL, invoke, read_jsonl

REPO = Path(__file__).resolve().parents[2]


def _record(run: Run, case: str = "matmul_8x8_float64") -> Record:
    return run.record(backend="numpy", case=case, device="cpu", dtype="float64",
                      measurement=Measurement((0.1, 0.2, 0.3)))


def _xla(results: Path, *extra: str) -> Any:
    return invoke("xla", "numpy", "--matrix-size", "8", "--repeats", "1", "--min-time", "0.01",
                  "--results", str(results), *extra)


# ------------------------------------------------------------ writing ---

def test_one_write_call_on_an_o_append_descriptor_then_fsync(results_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []
    real_open, real_write, real_fsync = os.open, os.write, os.fsync

    fds: set[int] = set()

    def spy_open(path: Any, flags: int, *args: Any) -> int:
        fd = real_open(path, flags, *args)
        if Path(path) == results_path:  # (environment() may open other files, e.g. for git)
            calls.append(("open", flags))
            fds.add(fd)
        return fd

    def spy_write(fd: int, data: bytes) -> int:
        if fd in fds:
            calls.append(("write", data))
        return real_write(fd, data)

    def spy_fsync(fd: int) -> None:
        if fd in fds:
            calls.append(("fsync", fd))
        real_fsync(fd)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    _record(Run("xla", results_path))
    kinds = [kind for kind, _ in calls]
    assert kinds == ["open", "write", "fsync"]
    assert calls[0][1] & os.O_APPEND
    data = calls[1][1]
    assert data.endswith(b"\n") and data.count(b"\n") == 1 and json.loads(data)["case"] == "matmul_8x8_float64"


def test_a_torn_last_line_does_not_swallow_the_next_record(results_path: Path) -> None:
    run = Run("xla", results_path)
    _record(run, "a")
    with results_path.open("a") as fh:
        fh.write('{"run_id": "torn by a crash, no newline')
    _record(run, "b")
    warnings: list[str] = []
    assert [r.case for r in read_records(results_path, warnings.append)] == ["a", "b"]
    assert len(warnings) == 1 and "line(s) 2 " in warnings[0]


def test_an_editor_saved_last_line_without_newline_keeps_both_records(results_path: Path) -> None:
    run = Run("xla", results_path)
    _record(run, "a")
    results_path.write_text(results_path.read_text().rstrip("\n"))  # as some editors save
    _record(run, "b")
    warnings: list[str] = []
    assert [r.case for r in read_records(results_path, warnings.append)] == ["a", "b"]
    assert warnings == []


def test_a_failed_write_leaves_no_torn_line_and_names_the_file(results_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    run = Run("xla", results_path)
    _record(run, "a")
    before = results_path.read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        return real_write(fd, data[: len(data) // 2])  # the disk fills half-way through the line

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(ResultsWriteError) as caught:
        _record(run, "b")
    assert str(results_path) in caught.value.format_message()
    assert results_path.read_bytes() == before  # the half line was truncated away
    assert [r.case for r in run.records] == ["a"]


def test_enospc_ends_the_command_with_one_line_exit_1(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    result = _xla(results_path)
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert errors == [f"Error: cannot write a record to {results_path}: No space left on device; "
                      "nothing of that record was kept"]
    assert "Traceback" not in result.stderr
    assert results_path.read_bytes() == b""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE partial writes are Linux behaviour")
def test_a_real_short_write_at_the_file_size_limit_is_undone(tmp_path: Path) -> None:
    """A real kernel short write (RLIMIT_FSIZE stands in for a full disk) leaves the file as it was."""
    results = tmp_path / "results.jsonl"
    script = f"""
import resource, signal, sys
sys.path.insert(0, {str(REPO)!r})
from pathlib import Path
from jax_benchmarks.errors import ResultsWriteError
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import Measurement
run = Run("xla", Path({str(results)!r}))
run.record(backend="numpy", case="a", device="cpu", measurement=Measurement((0.1,)))
size = Path({str(results)!r}).stat().st_size
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, size + 100))
try:
    run.record(backend="numpy", case="b", device="cpu", measurement=Measurement((0.1,)))
except ResultsWriteError as exc:
    print(exc.format_message())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "cannot write a record to" in out.stdout, out.stderr
    assert [r["case"] for r in read_jsonl(results)] == ["a"]
    assert results.read_bytes().endswith(b"\n")


# ---------------------------------------------------------- preflight ---

def test_binary_results_file_is_refused_before_any_work(results_path: Path) -> None:
    results_path.write_bytes(bytes(range(256)) * 10)
    result = _xla(results_path)
    assert result.exit_code == 2
    assert "'--results'" in result.stderr and "not a JSON-lines results file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""  # nothing ran


def test_latin1_text_is_refused_but_a_cut_multibyte_character_at_the_sniff_edge_is_not(results_path: Path) -> None:
    results_path.write_bytes(b'{"run_id": "caf\xe9"}\n')
    with pytest.raises(ValueError, match="not UTF-8"):
        check_results_path(results_path)
    line = '{"case": "' + "é" * store.SNIFF_BYTES + '"}\n'  # 2-byte characters across both chunk edges
    results_path.write_text(line * 3, encoding="utf-8")
    assert check_results_path(results_path) == results_path


@pytest.mark.parametrize("make", ["fifo", "directory", "dev_full", "dev_null"])
def test_fifo_device_and_directory_are_refused_without_hanging(tmp_path: Path, make: str) -> None:
    path = {"dev_full": Path("/dev/full"), "dev_null": Path("/dev/null")}.get(make, tmp_path / "results")
    if make == "fifo":
        os.mkfifo(path)
    elif make == "directory":
        path.mkdir()
    elif not path.exists():
        pytest.skip(f"{path} does not exist here")
    result = _xla(path)
    assert result.exit_code == 2
    assert "'--results'" in result.stderr and "not a regular file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_fifo_made_after_the_check_makes_append_fail_not_hang(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    os.mkfifo(path)
    record = Record(run_id="r", timestamp="t", group="xla", backend="numpy", case="c", device="cpu")
    with pytest.raises(ResultsWriteError):
        append_record(path, record)  # O_NONBLOCK: ENXIO (no reader) or "not a regular file", never a wait


def test_a_full_file_system_is_refused_up_front(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.statvfs(results_path.parent)
    full = os.statvfs_result((real.f_bsize, real.f_frsize, real.f_blocks, 0, 0, *tuple(real)[5:]))
    monkeypatch.setattr(os, "statvfs", lambda _path: full)
    result = _xla(results_path)
    assert result.exit_code == 2
    assert "no space left" in result.stderr and str(results_path) in result.stderr


def test_read_only_results_folder_is_refused(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    result = _xla(folder / "results.jsonl")
    assert result.exit_code == 2 and "cannot write" in result.stderr


def test_records_without_schema_version_load_as_legacy(results_path: Path) -> None:
    record = Record(run_id="r", timestamp="t", group="xla", backend="numpy", case="c", device="cpu")
    assert record.schema_version == SCHEMA_VERSION == 2
    legacy = record.model_dump()
    del legacy["schema_version"]
    results_path.write_text(json.dumps(legacy) + "\n" + record.model_dump_json() + "\n")
    versions = [r.schema_version for r in read_records(results_path, print)]
    assert versions == [0, 2]


# ---------------------------------------------------------- interrupts ---



def _start(results: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *AS_IN_A_TERMINAL, str(REPO / "main.py"), *args, "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=results.parent,
    )


def _wait_for_records(results: Path, child: subprocess.Popen[str], count: int = 1) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no record within 60 s (exit {child.poll()})")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_and_sigterm_say_what_was_saved(tmp_path: Path, signum: int, code: int) -> None:
    results = tmp_path / "results.jsonl"
    child = _start(results, "xla", "numpy", "--matrix-size", "300", "--repeats", "1000")
    _wait_for_records(results, child)
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == code, stderr
    saved = read_jsonl(results)
    run_id = saved[0]["run_id"]
    last = stderr.strip().splitlines()[-1]
    assert last == f"Interrupted: {len(saved)} records of run {run_id} are saved in {results}"
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert results.read_bytes().endswith(b"\n")


def test_an_interrupt_swallowed_by_a_gc_callback_still_ends_the_run_with_130(tmp_path: Path) -> None:
    """JAX runs Python code in gc callbacks; a KeyboardInterrupt raised there is only printed by Python
    ("Exception ignored in ..."). The run must still stop at its next record, with exit 130."""
    backend = tmp_path / "gc_swallow_backend.py"
    backend.write_text(
        "import gc, os, signal\n"
        "from jax_benchmarks.measure.harness import Case, Suite, Target, Timed\n"
        "def nothing():\n"
        "    return Timed(lambda: None)\n"
        "def interrupt_in_a_gc_callback():\n"
        "    def callback(phase, info):\n"
        "        if phase == 'start':\n"
        "            gc.callbacks.remove(callback)\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "    gc.callbacks.append(callback)\n"
        "    gc.collect()\n"
        "    return nothing()\n"
        "def suites(settings):\n"
        "    return [Suite(Target('fake', 'cpu'), [Case('before', nothing), Case('after', interrupt_in_a_gc_callback),\n"
        "                                          Case('never', nothing)])]\n"
    )
    results = tmp_path / "results.jsonl"
    script = f"""
import sys
sys.path[:0] = [{str(REPO)!r}, {str(tmp_path)!r}]
from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group
from jax_benchmarks.errors import run_cli
from jax_benchmarks.settings import BenchSettings
group = build_group(GroupSpec("xla", "", {{"fake": BackendSpec("gc_swallow_backend", "", BenchSettings)}}))
sys.exit(run_cli(group, ["fake", "--results", {str(results)!r}]))
"""
    out = subprocess.run([sys.executable, *AS_IN_A_TERMINAL, "-c", script], capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert out.returncode == 130, out.stderr
    assert [r["case"] for r in read_jsonl(results)] == ["before", "after"]
    assert out.stderr.strip().splitlines()[-1].startswith("Interrupted: 2 records of run ")


# ------------------------------------------------ index-only reading ---

def test_run_record_lines_start_with_the_fields_the_index_reads(results_path: Path) -> None:
    """The report's fast read relies on Run.record's field order: schema_version, run_id, timestamp,
    group, backend first and env last. Reordering Record's fields must fail here, not slow reports down."""
    _record(Run("xla", results_path))
    line = results_path.read_bytes()
    assert store.INDEX_HEAD.match(line) is not None
    assert line.rfind(store.ENV_KEY) > 0 and line.rstrip().endswith(b"}}")
    assert list(Record.model_fields)[-1] == "env"


def test_index_only_then_complete_equals_a_full_read(results_path: Path) -> None:
    run = Run("xla", results_path)
    for case in ("a", "b", "c"):
        _record(run, case)
    legacy = json.loads(results_path.read_text().splitlines()[0])
    del legacy["schema_version"]
    with results_path.open("a") as fh:
        fh.write(json.dumps(legacy, indent=None) + "\n")  # another layout: parsed in full at once
    full = list(read_records(results_path, print))
    indexed = list(read_records(results_path, print, index_only=True))
    assert [r.case for r in indexed] == ["", "", "", "a"] and all(r.samples_s == [] for r in indexed[:3])
    assert [r.run_id for r in indexed] == [r.run_id for r in full]
    completed = store.complete_records(indexed, print)
    assert [r.model_dump() for r in completed] == [r.model_dump() for r in full]


def test_concurrent_writers_processes_never_mix_lines(results_path: Path) -> None:
    """Four processes append 50 records each at once, with a torn line in the file to start with."""
    results_path.write_text('{"run_id": "torn')
    script = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from pathlib import Path
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import Measurement
run = Run("xla", Path({str(results_path)!r}))
for i in range(50):
    run.record(backend=sys.argv[1], case=f"case_{{i}}", device="cpu", measurement=Measurement((0.1,) * 50))
"""
    children = [subprocess.Popen([sys.executable, "-c", script, f"writer{n}"]) for n in range(4)]
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0, 0]
    warnings: list[str] = []
    records = list(read_records(results_path, warnings.append))
    assert len(records) == 200 and len(warnings) == 1 and "line(s) 1 " in warnings[0]  # only the torn line
    for n in range(4):
        assert [r.case for r in records if r.backend == f"writer{n}"] == [f"case_{i}" for i in range(50)]


def _wait_until_reading(pid: int, path: Path, timeout_s: float = 60.0) -> None:
    """Until process `pid` has `path` open: a fixed sleep raced the interpreter's start on a loaded machine
    (the signal then landed in an import, before the CLI's handlers existed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if any(Path(f"/proc/{pid}/fd/{fd}").resolve() == path.resolve() for fd in os.listdir(f"/proc/{pid}/fd")):
                return
        except OSError:  # a descriptor closed while we looked
            pass
        time.sleep(0.005)
    raise AssertionError(f"process {pid} never opened {path}")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_report_ends_with_one_line(tmp_path: Path, signum: int, code: int) -> None:
    results = tmp_path / "results.jsonl"
    _record(Run("xla", results))
    line = results.read_bytes()
    results.write_bytes(line * 60_000)  # about a second of reading
    child = subprocess.Popen([sys.executable, *AS_IN_A_TERMINAL, str(REPO / "main.py"), "report",
                              "--results", str(results)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    _wait_until_reading(child.pid, results)  # the handlers are in place before `report` opens the file
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == code, stderr
    assert [line for line in stderr.splitlines() if line.strip()] in (
        ["Interrupted: the report was not finished."], ["Interrupted: no record was written."]
    )


def test_a_signal_ignored_at_start_stays_ignored() -> None:
    from jax_benchmarks.errors import handling

    original = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with handling(signal.SIGINT, lambda *_: None):
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        # As in a foreground terminal (the runner itself may have been started with SIGINT ignored).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with handling(signal.SIGINT, lambda *_: None):
            assert signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.default_int_handler)
        assert signal.getsignal(signal.SIGINT) == signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, original)


def test_lines_without_fields_added_later_take_their_defaults(tmp_path: Path) -> None:
    """A line written before a field existed (round_index and rounds came with --rounds) loads with the
    field's default, by the fast path as by pydantic's, and `report` shows it: old files stay readable."""
    path = tmp_path / "older.jsonl"
    run = Run("xla", path, run_id="20250101T000000Z-old000")
    run.record(backend="numpy", case="matmul_8x8_float64", device="cpu", dtype="float64",
               measurement=Measurement((1e-3, 1.1e-3, 0.9e-3)))
    line = json.loads(path.read_text())
    for later in ("round_index", "rounds", "variant", "samples_s", "checks"):
        del line[later]
    path.write_text(json.dumps(line) + "\n")
    (record,) = read_records(path, warn=pytest.fail)
    assert (record.round_index, record.rounds, record.variant, record.samples_s, record.checks) == (
        None, None, None, [], {})
    assert record.median_s == pytest.approx(1e-3)
    result = invoke("report", "--results", str(path), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert "matmul_8x8_float64" in result.stdout and result.stderr == ""


def test_index_only_records_have_every_field_at_its_default(tmp_path: Path) -> None:
    """Before `complete_records` fills them in, index-only records still answer every field of Record."""
    path = tmp_path / "r.jsonl"
    run = Run("xla", path, round_index=0, rounds=3)
    run.record(backend="numpy", case="matmul_8x8_float64", device="cpu", measurement=Measurement((1e-3,)))
    (record,) = read_records(path, warn=pytest.fail, index_only=True)
    assert (record.run_id, record.group, record.backend) == (run.run_id, "xla", "numpy")
    assert set(Record.model_fields) <= set(record.__dict__)
    assert (record.round_index, record.samples_s, record.metrics) == (None, [], {})
