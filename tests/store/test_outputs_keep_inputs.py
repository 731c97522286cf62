"""An output never destroys an input (issue 47, item 2).

`verdict --output` is refused, before anything is read or measured, where it names a store the verdict reads or
appends to (however the path is written or linked, its SQLite side files), any file holding results data (by
its content, whatever its name, even with --force), or an existing file other than a verdict page (unless
--force). A verdict page written before, or an empty file, is replaced. A plot replaces only a PNG image.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from jax_benchmarks.errors import DataError
from tests.conftest import invoke
from tests.store.test_same_report import fill
from tests.verdict.fixtures import matmul

RECORDS = matmul(numpy_s=0.010, jax_s=0.005)


def digests(folder: Path) -> dict[str, str]:
    """Every file under `folder` (its side files included) and the digest of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def refused(*args: str, words: tuple[str, ...] = ("'--output'",)) -> str:
    result = invoke(*args)
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2, (args, result.output)
    assert len(lines) == 1 and lines[0].startswith("Error:") and "Traceback" not in result.output, result.output
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


@pytest.fixture(params=["jsonl", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return Path(fill(str(tmp_path / f"results.{request.param}"), RECORDS))


def test_verdict_never_writes_its_page_over_a_store_it_reads(store: Path, tmp_path: Path) -> None:
    other = Path(fill(str(tmp_path / "other.jsonl"), RECORDS))
    (tmp_path / "link").symlink_to(store.name)
    os.link(store, tmp_path / "hard-link")
    before = digests(tmp_path)
    for output in (store.name, f"./{store.name}", str(store), "link", "hard-link", f"sub/../{store.name}"):
        for force in ((), ("--force",)):
            refused("verdict", "--from", str(store), "-o", output, *force, words=("'--output'", "never replaces"))
            refused("verdict", "--from", str(other), "--against", str(store), "-o", output, *force)
    assert digests(tmp_path) == before


def test_verdict_never_writes_over_results_data_whatever_its_name(store: Path, tmp_path: Path) -> None:
    other = Path(fill(str(tmp_path / "other.jsonl"), RECORDS))
    disguised = tmp_path / "notes.html"
    shutil.copyfile(store, disguised)  # a store under a page's name
    before = digests(tmp_path)
    for force in ((), ("--force",)):
        line = refused("verdict", "--from", str(other), "-o", str(disguised), "--format", "markdown", *force)
        assert "results data" in line
    assert digests(tmp_path) == before


def test_a_measuring_verdict_refuses_its_store_as_output_before_any_work(tmp_path: Path) -> None:
    existing = Path(fill(str(tmp_path / "r.jsonl"), RECORDS))
    before = digests(tmp_path)
    for results, output in (("new.sqlite", "new.sqlite"), ("new.jsonl", "./new.jsonl"), (str(existing), "r.jsonl"),
                            ("new.sqlite", "new.sqlite-wal"), ("new.sqlite", "new.jsonl")):
        refused("verdict", "--results", results, "-o", output)
    assert digests(tmp_path) == before  # no store, no round log, no page made


def test_a_sqlite_side_file_is_never_an_output(tmp_path: Path) -> None:
    store = Path(fill(str(tmp_path / "r.sqlite"), RECORDS))
    before = digests(tmp_path)
    for side in ("-wal", "-shm", "-journal"):
        line = refused("verdict", "--from", str(store), "-o", f"{store}{side}", "--force")
        assert "never replaces" in line
    other = Path(fill(str(tmp_path / "other.jsonl"), RECORDS))
    refused("verdict", "--from", str(other), "-o", f"{store}-wal", "--force")  # a store it does not read
    assert {name: digest for name, digest in digests(tmp_path).items() if name != other.name} == before


def test_an_existing_file_is_replaced_only_when_it_is_a_verdict_page_or_with_force(tmp_path: Path) -> None:
    store = fill(str(tmp_path / "r.jsonl"), RECORDS)
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n\nnot a page of this program\n")
    report_page = tmp_path / "report.md"
    report = invoke("report", "--results", store, "--format", "markdown")
    assert report.exit_code == 0, report.output
    report_page.write_text(report.stdout)  # another command's output is not this one's
    before = digests(tmp_path)
    for output in (notes, report_page):
        line = refused("verdict", "--from", store, "-o", str(output))
        assert "is not a verdict page; give --force" in line
    assert digests(tmp_path) == before
    page = tmp_path / "page.html"  # a page written before is this command's own: replaced, in either format
    for output_format in ("html", "markdown", "markdown"):
        written = invoke("verdict", "--from", store, "--format", output_format, "-o", str(page))
        assert written.exit_code == 0, written.output
        assert page.read_text().startswith("<!DOCTYPE html>" if output_format == "html" else "## ")
    empty = tmp_path / "empty"
    empty.touch()  # `mktemp` makes one: nothing in it to lose
    written = invoke("verdict", "--from", store, "--format", "markdown", "-o", str(empty))
    assert written.exit_code == 0 and empty.stat().st_size
    forced = invoke("verdict", "--from", store, "--format", "markdown", "-o", str(notes), "--force")
    assert forced.exit_code == 0, forced.output
    assert notes.read_text().startswith("## ")


def test_a_plot_replaces_only_a_png(tmp_path: Path) -> None:
    from jax_benchmarks.cli.plots import new_figure, save_figure

    kept = tmp_path / "kept.png"
    kept.write_text('{"run_id": "not a picture"}\n')
    with pytest.raises(DataError, match="is not a PNG image"):
        save_figure(new_figure(), "kept", tmp_path)
    assert kept.read_text() == '{"run_id": "not a picture"}\n'
    path = save_figure(new_figure(), "drawn", tmp_path)
    assert save_figure(new_figure(), "drawn", tmp_path) == path and path.read_bytes().startswith(b"\x89PNG")
