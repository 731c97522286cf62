"""`verdict` on the command line: --from builds the page without running anything; bad input is one line, exit 2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jax_benchmarks.store.record import Record
from jax_benchmarks.cli.relaunch import round_argv, self_command
from jax_benchmarks.cli.rounds import step_options
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


def test_help_gives_each_scales_duration_from_its_budget() -> None:
    from jax_benchmarks.cli.rounds import duration_text

    result = invoke("verdict", "--help")
    said = " ".join(result.stdout.split())
    assert "about three minutes" not in said  # what it said before two quick verdicts took 5.0 min each
    assert ", ".join(f"{name} {duration_text(SCALES[name].default_budget_s)}" for name in SCALES) + "." in said


def test_from_builds_markdown_without_running_anything(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    result = invoke("verdict", "--from", str(results), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert "jax is fastest, 2.00× faster than numpy" in result.stdout
    assert "No mnist records" in result.stdout
    assert not (tmp_path / "data" / "results").exists()  # nothing measured, nothing recorded


def test_output_option_writes_the_html_page(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    out = tmp_path / "pages" / "verdict.html"
    result = invoke("verdict", "--from", str(results), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert "<" not in result.stdout and str(out) in result.stdout.replace("\n", "")  # the answer, not the page


@pytest.mark.parametrize(("output_format", "suffix"), [("html", ".html"), ("markdown", ".md")])
def test_without_output_the_page_goes_to_a_new_file_beside_the_store_and_the_answer_to_the_terminal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output_format: str, suffix: str) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    first = invoke("verdict", "--from", str(results), "--format", output_format)
    second = invoke("verdict", "--from", str(results), "--format", output_format)
    assert first.exit_code == 0 and second.exit_code == 0, (first.stderr, second.stderr)
    pages = sorted(tmp_path.glob(f"verdict-*{suffix}"))
    assert len(pages) == 2  # each a new file: the second never replaces the first
    page = pages[0].read_text(encoding="utf-8")
    assert "jax is fastest, 2.00× faster than numpy" in page
    lines = first.stdout.splitlines()
    assert max(len(line) for line in lines[:-1]) <= 60 and len(lines) < 10  # wrapped, and not the page
    said = " ".join(lines)  # the path, wider than 60 columns, stays whole on the last line
    assert said.startswith("On this machine JAX is worth it for dense linear algebra: matmul (×2.0).")
    assert "Decided: 1 of 1 comparisons" in said
    assert lines[-1] in {str(page) for page in pages} and lines[-1] != second.stdout.splitlines()[-1]


def test_output_dash_sends_the_page_to_stdout_and_writes_no_file(tmp_path: Path) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    result = invoke("verdict", "--from", str(results), "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("<!DOCTYPE html>") and not list(tmp_path.glob("verdict-*"))
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(("args", "option", "words"), [
    (["--from", "missing.jsonl"], "--from", "does not exist"),
    (["--from", "r.jsonl", "--against", "missing.jsonl"], "--against", "does not exist"),
    (["--run", "x"], "--run", "needs --from"),
    (["--from", "r.jsonl", "--scale", "full"], "--scale", "measures nothing with --from"),
    (["--from", "r.jsonl", "--turns"], "--turns", "measures nothing with --from"),
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
    # Every scale gives the regression gate the rounds it needs, for every group (gpu: for those whose steps fit a
    # short GPU lease; each step it leaves out says why: tests/verdict/test_scale_gpu.py).
    for scale in SCALES.values():
        assert scale.rounds >= 3
        groups = {s.group for s in scale.steps}
        assert groups == {"xla", "jit", "autograd", "scipy", "mnist"} if scale.name != "gpu" else (
            groups == {"xla", "jit", "scipy"})


def test_no_round_of_a_verdict_saves_a_model() -> None:
    """A verdict's mnist rounds train with --no-save: a round's model would replace one the user trained by hand."""
    mnist_steps = [step for scale in SCALES.values() for step in scale.steps if step.group == "mnist"]
    assert mnist_steps and all("--no-save" in step.options for step in mnist_steps)


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


@pytest.mark.parametrize("value", ["0", "-5", "100.5", "ten", "nan", "inf", "-inf"])
def test_a_bad_margin_is_one_line_exit_2(tmp_path: Path, value: str) -> None:
    results = write(tmp_path / "r.jsonl", matmul(numpy_s=0.010, jax_s=0.005))
    result = invoke("verdict", "--from", str(results), "--margin", value)
    assert result.exit_code == 2 and result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("Error: Invalid value for '--margin': ")


def test_the_margin_reaches_every_comparison_and_the_pages_first_lines(tmp_path: Path) -> None:
    from jax_benchmarks.verdict.answer import answers
    from jax_benchmarks.verdict.findings import all_findings, latest_runs
    from tests.verdict.fixtures import QUIET_DRIFT, epochs, figure

    records = (matmul(numpy_s=0.010, jax_s=0.005, pytorch_s=0.0103, rounds=8, drift=QUIET_DRIFT)
               + figure("autograd", "numpy", "grad_1000_float32", 0.8, variant="vectorised")
               + figure("autograd", "jax", "grad_1000_float32", 0.1, variant="vmap+jit")
               + figure("jit", "jax", "f_100000_float32", 0.001, variant="jit")
               + figure("jit", "jax", "f_100000_float32", 0.002, variant="eager")
               + epochs("flax", 10.0, [0.9]) + epochs("pytorch", 10.0, [0.9]))
    findings = all_findings(latest_runs(records), None, 7.0)
    decisions = [d for f in findings for d in f.decisions] + [a.contrast.decision for a in answers(findings, 7.0)]
    assert len(decisions) >= 5 and {d.margin_pct for d in decisions} == {7.0}
    results = write(tmp_path / "r.jsonl", records)
    result = invoke("verdict", "--from", str(results), "--format", "markdown", "--margin", "7", "-o", "-")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("Margin "))
    assert head < 10 and lines[head].startswith("Margin ±7 % (--margin). Each comparison ends as one of: faster by "
                                                "more than 7 %")
    assert "±10 %" not in result.stdout and "margin ±7 %" in result.stdout
