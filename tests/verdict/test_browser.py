"""The verdict page in headless Chromium: it renders, its images decode, and the console stays silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.verdict.build import build_page
from tests.report.test_browser import CHROMIUM, rendered
from tests.verdict.test_page import sample_records

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (Debian: apt-get install chromium)"),
]


def test_chromium_renders_the_verdict_without_console_messages(tmp_path: Path) -> None:
    other = [r.model_copy(update={"run_id": "20261124T130000Z-bbbbbb", "env": {**r.env, "cpu": "Other CPU"}})
             for r in sample_records()]
    probe, console = rendered(build_page(sample_records(), [other], None, "html"), tmp_path)
    assert console == []
    assert probe["title"] == "jax-benchmarks verdict"
    assert probe["headings"][:2] == ["Findings on Test CPU (2 cores), no GPU", "Findings on Other CPU (2 cores), no GPU"]
    assert "Between the two machines" in probe["headings"] and "Environment" in probe["headings"]
    assert len(probe["images"]) == 5  # two box plots a machine, and the summary chart of this one
    for image in probe["images"]:
        assert image["complete"] and image["width"] > 300 and image["height"] > 200, image
    for table in probe["tables"]:
        assert table["rows"] >= 2, table
