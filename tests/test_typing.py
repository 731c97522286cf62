"""`pytest -m typing`: mypy --strict over main.py and src/ stays clean."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.typing
def test_mypy_strict_is_clean() -> None:
    from mypy import api

    stdout, stderr, status = api.run([
        "--strict", "--config-file", str(REPO / "pyproject.toml"),
        "--cache-dir", str(REPO / ".mypy_cache"), str(REPO / "main.py"), str(REPO / "src"),
    ])
    assert status == 0, stdout + stderr
