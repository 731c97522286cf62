"""The table of modes (issue 52 item 6): one row per framework × mode × precision with its train step, images/s,
compile time, time to the target accuracy, final test accuracy and host and device peak memory; a figure that
cannot be computed is said (never 0), and the table stays whole at 80 columns. Synthetic records, known answers."""

from __future__ import annotations

import io
from types import SimpleNamespace

from rich.console import Console

from jax_benchmarks.mnist.cli import print_modes
from jax_benchmarks.mnist.findings import findings, modes_table
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.build import build_page
from jax_benchmarks.verdict.page import evidence_table
from tests.verdict.fixtures import epochs, matmul

MIB = 2**20
NO_DEVICE = "unavailable: cpu reports no memory statistics"


def with_memory(records: list[Record], host: int | None) -> list[Record]:
    """The train steps' memory as a CPU run records it: the host's peak (or why not), no device statistics."""
    memory = {"host_status": "measured", "host_peak_bytes": host} if host is not None else {}
    return [r.model_copy(update={"memory": {**memory, "device_status": NO_DEVICE}})
            if r.case.startswith("train_step_") else r for r in records]


def three_modes() -> list[Record]:
    # Per seed: Flax jitted (compile 2 s, 10 s epochs) reaches 85 % after epoch 1; eager PyTorch (20 s epochs,
    # nothing compiled) after epoch 2; compiled PyTorch (compile 30 s, 5 s epochs) never within its 2 epochs.
    return (with_memory(epochs("flax", 10.0, [0.85, 0.9], mode="jit", compile_s=2.0), 24 * MIB)
            + with_memory(epochs("pytorch", 20.0, [0.8, 0.86], mode="eager"), 48 * MIB)
            + with_memory(epochs("pytorch", 5.0, [0.7, 0.8], mode="compile:default", compile_s=30.0), None))


def test_one_row_per_framework_mode_and_precision_with_the_time_to_the_target() -> None:
    table = modes_table(three_modes(), 0.85)
    assert table.headers == ("framework mode precision", "train step", "images/s", "compile", "time to 85%",
                             "final test accuracy", "host peak", "device peak")
    rows = {row[0]: row[1:] for row in table.rows}
    # Time to 85 %: the compile plus the epochs up to the first validation at 85 % (the MLPerf score of 3 seeds).
    assert rows["flax jit float32"] == ("100 ms", "1,280", "2 s", "12 s", "90.0%", "24 MiB", "—")
    assert rows["pytorch eager float32"] == ("200 ms", "640", "—", "40 s", "86.0%", "48 MiB", "—")
    assert rows["pytorch compile:default float32"] == ("50 ms", "2,560", "30 s", "not reached in 2 epoch(s)",
                                                       "80.0%", "—", "—")
    # Each '—' says why, naming its rows; nothing that cannot be computed is shown as 0.
    assert "— compile: the step ran eagerly: nothing is compiled (pytorch eager float32)" in table.notes
    assert f"— device peak: {NO_DEVICE} (flax jit float32, pytorch eager float32, pytorch compile:default " \
           "float32)" in table.notes
    assert "— host peak: not measured (pytorch compile:default float32)" in table.notes
    assert all(cell != "0" and not cell.startswith("0 ") for row in table.rows for cell in row)


def test_a_cpu_run_has_no_device_peak_and_the_table_says_why() -> None:
    # As `mnist all` records on a CPU: the host's peak of the train step, no device figure nor status at all.
    records = [r.model_copy(update={"memory": {"host_status": "measured", "host_peak_bytes": 3 * MIB}})
               for r in epochs("flax", 10.0, [0.9], rounds=1, mode="jit", compile_s=2.0)]
    table = modes_table(records)
    assert table.rows[0][6:] == ("3 MiB", "—")
    assert "— device peak: trained on the CPU: no device memory apart from the host's (flax jit float32)" in table.notes
    assert any(note.startswith("host and device peak: the train step's") for note in table.notes)


def test_the_target_is_one_for_every_row_and_derived_from_all_of_them() -> None:
    # No --target-accuracy: the lowest best accuracy of any run (80 %, compiled PyTorch's), rounded down: every row
    # reaches it, eager PyTorch after its first epoch (20 s), compiled PyTorch after its second (30 s + 2 × 5 s).
    table = modes_table(three_modes())
    assert table.headers[4] == "time to 80%"
    assert [row[4] for row in table.rows] == ["12 s", "20 s", "40 s"]
    assert any("the lowest best test accuracy of any framework and run, 80.0%" in note for note in table.notes)


def test_a_target_no_better_than_chance_is_not_set_and_the_table_says_why() -> None:
    table = modes_table(epochs("flax", 1.0, [0.09], mode="jit") + epochs("pytorch", 1.0, [0.3], mode="eager"))
    assert table.headers[4] == "time to target"
    assert [row[4] for row in table.rows] == ["—", "—"]
    assert any(note.startswith("— time to target: a run's best test accuracy is 9.0%, no better than chance")
               for note in table.notes)


def test_the_verdicts_accuracy_check_shows_the_table_of_modes() -> None:
    check = next(f for f in findings(three_modes(), 0.85) if f.key == "accuracy-check")
    assert check.headers[:8] == modes_table(three_modes(), 0.85).headers
    rows = {row[0]: row for row in check.rows}
    assert rows["pytorch compile:default float32"][4:] == ("not reached in 2 epoch(s)", "80.0%", "—", "—", "3",
                                                           "-6.00", "flagged: more than 0.5 points below")
    assert check.notes == modes_table(three_modes(), 0.85).notes  # why each '—' is one, under the rows


def test_the_verdict_page_shows_why_a_cell_of_the_table_of_modes_is_a_dash() -> None:
    check = next(f for f in findings(three_modes(), 0.85) if f.key == "accuracy-check")
    html = evidence_table(check)
    assert "<th>time to 85%</th>" in html and "<td>not reached in 2 epoch(s)</td>" in html
    assert "— compile: the step ran eagerly: nothing is compiled (pytorch eager float32)" in html


def test_the_markdown_page_shows_the_table_of_modes_and_why_a_cell_is_a_dash() -> None:
    """The markdown page (the GPU plan's, one pasted into a pull request) shows no finding's evidence, but the table
    of modes is what a reader came for: a row per framework × mode × precision under its own heading."""
    page = build_page(three_modes(), None, None, "markdown", target=0.85)
    lines = page.splitlines()
    start = lines.index("### CNN accuracy by mode and precision")
    table = [line for line in lines[start + 2:] if line.startswith("|")]
    assert table[0].startswith("| framework mode precision | train step | images/s | compile | time to 85% |")
    assert {row.split(" | ")[0] for row in table[2:]} == {"| flax jit float32", "| pytorch eager float32",
                                                          "| pytorch compile:default float32"}
    assert "— compile: the step ran eagerly: nothing is compiled (pytorch eager float32)  " in lines
    # nothing trained: no such section (xla's records have no table of modes), the findings table as ever
    other = build_page(matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.008), None, None, "markdown")
    assert "| dense linear algebra: matmul |" in other and "### CNN accuracy by mode and precision" not in other


def printed(records: list[Record]) -> str:
    out = io.StringIO()
    print_modes(SimpleNamespace(records=records), Console(file=out, width=80, force_terminal=False, color_system=None))
    return out.getvalue()


def test_mnist_prints_the_table_of_modes_whole_at_80_columns() -> None:
    bf16 = [r.model_copy(update={"env": {**r.env, "precision": "bf16"}})
            for r in epochs("pytorch", 8.0, [0.85], mode="compile:max-autotune", compile_s=3.0)]
    text = printed(three_modes() + bf16)
    lines = text.splitlines()
    assert lines[0].startswith("mnist: the table of modes")
    assert max(len(line) for line in lines) <= 80
    joined = " ".join(text.split())
    for figure in ("12 s", "40 s", "2,560", "24 MiB", "compile:max-autotune", "bf16",
                   "time to 80%", "— compile: the step ran eagerly"):
        assert figure in joined, figure


def test_a_run_that_trained_nothing_prints_no_table_of_modes() -> None:
    validation = [r for r in epochs("pytorch", 1.0, [0.9], rounds=1) if r.case.startswith("validation_")]
    assert printed(validation) == ""


def test_a_figure_taken_on_a_busy_machine_says_so_on_its_cell() -> None:
    """Busy figures are shown, never ranked, and the reason stands on the row (issue 53), not only in a note."""
    busy = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}
    records = [r.model_copy(update={"contention": busy}) if r.backend == "flax" and r.case.startswith("train_step_")
               else r for r in three_modes()]
    rows = {row[0]: row[1:] for row in modes_table(records, 0.85).rows}
    assert rows["flax jit float32"][:3] == ("100 ms busy", "1,280 busy", "2 s busy")  # all three: the step's
    assert rows["flax jit float32"][3] == "12 s"  # its epochs were taken quiet
    assert "busy" not in " ".join(rows["pytorch eager float32"])
    epochs_busy = [r.model_copy(update={"contention": busy}) if r.backend == "pytorch" and r.variant is None
                   and not r.case.startswith("train_step_") else r for r in three_modes()]
    assert modes_table(epochs_busy, 0.85).rows[1][4] == "40 s busy"
