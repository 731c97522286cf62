"""`mnist flax|pytorch|evaluate|preprocess-images` end to end, on tiny synthetic data."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from jax_benchmarks.hardware.peaks import cpu_facts, cpu_peak
from jax_benchmarks.measure.derived import loop_overhead
from jax_benchmarks.training.throughput import gpu_peak
from tests.conftest import invoke, read_jsonl
from tests.help_probe import probe
from tests.mnist.conftest import EPOCH, LOAD, PEAK, STEP, TINY, VALIDATION, auto_cases_with_peak, by_case


def check_dry_run_and_round_trip(backend: str, results_path: Path) -> None:
    """One dry-run epoch records every figure and saves; `mnist evaluate` reloads the checkpoint."""
    result = invoke("mnist", backend, *TINY, "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert "skip comet.ml initialization" in result.stdout
    assert "2,380,938" in result.stdout  # the model summary's total
    assert f"{backend}: test accuracy" in result.stdout
    # The epoch's accuracy is its training batches', the validation's the test images': the table says which.
    assert "· training accuracy of the epoch (0–1)" in result.stdout and "· test accuracy (0–1)" in result.stdout
    # The table of modes: the backend's row, with its time to the target (its own best accuracy, rounded down).
    modes = " ".join(result.stdout.split("mnist: the table of modes", 1)[1].split())
    assert backend in modes and "float32" in modes and "time to " in modes and "final test accuracy" in modes
    cases = by_case(read_jsonl(results_path), backend)
    assert list(cases) == [LOAD, *auto_cases_with_peak(), STEP, EPOCH, VALIDATION]  # in the harness's order
    # The line says the batch the validation's case name gives (validation_32x28x28_float32), and how many images.
    tested = cases[VALIDATION][0]["metrics"]["images"]
    assert VALIDATION.startswith("validation_32x")
    assert f"on {tested} test images in batches of 32" in " ".join(result.stdout.split())
    assert all(len(records) == 1 for records in cases.values())
    epoch = cases[EPOCH][0]
    assert epoch["params"]["steps_per_epoch"] == 3 and epoch["params"]["epoch"] == 1  # dry run: a few batches
    assert epoch["params"]["source"] == "synthetic" and epoch["params"]["train_images"] == 96
    # The share of peak is of the CPU's physical peak (none where the OS reports no maximum clock), of the
    # datasheet's on a GPU (none for a GPU not in src/jax_benchmarks/hardware/peaks.py).
    physical = cpu_peak(cpu_facts(), "float32")[0]
    peak = (None if physical is None else physical.gflops) if PEAK in cases else gpu_peak("float32")[0]
    for metric in ("images_per_s", "gflops", "loss", "accuracy", *(["peak_share"] if peak else [])):
        assert isinstance(epoch["metrics"][metric], float), metric
    step = cases[STEP][0]
    # The loop overhead only from like conditions (neither figure busy) and never below -5 %: else the output
    # says why it is not given.
    derived = loop_overhead(epoch["median_s"], epoch["contention"], step["median_s"], step["contention"], 3)
    if derived.value is None:
        assert "loop_overhead" not in epoch["metrics"] and "no loop overhead: " in result.stdout
    else:
        assert epoch["metrics"]["loop_overhead"] == pytest.approx(epoch["median_s"] / (step["median_s"] * 3) - 1)
    if peak:
        assert epoch["metrics"]["peak_share"] == pytest.approx(epoch["metrics"]["gflops"] / peak)
    # Only the jitted step has a compile time; PyTorch's eager step has none.
    assert (step["compile_s"] is not None) == (step["backend"] == "flax")
    validation = cases[VALIDATION][0]
    assert validation["metrics"]["images"] == 40  # every test image, no dropped batch
    assert cases[LOAD][0]["dtype"] == "uint8" and cases[LOAD][0]["metrics"]["train_images"] == 96
    suffix = ".pt" if backend == "pytorch" else ""
    assert Path(f"data/checkpoints/{backend}_mnist{suffix}").exists()
    png = Path(f"data/plots/mnist_{backend}_mnist_predictions.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    result = invoke("mnist", "evaluate", backend, "--test-batch-size", "32", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    evaluated = [r for r in read_jsonl(results_path) if r["variant"] == "checkpoint"]
    assert [r["case"] for r in evaluated] == [LOAD, VALIDATION]
    assert evaluated[1]["params"]["trained_on"] == "synthetic"
    assert f"on {evaluated[1]['metrics']['images']} test images in batches of 32 (synthetic)" in " ".join(
        result.stdout.split())
    evaluated = evaluated[1:]
    assert evaluated[0]["metrics"]["accuracy"] == pytest.approx(validation["metrics"]["accuracy"])
    assert evaluated[0]["metrics"]["loss"] == pytest.approx(validation["metrics"]["loss"], rel=1e-5)


def test_pytorch_dry_run_and_checkpoint_round_trip(results_path: Path) -> None:
    check_dry_run_and_round_trip("pytorch", results_path)


def test_no_save_leaves_the_saved_model_alone(results_path: Path) -> None:
    """--no-save (a verdict's rounds) trains and records as ever, prints the run's last line, and writes no checkpoint
    and no plot: a model saved before stays as it was, and the folders are not checked (a plots folder that cannot
    be one stops a saving run before any work, not this one)."""
    saved = Path("data/checkpoints/pytorch_mnist.pt")
    saved.parent.mkdir(parents=True)
    saved.write_bytes(b"a model trained by hand")
    Path("data/plots").write_text("a file where the plots folder would be")
    refused = invoke("mnist", "pytorch", *TINY, "--results", str(results_path))
    assert refused.exit_code == 2 and "plots" in refused.stderr and not results_path.exists()

    result = invoke("mnist", "pytorch", *TINY, "--no-save", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert saved.read_bytes() == b"a model trained by hand"
    assert sorted(p.name for p in saved.parent.iterdir()) == ["pytorch_mnist.pt"]
    assert "checkpoint:" not in result.stdout and "plot:" not in result.stdout
    assert "pytorch: test accuracy" in result.stdout
    assert [r["case"] for r in read_jsonl(results_path)][-2:] == [EPOCH, VALIDATION]


def test_evaluate_without_checkpoint_is_a_clear_error() -> None:
    result = invoke("mnist", "evaluate", "pytorch")
    assert result.exit_code == 2
    assert "no pytorch checkpoint" in result.stderr and "Traceback" not in result.output


def test_comet_offline_archive_and_the_key_never_shows(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("COMET_API_KEY", secret)
    result = invoke("mnist", "pytorch", *TINY, "--comet", "offline", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    archives = list(Path("data/comet").glob("*.zip"))
    assert len(archives) == 1
    with zipfile.ZipFile(archives[0]) as archive:
        names = archive.namelist()
        content = b"".join(archive.read(n) for n in names)
    assert names and b"train_step_loss" in content
    assert secret not in result.output and secret not in results_path.read_text()
    assert secret.encode() not in content


def test_preprocess_images_prints_normalization(results_path: Path) -> None:
    result = invoke("mnist", "preprocess-images", "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert [r["case"] for r in records] == [LOAD]
    assert records[0]["metrics"]["train_images"] == 96
    assert "mean 0.0000" in result.stderr and "source: synthetic" in result.stderr


@pytest.mark.parametrize(
    ("args", "option", "allowed"),
    [
        (("--num-epochs", "0"), "--num-epochs", "1 ≤ value ≤ 10000"),
        (("--train-batch-size", "2048"), "--train-batch-size", "1 ≤ value ≤ 1024"),
        (("--learning-rate", "2"), "--learning-rate", "1e-06 ≤ value ≤ 1.0"),
        (("--comet", "online"), "--comet", "COMET_API_KEY"),
        (("--device", "cpu", "--devices", "64"), "--devices", "CPU core(s)"),
        (("--devices", "two"), "--devices", "not a number"),
        (("--dataset", "fashion_mnist", "--data-source", "embedded"), "--data-source", "only for mnist"),
    ],
)
def test_bad_options_exit_2_naming_the_option(args: tuple[str, ...], option: str, allowed: str) -> None:
    result = invoke("mnist", "flax", *args)
    assert result.exit_code == 2
    assert option in result.stderr and allowed in result.stderr
    assert "Traceback" not in result.output


def test_help_imports_no_framework() -> None:
    results = [probe(args) for args in (["mnist"], ["mnist", "flax"], ["mnist", "evaluate"])]
    out = "".join(str(r["help"]) for r in results)
    assert "--epochs" in out and "--optimizer" in out
    assert "--num-epochs" not in out  # the old name works (hidden alias) but is not advertised
    assert all(r["heavy"] == [] for r in results), results
