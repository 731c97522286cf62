"""Chart layout: one panel per group, jit vs no-jit panels for the jit group, IQR error bars."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.report.history import quartiles
from jax_benchmarks.report.plot import error_bar, panels, plot_spread, plot_table, spread_figure, table_figure
from jax_benchmarks.report.rows import build_table
from tests.report.fixtures import XLA_NEW, jit_run, record, samples, xla_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_jit_group_has_jit_and_no_jit_panels() -> None:
    chosen = panels(build_table(jit_run()))
    assert [title for title, _ in chosen] == ["jit", "no jit / eager"]
    jit_panel, eager_panel = (rows for _, rows in chosen)
    assert {r.column for r in jit_panel} == {"jax jit"}
    assert {r.column for r in eager_panel} == {"numpy", "jax eager"}


def test_other_groups_have_one_panel() -> None:
    chosen = panels(build_table(xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", 1e-3)))
    assert [title for title, _ in chosen] == ["xla"]
    assert len(chosen[0][1]) == 6


def test_error_bars_are_the_quartiles_of_the_samples() -> None:
    rec = record("r", "t", "xla", "numpy", "matmul_10x10_float64", [1.0, 2.0, 3.0, 4.0, 5.0])
    (row,) = build_table([rec]).rows
    assert error_bar(row) == pytest.approx((1.0, 1.0))  # median 3, quartiles 2 and 4


def test_single_sample_error_bar_from_the_iqr_is_zero() -> None:
    (row,) = build_table([record("r", "t", "mnist", "flax", "epoch_10_float32", [3.0])]).rows
    assert error_bar(row) == (0.0, 0.0)


def test_plot_table_writes_a_png(tmp_path: Path) -> None:
    path = plot_table(build_table(jit_run()), tmp_path)
    assert path is not None and path.parent == tmp_path
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_untimed_table_draws_nothing(tmp_path: Path) -> None:
    rec = record("r", "t", "mnist", "flax", "validation_float32", samples(1.0)).model_copy(update={"median_s": None})
    assert plot_table(build_table([rec]), tmp_path) is None


def test_time_axes_are_in_engineering_units() -> None:
    fig = table_figure(build_table(xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", 1e-3)))
    assert fig is not None
    formatter = fig.axes[0].yaxis.get_major_formatter()
    assert [formatter(v) for v in (2e-3, 5e-4, 1.5, 3e-8)] == ["2 ms", "500 µs", "1.5 s", "30 ns"]


def test_titles_name_the_machine_and_versions() -> None:
    fig = spread_figure(build_table(jit_run()))
    assert fig is not None and fig._suptitle is not None
    title = fig._suptitle.get_text()
    assert "Fixture CPU 9000 (2 cores) · GPU: none" in title
    assert "jax 0.10.2" in title and "torch 2.13.0" in title and "numpy 2.4.0" in title


def test_spread_has_one_box_per_timed_figure_with_its_samples() -> None:
    table = build_table(jit_run())
    fig = spread_figure(table)
    assert fig is not None
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [f"{row.case}\n{row.column}" for row in table.rows]
    # Each box spans the quartiles of that figure's raw samples.
    boxes = [p for p in ax.patches]
    assert len(boxes) == 5
    q1, q3 = quartiles(table.rows[-1].record)  # mlp_train jit: 0.8/1.0/1.4/1.5 ms
    ys = boxes[-1].get_path().vertices[:, 1]
    assert (min(ys), max(ys)) == pytest.approx((q1, q3))


def test_spread_png_written_next_to_the_bars(tmp_path: Path) -> None:
    path = plot_spread(build_table(jit_run()), tmp_path)
    assert path is not None and path.name.endswith("_spread.png")
    assert path.read_bytes()[:8] == PNG_MAGIC
