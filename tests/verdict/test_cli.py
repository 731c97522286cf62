"""`verdict` on the command line: --from builds the page without running anything; bad input is one line, exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jax_benchmarks.store.record import Record
from jax_benchmarks.cli.relaunch import round_argv, self_command
from jax_benchmarks.verdict.cli import step_options
from jax_benchmarks.verdict.scale import SCALES, Step, round_options, seconds_left
from tests.conftest import invoke
from tests.help_probe import probe
from tests.verdict.fixtures import matmul


def write(path: Path, records: list[Record]) -> Path:
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return path


def test_help_imports_no_framework() -> None:
    result = probe(["verdict"])
    assert result["code"] == 0 and result["heavy"] == []
    assert "--scale" in str(result["help"]) and "--from" in str(result["help"])


def test_from_builds_markdown_without_running_anything(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    result = invoke("verdict", "--from", str(results), "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    assert "jax is fastest, 2.00× faster than numpy" in result.stdout
    assert "No mnist records" in result.stdout
    assert not (tmp_path / "data" / "results").exists()  # nothing measured, nothing recorded


def test_output_option_writes_the_html_page(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    out = tmp_path / "pages" / "verdict.html"
    result = invoke("verdict", "--from", str(results), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(("args", "option", "words"), [
    (["--from", "missing.jsonl"], "--from", "does not exist"),
    (["--from", "r.jsonl", "--against", "missing.jsonl"], "--against", "does not exist"),
    (["--run", "x"], "--run", "needs --from"),
    (["--from", "r.jsonl", "--scale", "full"], "--scale", "measures nothing with --from"),
    (["--scale", "huge"], "--scale", "'huge' is not one of 'quick', 'standard', 'gpu', 'full'"),
    (["--from", "r.jsonl", "--format", "pdf"], "--format", "'pdf' is not one of 'html', 'markdown'"),
    (["--from", "r.jsonl", "--run", "20991231"], "--run", "no run '20991231' in the results"),
    (["--from", "empty.jsonl"], "no benchmark records in empty.jsonl", "run a benchmark first"),
    (["--from", "postgresql://u:s3cret@127.0.0.1:1/db"], "--from", "postgresql://u:***@127.0.0.1:1/db"),
    (["--from", "r.jsonl", "--against", "postgres://u:s3cret@127.0.0.1:1/db"], "--against", "Connection refused"),
])
def test_bad_input_is_one_line_naming_the_option(tmp_path: Path, args: list[str], option: str, words: str) -> None:
    write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    (tmp_path / "empty.jsonl").touch()
    result = invoke("verdict", *args)
    assert result.exit_code == 2
    assert option in result.stderr and words in result.stderr
    assert "Traceback" not in result.stderr and "s3cret" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""


def test_every_round_joins_the_one_run_with_its_index() -> None:
    step = Step("xla", "all", ("--quick", "-k", "matmul"), 4.0)
    argv = round_argv(step.group, step.command, step_options(step, 1, Path("r.jsonl"), None), rounds=3, index=1,
                      run_id="20261124T120000Z-aaaaaa")
    assert argv == [*self_command(), "xla", "all", "--quick", "-k", "matmul", "--results", "r.jsonl", "--rounds", "3",
                    "--round-index", "1", "--run-id", "20261124T120000Z-aaaaaa"]
    # Every scale gives the regression gate the rounds it needs, for every group.
    for scale in SCALES.values():
        assert scale.rounds >= 3
        assert {s.group for s in scale.steps} == {"xla", "jit", "autograd", "scipy", "mnist"}


def test_time_left_follows_the_pace_of_the_finished_rounds() -> None:
    scale = SCALES["quick"]
    assert seconds_left(scale, []) == pytest.approx(scale.budget_s)
    first = scale.steps[0].round_s
    # The first round took twice its reference: the rest is expected to as well.
    assert seconds_left(scale, [2 * first]) == pytest.approx(2 * (scale.budget_s - first))
    assert seconds_left(scale, [1.0] * scale.rounds * len(scale.steps)) == 0


def test_every_step_of_every_scale_is_a_command_line_the_group_accepts() -> None:
    # --list checks the options and declares the cases without computing or recording anything.
    for scale in SCALES.values():
        for step in scale.steps:
            result = invoke(step.group, step.command, *round_options(step, 0), "--list")
            assert result.exit_code == 0, (scale.name, step.label, result.stderr)
            # Every backend of the command runs at least one case (-k selects some).
            counts = re.findall(r": (\d+) (?:of \d+ )?cases?$", result.stdout, re.M)
            assert counts and all(int(n) > 0 for n in counts), (scale.name, step.label, result.stdout)
