"""Tables at 80 columns, piped (issue 38): a case name is never cut; metric rows carry their unit."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.segment import Segment

from jax_benchmarks.cli.tables import CELL_NOTE, Grid, comparison_table, metric_label
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


@pytest.mark.parametrize("backends", [("numpy",), ("numpy", "pytorch", "jax"),
                                      ("numpy", "pytorch", "jax", "flax")])
def test_every_case_name_is_whole_at_80_columns_piped(backends: tuple[str, ...]) -> None:
    text = piped_80(comparison_table(records(backends), "xla: " + ", ".join(backends), ("gflops", "loop_overhead")))
    assert max(len(line) for line in text.splitlines()) <= 80
    for case in CASES:
        assert case in text, f"{case} cut:\n{text}"
    for backend in backends:
        assert backend in text
    assert "…" not in text


def header_lines(text: str) -> str:
    """The tables' header rows (the title and the captions also name backends: they do not count)."""
    return "\n".join(line for line in text.splitlines() if line.startswith("┃"))


@pytest.mark.parametrize("variants", [("",), ("loop", "vmap", "vmap+jit", "train step")])
def test_columns_that_do_not_fit_go_on_to_another_table_never_off_the_edge(variants: tuple[str, ...]) -> None:
    """Seven backends, or 3 × 4 backend-variant columns: more than 80 columns even at their narrowest. Every
    column keeps its header and its figure for every case, in order, and the notes come once."""
    backends = ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad", "mlx") if variants == ("",) else (
        "numpy", "pytorch", "jax")
    made = [rec.model_copy(update={"variant": variant or None}) for variant in variants for rec in records(backends)]
    tables = comparison_table(made, "autograd: all", ("gflops",))
    text = piped_80(tables)
    assert max(len(line) for line in text.splitlines()) <= 80
    columns = tables.layout.columns
    assert len(columns) == len(backends) * len(variants) > 6
    headers = header_lines(text)
    for column in columns:
        for word in column.split():
            assert word in headers, f"{column} lost:\n{text}"
    assert f"(columns 1–" in text and f"of {len(columns)})" in text
    # every figure is printed: a median cell per case and column in the timing tables, a host peak in the memory ones
    assert text.count("±") == len(CASES) * len(columns) + CELL_NOTE.count("±")
    assert text.count("3 MiB") == len(CASES) * len(columns)
    assert text.count("median ± IQR") == 1 and text.count("memory: peak above") == 1


def test_metric_rows_say_their_unit() -> None:
    text = piped_80(comparison_table(records(("numpy", "jax")), "xla", ("gflops", "loop_overhead")))
    assert "· GFLOP/s" in text and "· loop overhead (epoch ÷ steps' time − 1)" in text
    assert "median ± IQR" in text  # what a cell (and its ± 0) means
    assert metric_label("items_per_s") == "items/s"


def test_a_table_without_compiled_programs_does_not_explain_them() -> None:
    text = piped_80(comparison_table(records(("numpy",)), "xla: numpy"))
    assert "host peak" in text and "XLA" not in text


@pytest.mark.parametrize("width", [80, 100, 130])
@pytest.mark.parametrize("compiled", [False, True])
def test_each_part_is_the_longest_run_of_columns_that_fits(width: int, compiled: bool) -> None:
    """The split: every part fits, and with the next column it would not (as when each column was tried in
    turn); with XLA's compiled sizes the memory table is the wider one and bounds the parts."""
    backends = ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad", "mlx", "jax+jit", "torch.compile")
    memory = {"memory_method": "untimed pass", "host_status": "measured", "host_peak_bytes": 3 * MIB}
    if compiled:
        memory |= {"compiled_temp_bytes": 89 * MIB, "compiled_argument_bytes": 40 * MIB,
                   "compiled_output_bytes": 15 * MIB}
    made = [rec.model_copy(update={"memory": memory}) for rec in records(backends)]
    tables = comparison_table(made, "t", ("gflops",))  # a short title: it does not wrap
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    console.print(tables)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= width
    columns, cases, cells = tables.layout.columns, tables.layout.cases, tables.layout.cells
    labels = {case: f"#{index}" for index, case in enumerate(cases, 1)}
    parts = [(int(first), int(last)) for first, last in
             re.findall(rf"^t \(columns (\d+)–(\d+) of {len(columns)}\) *$", text, re.MULTILINE)]
    memory_parts = re.findall(rf"^t \(columns (\d+)–(\d+) of {len(columns)}\): memory *$", text, re.MULTILINE)
    assert len(memory_parts) == len(parts)
    assert parts and parts[0][0] == 1 and parts[-1][1] == len(columns)
    assert all(later[0] == earlier[1] + 1 for earlier, later in zip(parts, parts[1:]))
    for first, last in parts:
        fits = tables.rendered(console, console.options, Grid(cases, columns[first - 1:last], cells), labels)
        assert fits is not None
        if last < len(columns):
            one_more = Grid(cases, columns[first - 1:last + 1], cells)
            assert tables.rendered(console, console.options, one_more, labels) is None, (first, last)
    if compiled:
        assert text.count("temp") == len(CASES) * len(columns)  # every compiled figure printed (it wraps)


def test_halving_finds_the_longest_run_from_a_bound_too_high() -> None:
    """Rich may lay columns out wider than their narrowest: from a bound of every column, the part found is the
    one adding columns one at a time finds."""
    backends = ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad", "mlx")
    tables = comparison_table(records(backends), "xla", ("gflops",))
    console = Console(file=io.StringIO(), width=80, force_terminal=False, color_system=None)
    labels = {case: f"#{index}" for index, case in enumerate(tables.layout.cases, 1)}
    columns, cases, cells = tables.layout.columns, tables.layout.cases, tables.layout.cells
    one_at_a_time = next(end for end in range(2, len(columns) + 1)
                         if tables.rendered(console, console.options, Grid(cases, columns[:end], cells), labels) is None) - 1
    assert 1 < one_at_a_time < len(columns)
    for bound in range(one_at_a_time, len(columns) + 1):
        end, part = tables.longest_fitting(console, console.options, labels, 0, bound)
        assert end == one_at_a_time
        assert all(isinstance(segment, Segment) for segment in part.timing)  # laid out once, printed as it is


def with_agreement(backends: tuple[str, ...]) -> list[Record]:
    """`records(backends)`, then an agreement record per case in column `all`, as autograd's and scipy's `all`
    write them: a figure in a metric row, no time, no memory."""
    agreement = [record(RUN, TS, "xla", "all", case, samples(1e-3), metrics={"gflops": 0.0}).model_copy(
        update={"median_s": None, "iqr_s": None, "min_s": None, "samples_s": []}) for case in CASES]
    return [*records(backends), *agreement]


@pytest.mark.parametrize("backends", [("numpy", "jax"), ("numpy", "pytorch", "jax", "flax", "cupy", "tinygrad"),
                                      ("numpy", "pytorch", "jax", "flax", "cupy")])  # the last: `all` alone in part 2
def test_the_memory_table_leaves_out_a_column_without_memory_figures(backends: tuple[str, ...]) -> None:
    """`all` (agreement records, which measure no memory) is a column of the time table, not of the memory
    table, which would show only dashes in it; split or not, the notes come once (under the last memory table,
    also where the last part, `all` alone, has none)."""
    tables = comparison_table(with_agreement(backends), "t", ("gflops",))
    assert tables.layout.columns[-1] == "all"
    text = piped_80(tables)
    assert max(len(line) for line in text.splitlines()) <= 80
    blocks = re.split(r"^(?=t(?: \(columns \d+–\d+ of \d+\))?(?:: memory)? *$)", text, flags=re.MULTILINE)
    timing = "\n".join(header_lines(b) for b in blocks if b.startswith("t") and ": memory" not in b.split("\n")[0])
    memory = "\n".join(header_lines(b) for b in blocks if ": memory" in b.split("\n")[0])
    assert re.search(r"┃ +all ┃", timing) and memory and not re.search(r"\ball\b", memory)
    for backend in backends:
        assert backend in memory
    assert text.count("3 MiB") == len(CASES) * len(backends)
    assert text.count("median ± IQR") == 1 and text.count("memory: peak above") == 1


def test_a_table_whose_columns_have_no_memory_figures_has_no_memory_table() -> None:
    text = piped_80(comparison_table(with_agreement(()), "t", ("gflops",)))
    assert "┃ case" in text and ": memory" not in text and "host peak" not in text
