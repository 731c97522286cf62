"""`mnist --precision bf16`: bfloat16 mixed precision as each framework's users write it (PyTorch: torch.autocast;
Flax: a bfloat16 compute dtype over float32 parameters), on a CPU too; each record says what ran, its figures are
its own (case names end in _bf16), and no comparison sets them against float32 ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.mnist.findings import findings
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import unlike
from tests.conftest import invoke, read_jsonl
from tests.mnist.conftest import TINY
from tests.verdict.fixtures import ENV, epochs, figure

STEP16, EPOCH16, VALIDATION32 = ("train_step_16x28x28_bf16", "train_epoch_16x28x28_bf16", "validation_32x28x28_bf16")


def test_pytorch_trains_under_autocast_and_says_so(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", *TINY, "--precision", "bf16", "--comet", "off", "-k",
                    "train_step,train_epoch,validation", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    records = read_jsonl(results_path)
    assert [r["case"] for r in records] == [STEP16, EPOCH16, VALIDATION32]
    assert {r["params"]["precision"] for r in records} == {"bf16 (torch.autocast bfloat16, float32 parameters)"}
    assert {r["env"]["precision"] for r in records} == {"bf16"} and {r["dtype"] for r in records} == {"bf16"}
    assert records[1]["checks"]["loss_finite"] is True and 0.0 <= records[2]["metrics"]["accuracy"] <= 1.0


def test_flax_computes_in_bfloat16_from_float32_parameters() -> None:
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from jax_benchmarks.training.flax_trainer import CNN

    model = CNN(rngs=nnx.Rngs(0), dtype=jnp.bfloat16)
    x = jnp.ones((2, 28, 28, 1), jnp.float32)
    assert model.conv1.kernel[...].dtype == jnp.float32  # the parameters stay float32
    inner = jax.make_jaxpr(lambda v: model.conv1(v))(x)
    assert "bf16" in str(inner)  # the convolution computes in bfloat16
    assert model(x).dtype == jnp.float32  # the log-softmax (and the loss) in float32


@pytest.mark.e2e  # twin: the PyTorch autocast run above; a Flax training run jit-compiles its step (tens of seconds on a busy 2-core CPU)
def test_flax_records_say_what_ran(results_path: Path) -> None:
    result = invoke("mnist", "flax", *TINY, "--precision", "bf16", "--comet", "off", "-k", "train_step",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output
    [step] = read_jsonl(results_path)
    assert step["case"] == STEP16 and step["params"]["mode"] == "jit"
    assert step["params"]["precision"] == "bf16 (compute dtype bfloat16, float32 parameters)"


@pytest.mark.parametrize("command", [("xla", "jax", "--quick"), ("mnist", "evaluate", "pytorch")])
def test_only_training_offers_bf16(command: tuple[str, ...], results_path: Path) -> None:
    result = invoke(*command, "--precision", "bf16", "--results", str(results_path))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and "'float32', 'tf32'" in result.stderr
    assert not results_path.exists()


def test_jit_flax_trains_both_modes_in_bf16_under_their_own_names() -> None:
    result = invoke("jit", "flax", "--precision", "bf16", "--epochs", "1", "--list")
    assert result.exit_code == 0, result.output
    listed = result.stdout.split()
    assert "train_step_128x28x28_bf16" in listed and "train_step_128x28x28_float32" not in listed


def with_policy(records: list[Record], policy: str) -> list[Record]:
    return [r.model_copy(update={"env": {**r.env, "precision": policy}}) for r in records]


def test_a_bf16_record_is_never_compared_with_a_float32_one() -> None:
    case = "matmul_1000x1000_float32"
    float32 = figure("xla", "jax", case, 1.0)
    bf16 = with_policy(figure("xla", "pytorch", case, 0.5), "bf16")
    tf32 = with_policy(figure("xla", "pytorch", case, 0.5), "tf32")
    assert ENV["precision"] == "float32"
    assert unlike(float32, bf16) == "they differ in precision policy (float32 vs bf16)"
    assert unlike(float32, tf32) is None  # on a CPU, tf32 computes IEEE float32 as float32 does


def test_the_training_findings_never_set_bf16_against_float32() -> None:
    # Flax jitted in float32, PyTorch compiled in bf16: the same setting otherwise, but no pair is compared.
    records = (epochs("flax", 10.0, [0.9], mode="jit")
               + with_policy(epochs("pytorch", 5.0, [0.9], mode="compile:default"), "bf16"))
    found = findings(records, None)
    assert all(f.status == "missing" for f in found), [f.sentence for f in found]
    assert all(not ({"bf16"} <= {r.env.get("precision") for r in f.records}) for f in found)
