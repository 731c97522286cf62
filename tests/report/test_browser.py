"""The HTML report in a real browser: headless Chromium loads the page and reports what it rendered.

The page itself has no script. The test appends a probe that runs after the page
has loaded and writes, into the DOM, the decoded size and the on-screen width of
every image and the rows and height of every table; `--dump-dom` hands the DOM
back. Console messages come back on stderr (`--enable-logging=stderr --v=0`):
the page must log none. Skipped (with the reason) where Chromium is not installed.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.report.conftest import html_report
from tests.report.fixtures import XLA_OLD
from tools.headless_chromium import find_chromium, run_chromium

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)"),
]

PROBE = """<script>
window.addEventListener("load", () => {
  const box = (el) => el.getBoundingClientRect();
  const probe = {
    title: document.title,
    images: [...document.images].map((i) => ({complete: i.complete, width: i.naturalWidth,
                                               height: i.naturalHeight, shown: box(i).width})),
    tables: [...document.querySelectorAll("table")].map((t) => ({cls: t.className, rows: t.rows.length,
                                                                  height: box(t).height})),
    headings: [...document.querySelectorAll("h2")].map((h) => h.textContent),
  };
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(probe);
  document.body.appendChild(out);
});
</script>"""


def rendered(page: str, tmp_path: Path) -> tuple[dict[str, Any], list[str]]:
    """(what the probe saw, the console messages) after Chromium loaded `page`."""
    assert CHROMIUM is not None and "</body>" in page
    path = tmp_path / "report.html"
    path.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    result = run_chromium(CHROMIUM, ["--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
                                     "--dump-dom"], path)
    assert result.returncode == 0, result.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    assert match is not None, f"the probe did not run; DOM starts: {result.stdout[:500]}"
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    probe: dict[str, Any] = json.loads(html.unescape(match.group(1)))
    return probe, console


def test_probe_sees_broken_images_and_console_messages(tmp_path: Path) -> None:
    """The checks below can fail: a broken image and a console message are seen."""
    page = ('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
            '<img src="data:image/png;base64,AAAA"><script>console.error("broken")</script></body></html>')
    probe, console = rendered(page, tmp_path)
    assert probe["images"] == [{"complete": True, "width": 0, "height": 0, "shown": pytest.approx(16, abs=16)}]
    assert any('"broken"' in line for line in console), console


def test_chromium_renders_tables_and_charts(results: Path, tmp_path: Path) -> None:
    probe, console = rendered(html_report("--results", str(results), "--baseline", XLA_OLD, "--history"), tmp_path)
    assert console == []
    assert probe["title"] == "jax-benchmarks report"
    assert probe["headings"][0] == "Environment"
    assert [h.split(" · ")[0] for h in probe["headings"][1:4]] == ["xla", "jit", "mnist"]
    classes = [t["cls"] for t in probe["tables"]]
    assert classes == ["env", "figures", "changes", "figures", "figures", "history", "history", "history"]
    for table in probe["tables"]:
        assert table["rows"] >= 2 and table["height"] > 20, table  # a header and at least one row, on screen
    # Bars and box plots for three groups, one history chart per group: all decoded and shown.
    assert len(probe["images"]) == 9
    for image in probe["images"]:
        assert image["complete"] and image["width"] > 300 and image["height"] > 200, image
        assert image["shown"] > 300, image
