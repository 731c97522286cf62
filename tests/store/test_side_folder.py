"""One folder beside the store: a verdict's page and round log, a calibration's log and --profile's traces all go
to `side_folder` (the store file's folder; the working directory for a PostgreSQL store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.measure.profile import ProfilePass, profiles_root
from jax_benchmarks.store.location import ResultsLocation, side_folder
from jax_benchmarks.verdict.cli import default_page, round_log

DATABASE = ResultsLocation("postgresql://someone@127.0.0.1:1/results")


def test_a_store_files_folder_is_beside_it(tmp_path: Path) -> None:
    store = ResultsLocation(str(tmp_path / "runs" / "r.sqlite"))
    assert side_folder(store) == tmp_path / "runs"
    assert default_page(store, "ID", "html") == tmp_path / "runs" / "verdict-ID.html"
    assert round_log(store, "ID") == tmp_path / "runs" / "verdict-ID.log"
    assert profiles_root(store) == tmp_path / "runs" / "profiles"


def test_a_database_has_the_working_directory_for_every_command(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert side_folder(DATABASE) == tmp_path
    # The verdict's page and log went to the default store's folder, the profiles to the working directory.
    assert default_page(DATABASE, "ID", "markdown") == tmp_path / "verdict-ID.md"
    assert round_log(DATABASE, "ID") == tmp_path / "verdict-ID.log"
    assert profiles_root(DATABASE) == tmp_path / "profiles"
    profile = ProfilePass.of(DATABASE, "ID", lambda _backend: None, lambda _line: None)
    assert profile.folder == tmp_path / "profiles" / "ID" and profile.relative_to == tmp_path
