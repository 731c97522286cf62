"""CLI habits: one group list, --list, --quick, smoke, one meaning of --device auto, the console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any, get_args

import click
import pytest
from click.testing import CliRunner

from jax_benchmarks.hardware import devices
from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group
from jax_benchmarks.measure.harness import Case, Suite, Target, Timed
from jax_benchmarks.settings import BenchSettings, command_line, parse_settings, settings_options
from jax_benchmarks.groups import BENCHMARK_GROUPS, COMMANDS, GROUPS, TOOLS
from tests.conftest import auto_device, invoke, read_jsonl
from tests.help_probe import probe

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------ one group list ---

def test_cli_and_report_read_the_one_group_list() -> None:
    import jax_benchmarks.cli.root
    from jax_benchmarks.groups import BenchmarkGroup
    from jax_benchmarks.report.cli import GroupName

    assert jax_benchmarks.cli.root.GROUPS is GROUPS
    assert tuple(GROUPS) == (*BENCHMARK_GROUPS, "report")
    assert GroupName is BenchmarkGroup
    # report --group takes exactly the benchmark groups (GroupName is jax_benchmarks.groups.BenchmarkGroup)
    result = invoke("report", "--group", "nope")
    assert result.exit_code == 2
    assert f"one of {', '.join(BENCHMARK_GROUPS)}" in result.stderr.replace("'", "")


def test_root_help_lists_groups_and_tools_without_importing_them() -> None:
    result = invoke("--help")
    for name, entry in COMMANDS.items():
        assert f"  {name} " in result.stdout and entry.help.split()[0] in result.stdout
    smoke = probe(["smoke"])
    assert smoke["code"] == 0 and smoke["heavy"] == [] and "--quick" in str(smoke["help"])


def test_the_programs_own_help_loads_no_framework_and_no_store() -> None:
    # main.py's whole start (main(), not only the Click group): -X importtime names every module imported.
    done = subprocess.run([sys.executable, "-X", "importtime", str(REPO / "main.py"), "--help"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "Usage:" in done.stdout
    loaded = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    assert loaded.isdisjoint({"numpy", "torch", "jax", "flax", "pydantic", "sqlite3"}), sorted(loaded)
    assert "jax_benchmarks.store" not in done.stderr


def test_every_benchmark_group_has_smoke_commands_that_exist() -> None:
    import importlib

    for group in BENCHMARK_GROUPS:
        commands = importlib.import_module(GROUPS[group].module).cli.commands
        assert GROUPS[group].smoke and set(GROUPS[group].smoke) <= set(commands), group
    assert set(TOOLS) == {"smoke", "verdict", "calibrate"}


# -------------------------------------------------------------------- --list ---

def fake_module(name: str, suites: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.suites = suites  # type: ignore[attr-defined]
    return module


def never_prepared() -> Timed[None]:
    raise AssertionError("--list must not prepare (compute) a case")


def fake_suites(settings: BenchSettings) -> list[Suite]:
    cases = [Case(f"op_{n}_float32", never_prepared, variant=variant, dtype="float32")
             for n in (10, 100) for variant in ("eager", "jit")]
    return [Suite(Target("fake", kind), cases) for kind in devices.devices_to_time(settings.device)]


class FakeMultiDevice(BenchSettings):
    CHOICES = {**BenchSettings.CHOICES, "device": devices.MULTI_DEVICE}


@pytest.fixture
def fake_group(monkeypatch: pytest.MonkeyPatch) -> click.Group:
    monkeypatch.setitem(sys.modules, "fake_declared", fake_module("fake_declared", fake_suites))
    spec = GroupSpec(name="fake", help="A fake group.", backends={
        "declared": BackendSpec("fake_declared", "Declares its suites.", FakeMultiDevice),
    }, all_settings=FakeMultiDevice)
    return build_group(spec)


def test_list_prints_target_cases_and_variants_without_computing(fake_group: click.Group, results_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_names", lambda: ("Some GPU",))
    result = CliRunner().invoke(fake_group, ["all", "--list", "--device", "all", "--results", str(results_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "fake fake @cpu: 4 cases",
        "  op_10_float32 [eager]", "  op_10_float32 [jit]", "  op_100_float32 [eager]", "  op_100_float32 [jit]",
        "fake fake @gpu: 4 cases",
        "  op_10_float32 [eager]", "  op_10_float32 [jit]", "  op_100_float32 [eager]", "  op_100_float32 [jit]",
    ]
    assert not results_path.exists() or results_path.read_text() == ""  # nothing recorded (preflight may create it)


def test_list_applies_k_and_the_options(fake_group: click.Group, results_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_names", lambda: ())
    result = CliRunner().invoke(fake_group, ["declared", "--list", "-k", "op_100*", "--results", str(results_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "fake fake @cpu: 2 of 4 cases", "  op_100_float32 [eager]", "  op_100_float32 [jit]",
        "(-k op_100*: cases not selected are not shown)",
    ]
    as_json = CliRunner().invoke(fake_group, ["declared", "--list", "-k", "jit", "--json",
                                              "--results", str(results_path)])
    listed = json.loads(as_json.stdout)
    assert [(c["case"], c["variant"], c["device"]) for c in listed] == [
        ("op_10_float32", "jit", "cpu"), ("op_100_float32", "jit", "cpu")]


def test_list_on_a_real_group_names_its_backends() -> None:
    result = invoke("scipy", "all", "--list", "--quick")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # every backend appears with its cases at --quick's array length, on its --device auto device; JAX also
    # times its loss on half the samples (a new shape: compiled again)
    for backend in ("numpy", "jax", "pytorch"):
        cases = ["  solve_1000_float64", "  loss_eval_1000_float64", *(["  loss_eval_500_float64"] if backend == "jax" else [])]
        at = lines.index(f"scipy {backend} @{auto_device(backend)}: {len(cases)} cases")
        assert lines[at + 1 : at + 1 + len(cases)] == cases, lines


# ------------------------------------------------------------------- --quick ---

def parsed(model: type[BenchSettings], *args: str) -> BenchSettings:
    """The settings a command of `model` gets from `args` (click parses, then parse_settings)."""
    seen: list[BenchSettings] = []

    @settings_options(model)
    def callback(**values: Any) -> None:
        seen.append(parse_settings(model, values))

    command = click.Command("c", callback=callback, params=callback.__click_params__)  # type: ignore[attr-defined]
    result = CliRunner().invoke(command, list(args))
    assert result.exit_code == 0, result.output
    return seen[0]


def test_quick_sets_the_groups_preset_and_explicit_options_win(results_path: Path) -> None:
    from jax_benchmarks.mnist.settings import MnistSettings
    from jax_benchmarks.xla.settings import XlaSettings

    r = ("--results", str(results_path))
    quick = parsed(XlaSettings, "--quick", *r)
    assert isinstance(quick, XlaSettings) and (quick.matrix_size, quick.repeats) == (300, 2)
    assert parsed(XlaSettings, *r).matrix_size == 5000  # no --quick: the defaults
    mine = parsed(XlaSettings, "--quick", "--matrix-size", "400", "--repeats", "5", *r)  # 5 is the default
    assert isinstance(mine, XlaSettings) and (mine.matrix_size, mine.repeats) == (400, 5)
    # an old option name counts as given, also with the default's value
    old = parsed(MnistSettings, "--quick", "--num-epochs", "10", *r)
    assert isinstance(old, MnistSettings) and (old.num_epochs, old.dry_run) == (10, True)


def test_quick_is_not_passed_on_but_its_values_are(results_path: Path) -> None:
    from jax_benchmarks.xla.settings import XlaSettings

    quick = parsed(XlaSettings, "--quick", "--repeats", "5", "--results", str(results_path))
    args = command_line(quick)
    assert "--quick" not in args and "--list" not in args
    again = parsed(XlaSettings, *args)
    assert again.model_copy(update={"quick": True}) == quick


def test_a_quick_run_and_its_rounds_say_they_measured_quick_sizes(results_path: Path) -> None:
    from jax_benchmarks.xla.settings import XlaSettings

    r = ("--results", str(results_path))
    quick = parsed(XlaSettings, "--quick", *r)
    assert quick.quick_sizes and parsed(XlaSettings, *command_line(quick)).quick_sizes  # a --rounds round's too
    assert not parsed(XlaSettings, *r).quick_sizes
    assert not parsed(XlaSettings, "--quick", "--matrix-size", "400", *r).quick_sizes


@pytest.mark.parametrize("group", BENCHMARK_GROUPS)
def test_every_quick_preset_names_real_options_and_validates(group: str, results_path: Path) -> None:
    import importlib

    spec: GroupSpec = importlib.import_module(GROUPS[group].module).SPEC
    models = {b.settings for b in spec.backends.values()} | ({spec.all_settings} if spec.all_settings else set())
    for model in models:
        assert set(model.QUICK) <= set(model.model_fields), (model, model.QUICK)
        settings = parsed(model, "--quick", "--results", str(results_path))
        for name, value in model.QUICK.items():
            assert getattr(settings, name) == value, (model, name)


# ------------------------------------------------------------------- --device ---

def test_auto_means_the_gpu_when_visible_in_every_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_names", lambda: ())
    assert devices.devices_to_time("auto") == ("cpu",) and devices.resolve_device("auto") == "cpu"
    assert devices.devices_to_time("all") == ("cpu",)
    monkeypatch.setattr(devices, "gpu_names", lambda: ("Some GPU",))
    assert devices.devices_to_time("auto") == ("gpu",) and devices.resolve_device("auto") == "gpu"
    assert devices.devices_to_time("all") == ("cpu", "gpu")
    assert devices.device_text("all") == "cpu, gpu"
    with pytest.raises(ValueError, match="every device"):
        devices.resolve_device("all")
    # NumPy and the engine run on the CPU as the baseline unless --device gpu asks for GPU figures alone
    assert [devices.cpu_library_runs(r) for r in ("auto", "cpu", "all", "gpu")] == [True, True, True, False]


@pytest.mark.parametrize("args", [["xla", "numpy"], ["scipy", "all"], ["mnist", "flax"], ["jit", "flax"]])
def test_device_all_is_refused_where_a_command_times_one_device(args: list[str]) -> None:
    result = invoke(*args, "--device", "all")
    assert result.exit_code == 2
    assert result.stderr.strip() == "Error: Invalid value for '--device': 'all' is not one of 'auto', 'cpu', 'gpu'."


def test_device_all_is_offered_where_a_command_times_several(results_path: Path) -> None:
    from jax_benchmarks.autograd.settings import AutogradSettings
    from jax_benchmarks.jit.settings import SweepSettings

    for model in (SweepSettings, AutogradSettings):
        assert parsed(model, "--device", "all", "--results", str(results_path)).device == "all"
    with pytest.raises(ValueError, match="allowed: auto, cpu, gpu"):
        BenchSettings(device="all", results=results_path)


# ------------------------------------------------------- console script, completion ---

def test_completion_script_is_produced_for_the_console_script() -> None:
    """`eval "$(_JAX_BENCHMARKS_COMPLETE=bash_source jax-benchmarks)"` (README)."""
    code = "import sys; sys.argv[0] = 'jax-benchmarks'; from jax_benchmarks.cli.root import main; main()"
    for shell, marker in (("bash", "complete -o nosort -F _jax_benchmarks_completion jax-benchmarks"),
                          ("zsh", "#compdef jax-benchmarks"), ("fish", "complete --no-files --command jax-benchmarks")):
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                             env={**os.environ, "_JAX_BENCHMARKS_COMPLETE": f"{shell}_source"})
        assert res.returncode == 0 and marker in res.stdout, (shell, res.stdout[:300], res.stderr)


def test_the_project_is_an_installable_package() -> None:
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"jax-benchmarks": "jax_benchmarks.cli.root:main"}
    assert pyproject["tool"]["poetry"].get("package-mode", True) is True
    assert {"include": "jax_benchmarks", "from": "src"} in pyproject["tool"]["poetry"]["packages"]
    assert 'pip install --no-deps -e "$ROOT"' in (REPO / "cli.sh").read_text()


@pytest.mark.slow
def test_editable_install_puts_the_console_script_in_the_venv(tmp_path: Path) -> None:
    """What cli.sh does, in a throwaway venv that sees this interpreter's packages (needs the registry for
    the build backend, poetry-core)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    import site as site_module

    (site / "shared.pth").write_text("\n".join(site_module.getsitepackages()) + "\n")
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)],
                   check=True, timeout=300)
    res = subprocess.run([str(venv / "bin" / "jax-benchmarks"), "--version"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.startswith("jax-benchmarks "), res.stderr


# --------------------------------------------------------------------- smoke ---

def test_smoke_refuses_an_unknown_group() -> None:
    result = invoke("smoke", "nope")
    assert result.exit_code == 2 and "'nope' is not one of 'xla', 'jit'" in result.stderr


@pytest.mark.slow
def test_smoke_runs_a_group_quickly_and_records(tmp_path: Path) -> None:
    results = tmp_path / "smoke.jsonl"
    res = subprocess.run([sys.executable, str(REPO / "main.py"), "smoke", "scipy", "--results", str(results)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "scipy all --quick" in res.stdout and "ok" in res.stdout
    records = read_jsonl(results)
    assert {r["backend"] for r in records} >= {"numpy", "jax", "pytorch"}
    assert all(r["params"].get("array_length") in (None, 1000) for r in records)
