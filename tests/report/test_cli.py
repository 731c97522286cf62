"""`python main.py report` on fixture results: selection, every format, baselines, robustness."""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.help_probe import probe
from tests.conftest import invoke
from jax_benchmarks.store.record import Record
from jax_benchmarks.store.jsonl import read_records
from tests.report.fixtures import (
    ENV, JIT_RUN, MNIST_RUN, XLA_NEW, XLA_OLD, all_records, mnist_run, record, samples, write_results, xla_rounds,
    xla_run,
)


def read_jsonl_records(path: Path) -> list[Record]:
    return list(read_records(path, lambda message: None))



@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # rich wraps cells at 80 columns when not on a terminal; keep case names on one line.
    monkeypatch.setenv("COLUMNS", "250")


def report(*args: str) -> Any:
    return invoke("report", *args)


def report_json(*args: str) -> dict[str, Any]:
    result = report(*args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def rows_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for table in data["tables"] for row in table["rows"]]


# ------------------------------------------------------------ default ---

def test_default_shows_latest_run_of_each_group(results: Path) -> None:
    result = report("--results", str(results))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert XLA_NEW in out and JIT_RUN in out and MNIST_RUN in out
    assert XLA_OLD not in out  # an older run of a group is not the default
    # One environment header per table.
    assert out.count("CPU: Fixture CPU 9000 (2 cores)") == 3
    assert "jax 0.10.2" in out and "GPU: none" in out
    for column in ("numpy", "pytorch", "jax", "jax eager", "jax jit", "flax"):
        assert column in out
    assert "matmul_100x100_float64" in out and "(fastest)" in out
    assert "noisy" in out  # the jit run has a noisy figure
    # Metric rows, under their case; this epoch's case does not say whose accuracy it holds: the label claims neither
    # training nor test (tests/report/test_metric_labels.py).
    assert "epoch_60000_float32" in out and "· accuracy (0–1)" in out


def test_the_report_says_which_runs_it_shows_and_marks_a_quick_run(results_path: Path) -> None:
    quick_env = {**ENV, "quick": True}
    write_results(results_path, [*xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, "quick": False}),
                                 *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env=quick_env)])
    table = report("--results", str(results_path))
    assert table.stdout.splitlines()[0] == "Shown: the latest run of each group; --run RUN_ID or --history for the others."
    words = " ".join(table.stdout.split())
    assert f"xla · run {XLA_NEW} · 2025-01-02T10:00:00+00:00 · --quick sizes: a smoke test, not a result" in words
    markdown = report("--results", str(results_path), "--group", "xla", "--format", "markdown").stdout
    assert markdown.startswith("Shown: the latest xla run; --run RUN_ID or --history for the others.\n\n")
    older = report("--results", str(results_path), "--run", XLA_OLD)  # a run named: no such line, and not quick
    assert "Shown:" not in older.stdout and "--quick sizes" not in older.stdout and XLA_OLD in older.stdout


def test_tables_in_cli_group_order(results: Path) -> None:
    data = report_json("--results", str(results))
    assert [t["group"] for t in data["tables"]] == ["xla", "jit", "mnist"]


def test_filters_run_prefix_group_backend(results: Path) -> None:
    data = report_json("--results", str(results), "--run", XLA_OLD[:12])
    assert {(t["group"], t["run_id"]) for t in data["tables"]} == {("xla", XLA_OLD)}

    data = report_json("--results", str(results), "--group", "jit")
    assert [t["run_id"] for t in data["tables"]] == [JIT_RUN]

    data = report_json("--results", str(results), "--backend", "numpy")
    rows = rows_of(data)
    assert rows and {r["backend"] for r in rows} == {"numpy"}
    assert {r["group"] for r in rows} == {"xla", "jit"}


@pytest.mark.parametrize(
    ("args", "option", "needle"),
    [
        (("--run", "19990101"), "--run", "latest runs"),
        (("--run", "2025"), "--run", "matches"),
        (("--backend", "tensorflow"), "--backend", "available: flax, jax, numpy, pytorch"),
        (("--group", "autograd"), "--group", "available: jit, mnist, xla"),
        (("--group", "report"), "--group", "one of"),
        (("--format", "pdf"), "--format", "pdf"),
        (("--history", "--run", XLA_NEW), "--history", "--run needs --format html"),
        (("--history", "--baseline", "previous"), "--history", "--baseline needs --format html"),
        (("--markdown", "--format", "csv"), "--markdown", "conflicts"),
        (("--fail-on-regression", "5"), "--fail-on-regression", "needs --baseline"),
        (("--baseline", XLA_OLD, "--fail-on-regression", "-1"), "--fail-on-regression", "0 ≤ value"),
        (("--baseline", "nowhere/base.jsonl"), "--baseline", "does not exist"),
        (("--baseline", "1999"), "--baseline", "no run"),
    ],
)
def test_bad_options_exit_2_with_one_line(results: Path, args: tuple[str, ...], option: str, needle: str) -> None:
    result = report("--results", str(results), *args)
    assert result.exit_code == 2, result.output
    assert option in result.stderr and needle in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------ formats ---

def test_markdown(results: Path) -> None:
    result = report("--results", str(results), "--markdown")
    assert result.exit_code == 0, result.stderr
    md = result.stdout
    assert md == report("--results", str(results), "--format", "markdown").stdout
    assert md.count("CPU: Fixture CPU 9000") == 3  # once per table
    lines = md.splitlines()
    header = lines.index("| case | numpy | pytorch | jax |")
    assert lines[header + 1] == "|---|---:|---:|---:|"
    matmul = next(line for line in lines if line.startswith("| matmul_100x100_float64 |"))
    numpy_cell, pytorch_cell, jax_cell = [c.strip() for c in matmul.strip("|").split("|")[1:]]
    assert numpy_cell.endswith("(fastest)") and "±" in numpy_cell
    ratio = statistics.median(samples(1.2e-3)) / statistics.median(samples(1e-3))
    assert jax_cell.endswith(f"×{ratio:.2f}")
    assert pytorch_cell.endswith("×1.50")
    mlp = next(line for line in lines if line.startswith("| mlp_train_64_float32 |"))
    assert mlp.split("|")[2].strip() == "—"  # numpy has no figure for this case
    assert mlp.rstrip(" |").endswith("(fastest) ~")  # the noisy jit figure is marked
    assert "~ noisy" in md


def test_a_later_record_of_the_same_cell_wins_in_every_format(results_path: Path) -> None:
    ts = "2025-01-02T10:00:00+00:00"
    write_results(results_path, [
        record(XLA_NEW, ts, "xla", "numpy", "matmul_10x10_float64", samples(1e-3)),
        record(XLA_NEW, ts, "xla", "jax", "matmul_10x10_float64", samples(3e-3)),
        record(XLA_NEW, ts, "xla", "numpy", "matmul_10x10_float64", samples(2e-3)),  # re-measured
    ])
    table = report("--results", str(results_path)).stdout
    md = report("--results", str(results_path), "--markdown").stdout
    assert "2 ms ± 40 µs (fastest)" in table and "3 ms ± 60 µs ×1.50" in table
    assert "| matmul_10x10_float64 | 2 ms ± 40 µs (fastest) | 3 ms ± 60 µs ×1.50 |" in md
    rows = rows_of(report_json("--results", str(results_path)))
    assert [(r["backend"], r["median_s"]) for r in rows] == [
        ("numpy", pytest.approx(2e-3)), ("jax", pytest.approx(3e-3))]


def test_csv(results: Path) -> None:
    result = report("--results", str(results), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    expected = [r for r in all_records() if r.run_id != XLA_OLD]
    assert len(rows) == len(expected)
    by_key = {(r["run_id"], r["case"], r["column"]): r for r in rows}
    numpy_matmul = by_key[(XLA_NEW, "matmul_100x100_float64", "numpy")]
    assert float(numpy_matmul["median_s"]) == pytest.approx(statistics.median(samples(1e-3)))
    assert float(numpy_matmul["ratio_to_fastest"]) == 1.0
    jit = by_key[(JIT_RUN, "selu_10000_float32", "jax jit")]
    assert jit["variant"] == "jit" and float(jit["compile_s"]) == pytest.approx(0.03)
    assert by_key[(MNIST_RUN, "epoch_60000_float32", "flax")]["metric.accuracy"] == "0.981"
    assert numpy_matmul["verdict"] == ""  # no baseline asked


def test_json(results: Path) -> None:
    data = report_json("--results", str(results))
    table = data["tables"][0]
    assert table["env"]["cpu"] == "Fixture CPU 9000" and table["baseline"] is None
    row = next(r for r in table["rows"] if r["column"] == "jax" and r["case"].startswith("matmul"))
    assert row["ratio_to_fastest"] == pytest.approx(1.2)
    assert row["noisy"] is False and row["repeats"] == 10


# ----------------------------------------------------------- baseline ---

@pytest.fixture
def rounds_results(results_path: Path) -> Path:
    """Two --rounds runs: the later one has numpy matmul 2.4× slower, the rest jitters between rounds."""
    return write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", {"matmul_100x100_float64": 2.4}, seed=2),
    ])


def test_baseline_run_id_flags_the_slower_figure(rounds_results: Path) -> None:
    data = report_json("--results", str(rounds_results), "--baseline", XLA_OLD)
    rows = {r["case"]: r for r in rows_of(data)}
    slower = rows["matmul_100x100_float64"]
    assert slower["verdict"] == "slower" and slower["test"] == "welch-rounds"
    assert slower["p_value"] < 0.05
    assert 125 < slower["change_pct"] < 155
    for case in ("inverse_100x100_float64", "sum_100x100_float64"):
        assert rows[case]["verdict"] == "unchanged" and abs(rows[case]["change_pct"]) < 5
    assert data["tables"][0]["baseline"].endswith(f"change against run {XLA_OLD}")


def test_baseline_previous_equals_explicit_run(rounds_results: Path) -> None:
    explicit = report_json("--results", str(rounds_results), "--baseline", XLA_OLD)
    previous = report_json("--results", str(rounds_results), "--baseline", "previous")
    assert rows_of(previous) == rows_of(explicit)


def test_baseline_table_and_markdown_show_the_verdicts(rounds_results: Path) -> None:
    table = report("--results", str(rounds_results), "--baseline", XLA_OLD)
    assert table.exit_code == 0, table.stderr
    assert "change against the baseline" in table.stdout and "slower" in table.stdout
    assert "5 vs 5 round(s), fastest-sample ratio 95 % CI" in table.stdout
    md = report("--results", str(rounds_results), "--baseline", XLA_OLD, "--markdown").stdout
    assert "| case | backend | baseline | now | change | verdict | test |" in md
    assert any(line.startswith("| matmul_100x100_float64 | numpy |") and "| slower |" in line
               for line in md.splitlines())


def test_fail_on_regression_exit_1_when_clearly_slower(rounds_results: Path) -> None:
    result = report("--results", str(rounds_results), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 1, result.stderr
    assert "regression: 1 figure(s)" in result.stderr and "matmul_100x100_float64 numpy +1" in result.stderr
    assert "matmul_100x100_float64" in result.stdout  # the report is printed before failing


def test_fail_on_regression_respects_the_threshold(rounds_results: Path) -> None:
    result = report("--results", str(rounds_results), "--baseline", XLA_OLD, "--fail-on-regression", "200")
    assert result.exit_code == 0, result.stderr
    assert "no regression: 3 figure(s) judged" in result.stderr


def test_aa_drift_between_runs_is_not_flagged_but_2x_is(results_path: Path) -> None:
    """A/A: the second run is 5 % slower across the board (machine drift) and every round jitters: exit 0.
    A/B: matmul and inverse 2× slower on top of the same drift: exit 1, naming exactly those two."""
    a = xla_rounds("20250101T100000Z-aaaaaa", "2025-01-01T10:00:00+00:00", seed=3)
    a2 = xla_rounds("20250101T110000Z-aaaaab", "2025-01-01T11:00:00+00:00", drift=1.05, seed=4)
    write_results(results_path, [*a, *a2])
    same = report("--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert same.exit_code == 0, same.stderr
    assert "no regression: 3 figure(s) judged" in same.stderr
    b = xla_rounds("20250101T120000Z-bbbbbb", "2025-01-01T12:00:00+00:00", drift=1.05, seed=5,
                   slowdown={"matmul_100x100_float64": 2.0, "inverse_100x100_float64": 2.0})
    write_results(results_path, [*a, *b])
    slower = report("--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert slower.exit_code == 1, slower.stderr
    assert "regression: 2 figure(s)" in slower.stderr
    assert "matmul_100x100_float64" in slower.stderr and "inverse_100x100_float64" in slower.stderr
    assert "sum_100x100_float64" not in slower.stderr


def test_fail_on_regression_exit_0_against_an_equal_baseline(rounds_results: Path, tmp_path: Path) -> None:
    now = [r for r in read_jsonl_records(rounds_results) if r.run_id == XLA_NEW]
    equal = write_results(tmp_path / "baseline.jsonl", [r.model_copy(update={"run_id": "base"}) for r in now])
    result = report("--results", str(rounds_results), "--baseline", str(equal), "--fail-on-regression", "0")
    assert result.exit_code == 0, result.stderr
    verdicts = {r["verdict"] for r in rows_of(report_json("--results", str(rounds_results), "--baseline", str(equal)))}
    assert verdicts == {"unchanged"}


def test_single_round_figures_are_too_few_samples(results_path: Path, tmp_path: Path) -> None:
    base = write_results(tmp_path / "base.jsonl", mnist_run("old", epoch_s=10.0))
    write_results(results_path, mnist_run("much", epoch_s=13.0))
    rows = rows_of(report_json("--results", str(results_path), "--baseline", str(base)))
    assert {(r["verdict"], r["test"]) for r in rows} == {("too few samples", "too-few-rounds")}
    assert {round(r["change_pct"], 1) for r in rows} == {30.0}
    result = report("--results", str(results_path), "--baseline", str(base), "--fail-on-regression", "20")
    # The gate never passes what it could not judge: exit 2 and what to change, the table still printed.
    assert result.exit_code == 2, result.stderr
    assert "2 of 2 figure(s) cannot be judged: 1 round(s) in a run" in result.stderr
    assert "--rounds 3" in result.stderr and "no regression" not in result.stderr
    assert "too few samples" in result.stdout


def test_the_gate_never_passes_single_round_runs_2_to_3_times_slower(results_path: Path) -> None:
    write_results(results_path, [*mnist_run("20250101T120000Z-aaaaaa", epoch_s=10.0,
                                            timestamp="2025-01-01T12:00:00+00:00"),
                                 *mnist_run("20250102T120000Z-bbbbbb", epoch_s=25.0)])
    result = report("--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "5")
    assert result.exit_code == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == ["Error: --fail-on-regression: 2 of 2 figure(s) cannot be judged: 1 round(s) in a run, the "
                      "variation between runs needs 3 or more; record both runs with --rounds 3"]


def test_previous_without_earlier_run_says_so(results: Path) -> None:
    result = report("--results", str(results), "--group", "jit", "--baseline", "previous",
                    "--fail-on-regression", "5")
    assert result.exit_code == 2  # nothing judged is no pass
    assert "no earlier jit run on this machine to compare with" in result.stdout
    assert "no figure of this report has a baseline to compare with, so nothing was judged" in result.stderr


def test_previous_passes_over_a_run_of_other_settings_and_the_gate_says_to_run_again(results_path: Path) -> None:
    """One `xla all --quick --rounds 3` after a verdict's xla run (--threads 1): that run is no baseline."""
    verdicts_run = xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, "threads": 1, "quick": True})
    mine = xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env={**ENV, "threads": None, "quick": True})
    write_results(results_path, [*verdicts_run, *mine])
    result = report("--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 2, result.stderr
    assert ("no earlier xla run on this machine with the same settings to compare with (run "
            f"{XLA_OLD} was measured with other settings (threads: 1 → default)): run the same command again to "
            "make a baseline") in " ".join(result.stdout.split())
    assert "run the benchmark again" in result.stderr and "change against run" not in result.stdout
    # Another verdict later, then the same command again: the earlier run of the same settings is the baseline,
    # and its note says which run it took and why.
    later_verdict = "20250102T120000Z-dddddd"
    again = xla_rounds("20250103T100000Z-eeeeee", "2025-01-03T10:00:00+00:00", seed=3,
                       env={**ENV, "threads": None, "quick": True})
    write_results(results_path, [*verdicts_run, *mine, *[r.model_copy(update={
        "run_id": later_verdict, "timestamp": r.timestamp.replace("01T10", "02T12")}) for r in verdicts_run], *again])
    data = report_json("--results", str(results_path), "--baseline", "previous")
    assert data["tables"][0]["baseline"] == (
        f"change against run {XLA_NEW} (the latest earlier run with the same settings; run {later_verdict} was "
        "measured with other settings (threads: 1 → default))")


def test_the_gate_refuses_a_named_baseline_of_other_settings_in_one_line(results_path: Path) -> None:
    write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, "threads": 1, "quick": False}),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env={**ENV, "threads": 1, "quick": True})])
    result = report("--results", str(results_path), "--baseline", XLA_OLD, "--fail-on-regression", "10")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("Error: Invalid value for '--baseline': run 20250101T100000Z-aaaaaa was measured "
                                    "with other settings than xla run 20250102T100000Z-bbbbbb (quick: False → True)")
    shown = report("--results", str(results_path), "--baseline", XLA_OLD)  # without the gate: shown, and said
    assert shown.exit_code == 0 and "WARNING: the baseline was measured with other settings (quick: False → True)" \
        in shown.stdout


# ------------------------------------------- environment of the baseline ---

def test_environment_differences_are_listed_above_the_verdicts(results_path: Path) -> None:
    other_env = {**ENV, "numpy": "2.5.0", "threads": 1, "blas_threads": 1, "xla_flags": "--xla_cpu_multi_thread_eigen=false"}
    write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, "threads": None, "blas_threads": 2}),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env=other_env),
    ])
    result = report("--results", str(results_path), "--baseline", XLA_OLD)  # previous: only of the same --threads
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    line = next(line for line in out.splitlines() if line.startswith("environment differs from the baseline"))
    for change in ("numpy: 2.4.0 → 2.5.0", "threads: default → 1", "blas_threads: 2 → 1",
                   "xla_flags: not recorded → --xla_cpu_multi_thread_eigen=false"):
        assert change in line
    assert out.index("environment differs") < out.index("change against the baseline")
    assert any(line.startswith("change against run") for line in out.splitlines())  # its own line, not "\\n"
    assert "another machine" not in result.stderr


def test_other_framework_versions_are_warned_and_the_same_ones_are_not(results_path: Path) -> None:
    newer = {**ENV, "torch": "2.13.0", "jax": "0.11.0"}
    write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, "torch": "2.11.0", "jax": None}),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env=newer),
    ])
    result = report("--results", str(results_path), "--baseline", "previous")
    assert result.exit_code == 0, result.stderr
    warning = ("the baseline used other framework versions (jax not installed → 0.11.0, torch 2.11.0 → 2.13.0): "
               "its differences may come from them, not from code changes")
    assert f"warning: {warning}" in result.stderr
    assert f"WARNING: {warning}" in result.stdout
    assert result.stdout.index("WARNING: the baseline used") < result.stdout.index("change against the baseline")

    write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**newer, "threads": 1}),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env=newer),
    ])
    same = report("--results", str(results_path), "--baseline", "previous")
    assert same.exit_code == 0, same.stderr
    assert "framework versions" not in same.stderr + same.stdout
    assert "threads: 1 → not recorded" in same.stdout  # the other difference is still listed


def test_a_different_gpu_policy_is_listed_above_the_verdicts(results_path: Path) -> None:
    policy = {"precision": "float32", "conv_autotune": True, "jax_gpu_memory": "on demand"}
    write_results(results_path, [
        *xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1, env={**ENV, **policy}),
        *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, env={**ENV, **policy, "precision": "tf32"}),
    ])
    result = report("--results", str(results_path), "--baseline", XLA_OLD)  # previous: only of the same policy
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("environment differs"))
    assert "precision: float32 → tf32" in line and "jax_gpu_memory" not in line


def test_another_machine_is_warned_and_previous_means_this_machine(results_path: Path) -> None:
    here, there = {**ENV, "host": "ci-1"}, {**ENV, "host": "laptop", "cpu": "Other CPU 1"}
    write_results(results_path, [
        *xla_rounds("20250101T100000Z-aaaaaa", "2025-01-01T10:00:00+00:00", seed=1, env=here),
        *xla_rounds("20250101T110000Z-cccccc", "2025-01-01T11:00:00+00:00", seed=2, env=there),
        *xla_rounds("20250101T120000Z-bbbbbb", "2025-01-01T12:00:00+00:00", seed=3, env=here),
    ])
    data = report_json("--results", str(results_path), "--baseline", "previous")
    assert data["tables"][0]["baseline"].endswith("change against run 20250101T100000Z-aaaaaa")
    explicit = report("--results", str(results_path), "--baseline", "20250101T110000Z-cccccc")
    assert explicit.exit_code == 0, explicit.stderr
    assert "warning: the baseline was measured on another machine (laptop: Other CPU 1" in explicit.stderr
    assert "WARNING: the baseline was measured on another machine" in explicit.stdout
    assert "host: laptop → ci-1" in explicit.stdout


# --------------------------------------------------------- robustness ---

def test_corrupt_lines_are_skipped_with_their_numbers(results_path: Path) -> None:
    good = xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", jax_matmul_s=1e-3)
    first, third = good[0], good[3]  # numpy matmul, numpy inv
    lost = record(XLA_NEW, "2025-01-02T10:00:01+00:00", "xla", "jax", "solve_10_float64", samples(1e-4))
    results_path.write_text(
        first.model_dump_json() + "\n"
        + "this is not JSON {\n"
        + third.model_dump_json() + "\n"
        + lost.model_dump_json()[:60]  # an interrupted write: truncated, no newline
    )
    result = report("--results", str(results_path), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1  # one summary, not one warning per line
    assert f"{results_path}: skipped 2 corrupt or impossible record(s) at line(s) 2, 4" in warnings[0]
    cases = {row["case"] for row in csv.DictReader(io.StringIO(result.stdout))}
    assert cases == {"matmul_100x100_float64", "inv_100x100_float64"}


def test_empty_results_file_exit_2(results_path: Path) -> None:
    results_path.write_text("\n")
    result = report("--results", str(results_path))
    assert result.exit_code == 2
    assert "no benchmark records" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_only_corrupt_lines_exit_2(results_path: Path) -> None:
    results_path.write_text("{broken\n")
    result = report("--results", str(results_path))
    assert result.exit_code == 2
    assert f"{results_path}: skipped 1" in result.stderr and "line(s) 1 " in result.stderr
    assert "no benchmark records" in result.stderr


def test_missing_results_file_exit_2() -> None:
    result = report()  # the default data/results/results.sqlite does not exist in tmp_path
    assert result.exit_code == 2
    assert "'--results'" in result.stderr and "does not exist" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- plot ---

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_plot_writes_valid_pngs(results: Path, tmp_path: Path) -> None:
    from PIL import Image

    result = report("--results", str(results), "--plot")
    assert result.exit_code == 0, result.stderr
    paths = [Path(line.removeprefix("chart: ")) for line in result.stdout.splitlines() if line.startswith("chart: ")]
    assert [p.name for p in paths] == [f"{group}_{run}{kind}.png" for group, run in
                                       (("xla", XLA_NEW), ("jit", JIT_RUN), ("mnist", MNIST_RUN))
                                       for kind in ("", "_spread")]
    for path in paths:
        assert path.parent == Path("data/plots") and (tmp_path / path).is_file()
        assert path.read_bytes()[:8] == PNG_MAGIC
        with Image.open(path) as image:
            image.verify()
        with Image.open(path) as image:
            assert image.format == "PNG" and image.width > 200 and image.height > 200


def test_plot_paths_go_to_stderr_with_data_formats(results: Path) -> None:
    result = report("--results", str(results), "--plot", "--group", "jit", "--format", "json")
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)  # stdout stays pure JSON
    assert f"chart: data/plots/jit_{JIT_RUN}.png" in result.stderr


# ---------------------------------------------------------------- help ---

def test_help_lists_the_options() -> None:
    result = report("--help")
    assert result.exit_code == 0
    for option in ("--run RUN_ID", "--group", "--backend", "--format", "--history",
                   "--baseline RUN_ID|PATH|previous", "--fail-on-regression PCT", "--plot", "--results"):
        assert option in result.stdout
    assert "--markdown" not in result.stdout  # hidden alias of --format markdown (still accepted)


def test_help_is_lazy() -> None:
    result = probe(["report"], ("torch", "jax", "flax", "comet_ml", "scipy", "matplotlib", "rich"))
    assert result["code"] == 0 and result["heavy"] == [], result
