"""`report --fail-on-regression` judges memory from single runs; time keeps its rounds rule."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from jax_benchmarks.cli.root import cli
from jax_benchmarks.report.memory_gate import grew, judge_memory
from jax_benchmarks.report.rows import build_table
from jax_benchmarks.store.record import Record
from jax_benchmarks.store.jsonl import append_record
from tests.report.fixtures import record, samples

MIB = 2**20
OLD, NEW = "20250101T100000Z-aaaaaa", "20250102T100000Z-bbbbbb"


def xla(run_id: str, day: str, host_peak: int, temp: int = 1000) -> list[Record]:
    return [record(run_id, f"2025-01-0{day}T10:00:00+00:00", "xla", "jax", "matmul_100x100_float64", samples(1e-3),
                   memory={"host_peak_bytes": host_peak, "compiled_temp_bytes": temp})]


def test_a_aa_pair_of_small_peaks_passes_and_a_doubled_100_mib_peak_fails() -> None:
    """Single runs (no --rounds): peaks a few KiB to a couple of MiB apart on a small case are allocator noise, below
    the 4 MiB floor; a real doubling of a 100 MiB peak is a regression."""
    for before, after in ((16 * 1024, int(1.38 * MIB)), (8 * 1024, int(1.38 * MIB)), (4096, 8192), (MIB, 3 * MIB)):
        assert judge_memory(build_table(xla(NEW, "2", after), xla(OLD, "1", before)).rows, 10).grown == []
    doubled = judge_memory(build_table(xla(NEW, "2", 200 * MIB), xla(OLD, "1", 100 * MIB)).rows, 10)
    assert [c.key for c in doubled.grown] == ["host_peak_bytes"]


def test_memory_is_judged_against_the_spread_its_repeats_show() -> None:
    """Rounds whose peaks range over 20 MiB in one run: a 10 MiB (20 %) growth is within that noise; without repeats
    it is beyond the floor and the threshold."""
    noisy = [r.model_copy(update={"round_index": i, "rounds": 3, "memory": {"host_peak_bytes": (50 + 10 * i) * MIB}})
             for i in range(3) for r in xla(OLD, "1", 0)]
    steady = [r.model_copy(update={"round_index": i, "rounds": 3}) for i in range(3) for r in xla(NEW, "2", 80 * MIB)]
    assert judge_memory(build_table(steady, noisy).rows, 10).grown == []  # latest baseline 70 MiB, spread 20 MiB
    assert judge_memory(build_table(xla(NEW, "2", 80 * MIB), xla(OLD, "1", 70 * MIB)).rows, 10).grown != []


def test_growth_beyond_the_threshold_and_the_floor_is_caught() -> None:
    assert grew(100 * MIB, 120 * MIB, 10, MIB)
    assert not grew(100 * MIB, 105 * MIB, 10, MIB)  # within the threshold
    assert not grew(10_000, 20_000, 10, MIB)  # beyond it, but a few pages
    assert grew(1000, 2000, 10, 0)  # compiled bytes are exact: no floor


def test_judge_memory_lists_what_grew() -> None:
    table = build_table(xla(NEW, "2", 120 * MIB, temp=3000), xla(OLD, "1", 100 * MIB))
    verdict = judge_memory(table.rows, 10)
    assert verdict.judged == 1
    assert {c.key for c in verdict.grown} == {"host_peak_bytes", "compiled_temp_bytes"}
    assert "+20.0 %" in next(c.text() for c in verdict.grown if c.key == "host_peak_bytes")


def write(path: Path, records: list[Record]) -> None:
    for r in records:
        append_record(path, r)


def test_the_command_fails_on_a_memory_regression_from_single_runs(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    write(results, xla(OLD, "1", 100 * MIB) + xla(NEW, "2", 150 * MIB))
    outcome = CliRunner().invoke(cli, ["report", "--results", str(results), "--baseline", OLD,
                                       "--fail-on-regression", "10"])
    assert outcome.exit_code == 1
    assert "memory: 1 figure(s) larger than the baseline" in outcome.output and "host_peak_bytes" in outcome.output
    assert "by more than 4 MiB or the spread their repeats show" in outcome.output  # the floor stated


def rounds(run_id: str, day: str, host_peak: int, count: int) -> list[Record]:
    """`count` rounds of the same run (fresh processes), each with the same time and memory figures."""
    return [r.model_copy(update={"round_index": i, "rounds": count}) for i in range(count)
            for r in xla(run_id, day, host_peak)]


def test_unchanged_memory_passes_when_time_can_be_judged_too(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    write(results, rounds(OLD, "1", 100 * MIB, 3) + rounds(NEW, "2", 100 * MIB + 4096, 3))
    outcome = CliRunner().invoke(cli, ["report", "--results", str(results), "--baseline", OLD,
                                       "--fail-on-regression", "10"])
    assert outcome.exit_code == 0, outcome.output
    assert "no memory regression: 1 figure(s) judged" in outcome.output
    assert "no regression: 1 figure(s) judged" in outcome.output


def test_unchanged_memory_from_single_runs_does_not_pass_time_it_could_not_judge(tmp_path: Path) -> None:
    """Memory is judged from single runs, but the gate was also asked about time: it says so and never passes."""
    results = tmp_path / "results.jsonl"
    write(results, xla(OLD, "1", 100 * MIB) + xla(NEW, "2", 100 * MIB + 4096))
    outcome = CliRunner().invoke(cli, ["report", "--results", str(results), "--baseline", OLD,
                                       "--fail-on-regression", "10"])
    assert outcome.exit_code == 2, outcome.output
    assert "no memory regression: 1 figure(s) judged" in outcome.output
    assert "record both runs with --rounds 3" in outcome.output
