"""The mnist CNN in the project's own engine (src/jax_benchmarks/autodiff), on NumPy arrays.

The architecture is the one `mnist flax` and `mnist pytorch` train (src/jax_benchmarks/training/model_spec.py):
conv 32 (3×3, unpadded) → relu → conv 64 (3×3, unpadded) → relu → max-pool 2×2 → dropout 0.25 → flatten →
dense 256 → relu → dropout 0.5 → dense 10 → log-softmax, in NCHW like PyTorch's (so the flattened features
are in PyTorch's (C, H, W) order). The initialisation is PyTorch's default for nn.Conv2d and nn.Linear:
weights and biases uniform in ±1/√fan_in (kaiming_uniform with a = √5 gives exactly that bound); Flax's
default (lecun_normal weights, zero biases) has variance 1/fan_in where this one has 1/(3·fan_in).
The dense weights are stored (in, out), so a layer is one `x @ w` with no transpose node.

`train_step` is one step of Adam on the mean negative log-likelihood, like the mnist groups' (`_step` of
the PyTorch backend): forward, one backward pass, one update of every parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from jax_benchmarks.autodiff import (
    Adam, FloatArray, Module, Node, Parameter, conv2d, detach, flatten, log_softmax, matmul, max_pool2d, relu, sum,
)
from jax_benchmarks.training import model_spec as spec

Labels = npt.NDArray[np.integer[Any]]


@dataclass(frozen=True)
class CnnShape:
    """The layer widths; the defaults are the mnist CNN's, a test shrinks them (as Flax's examples do)."""

    image: int = spec.IMAGE
    kernel: int = spec.KERNEL
    conv1: int = spec.CONV1
    conv2: int = spec.CONV2
    hidden: int = spec.HIDDEN
    classes: int = spec.CLASSES
    dropout_conv: float = spec.DROPOUT_CONV
    dropout_dense: float = spec.DROPOUT_DENSE

    @property
    def flat(self) -> int:
        """Features after the two unpadded convolutions and the 2×2 pool (9216 for the mnist CNN)."""
        pooled = (self.image - 2 * (self.kernel - 1)) // 2
        return pooled * pooled * self.conv2


def uniform(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int, dtype: npt.DTypeLike) -> FloatArray:
    """PyTorch's default init of a layer's weight and bias: U(−1/√fan_in, 1/√fan_in)."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(dtype)


class MnistCNN(Module):
    """images (N, 1, 28, 28) → log-probabilities (N, 10). Dropout is on while `training` is True; its masks
    come from the model's own generator (seeded), so two models made with one seed train alike."""

    def __init__(self, seed: int = 0, dtype: npt.DTypeLike = np.float32, shape: CnnShape = CnnShape()) -> None:
        super().__init__(inputs=("images",), name="mnist_cnn")
        self.shape = shape
        rng = np.random.default_rng(seed)
        k = shape.kernel
        fan1, fan2 = k * k, k * k * shape.conv1
        self.conv1_w = Parameter("conv1.w", uniform(rng, (shape.conv1, 1, k, k), fan1, dtype))
        self.conv1_b = Parameter("conv1.b", uniform(rng, (shape.conv1,), fan1, dtype))
        self.conv2_w = Parameter("conv2.w", uniform(rng, (shape.conv2, shape.conv1, k, k), fan2, dtype))
        self.conv2_b = Parameter("conv2.b", uniform(rng, (shape.conv2,), fan2, dtype))
        self.dense1_w = Parameter("dense1.w", uniform(rng, (shape.flat, shape.hidden), shape.flat, dtype))
        self.dense1_b = Parameter("dense1.b", uniform(rng, (shape.hidden,), shape.flat, dtype))
        self.dense2_w = Parameter("dense2.w", uniform(rng, (shape.hidden, shape.classes), shape.hidden, dtype))
        self.dense2_b = Parameter("dense2.b", uniform(rng, (shape.classes,), shape.hidden, dtype))
        self.dropout_rng = np.random.default_rng(seed + 1)
        self.training = False

    def dropout(self, x: Node, rate: float) -> Node:
        """Inverted dropout: a kept element is scaled by 1/(1 − rate), so evaluation needs no rescaling."""
        if not self.training or rate == 0:
            return x
        keep = self.dropout_rng.random(x.shape) >= rate
        return x * (keep * np.asarray(1.0 / (1.0 - rate), dtype=x.value.dtype))

    def call(self, images: Node) -> Node:
        # detach: the images are data, so no gradient flows to them (conv1 skips its input VJP).
        x: Node = relu(conv2d(detach(images), self.conv1_w, self.conv1_b))
        x = relu(conv2d(x, self.conv2_w, self.conv2_b))
        x = self.dropout(max_pool2d(x, 2), self.shape.dropout_conv)
        x = relu(matmul(flatten(x), self.dense1_w) + self.dense1_b)
        x = self.dropout(x, self.shape.dropout_dense)
        return log_softmax(matmul(x, self.dense2_w) + self.dense2_b)


def nll_loss(log_probs: Node, labels: Labels) -> Node:
    """Mean negative log-likelihood of the labels (F.nll_loss): the one-hot rows pick each image's entry."""
    one_hot = np.zeros(log_probs.shape, dtype=log_probs.value.dtype)
    one_hot[np.arange(len(labels)), labels] = -1.0 / len(labels)
    return sum(log_probs * one_hot)


class CnnTrainer:
    """The model and its optimizer: `step` trains on one batch, `accuracy` evaluates without dropout."""

    def __init__(self, model: MnistCNN, lr: float = 1e-3) -> None:
        self.model = model
        self.optimizer = Adam(model, lr=lr)

    def step(self, images: FloatArray, labels: Labels) -> float:
        """One training step on the batch; returns its loss (before the update)."""
        self.model.training = True
        loss = nll_loss(self.model(images), labels)
        self.optimizer.step(loss)
        # The module keeps its last call's output (Module.last_call), and with it the whole graph: every
        # activation and gradient of this step. Dropped here, so the next step does not build its graph
        # while this one is still held (3 steps peaked at 783 MiB with it, against 310 MiB for one).
        self.model.last_call = None
        return float(loss.value)

    def loss(self, images: FloatArray, labels: Labels) -> float:
        """The batch's loss without dropout (nothing trained)."""
        self.model.training = False
        return float(nll_loss(self.model(images), labels).value)

    def accuracy(self, images: FloatArray, labels: Labels, batch: int = 1000) -> float:
        self.model.training = False
        correct = 0
        for start in range(0, len(labels), batch):
            log_probs = self.model(images[start:start + batch]).value
            correct += int(np.sum(np.argmax(log_probs, axis=1) == labels[start:start + batch]))
        return correct / len(labels)

    def epoch(self, images: FloatArray, labels: Labels, batch: int, rng: np.random.Generator) -> float:
        """One pass over the shuffled training set in full batches (the last partial batch is dropped, as
        the mnist groups do); returns the mean loss."""
        order = rng.permutation(len(labels))
        losses = [self.step(images[idx], labels[idx])
                  for idx in (order[i:i + batch] for i in range(0, len(labels) - batch + 1, batch))]
        return float(np.mean(losses))


@dataclass(frozen=True)
class MnistSubset:
    """The embedded 5,000-image subset (4,000 train / 1,000 test), as float32 NCHW normalised with the
    training statistics, as the mnist groups normalise it."""

    x_train: FloatArray
    y_train: Labels
    x_test: FloatArray
    y_test: Labels

    @classmethod
    def load(cls) -> MnistSubset:
        from jax_benchmarks.training.data.arrays import normalize, pixel_stats
        from jax_benchmarks.training.data.embedded import read_embedded

        raw = read_embedded()
        mean, std = pixel_stats(raw.x_train)

        def nchw(images: npt.NDArray[np.uint8]) -> FloatArray:
            return normalize(images, mean, std).transpose(0, 3, 1, 2)  # [N, 28, 28, 1] → [N, 1, 28, 28]

        return cls(nchw(raw.x_train), raw.y_train.astype(np.int64), nchw(raw.x_test), raw.y_test.astype(np.int64))
