"""A page built --from a verdict's records names the scale they were measured at (issue 48, item 7): records do not
name their scale, so it is derived from the options the scale's steps give that the records' params keep."""

from __future__ import annotations

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.build import build_page
from jax_benchmarks.verdict.scale import derived_scale
from tests.verdict.fixtures import figure

CASE = "matmul_1000x1000_float64"


def xla(size: int | None) -> list[Record]:
    params = {} if size is None else {"matrix_size": size}
    return (figure("xla", "jax", CASE, 0.005, params=params) + figure("xla", "numpy", CASE, 0.010, params=params))


def test_the_scale_is_derived_from_the_sizes_the_records_were_measured_at() -> None:
    assert derived_scale(xla(1000)) == "standard" and derived_scale(xla(2000)) == "full"
    assert derived_scale(xla(512)) is None and derived_scale(xla(None)) is None  # no scale agrees / none checked


def test_a_page_built_from_records_names_their_scale_and_says_it_was_derived() -> None:
    page = build_page(xla(1000), None, None, "markdown")
    assert ("> **standard scale: small sizes, three rounds a figure (derived from the sizes the records were measured "
            "at: they do not name their scale) · Test CPU (2 cores), no GPU**") in page.splitlines()
    assert "Scale: `verdict --scale standard` (derived from the sizes" in page
    measured = build_page(xla(1000), None, None, "markdown", scale="standard")  # a measuring verdict names it
    assert "derived from" not in measured and "> **standard scale: small sizes" in measured
    unknown = build_page(xla(512), None, None, "markdown")  # no scale agrees: none is named
    assert "Scale:" not in unknown and " scale: " not in unknown
