"""The two models of `jit flax`, in flax.nnx."""

from __future__ import annotations

from collections.abc import Callable

import jax
from flax import nnx

# flax's pooling functions carry no annotations; this gives them one for mypy --strict.
avg_pool: Callable[..., jax.Array] = nnx.avg_pool


class MLP(nnx.Module):
    """The article's MLP: one hidden layer of 10 units, relu, log-softmax."""

    def __init__(self, features: int, classes: int, rngs: nnx.Rngs, hidden: int = 10) -> None:
        self.hidden = nnx.Linear(features, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return jax.nn.log_softmax(self.out(jax.nn.relu(self.hidden(x))))


class CNN(nnx.Module):
    """The article's (and the Flax README's) small CNN on 28×28×1 images.

    conv 32 → avg-pool → conv 64 → avg-pool → dense 256 → dense 10, relu after
    each hidden layer, 'SAME' padding (Flax's default, as in that example).
    """

    def __init__(self, classes: int, rngs: nnx.Rngs) -> None:
        self.conv1 = nnx.Conv(1, 32, kernel_size=(3, 3), rngs=rngs)
        self.conv2 = nnx.Conv(32, 64, kernel_size=(3, 3), rngs=rngs)
        self.dense1 = nnx.Linear(7 * 7 * 64, 256, rngs=rngs)
        self.dense2 = nnx.Linear(256, classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = avg_pool(jax.nn.relu(self.conv1(x)), window_shape=(2, 2), strides=(2, 2))
        x = avg_pool(jax.nn.relu(self.conv2(x)), window_shape=(2, 2), strides=(2, 2))
        x = jax.nn.relu(self.dense1(x.reshape(x.shape[0], -1)))
        return jax.nn.log_softmax(self.dense2(x))
