"""The two backends build the same model: parameter counts, FLOPs, output shapes."""

from __future__ import annotations

from typing import Any

import numpy as np

from jax_benchmarks.training import model_spec


def test_parameter_counts_match_across_frameworks() -> None:
    import jax
    import torch
    from flax import nnx

    from jax_benchmarks.training.flax_trainer import CNN
    from jax_benchmarks.frameworks.flax_params import parameter_count as flax_count
    from jax_benchmarks.training.pytorch_trainer import Net
    from jax_benchmarks.training.pytorch_trainer import parameter_count as torch_count

    flax_params = flax_count(CNN(rngs=nnx.Rngs(0)))
    torch_params = torch_count(Net())
    assert flax_params == torch_params == model_spec.parameter_count()
    # With Flax's default 'SAME' padding the model would have 3,232,906; unpadded it is PyTorch's 2,380,938.
    assert torch_params == 2_380_938
    x = np.zeros((2, 28, 28, 1), np.float32)
    assert CNN(rngs=nnx.Rngs(0))(jax.numpy.asarray(x)).shape == Net()(torch.from_numpy(x.transpose(0, 3, 1, 2))).shape == (2, 10)


def test_analytic_forward_flops_match_xla_cost_analysis() -> None:
    import jax
    from flax import nnx

    from jax_benchmarks.training.flax_trainer import CNN

    model = CNN(rngs=nnx.Rngs(0))
    model.eval()  # type: ignore[no-untyped-call]
    graphdef, state = nnx.split(model)

    def forward(state: Any, x: jax.Array) -> jax.Array:
        return nnx.merge(graphdef, state)(x)

    batch = 4
    x = jax.numpy.zeros((batch, 28, 28, 1))
    cost: Any = jax.jit(forward).lower(state, x).compile().cost_analysis()
    xla_flops = float(cost["flops"]) / batch
    # XLA also counts the bias adds, relus, pooling and softmax: a few percent on top.
    assert model_spec.forward_flops() <= xla_flops <= 1.05 * model_spec.forward_flops()


def test_max_pool_2x2_matches_flax_and_torch_pooling_and_gradients() -> None:
    import jax
    import jax.numpy as jnp
    import torch
    from flax import nnx

    from jax_benchmarks.training.flax_trainer import max_pool_2x2

    # Continuous random values: no window has a tie, so every pooling routes the gradient the same way.
    x = jax.random.normal(jax.random.key(0), (3, 24, 24, 5))
    weights = jax.random.normal(jax.random.key(1), (3, 12, 12, 5))

    def flax_pool(v: jax.Array) -> jax.Array:
        return nnx.max_pool(v, window_shape=(2, 2), strides=(2, 2))  # type: ignore[no-untyped-call,no-any-return]

    ours, reference = max_pool_2x2(x), flax_pool(x)
    assert ours.shape == (3, 12, 12, 5)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(reference))
    torch_out = torch.nn.functional.max_pool2d(torch.from_numpy(np.array(x)).permute(0, 3, 1, 2), 2)
    np.testing.assert_array_equal(np.asarray(ours), torch_out.permute(0, 2, 3, 1).numpy())

    def grad_of(pool: Any) -> np.ndarray:
        return np.asarray(jax.grad(lambda v: jnp.sum(pool(v) * weights))(x))

    ours_grad, reference_grad = grad_of(max_pool_2x2), grad_of(flax_pool)
    np.testing.assert_array_equal(ours_grad, reference_grad)
    assert np.count_nonzero(ours_grad) == weights.size  # one winner per window
