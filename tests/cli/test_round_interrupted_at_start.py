"""A round of `--rounds` stopped before its run began (while it parsed or imported: the starter's signal can land
at a round's first second) says so as a round: its run holds the earlier rounds' records, which the starter counts
on the next line, so "no record was written" would contradict it (seen in `tests/store/test_damage.py`'s
interrupted rounds once rounds got shorter)."""

from __future__ import annotations

import click
import pytest

from jax_benchmarks.errors import NOTHING_SAVED, nothing_saved, run_cli


@click.command()
@click.option("--round-index", type=int)
@click.option("--run-id")
def stopped_at_start(round_index: int | None, run_id: str | None) -> None:
    raise KeyboardInterrupt  # as Ctrl-C or SIGTERM (raise_terminated) before any record


def test_a_round_stopped_at_its_start_names_itself_and_its_run(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(stopped_at_start, ["--round-index", "2", "--run-id", "20261128T043454Z-14ff63"]) == 130
    err = capsys.readouterr().err.strip()
    assert err == "Interrupted: round 3 of run 20261128T043454Z-14ff63 was stopped before it wrote a record."


def test_a_process_that_is_no_round_still_says_no_record_was_written(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(stopped_at_start, []) == 130
    assert capsys.readouterr().err.strip() == NOTHING_SAVED
    assert nothing_saved(["--round-index", "x"]) == NOTHING_SAVED  # not a round's index: not a round
