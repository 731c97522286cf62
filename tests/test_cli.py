"""The root CLI: every --help works and imports no heavy framework; errors are one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.cli.root import GROUPS
from tests.conftest import invoke
from tests.help_probe import every_help

REPO = Path(__file__).resolve().parents[1]

@pytest.fixture(scope="module")
def help_results() -> dict[str, dict[str, object]]:
    # Each --help runs in a process of its own, forked from one that imported the CLI's root alone (see
    # tests/help_probe.py); the e2e twin below runs each in a fresh interpreter.
    return every_help()


def check_every_help(help_results: dict[str, dict[str, object]]) -> None:
    assert set(GROUPS) <= set(help_results)
    for command, result in help_results.items():
        assert result["code"] == 0, command
        assert result["heavy"] == [], f"`{command} --help` imported {result['heavy']}"
        assert "Usage:" in str(result["help"]), command


def test_every_help_works_and_imports_no_framework(help_results: dict[str, dict[str, object]]) -> None:
    check_every_help(help_results)


@pytest.mark.e2e  # twin: test_every_help_works_and_imports_no_framework (the same probes, forked)
def test_every_help_in_a_fresh_interpreter_works_and_imports_no_framework() -> None:
    # Here, as the fresh probes below (a help names the default store, which depends on the folder).
    res = subprocess.run([sys.executable, str(REPO / "tests" / "help_probe.py")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    forked: dict[str, dict[str, object]] = json.loads(res.stdout.strip().splitlines()[-1])
    fresh = every_help(fresh=True)
    check_every_help(fresh)
    assert fresh == forked  # the forked probes see what fresh interpreters see


def test_benchmark_commands_share_the_common_options(help_results: dict[str, dict[str, object]]) -> None:
    backend_commands = [c for c in help_results if " " in c and not c.startswith("report")]
    assert backend_commands
    for command in backend_commands:
        text = str(help_results[command]["help"])
        if "--repeats" not in text:  # helper subcommands such as `mnist evaluate`
            continue
        for option in ("--device", "--repeats", "--seed", "--results", "--json"):
            assert option in text, (command, option)


def test_root_help_lists_every_group() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for group in GROUPS:
        assert group in result.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["nope"], "'GROUP': 'nope' is not one of xla, jit"),
        (["xla", "tensorflow"], "'BACKEND': 'tensorflow' is not one of numpy"),
        (["xla", "numpy", "--repeats", "0"], "'--repeats': 0 is not allowed; allowed: 1 ≤ value ≤ 1000"),
        (["xla", "numpy", "--seed", "-1"], "'--seed'"),
        (["xla", "numpy", "--device", "tpu"], "'--device'"),
        (["xla", "numpy", "--results", "/proc/nope/r.jsonl"], "'--results': cannot write"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], fragment: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.stderr
    assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_gpu_requested_without_gpu_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.hardware import devices

    monkeypatch.setattr(devices, "gpu_names", lambda: ())
    result = invoke("xla", "numpy", "--device", "gpu")
    assert result.exit_code == 2
    assert "'--device': no GPU visible" in result.stderr


def test_main_py_runs_like_cli_sh(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(REPO / "main.py"), "xla", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "Usage:" in res.stdout
    res = subprocess.run([sys.executable, str(REPO / "main.py"), "xla", "nope"], capture_output=True, text=True)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


# ------------------------------------------------------------------ CLI habits ---

@pytest.mark.parametrize("args", [[], ["xla"], ["report", "--help"]])
def test_bare_group_prints_its_help_and_exits_0(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Usage: ") and "Error" not in result.output
    assert "\n\nOptions:\n" in result.stdout or "\nOptions:\n" in result.stdout  # formatted, not squashed


def test_bare_backend_group_lists_its_backends() -> None:
    result = invoke("xla")
    assert "Commands:\n  numpy" in result.stdout and "  all " in result.stdout


def test_version() -> None:
    import tomllib

    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"jax-benchmarks {version} (Python 3.")


def test_entry_point_is_declared() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"jax-benchmarks": "jax_benchmarks.cli.root:main"}


def test_shell_completion_completes_groups_and_backends() -> None:
    """What `eval "$(_JAX_BENCHMARKS_COMPLETE=bash_source jax-benchmarks)"` asks the CLI for."""
    def complete(words: str, cword: int) -> list[str]:
        env = {"_JAX_BENCHMARKS_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        code = "import sys; sys.argv[0] = 'jax-benchmarks'; from jax_benchmarks.cli.root import main; main()"
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                             env={**__import__("os").environ, **env}, timeout=120)
        assert res.returncode == 0, res.stderr
        return [line.split(",", 1)[1] for line in res.stdout.splitlines()]

    assert complete("jax-benchmarks x", 1) == ["xla"]
    assert complete("jax-benchmarks xla ", 2) == ["numpy", "pytorch", "jax", "all"]
    assert "--format" in complete("jax-benchmarks report --f", 2)


def test_old_option_names_are_hidden_aliases(tmp_path: Path) -> None:
    from tests.report.fixtures import all_records, write_results

    results = write_results(tmp_path / "r.jsonl", all_records())
    old = invoke("report", "--results", str(results), "--markdown", "--group", "xla")
    new = invoke("report", "--results", str(results), "--format", "markdown", "--group", "xla")
    assert old.exit_code == 0 and old.stdout == new.stdout
    both = invoke("mnist", "flax", "--epochs", "3", "--num-epochs", "2")
    assert both.exit_code == 2 and "give only one of them" in both.stderr
    bad = invoke("mnist", "flax", "--num-epochs", "0")
    assert bad.exit_code == 2 and "'--num-epochs': 0 is not allowed" in bad.stderr
