"""Picking runs: one grouping pass (store.views.group_runs / RunHistory) gives the same runs as before."""

from __future__ import annotations

from jax_benchmarks.store.record import Record
from jax_benchmarks.store.views import RunHistory, group_runs, latest_runs, previous_run, split_runs
from tests.report.fixtures import ENV, record, samples


def rec(run: str, minute: int, group: str = "xla", cpu: str = "Fixture CPU 9000") -> Record:
    return record(run, f"2025-01-01T00:{minute:02d}:00+00:00", group, "numpy", "m_1_float64", samples(1.0)
                  ).model_copy(update={"env": {**ENV, "cpu": cpu}})


def ids(runs: list[list[Record]]) -> list[str]:
    return [run[0].run_id for run in runs]


def test_runs_are_grouped_by_group_and_run_in_one_pass() -> None:
    # Lines of two runs interleaved (two writers), and one run id that holds two groups.
    records = [rec("r1", 1), rec("r2", 2, "jit"), rec("r1", 3), rec("r3", 4), rec("r3", 5, "jit")]
    grouped = group_runs(records)
    assert {group: ids(runs) for group, runs in grouped.items()} == {"xla": ["r1", "r3"], "jit": ["r2", "r3"]}
    assert [len(run) for run in grouped["xla"]] == [2, 1]
    assert sorted(ids(split_runs(records))) == ["r1", "r2", "r3", "r3"]
    assert sorted((run[0].group, run[0].run_id) for run in latest_runs(records)) == [("jit", "r3"), ("xla", "r3")]


def test_previous_is_the_latest_earlier_run_of_the_group_that_is_accepted() -> None:
    # Run order is the time of a run's last record, whatever the order of the lines in the file.
    records = [rec("r3", 30), rec("r1", 10), rec("r2", 20, cpu="Other CPU"), rec("r1", 12), rec("j", 25, "jit")]
    history = RunHistory(records)
    current = [r for r in records if r.run_id == "r3"]
    assert ids(list(history.earlier(current))) == ["r2", "r1"]
    assert history.previous(current)[0].run_id == "r2"
    same_cpu = history.previous(current, lambda run: run[-1].env["cpu"] == "Fixture CPU 9000")
    assert [r.run_id for r in same_cpu] == ["r1", "r1"]
    assert previous_run(records, current)[0].run_id == "r2"
    first = [r for r in records if r.run_id == "r1"]
    assert history.previous(first) == [] and list(history.earlier(first)) == []
    assert history.previous([rec("m", 40, "mnist")]) == []  # a group with no runs at all
