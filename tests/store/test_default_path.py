"""One default store for every command (issue 38): a checkout's data/results, else the user data folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.store.location import RESULTS_ENV, default_path, user_data_folder

ROOT = Path(__file__).resolve().parents[2]


def run_main(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python main.py` in a fresh interpreter started in `cwd` (the default store is chosen from it)."""
    return subprocess.run([sys.executable, str(ROOT / "main.py"), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_inside_a_checkout_the_store_is_the_checkouts(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "jax-benchmarks"\n')
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    assert default_path(tmp_path) == Path("data/results/results.sqlite")  # relative, as typed at the root
    assert default_path(tmp_path / "docs" / "deep") == tmp_path / "data/results/results.sqlite"
    assert default_path(ROOT) == Path("data/results/results.sqlite")


def test_outside_a_checkout_the_store_is_in_the_user_data_folder(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "some-other-project"\n')
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    expected = tmp_path / "xdg" / "jax-benchmarks" / "results.sqlite"
    if sys.platform.startswith("linux"):
        assert default_path(tmp_path) == expected
        monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec: only an absolute path counts
        assert user_data_folder() == Path.home() / ".local" / "share" / "jax-benchmarks"
    assert default_path(tmp_path).name == "results.sqlite"
    assert default_path(tmp_path).parent == user_data_folder()


def test_smoke_verdict_and_benchmarks_share_the_default_store(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    for command in (["smoke", "--help"], ["verdict", "--help"], ["xla", "numpy", "--help"]):
        done = run_main(*command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        shown = "".join(done.stdout.split())  # help text wraps (the path has no spaces)
        assert str(tmp_path / "user-data" / "jax-benchmarks" / "results.sqlite") in shown, done.stdout
    done = run_main("xla", "numpy", "--quick", "--min-time", "0.01", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = run_main("report", "--group", "xla", "--format", "jsonl", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert {json.loads(line)["case"] for line in report.stdout.splitlines()} == \
        {record["case"] for record in json.loads(done.stdout)}
