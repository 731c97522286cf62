"""Tables at 80 columns, piped (issue 38): a case name is never cut; metric rows carry their unit."""

from __future__ import annotations

import io
from pathlib import Path
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
    for case in CASES:  # a case with a metric row only is named on it
        assert f"{case} · GFLOP/s" in " ".join(text.split()), text


# ------------------------------------------------- busy figures are shown, never ranked, in every table kind ---

BUSY = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}
QUIET = {"window_s": 0.5, "busy": False, "cores": 2, "others_cores": 0.1, "steal_cores": 0.0}


def beside_two_processes() -> list[Record]:
    """numpy, pytorch and jax on every case: pytorch's figures taken on a busy machine (the contention two
    CPU-bound processes leave, as the core records it), and for the first case numpy's too; jax is the slowest."""
    made = []
    for case_index, case in enumerate(CASES):
        for backend, factor in (("numpy", 1.0), ("pytorch", 1.5), ("jax", 3.0)):
            busy = backend == "pytorch" or (backend == "numpy" and case_index == 0)
            made.append(record(RUN, TS, "xla", backend, case, samples(1e-3 * (10 + case_index) * factor),
                               contention=BUSY if busy else QUIET))
    return made


def assert_busy_never_ranked(text: str, made: list[Record]) -> None:
    """Each busy figure is shown with 'busy' beside it and no rank; the quiet ones are ranked among themselves
    (a case with one quiet figure has no rank at all)."""
    flat = " ".join(line.strip("│ ") for line in text.splitlines())
    for rec in made:
        figure = f"{format_seconds(rec.median_s or 0)} ± {format_seconds(rec.iqr_s or 0)}"
        after = flat[flat.index(figure) + len(figure):].split()[0]
        if rec.contention["busy"]:
            assert after == "busy", (figure, text)
        elif rec.case != CASES[0]:
            assert after in ("(fastest)", "×3.00"), (figure, text)
    assert "×2.00" not in text and "×1.50" not in text  # jax against a busy pytorch, pytorch against numpy
    assert text.count("(fastest)") == len(CASES) - 1


@pytest.mark.parametrize("width", [250, *WIDTHS])
def test_the_live_table_never_ranks_a_busy_figure(width: int) -> None:
    made = beside_two_processes()
    text = piped(comparison_table(made, "xla: numpy, pytorch, jax", ()), width)
    assert_whole(text, width, made)
    assert_busy_never_ranked(text, made)
    assert "a busy figure is not ranked (no ×N, no fastest)" in " ".join(text.split())


def round_records(made: list[Record], rounds: int = 3) -> list[Record]:
    """`made` as a --rounds run: each record once a round, busy in the first round only where `made` is busy."""
    return [rec.model_copy(update={"round_index": index, "contention": rec.contention if index == 0 else QUIET})
            for index in range(rounds) for rec in made]


@pytest.mark.parametrize("width", [250, *WIDTHS])
def test_the_rounds_summary_marks_busy_figures_and_keeps_names_whole(width: int) -> None:
    """The --rounds summary (which dropped the marks): 'busy' and in how many rounds on the busy figure's row."""
    from jax_benchmarks.cli.tables import rounds_table
    from jax_benchmarks.measure.rounds import spreads

    made = round_records(beside_two_processes())
    text = piped(rounds_table("xla all: 3 rounds", spreads(made), 3, made), width)
    assert max(len(line) for line in text.splitlines()) <= width, text
    for case in CASES:
        assert case in text
    flat = " ".join(text.split())
    assert flat.count("busy 1 of 3 rounds") == len(CASES) + 1  # pytorch's on every case, numpy's on the first
    assert not re.search(r"×\d", text) and "(fastest)" not in text
    assert "a busy figure is not ranked" in flat


def test_the_rounds_summary_without_busy_figures_has_no_busy_column() -> None:
    from jax_benchmarks.cli.tables import rounds_table
    from jax_benchmarks.measure.rounds import spreads

    made = round_records([rec.model_copy(update={"contention": QUIET}) for rec in records(("numpy",))])
    text = piped(rounds_table("xla numpy: 3 rounds", spreads(made), 3, made), 250)
    assert "busy" not in text and "round spread" in text


@pytest.mark.parametrize("columns", ["250", "80", "60"])
def test_the_reports_tables_and_the_gates_never_rank_a_busy_figure_and_stay_whole(
        columns: str, results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`report --baseline previous --fail-on-regression`: the run's table and the gate's table, at the console's
    width: no line wider (the environment line aside: it is not a table), names and figures whole, the test's
    sentence whole words; busy figures unranked, the gate's change for them not printed."""
    from tests.conftest import invoke
    from tests.report.fixtures import XLA_NEW, XLA_OLD, write_results, xla_rounds

    monkeypatch.setenv("COLUMNS", columns)
    before = xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1)
    now = [rec.model_copy(update={"contention": BUSY if rec.case == "matmul_100x100_float64" else QUIET})
           for rec in xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2)]
    write_results(results_path, [*before, *now])
    result = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 2, result.stderr  # the busy figure is not judged
    text = result.stdout
    width = int(columns)
    assert max(len(line) for line in text.splitlines() if not line.startswith("CPU:")) <= width, text
    for case in ("matmul_100x100_float64", "inverse_100x100_float64"):
        assert case in text
    assert "…" not in text.replace(" % … ", "") and "#1" not in text  # (a change's interval: '-2.7 % … +3.0 %')
    flat = " ".join(text.split())
    assert re.search(r"\d [mµn]?s ± [\d.]+ [mµn]?s busy", flat), text
    assert "busy machine" in flat and "not judged: taken on a busy machine" in flat
    # the gate's rows, each test sentence whole words (never one word a line: at most a few lines a figure)
    assert len(text.splitlines()) < 60, text


@pytest.mark.parametrize("columns", ["250", "80"])
def test_the_history_marks_busy_figures_and_compares_no_busy_one(
        columns: str, results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`report --history`: a busy figure's cell says 'busy' (its figure and marks wrap only between them), and
    its 'last vs first' is 'busy', not a change computed from a figure the tool says is wrong."""
    from tests.conftest import invoke
    from tests.report.fixtures import XLA_NEW, XLA_OLD, write_results

    monkeypatch.setenv("COLUMNS", columns)
    write_results(results_path, [
        record(XLA_OLD, "2025-01-01T10:00:00+00:00", "xla", "numpy", CASES[0], samples(1e-3), contention=QUIET),
        record(XLA_NEW, "2025-01-02T10:00:00+00:00", "xla", "numpy", CASES[0], samples(3e-3), contention=BUSY),
        record(XLA_OLD, "2025-01-01T10:00:00+00:00", "xla", "jax", CASES[0], samples(1e-3), contention=QUIET),
        record(XLA_NEW, "2025-01-02T10:00:00+00:00", "xla", "jax", CASES[0], samples(2e-3), contention=QUIET)])
    text = invoke("report", "--results", str(results_path), "--history", "--group", "xla").stdout
    assert max(len(line) for line in text.splitlines()) <= int(columns), text
    assert re.search(r"· numpy +│ +(1 ms │ +)?3 ms busy │ +busy │", text), text  # (at 80: the latest run alone)
    assert "+200.0 %" not in text and "+100.0 %" in text  # numpy's busy change not printed, jax's is


def test_a_speed_up_over_a_busy_figure_is_not_printed_in_any_format() -> None:
    """jit's speed-up over eager is a ratio of two of a case's figures: 'busy' where either was taken on a busy
    machine, in the terminal's table, markdown and HTML; another backend's quiet speed-up is printed."""
    from jax_benchmarks.report.page import figures_table
    from jax_benchmarks.report.render import render_markdown
    from jax_benchmarks.report.rows import build_table

    case = "mlp_epoch_8000x2_float32"
    made = [record(RUN, TS, "jit", "flax", case, samples(1.0), variant="eager", contention=BUSY),
            record(RUN, TS, "jit", "flax", case, samples(0.01), variant="jit", contention=QUIET,
                   metrics={"speedup": 100.0}),
            record(RUN, TS, "jit", "pytorch", case, samples(0.5), variant="eager", contention=QUIET),
            record(RUN, TS, "jit", "pytorch", case, samples(0.05), variant="jit", contention=QUIET,
                   metrics={"speedup": 10.0})]
    text = piped(comparison_table(made, "jit", ("speedup",)), 250)
    row = next(line for line in text.splitlines() if "speed-up over eager" in line)
    assert re.search(r"│ +— │ +busy │ +— │ +10 │", row), text  # flax eager, flax jit, pytorch eager, pytorch jit
    assert "100" not in row
    table = build_table(made)
    assert "| busy |" in render_markdown([table]) and "| 100 |" not in render_markdown([table])
    page = figures_table(table)
    assert ">busy</td>" in page and ">100</td>" not in page and ">10</td>" in page
