"""Tables at 80 columns, piped (issue 38): a case name is never cut; metric rows carry their unit."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from jax_benchmarks.cli.tables import CELL_NOTE, comparison_table, format_seconds, metric_label
from jax_benchmarks.store.record import Record
from tests.report.fixtures import record, samples

RUN = "20250102T100000Z-cccccc"
TS = "2025-01-02T10:00:00+00:00"
# The longest names the groups make at their default sizes, and one longer still.
CASES = ("matmul_300x300_float64", "uniform_2x1000x1000_float64", "f_10000000_float32",
         "train_epoch_128x28x28_float32", "validation_10000x28x28_float32_and_some_more")
MIB = 2**20


def records(backends: tuple[str, ...]) -> list[Record]:
    out = []
    for case_index, case in enumerate(CASES):
        for backend_index, backend in enumerate(backends):
            median = 1e-3 * (1 + case_index) * (1 + backend_index)
            out.append(record(RUN, TS, "xla", backend, case, samples(median), metrics={"gflops": 1.5 * backend_index,
                                                                                    "loop_overhead": -0.2405},
                              memory={"memory_method": "untimed pass", "host_status": "measured",
                                      "host_peak_bytes": 3 * MIB}))
    return out


def piped_80(renderable: object) -> str:
    out = io.StringIO()
    Console(file=out, width=80, force_terminal=False, color_system=None).print(renderable)
    return out.getvalue()


WIDTHS = (80, 60)
BACKENDS = (("numpy",), ("numpy", "pytorch", "jax"), ("numpy", "pytorch", "jax", "flax"),
            ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad", "mlx"))


def piped(renderable: object, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=False, color_system=None).print(renderable)
    return out.getvalue()


def assert_whole(text: str, width: int, made: list[Record]) -> None:
    """No line wider than the console; every case name, column label and figure printed whole, on one line (a
    figure and its unit never apart); no case replaced by a number."""
    assert max(len(line) for line in text.splitlines()) <= width, text
    for rec in made:
        assert rec.case in text, f"{rec.case} cut:\n{text}"
        figure = f"{format_seconds(rec.median_s or 0)} ± {format_seconds(rec.iqr_s or 0)}"
        assert figure in text, f"{figure} split:\n{text}"
    assert "…" not in text and "#1" not in text and "cases:" not in text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("backends", BACKENDS)
def test_every_case_name_and_figure_is_whole_piped(backends: tuple[str, ...], width: int) -> None:
    made = records(backends)
    text = piped(comparison_table(made, "xla: " + ", ".join(backends), ("gflops", "loop_overhead")), width)
    assert_whole(text, width, made)
    for backend in backends:
        assert backend in text
    # every figure: a timing cell per case and backend, a host peak in the memory table; the notes once
    assert len(re.findall(r"s ± \d", text)) == len(CASES) * len(backends)
    assert text.count("3 MiB") == len(CASES) * len(backends)
    assert text.count(CELL_NOTE.split(";")[0]) == 1 and text.count("memory: peak above") == 1


@pytest.mark.parametrize("width", WIDTHS)
def test_variant_columns_too_many_for_the_width_keep_every_label_and_figure(width: int) -> None:
    """3 × 4 backend-variant columns, far wider than the console side by side: every column's label and every
    figure is printed, whole, under its case (no table part, no numbered case)."""
    variants = ("loop", "vmap", "vmap+jit", "train step")
    made = [rec.model_copy(update={"variant": variant}) for variant in variants
            for rec in records(("numpy", "pytorch", "jax"))]
    tables = comparison_table(made, "autograd: all", ("gflops",))
    text = piped(tables, width)
    assert_whole(text, width, made)
    for column in tables.layout.columns:
        assert column in text, f"{column} lost:\n{text}"
    assert text.count("3 MiB") == len(made)


def test_a_figure_is_never_split_from_its_unit_where_the_old_layout_wrapped_it() -> None:
    """The reported '29.8 ms ± 356 │' / 'µs (fastest) │': three backends beside the longest default name."""
    made = [record(RUN, TS, "xla", backend, "residual_300x300_float64", samples(median))
            for backend, median in (("numpy", 1.05e-3), ("pytorch", 29.8e-3), ("jax", 2.31e-3))]
    for width in (80, 60, 50):
        text = piped(comparison_table(made, "xla: numpy, pytorch, jax", ("residual",)), width)
        assert_whole(text, width, made)
        assert not re.search(r"±\s*(│|$)", text, re.MULTILINE), text
        assert not re.search(r"^[│ ]*(µs|ms|ns|s)\b", text, re.MULTILINE), text


def test_metric_rows_say_their_unit() -> None:
    text = piped_80(comparison_table(records(("numpy", "jax")), "xla", ("gflops", "loop_overhead")))
    assert "· GFLOP/s" in text and "· loop overhead (epoch ÷ steps' time − 1)" in text
    assert "median ± IQR" in text  # what a cell (and its ± 0) means
    assert metric_label("items_per_s") == "items/s"


def test_a_table_without_compiled_programs_does_not_explain_them() -> None:
    text = piped_80(comparison_table(records(("numpy",)), "xla: numpy"))
    assert "host peak" in text and "XLA" not in text


def with_agreement(backends: tuple[str, ...]) -> list[Record]:
    """`records(backends)`, then an agreement record per case in column `all`, as autograd's and scipy's `all`
    write them: a figure in a metric row, no time, no memory."""
    agreement = [record(RUN, TS, "xla", "all", case, samples(1e-3), metrics={"gflops": 0.0}).model_copy(
        update={"median_s": None, "iqr_s": None, "min_s": None, "samples_s": []}) for case in CASES]
    return [*records(backends), *agreement]


@pytest.mark.parametrize("width", [250, 80])
@pytest.mark.parametrize("backends", [("numpy", "jax"), ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad")])
def test_the_memory_table_leaves_out_a_column_without_memory_figures(backends: tuple[str, ...], width: int) -> None:
    """`all` (agreement records, which measure no memory) is a column of the time table, not of the memory
    table, which would show only dashes in it; side by side or stacked, the notes come once."""
    tables = comparison_table(with_agreement(backends), "t", ("gflops",))
    assert tables.layout.columns[-1] == "all"
    text = piped(tables, width)
    assert max(len(line) for line in text.splitlines()) <= width
    timing, memory = re.split(r"^t: memory *$", text, flags=re.MULTILINE)
    assert re.search(r"\ball\b", timing) and not re.search(r"\ball\b", memory)
    for backend in backends:
        assert backend in memory
    assert text.count("3 MiB") == len(CASES) * len(backends)
    assert text.count("median ± IQR (the") == 1 and text.count("memory: peak above") == 1


def test_a_table_whose_columns_have_no_memory_figures_has_no_memory_table() -> None:
    text = piped_80(comparison_table(with_agreement(()), "t", ("gflops",)))
    assert "┃ case" in text and ": memory" not in text and "host peak" not in text
