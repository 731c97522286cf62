"""tools/headline_table.py: the README's table between the markers becomes the verdict's, nothing else changes."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tests.verdict.fixtures import matmul
from tools import headline_table
from tools.headline_table import END, START, main


def test_the_table_between_the_markers_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The records never change here: the verdict's page is made once (a fresh interpreter, as the tool runs it)
    # and given again to the tool's later calls.
    monkeypatch.setattr(headline_table, "verdict_markdown", functools.cache(headline_table.verdict_markdown))
    results = tmp_path / "r.jsonl"
    results.write_text("".join(r.model_dump_json() + "\n" for r in matmul(numpy_s=0.010, jax_s=0.005)))
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{START}\n| old | table |\n|---|---|\n{END}\nafter\n")
    assert main([str(results), "--readme", str(readme), "--check"]) == 1  # stale: checked, not changed
    assert "| old | table |" in readme.read_text()
    page = tmp_path / "headline.md"
    assert main([str(results), "--readme", str(readme), "--page", str(page)]) == 0
    text = readme.read_text()
    assert text.startswith(f"# title\n\nbefore\n{START}\n| question | answer here | records |\n")
    assert "jax is fastest, 2.00× faster than numpy" in text and "| old | table |" not in text
    assert text.endswith(f"{END}\nafter\n")
    assert "Precision policy" in page.read_text()
    assert main([str(results), "--readme", str(readme), "--check"]) == 0  # now up to date
    assert main([str(results), "--readme", str(readme), "--page", str(page), "--check"]) == 0
    page.write_text(page.read_text() + "edited\n")
    assert main([str(results), "--readme", str(readme), "--page", str(page), "--check"]) == 1  # a stale page


def test_a_readme_without_markers_is_left_alone(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("".join(r.model_dump_json() + "\n" for r in matmul(numpy_s=0.010, jax_s=0.005)))
    readme = tmp_path / "README.md"
    readme.write_text("# title\n")
    assert main([str(results), "--readme", str(readme)]) == 1
    assert readme.read_text() == "# title\n"
