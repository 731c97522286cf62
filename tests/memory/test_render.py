"""Memory shows in every table and report format, and beside time in the chart."""

from __future__ import annotations

import json

from rich.console import Console

from jax_benchmarks.cli.tables import comparison_table
from jax_benchmarks.report.plot import table_figure
from jax_benchmarks.report.render import render_csv, render_github_benchmark, render_json, render_markdown
from jax_benchmarks.report.rows import build_table
from jax_benchmarks.store.record import Record
from tests.report.fixtures import record, samples

MIB = 2**20
RUN = "20250102T100000Z-bbbbbb"


def records() -> list[Record]:
    ts = "2025-01-02T10:00:00+00:00"
    return [
        record(RUN, ts, "jit", "jax", "f_1000_float32", samples(2e-3), variant="eager",
               memory={"memory_method": "untimed pass", "host_status": "measured", "host_peak_bytes": 3 * MIB}),
        record(RUN, ts, "jit", "jax", "f_1000_float32", samples(1e-3), variant="jit",
               memory={"memory_method": "untimed pass", "host_status": "measured", "host_peak_bytes": MIB,
                       "compiled_status": "measured", "compiled_argument_bytes": 4000,
                       "compiled_output_bytes": 4000, "compiled_temp_bytes": 0, "compiled_code_bytes": 0}),
    ]


def test_the_rich_tables_memory_is_a_table_of_its_own() -> None:
    console = Console(width=200, record=True)
    console.print(comparison_table(records(), "jit"))
    text = console.export_text()
    timing, _, memory = text.partition("jit: memory")
    assert "host peak" not in timing and "MiB" not in timing  # the timing table has one row per case
    rows = {line.split("│")[2].strip(): line for line in memory.splitlines() if line.count("│") > 3}
    assert "f_1000_float32" in rows["host peak"] and "3 MiB" in rows["host peak"] and "1 MiB" in rows["host peak"]
    assert "0 B temp · 7.81 KiB in+out" in rows["compiled"]


def test_markdown_csv_json_and_github_benchmark_carry_memory() -> None:
    table = build_table(records())
    markdown = render_markdown([table])
    assert "| f_1000_float32 · host peak | 3 MiB | 1 MiB |" in markdown
    csv_text = render_csv([table])
    header = csv_text.splitlines()[0].split(",")
    assert "memory.host_peak_bytes" in header and "memory.compiled_temp_bytes" in header
    assert str(3 * MIB) in csv_text
    rows = json.loads(render_json([table]))["tables"][0]["rows"]
    assert rows[0]["memory"]["host_peak_bytes"] == 3 * MIB
    entries = json.loads(render_github_benchmark([table]))
    memory_entries = {e["name"]: e for e in entries if e["unit"] == "bytes"}
    assert memory_entries["jit/f_1000_float32/jax eager/host_peak_bytes"]["value"] == 3 * MIB
    assert memory_entries["jit/f_1000_float32/jax jit/compiled_temp_bytes"]["value"] == 0
    assert {e["unit"] for e in entries} == {"s", "bytes"}


def test_the_chart_has_a_memory_panel_beside_time() -> None:
    fig = table_figure(build_table(records()))
    assert fig is not None
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[-1].startswith("peak memory")
    assert len(fig.axes) == 3  # jit, eager, memory


def test_no_memory_no_panel_and_no_rows() -> None:
    plain = [r.model_copy(update={"memory": {}}) for r in records()]
    fig = table_figure(build_table(plain))
    assert fig is not None and len(fig.axes) == 2
    assert "host peak" not in render_markdown([build_table(plain)])
