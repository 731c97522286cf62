"""`report --format html`: one self-contained page (parsed here; tests/report/test_browser.py renders it)."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

from jax_benchmarks.report.page import Chart, render_html
from jax_benchmarks.report.rows import build_table
from tests.report.conftest import html_report
from tests.report.fixtures import (
    JIT_RUN, XLA_NEW, XLA_OLD, record, samples, write_results, xla_rounds,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class PageParser(HTMLParser):
    """Collects what the tests look at: tables, images, classes, every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, str | None]] = []
        self.images: list[dict[str, str | None]] = []
        self.urls: list[str] = []
        self.classes: list[str] = []
        self.headings: list[str] = []
        self._in_heading = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "table":
            self.tables.append(attributes)
        if tag == "img":
            self.images.append(attributes)
        for name in ("src", "href"):
            if attributes.get(name):
                self.urls.append(str(attributes[name]))
        self.classes += (attributes.get("class") or "").split()
        self._in_heading = tag == "h2"

    def handle_endtag(self, tag: str) -> None:
        self._in_heading = False

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self.headings.append(data)


def parse(page: str) -> PageParser:
    parser = PageParser()
    parser.feed(page)
    return parser


def test_page_has_environment_tables_and_embedded_charts(results: Path) -> None:
    from PIL import Image

    page = html_report("--results", str(results))
    parsed = parse(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert parsed.headings[0] == "Environment"
    assert [h.split(" · ")[0] for h in parsed.headings[1:]] == ["xla", "jit", "mnist"]
    table_classes = [t.get("class") for t in parsed.tables]
    assert table_classes == ["env", "figures", "figures", "figures"]
    # Every group has a bar chart and a box plot; each image is a real PNG.
    assert len(parsed.images) == 6
    for img in parsed.images:
        src = str(img["src"])
        assert src.startswith("data:image/png;base64,")
        data = base64.b64decode(src.split(",", 1)[1])
        assert data[:8] == PNG_MAGIC
        with Image.open(io.BytesIO(data)) as image:
            assert image.width > 300 and image.height > 200
        assert img.get("alt")
    assert f"xla · run {XLA_NEW}" in page and f"jit · run {JIT_RUN}" in page


def test_page_needs_no_network(results: Path) -> None:
    page = html_report("--results", str(results), "--history")
    parsed = parse(page)
    assert parsed.urls and all(url.startswith("data:") for url in parsed.urls)
    assert "url(" not in page and "@import" not in page and "<script" not in page


def test_noisy_figures_and_fastest_are_marked(results: Path) -> None:
    page = html_report("--results", str(results), "--group", "jit")
    parsed = parse(page)
    # mlp_train jit: samples 1.0/1.5/0.8/1.4 ms (median 1.2 ms, quartiles 0.95 and 1.425 ms), faster than eager.
    assert '<td class="num fastest noisy">1.2 ms ± 475 µs (fastest) ~</td>' in page
    assert parsed.classes.count("noisy") == 2  # that cell and the note under the table
    assert '<span class="noisy">~ noisy: IQR above 10 % of the median</span>' in page
    assert parsed.classes.count("fastest") == 2  # the fastest of each of the two cases


def test_baseline_verdicts_are_shown(results_path: Path) -> None:
    # Two --rounds runs (5 rounds each): the matmul got 2× slower, inverse and sum did not.
    write_results(results_path, xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00")
                  + xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", slowdown={"matmul_100x100_float64": 2.0},
                               seed=1))
    page = html_report("--results", str(results_path), "--group", "xla", "--baseline", XLA_OLD)
    parsed = parse(page)
    assert [t.get("class") for t in parsed.tables] == ["env", "figures", "changes"]
    assert f"change against run {XLA_OLD}" in page
    assert parsed.classes.count("verdict-slower") == 1
    assert parsed.classes.count("verdict-unchanged") == 2


def test_single_round_runs_read_too_few_samples(results: Path) -> None:
    page = html_report("--results", str(results), "--group", "xla", "--baseline", XLA_OLD)
    parsed = parse(page)
    assert parsed.classes.count("verdict-too-few-samples") == 6  # one class per cell, no stray words
    assert "verdict-slower" not in parsed.classes and "verdict-unchanged" not in parsed.classes


def test_environment_differences_are_highlighted() -> None:
    old = record("r1", "2025-01-01T00:00:00+00:00", "xla", "jax", "matmul_10x10_float64", samples(1e-3))
    new = record("r2", "2025-01-02T00:00:00+00:00", "jit", "jax", "selu_10_float32", samples(1e-3))
    new = new.model_copy(update={"env": {**new.env, "jax": "0.11.0"}})
    page = render_html([build_table([old]), build_table([new])], {}, "results.jsonl")
    assert '<td class="differs">0.10.2</td><td class="differs">0.11.0</td>' in page
    assert '<td>2.4.0</td><td>2.4.0</td>' in page  # numpy agrees: not highlighted


def test_text_is_escaped() -> None:
    rec = record("r1", "2025-01-01T00:00:00+00:00", "xla", "jax", "<b>case</b>_float64", samples(1e-3))
    chart = Chart('a "quoted" <chart>', PNG_MAGIC)
    page = render_html([build_table([rec])], {("xla", "r1"): [chart]}, "<file>")
    assert "<b>case</b>" not in page and "&lt;b&gt;case&lt;/b&gt;" in page
    assert "&lt;file&gt;" in page
    assert 'alt="a &quot;quoted&quot; &lt;chart&gt;"' in page


def test_history_sections_in_the_page(results: Path) -> None:
    page = html_report("--results", str(results), "--history")
    parsed = parse(page)
    assert [h for h in parsed.headings if "history" in h] == [
        "xla · history over 2 run(s)", "jit · history over 1 run(s)", "mnist · history over 1 run(s)"]
    assert [t.get("class") for t in parsed.tables].count("history") == 3
    assert len(parsed.images) == 6 + 3  # bars and boxes per group, one history chart per group
