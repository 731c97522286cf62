"""COMET_API_KEY never reaches stdout, stderr, records, logs or the offline archive.

comet_ml's OfflineExperiment runs without a network: the tracking code path is the real one.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from jax_benchmarks.tracking import BadSecret, KEY_HIDDEN, api_key_problem, hide_in_logs, start_tracking
from tests.mnist.fixtures import tiny_raw, write_idx

REPO = Path(__file__).resolve().parents[1]
WELL_SHAPED = "Q7xk2PLmN9vR4sT8wY3zA6bC1"


@pytest.mark.parametrize(
    ("key", "said"),
    [("abcdefgh\nijklmnop", "contains a line break"), ("abcd efgh ijkl", "contains white space"),
     ("short", "is 5 characters long"), ("abcdefgh;rmrf", "characters other than letters")],
)
def test_a_key_of_the_wrong_shape_is_described_never_shown(key: str, said: str) -> None:
    problem = api_key_problem(key)
    assert problem is not None and said in problem
    assert all(part not in problem for part in key.split() if len(part) >= 4)
    assert api_key_problem(WELL_SHAPED) is None


def test_tracking_refuses_a_rejected_key_before_comet_sees_it(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMET_API_KEY", "sekritKEY123\nmore")
    with pytest.raises(BadSecret) as caught:
        start_tracking("offline", name="t", log=lambda _: None, directory=tmp_path)
    assert caught.value.exit_code == 2
    assert "sekrit" not in caught.value.format_message() and "\n" not in caught.value.format_message()


def test_comets_logs_hide_the_key_in_messages_and_tracebacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COMET_API_KEY", WELL_SHAPED)
    import comet_ml  # noqa: F401  # its handlers exist once it is imported

    kept: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(logging.Formatter().format(record))

    keep = Keep()
    logging.getLogger("comet_ml").addHandler(keep)
    tracker = start_tracking("offline", name="t", log=lambda _: None, directory=tmp_path)
    logger = logging.getLogger("comet_ml.connection")  # a child of comet's logger, as comet's modules log
    logger.error("Invalid header value: %r", WELL_SHAPED)
    try:
        raise ValueError(f"bad key {WELL_SHAPED}")
    except ValueError:
        logger.exception("request failed")
    tracker.log_metrics({"loss": 1.0})
    archive = tracker.end()
    logging.getLogger("comet_ml").removeHandler(keep)
    out, err = capfd.readouterr()
    assert WELL_SHAPED not in out + err
    # What any handler receives: both messages and the traceback, with the key replaced.
    mine = [text for text in kept if text.startswith(("Invalid header value", "request failed"))]
    assert len(mine) == 2 and KEY_HIDDEN in mine[0] and f"ValueError: bad key {KEY_HIDDEN}" in mine[1]
    assert all(WELL_SHAPED not in text for text in kept)
    assert archive is not None
    with zipfile.ZipFile(archive) as zf:
        assert all(WELL_SHAPED.encode() not in zf.read(name) for name in zf.namelist())


def test_every_key_is_hidden_in_tracebacks_whatever_factory_sits_between(tmp_path: Path) -> None:
    # A run with one key, a library's own record factory installed after it, then a run with another
    # key in the same process: the inner factory has formatted the traceback already (hiding its key
    # only); the outer one must hide its key in that text too.
    original = logging.getLogRecordFactory()
    kept: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            kept.append(logging.Formatter().format(record))

    logger = logging.getLogger("tests.secrets.factories")
    keep = Keep()
    logger.addHandler(keep)
    try:
        hide_in_logs("FirstKey0123456789")
        inner = logging.getLogRecordFactory()
        logging.setLogRecordFactory(lambda *args, **kwargs: inner(*args, **kwargs))  # another library's
        hide_in_logs(WELL_SHAPED)
        hide_in_logs(WELL_SHAPED)  # a second run with the same key adds nothing
        try:
            raise ValueError(f"bad keys FirstKey0123456789 and {WELL_SHAPED}")
        except ValueError:
            logger.exception("failed with %s", WELL_SHAPED)
    finally:
        logging.setLogRecordFactory(original)
        logger.removeHandler(keep)
    [text] = kept
    assert text.startswith(f"failed with {KEY_HIDDEN}\nTraceback")
    assert text.endswith(f"ValueError: bad keys {KEY_HIDDEN} and {KEY_HIDDEN}")


COMETS_OWN_HANDLER = """
import logging, sys
from pathlib import Path
from jax_benchmarks.tracking import start_tracking
tracker = start_tracking("offline", name="t", log=lambda _: None, directory=Path(sys.argv[1]))
logger = logging.getLogger("comet_ml.connection")
logger.error("Invalid header value: %r", sys.argv[2])
try:
    raise ValueError("bad key " + sys.argv[2])
except ValueError:
    logger.exception("request failed")
tracker.end()
"""


def test_comets_own_console_handler_writes_the_hidden_key(tmp_path: Path) -> None:
    # A fresh process: comet_ml's console handler binds the stderr that exists when comet_ml is first
    # imported, which inside one pytest process is whatever capture an earlier test had installed.
    result = subprocess.run(
        [sys.executable, "-c", COMETS_OWN_HANDLER, str(tmp_path), WELL_SHAPED],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COMET_API_KEY": WELL_SHAPED, "PYTHONPATH": str(REPO / "src")},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert WELL_SHAPED not in result.stdout + result.stderr
    assert f"Invalid header value: '{KEY_HIDDEN}'" in result.stdout + result.stderr


# e2e: a fresh interpreter that trains; twin: test_a_rejected_key_exits_2_with_one_line_in_process
# A key with a line break, and a run that reaches the comet set-up: its line, and the key in no output and no file.
REJECTED_KEY = "sekritKEY123\nmoreSEKRIT"
REJECTED_KEY_RUN = ("mnist", "pytorch", "--device", "cpu", "--data-source", "local", "--dry-run", "--train-batch-size",
                    "16", "--test-batch-size", "32", "--repeats", "1", "--num-epochs", "1", "--comet", "online",
                    "--results", "r.jsonl")


def assert_the_rejected_key_is_one_line_and_nowhere(stdout: str, stderr: str, folder: Path) -> None:
    errors = [line for line in stderr.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: COMET_API_KEY contains a line break; it is not a comet.ml API key (its value is not "
                      "shown); fix or unset it"]
    assert "Traceback" not in stdout + stderr
    written = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())
    for part in REJECTED_KEY.split("\n"):
        assert part not in stdout + stderr
        assert part.encode() not in written  # records, plots, logs, archives


@pytest.mark.e2e
def test_a_run_with_a_rejected_key_exits_2_with_one_line_and_keeps_its_records(tmp_path: Path) -> None:
    write_idx(tmp_path / "data" / "mnist", tiny_raw(96, 40))
    result = subprocess.run(
        [sys.executable, str(REPO / "main.py"), *REJECTED_KEY_RUN],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**{k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}, "COMET_API_KEY": REJECTED_KEY},
    )
    assert result.returncode == 2, result.stderr[-3000:]
    assert_the_rejected_key_is_one_line_and_nowhere(result.stdout, result.stderr, tmp_path)


def test_a_rejected_key_exits_2_with_one_line_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run above, in this process (CliRunner): the same line, and the key in no output and no file."""
    from tests.conftest import invoke

    write_idx(tmp_path / "data" / "mnist", tiny_raw(96, 40))
    monkeypatch.setenv("COMET_API_KEY", REJECTED_KEY)
    result = invoke(*REJECTED_KEY_RUN)
    assert result.exit_code == 2, result.output[-3000:]
    assert_the_rejected_key_is_one_line_and_nowhere(result.stdout, result.stderr, tmp_path)
