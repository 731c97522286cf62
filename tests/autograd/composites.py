"""Four composite models, one per combination of weight sharing (a sub-module called twice) and input
sharing (one node fed to two sub-modules), shared by the engine's tests against JAX
(test_engine_composite.py) and PyTorch (test_engine_torch.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jax_benchmarks import autodiff as en


class Simple(en.Module):
    """f(x, w) = (x + w)·x², w a parameter."""

    def __init__(self, w0: float) -> None:
        super().__init__(inputs=("x",))
        self.w = en.Parameter("w", w0)

    def call(self, x: en.Node) -> en.Node:
        return en.multiply(en.add(x, self.w), en.square(x))


def simple(x: Any, w: Any) -> Any:
    """The same f in any array library with operators (JAX, PyTorch)."""
    return (x + w) * x**2


class NoSharingTwoInputs(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1", "x2"))
        self.m1, self.m2 = Simple(1.0), Simple(2.0)

    def call(self, x1: en.Node, x2: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m2(x2))


class WeightSharingTwoInputs(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1", "x2"))
        self.m1 = Simple(2.0)

    def call(self, x1: en.Node, x2: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m1(x2))


class NoWeightSharingSameInput(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1",))
        self.m1, self.m2 = Simple(1.0), Simple(-0.5)

    def call(self, x1: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m2(x1))


class WeightSharingSameInput(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1",))
        self.m1 = Simple(1.5)

    def call(self, x1: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m1(x1))


# model, the same as a function of (inputs..., parameters...) in JAX or PyTorch, parameter names, input count,
# and how many parameter / input leaves the flat graph must hold.
Case = tuple[Callable[[], en.Module], Callable[..., Any], tuple[str, ...], int, int, int]
CASES: dict[str, Case] = {
    "no_weight_sharing_no_input_sharing": (
        NoSharingTwoInputs, lambda x1, x2, w1, w2: simple(x1, w1) + simple(x2, w2), ("m1.w", "m2.w"), 2, 2, 2,
    ),
    "weight_sharing_no_input_sharing": (
        WeightSharingTwoInputs, lambda x1, x2, w: simple(x1, w) + simple(x2, w), ("m1.w",), 2, 1, 2,
    ),
    "no_weight_sharing_input_sharing": (
        NoWeightSharingSameInput, lambda x1, w1, w2: simple(x1, w1) + simple(x1, w2), ("m1.w", "m2.w"), 1, 2, 1,
    ),
    "weight_sharing_input_sharing": (
        WeightSharingSameInput, lambda x1, w: simple(x1, w) + simple(x1, w), ("m1.w",), 1, 1, 1,
    ),
}

INPUTS: dict[str, list[Any]] = {
    "scalar": [3.0, 4.0],
    "vector": [np.array([3.0, -1.0, 0.5]), np.array([4.0, 2.0, -2.5])],
    "matrix": [np.arange(6.0).reshape(2, 3) - 2.0, np.linspace(-1, 1, 6).reshape(2, 3)],
}
