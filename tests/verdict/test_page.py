"""The verdict page: findings first with their evidence one click away, self-contained, and markdown."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.build import build_page
from tests.verdict.fixtures import ENV, figure, matmul, record

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def sample_records() -> list[Record]:
    return [*matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.008),
            *figure("jit", "jax", "f_10000_float32", 0.003, variant="eager"),
            *figure("jit", "jax", "f_10000_float32", 0.001, variant="jit", compile_s=1.0),
            record("scipy", "all", "agreement_1000_float64",
                   checks={"max_rel_diff": 7e-7, "limit": 1e-3, "agree": True, "slope_pair": "jax vs pytorch"})]


class Parsed(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []
        self.details = 0
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append(tag)
        self.details += tag == "details"
        self.urls += [str(attributes[name]) for name in ("src", "href") if attributes.get(name)]
        if attributes.get("id"):
            self.ids.append(str(attributes["id"]))


def test_html_puts_findings_first_with_evidence_in_details_and_embeds_everything() -> None:
    page = build_page(sample_records(), None, None, "html")
    parsed = Parsed()
    parsed.feed(page)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # Findings come before the environment table.
    assert page.index('<ol class="findings">') < page.index('id="environment"')
    # Every finding is a <details>, and so is the environment (collapsed at the bottom; its id is inside).
    assert parsed.details == len(parsed.ids) and parsed.ids[-1] == "environment"
    assert "linear-algebra-matmul_1000x1000_float64" in parsed.ids and "missing-mnist" in parsed.ids
    assert "No mnist records" in page and "Memory not measured in these records." in page
    # Nothing from outside: every URL is a data: URI, and the box plots are real PNGs.
    assert parsed.urls and all(url.startswith("data:") for url in parsed.urls)
    images = [url for url in parsed.urls if url.startswith("data:image/png;base64,")]
    assert len(images) == 3  # the summary chart (JAX against numpy on matmul); matmul and jit have timed records
    assert all(base64.b64decode(url.split(",", 1)[1])[:8] == PNG_MAGIC for url in images)
    # Machine, versions, precision policy and date are on the page.
    for text in ("Test CPU (2 cores)", "jax 0.10.2", "Precision policy: not applicable on a CPU", "2026-11-24"):
        assert text in page


def test_page_escapes_what_the_records_hold() -> None:
    records = matmul(numpy_s=0.010, jax_s=0.005, env={"cpu": "<script>alert(1)</script>", "cpu_cores": 2})
    page = build_page(records, None, None, "html")
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_markdown_headline_table_and_the_other_machine() -> None:
    here = sample_records()
    there = matmul(numpy_s=0.0025, jax_s=0.005, pytorch_s=0.002, run_id="20261124T130000Z-bbbbbb",
                   env={"cpu": "Other CPU", "cpu_cores": 16, "gpu": "NVIDIA H100"})
    text = build_page(here, [there], None, "markdown")
    assert "| question | answer here | records |" in text
    assert "### Findings on Test CPU (2 cores), no GPU" in text
    assert "### Findings on Other CPU (16 cores), NVIDIA H100" in text
    assert "### Between the two machines" in text and "numpy ×4.0" in text and "pytorch ×4.0" in text
    assert "jax ×1.00" in text


def precision_line(records: list[Record]) -> str:
    [line] = [line for line in build_page(records, None, None, "markdown").splitlines()
              if line.startswith("Precision policy:")]
    return line.rstrip()


def test_on_a_cpu_the_precision_line_says_the_gpu_settings_do_not_apply() -> None:
    # The env of a CPU run holds PyTorch's untouched CUDA setting ("none"): float32 on a CPU is IEEE whatever it says.
    line = precision_line(matmul(numpy_s=0.010, jax_s=0.005, env={**ENV, "torch_matmul_precision": "none"}))
    assert line == "Precision policy: not applicable on a CPU (float32 is IEEE)"


def test_a_gpu_records_precision_settings_are_shown_even_when_a_cpu_record_is_newer() -> None:
    on_gpu = [r.model_copy(update={"device": "cuda:0", "timestamp": "2026-11-24T11:00:00+00:00"})
              for r in matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.008,
                              env={**ENV, "precision": "tf32", "jax_matmul_precision": "tensorfloat32",
                                   "torch_matmul_precision": "tf32"})]
    on_cpu = figure("jit", "jax", "f_10000_float32", 0.003, variant="eager",
                    env={**ENV, "torch_matmul_precision": "none"})
    assert precision_line(on_gpu) == ("Precision policy: float32 products and convolutions: tf32; JAX default "
                                      "matmul precision: tensorfloat32; PyTorch float32 matmul: tf32")
    assert precision_line([*on_gpu, *on_cpu]) == (
        "Precision policy: float32 products and convolutions: tf32; JAX default matmul precision: tensorfloat32; "
        "PyTorch float32 matmul: tf32; not applicable to the CPU records (float32 is IEEE)")


def test_markdown_shows_the_breakdowns_of_profiled_records_and_nothing_without_them() -> None:
    """`--profile`'s breakdown lines, which the HTML page puts in each finding's evidence, in a table of their own."""
    shares = {"jax": {"share_kernels": 91.0, "share_host": 9.0}, "numpy": {}, "pytorch": {"share_host": 100.0}}
    profiled = [r.model_copy(update={"profile": shares[r.backend]}) if r.group == "xla" else r
                for r in sample_records()]
    text = build_page(profiled, None, None, "markdown")
    assert "### Where the step's time went (--profile)" in text
    assert "jax matmul_1000x1000_float64: kernels 91.0 %, host 9.0 %" in text
    assert "pytorch matmul_1000x1000_float64: host 100.0 %" in text
    assert "--profile" not in build_page(sample_records(), None, None, "markdown")
