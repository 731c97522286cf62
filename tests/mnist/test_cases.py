"""mnist's cases on the core harness: declared from the settings alone, selected with --case/-k."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.hardware.devices import resolve_device
from jax_benchmarks.mnist.settings import FlaxSettings, MnistSettings
from jax_benchmarks.training.settings import EvaluateSettings
from tests.conftest import invoke, read_jsonl
from tests.mnist.conftest import EPOCH, LOAD, STEP, TINY, VALIDATION, auto_cases_with_peak


def refuse_to_read(settings: object, log: object) -> None:
    raise AssertionError("building a suite must not read the data")


@pytest.mark.parametrize("backend", ["pytorch", "flax"])
def test_suites_name_every_case_without_reading_data(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jax_benchmarks.training.cases.read_data", refuse_to_read)
    if backend == "flax":
        from jax_benchmarks.mnist.flax_backend import suites

        (suite,) = suites(FlaxSettings(num_epochs=2, train_batch_size=64, test_batch_size=500, comet="off"))
    else:
        from jax_benchmarks.mnist.pytorch_backend import suites as torch_suites

        (suite,) = torch_suites(MnistSettings(num_epochs=2, train_batch_size=64, test_batch_size=500, comet="off"))
    step, epoch, validation = "train_step_64x28x28_float32", "train_epoch_64x28x28_float32", "validation_500x28x28_float32"
    names = [case.name for case in suite.cases]
    assert names == [LOAD, *auto_cases_with_peak(), step, epoch, validation, epoch, validation]
    assert [case.params.get("epoch") for case in suite.cases[names.index(step) + 1:]] == [1, 1, 2, 2]
    assert suite.target.backend == backend and suite.target.device == resolve_device("auto")


def test_evaluate_and_preprocess_suites_read_no_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jax_benchmarks.training.cases.read_data", refuse_to_read)
    from jax_benchmarks.mnist.preprocess import suites as data_suites
    from jax_benchmarks.mnist.pytorch_backend import suites

    (evaluate,) = suites(EvaluateSettings())
    assert [(c.name, c.variant) for c in evaluate.cases] == [
        (LOAD, "checkpoint"), ("validation_1000x28x28_float32", "checkpoint")]
    (data,) = data_suites(MnistSettings(dataset="fashion_mnist"))
    assert [c.name for c in data.cases] == ["load_fashion_mnist_28x28_uint8"]


def test_case_option_times_only_the_selected_cases(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", *TINY, "-k", "train_step", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert [r["case"] for r in read_jsonl(results_path)] == [STEP]
    step = read_jsonl(results_path)[0]
    assert step["params"]["source"] == "synthetic" and step["params"]["batch"] == 16  # the data, loaded untimed
    assert step["params"]["mode"] == "eager" and "compilations" not in step["metrics"]  # not compiled
    skipped = (LOAD, *auto_cases_with_peak(), EPOCH, VALIDATION)
    out = " ".join(result.stdout.split())
    assert f"skipped: pytorch: {len(skipped)} of {len(skipped) + 1} case(s) not selected by -k train_step" in out
    assert "no checkpoint saved: 0 of 1 epochs trained" in result.stdout
    assert not Path("data/checkpoints/pytorch_mnist.pt").exists()  # an untrained model is not saved


def test_epochs_without_the_step_case_have_no_loop_overhead(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", *TINY, "-k", "train_epoch,validation", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    records = read_jsonl(results_path)
    assert [r["case"] for r in records] == [EPOCH, VALIDATION]
    assert "loop_overhead" not in records[0]["metrics"]
    # A CPU's peak is a case, not selected here; a GPU's comes from its datasheet, so it has a share anyway.
    assert ("peak_share" in records[0]["metrics"]) == (resolve_device("auto") == "gpu")
    assert records[1]["params"]["epoch"] == 1 and records[1]["metrics"]["images"] == 40
    assert Path("data/checkpoints/pytorch_mnist.pt").exists()  # every epoch trained


def test_a_step_timed_on_a_busy_machine_is_said_once_not_before_every_epoch(
        results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jax_benchmarks.measure.derived.busy_text", lambda contention: "other processes took 2 cores")
    tiny = [option if option != "1" or before != "--num-epochs" else "2" for before, option in zip(("",) + TINY, TINY)]
    result = invoke("mnist", "pytorch", *tiny, "-k", "train_step,train_epoch", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert [r["params"].get("epoch") for r in read_jsonl(results_path)] == [None, 1, 2]
    assert " ".join(result.stdout.split()).count("no loop overhead: the step was timed on a busy machine") == 1


def test_validation_without_its_epochs_is_refused_before_any_work(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", *TINY, "-k", "validation", "--results", str(results_path))
    assert result.exit_code == 2
    assert "'--case'" in result.stderr and f"select {EPOCH} too" in result.stderr
    assert "Traceback" not in result.output
    assert not results_path.exists() or results_path.read_text() == ""


def test_a_run_stopped_mid_training_still_closes_its_experiment(
    results_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during an epoch: the comet.ml experiment is ended once (an offline archive is completed)."""
    from jax_benchmarks.tracking import Tracker
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    ended: list[str] = []

    class Recording(Tracker):
        def end(self) -> Path | None:
            ended.append("end")
            return None

    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("jax_benchmarks.mnist.cases.start_tracking", lambda *_, **__: Recording())
    monkeypatch.setattr(TorchTrainer, "train_epoch", interrupted)
    result = invoke("mnist", "pytorch", *TINY, "--results", str(results_path))
    assert result.exit_code == 130, result.output
    assert ended == ["end"]
    assert STEP in [r["case"] for r in read_jsonl(results_path)]  # what was measured before is kept


def test_the_step_case_puts_back_what_its_timed_steps_changed(monkeypatch: pytest.MonkeyPatch,
                                                             results_path: Path) -> None:
    """The step case's own fixture undoes its steps when it is torn down, before the first epoch trains."""
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    events: list[str] = []
    real_end, real_epoch = TorchTrainer.end_step, TorchTrainer.train_epoch
    monkeypatch.setattr(TorchTrainer, "end_step", lambda self: events.append("end_step") or real_end(self))
    monkeypatch.setattr(TorchTrainer, "train_epoch",
                        lambda self, *a: events.append("train_epoch") or real_epoch(self, *a))
    result = invoke("mnist", "pytorch", *TINY, "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert events == ["end_step", "train_epoch"]


def test_evaluate_takes_the_data_and_the_test_batch_only() -> None:
    """`mnist evaluate` has settings of its own: none of training's, tracking's or a job's options."""
    result = invoke("mnist", "evaluate", "--help")
    assert result.exit_code == 0, result.output
    for option in ("--dataset", "--data-source", "--data-dir", "--test-batch-size", "--device", "--results"):
        assert option in result.stdout
    for option in ("--epochs", "--optimizer", "--learning-rate", "--momentum", "--schedule", "--dry-run", "--comet",
                   "--devices", "--num-processes", "--launch-local", "--rounds", "--train-batch-size"):
        assert option not in result.stdout


@pytest.mark.parametrize("precision", ["float32", "bf16"])
def test_every_trained_case_name_is_read_back_as_the_kind_that_declared_it(precision: str) -> None:
    """The training cases spell their names through `TrainedCase`; the findings read a stored name back through it:
    a renamed case is renamed for both, never silently left out of a finding."""
    from jax_benchmarks.training.cases import CaseNames
    from jax_benchmarks.training.names import TrainedCase, kind_of

    names = CaseNames(MnistSettings(train_batch_size=64, test_batch_size=500, precision=precision, comet="off"))
    dtype = "bf16" if precision == "bf16" else "float32"
    assert TrainedCase.of(names.step) == TrainedCase("step", 64, dtype)
    assert TrainedCase.of(names.epoch) == TrainedCase("epoch", 64, dtype)
    assert TrainedCase.of(names.validation) == TrainedCase("validation", 500, dtype)
    epoch = TrainedCase.of(names.epoch)
    assert epoch is not None and epoch.sibling("step").name == names.step  # an epoch's own train step
    assert kind_of(names.load) is None and kind_of(names.peak) is None
    # Names stored before (docs/headline-cpu.jsonl) and names that only begin like one of them.
    assert [kind_of(n) for n in ("train_step_128x28x28_float32", "train_epoch_128x28x28_float32",
                                 "validation_1000x28x28_float32")] == ["step", "epoch", "validation"]
    assert [kind_of(n) for n in ("train_step_loss", "validation_float32", "train_epoch_", "f_10000_float32")] == [
        None, None, None, None]


@pytest.mark.parametrize("module", ["mnist/findings.py", "mnist/cli.py", "jit/findings.py"])
def test_findings_select_training_records_by_kind_not_by_a_prefix_of_their_name(module: str) -> None:
    """No spelled-out prefix of a training case's name outside `training/names.py`: a record's kind is read with
    `kind_of` / `TrainedCase.of`, defined where the names are."""
    import ast

    from jax_benchmarks.training.names import TRAINED_OPS

    source = Path(__file__).resolve().parents[2] / "src" / "jax_benchmarks" / module
    prefixes = tuple(f"{op}_" for op in TRAINED_OPS.values())
    spelled = [node.lineno for node in ast.walk(ast.parse(source.read_text()))
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in prefixes]
    assert spelled == [], f"{module} spells a training case's prefix on lines {spelled}"


def test_case_names_are_built_only_where_the_cases_are_declared() -> None:
    """`CaseNames(settings)` is built by the code that declares the cases (training/cases.py's `suite_data`,
    mnist's evaluation and data suites); whoever looks a record up later is handed those names."""
    import ast

    src = Path(__file__).resolve().parents[2] / "src" / "jax_benchmarks"
    declaring = {"training/cases.py", "mnist/cases.py"}
    built = sorted(f"{path.relative_to(src)}:{node.lineno}" for path in src.rglob("*.py")
                   for node in ast.walk(ast.parse(path.read_text()))
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "CaseNames"
                   and str(path.relative_to(src)) not in declaring)
    assert built == []
