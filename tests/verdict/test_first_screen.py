"""The verdict page's first screen in headless Chromium (issue 38): the answer and the summary chart are on
it, and nothing overflows horizontally, the environment opened included."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.verdict.build import build_page
from tests.report.test_browser import CHROMIUM
from tests.verdict.test_answer import gradients
from tests.verdict.fixtures import ENV, matmul
from tools.headless_chromium import run_chromium

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)"),
]

WIDTH, HEIGHT = 1280, 800
PROBE = """<script>
window.addEventListener("load", () => {
  const answer = document.querySelector(".answer").getBoundingClientRect();
  const chart = document.querySelector(".summary img").getBoundingClientRect();
  const first = {answer_bottom: answer.bottom, chart_top: chart.top, chart_bottom: chart.bottom,
                 height: window.innerHeight, width: window.innerWidth};
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const wide = [...document.querySelectorAll("body *")].filter(
      (el) => el.getBoundingClientRect().right > window.innerWidth + 1).map((el) => el.tagName + "." + el.className);
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({...first, scroll_width: document.documentElement.scrollWidth, wide: wide});
  document.body.appendChild(out);
});
</script>"""


def first_screen(page: str, tmp_path: Path) -> dict[str, Any]:
    assert CHROMIUM is not None
    path = tmp_path / "verdict.html"
    path.write_text(page.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    done = run_chromium(CHROMIUM, [f"--window-size={WIDTH},{HEIGHT}", "--virtual-time-budget=10000", "--dump-dom"],
                        path)
    assert done.returncode == 0, done.stderr[-2000:]
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match is not None, done.stdout[:500]
    probe: dict[str, Any] = json.loads(html.unescape(match.group(1)))
    return probe


def test_the_first_screen_holds_the_answer_and_the_chart_and_nothing_overflows(tmp_path: Path) -> None:
    # An environment value as long as a real XLA_FLAGS, which once ran off the page's right edge.
    env = {**ENV, "xla_flags": ",".join(f"--xla_cpu_flag_number_{i}=true" for i in range(30))}
    records = [r.model_copy(update={"env": env}) for r in matmul(1.0, 2.0, 0.5) + gradients(0.8, 0.1)]
    probe = first_screen(build_page(records, None, None, "html", scale="quick"), tmp_path)
    assert probe["answer_bottom"] < probe["height"], probe
    assert probe["chart_top"] < probe["height"] and probe["chart_bottom"] <= probe["height"], probe
    assert probe["scroll_width"] <= probe["width"], probe
    assert probe["wide"] == [], probe
