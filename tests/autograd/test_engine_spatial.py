"""The image operators (conv2d, max/avg pooling, pad2d) and leaky_relu, flatten, detach, against PyTorch
float64 (values and gradients to 1e-6, under a random cotangent) and central differences; and the one-line
errors on operands they cannot take."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from jax_benchmarks import autodiff as en
from jax_benchmarks.errors import DataError
from tests.autograd.numeric import assert_vjp_matches_central_differences

TOL = 1e-6

# name, engine function, torch function, input shapes
CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[tuple[int, ...], ...]]] = [
    ("conv2d", lambda x, w: en.conv2d(x, w), lambda x, w: F.conv2d(x, w), ((2, 3, 6, 5), (4, 3, 3, 3))),
    ("conv2d_bias_stride2_pad1", lambda x, w, b: en.conv2d(x, w, b, stride=2, padding=1),
     lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), ((3, 2, 7, 8), (5, 2, 3, 2), (5,))),
    ("conv2d_stride_hw_pad_hw", lambda x, w: en.conv2d(x, w, stride=(1, 2), padding=(2, 0)),
     lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 0)), ((1, 1, 5, 9), (2, 1, 4, 3))),
    ("conv2d_1x1", lambda x, w: en.conv2d(x, w), lambda x, w: F.conv2d(x, w), ((2, 4, 3, 3), (6, 4, 1, 1))),
    ("max_pool2d_2", lambda x: en.max_pool2d(x, 2), lambda x: F.max_pool2d(x, 2), ((2, 3, 6, 7),)),
    ("max_pool2d_3_stride1", lambda x: en.max_pool2d(x, 3, stride=1), lambda x: F.max_pool2d(x, 3, stride=1),
     ((2, 2, 5, 6),)),
    ("max_pool2d_3_stride2", lambda x: en.max_pool2d(x, (3, 2), stride=2),
     lambda x: F.max_pool2d(x, (3, 2), stride=2), ((1, 3, 7, 7),)),
    ("avg_pool2d_2", lambda x: en.avg_pool2d(x, 2), lambda x: F.avg_pool2d(x, 2), ((2, 3, 6, 7),)),
    ("avg_pool2d_3_stride1", lambda x: en.avg_pool2d(x, 3, stride=1), lambda x: F.avg_pool2d(x, 3, stride=1),
     ((2, 2, 5, 6),)),
    ("pad2d_1", lambda x: en.pad2d(x, 1), lambda x: F.pad(x, (1, 1, 1, 1)), ((2, 3, 4, 5),)),
    ("pad2d_sides", lambda x: en.pad2d(x, (0, 2, 3, 1)), lambda x: F.pad(x, (3, 1, 0, 2)), ((1, 2, 3, 3),)),
    ("leaky_relu", lambda x: en.leaky_relu(x), lambda x: F.leaky_relu(x), ((4, 5),)),
    ("leaky_relu_0.2", lambda x: en.leaky_relu(x, 0.2), lambda x: F.leaky_relu(x, 0.2), ((2, 3, 4),)),
    ("flatten_batch", lambda x: en.flatten(x), lambda x: torch.flatten(x, 1), ((3, 2, 4, 5),)),
    ("flatten_all", lambda x: en.flatten(x, 0), lambda x: torch.flatten(x), ((3, 2, 4),)),
    ("reshape_across_batch", lambda x: en.reshape(x, (-1, 10)), lambda x: x.reshape(-1, 10), ((4, 5, 2),)),
    ("conv_pool_flatten_dense", lambda x, w, v: en.matmul(en.flatten(en.max_pool2d(en.relu(en.conv2d(x, w)), 2)), v),
     lambda x, w, v: torch.flatten(F.max_pool2d(torch.relu(F.conv2d(x, w)), 2), 1) @ v,
     ((2, 1, 8, 8), (3, 1, 3, 3), (27, 4))),
]


def inputs(shapes: tuple[tuple[int, ...], ...], seed: int) -> list[np.ndarray]:
    """Normal values: no ties inside a pooling window, no element at exactly 0 (the kinks)."""
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


@pytest.mark.parametrize(("name", "engine_fn", "torch_fn", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_value_and_gradients_match_pytorch(
    name: str, engine_fn: Callable[..., Any], torch_fn: Callable[..., Any], shapes: tuple[tuple[int, ...], ...]
) -> None:
    args = inputs(shapes, len(name))
    names = [f"a{i}" for i in range(len(args))]
    out = en.Function(engine_fn, inputs=names)(*args)
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    expected = torch_fn(*tensors)
    cotangent = np.random.default_rng(7).normal(size=tuple(expected.shape))
    out.backward(cotangent)
    (expected * torch.from_numpy(cotangent)).sum().backward()
    assert out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.value, expected.detach().numpy(), atol=TOL, rtol=0)
    for arg_name, tensor in zip(names, tensors, strict=True):
        assert tensor.grad is not None
        np.testing.assert_allclose(out.grad(arg_name), tensor.grad.numpy(), atol=TOL, rtol=0)


# The central-difference check runs a forward pass per input element: the small cases only.
SMALL = [c for c in CASES if np.prod([np.prod(s) for s in c[3]]) <= 10**5 and c[0] != "conv_pool_flatten_dense"]


@pytest.mark.parametrize(("name", "engine_fn", "torch_fn", "shapes"), SMALL, ids=[c[0] for c in SMALL])
def test_vjp_matches_central_differences(
    name: str, engine_fn: Callable[..., Any], torch_fn: Callable[..., Any], shapes: tuple[tuple[int, ...], ...]
) -> None:
    assert_vjp_matches_central_differences(engine_fn, inputs(shapes, len(name)))


def test_max_pool_gives_a_tie_to_the_first_maximum_like_pytorch() -> None:
    x = np.zeros((1, 1, 2, 4))  # every window is a tie (ReLU zeros in a CNN)
    out = en.Function(lambda x: en.max_pool2d(x, 2), inputs=("x",))(x)
    out.backward()
    tensor = torch.tensor(x, requires_grad=True)
    F.max_pool2d(tensor, 2).sum().backward()
    assert tensor.grad is not None
    np.testing.assert_array_equal(out.grad("x"), tensor.grad.numpy())
    assert out.grad("x").sum() == 2  # one element per window


def test_float32_stays_float32() -> None:
    x = np.ones((2, 1, 5, 5), np.float32)
    w = np.ones((3, 1, 3, 3), np.float32)
    out = en.Function(lambda x, w: en.avg_pool2d(en.conv2d(x, w), 3), inputs=("x", "w"))(x, w)
    out.backward()
    assert out.value.dtype == np.float32 and out.grad("w").dtype == np.float32
    np.testing.assert_array_equal(out.value, np.full((2, 3, 1, 1), 9.0, np.float32))


def test_detach_stops_the_gradient() -> None:
    fn = en.Function(lambda x: x * en.detach(x * x), inputs=("x",))
    out = fn(np.array(3.0))
    out.backward()
    assert out.value == 27.0
    assert out.grad("x") == 9.0  # d/dx of x·c with c = x² held constant; through x³ it would be 27
    detached = en.Function(lambda x: en.detach(x) * 2, inputs=("x",))(np.array(1.0))
    with pytest.raises(ValueError, match="constants only"):
        detached.backward()


# ----------------------------------------------------------------------------------- bad input ---

BAD: list[tuple[str, Callable[..., Any], tuple[np.ndarray, ...], str]] = [
    ("conv2d channel mismatch", lambda x, w: en.conv2d(x, w), (np.ones((1, 3, 5, 5)), np.ones((2, 4, 3, 3))),
     r"conv2d: the weight must be \(out channels, 3 in channels, kh, kw\).*x \(1, 3, 5, 5\), w \(2, 4, 3, 3\)"),
    ("conv2d input not 4-D", lambda x, w: en.conv2d(x, w), (np.ones((3, 5, 5)), np.ones((2, 3, 3, 3))),
     r"conv2d: the input must be 4-D .*x \(3, 5, 5\)"),
    ("conv2d bias of the wrong size", lambda x, w, b: en.conv2d(x, w, b),
     (np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), np.ones(3)), r"conv2d: the bias must be \(2,\).*b \(3,\)"),
    ("conv2d kernel larger than input", lambda x, w: en.conv2d(x, w), (np.ones((1, 1, 3, 3)), np.ones((1, 1, 5, 5))),
     r"conv2d: kernel \(5, 5\) is larger than the \(padded\) input \(3, 3\); x \(1, 1, 3, 3\), w \(1, 1, 5, 5\)"),
    ("conv2d stride 0", lambda x, w: en.conv2d(x, w, stride=0), (np.ones((1, 1, 5, 5)), np.ones((1, 1, 3, 3))),
     r"conv2d: stride must be an int or a pair of ints >= 1, got 0"),
    ("conv2d NaN", lambda x, w: en.conv2d(x, w), (np.full((1, 1, 5, 5), np.nan), np.ones((1, 1, 3, 3))),
     r"conv2d: the input holds 25 NaN value\(s\); x \(1, 1, 5, 5\), w \(1, 1, 3, 3\)"),
    ("max_pool2d kernel larger", lambda x: en.max_pool2d(x, 4), (np.ones((1, 1, 3, 3)),),
     r"max_pool2d: kernel \(4, 4\) is larger than the \(padded\) input \(3, 3\); x \(1, 1, 3, 3\)"),
    ("max_pool2d stride 0", lambda x: en.max_pool2d(x, 2, stride=0), (np.ones((1, 1, 4, 4)),),
     r"max_pool2d: stride must be an int or a pair of ints >= 1, got 0"),
    ("avg_pool2d NaN", lambda x: en.avg_pool2d(x, 2), (np.array([[[[1.0, np.nan], [0.0, 0.0]]]]),),
     r"avg_pool2d: the input holds 1 NaN value\(s\); x \(1, 1, 2, 2\)"),
    ("avg_pool2d kernel 0", lambda x: en.avg_pool2d(x, 0), (np.ones((1, 1, 4, 4)),),
     r"avg_pool2d: kernel must be an int or a pair of ints >= 1, got 0"),
    ("pad2d negative", lambda x: en.pad2d(x, -1), (np.ones((1, 1, 4, 4)),), r"pad2d: padding must be"),
    ("add shapes", lambda a, b: a + b, (np.ones((2, 3)), np.ones((4,))),
     r"add: operands of shapes \(2, 3\), \(4,\) do not fit"),
    ("matmul shapes", lambda a, b: en.matmul(a, b), (np.ones((2, 3)), np.ones((4, 5))),
     r"matmul: operands of shapes \(2, 3\), \(4, 5\) do not fit"),
]


@pytest.mark.parametrize(("label", "fn", "args", "message"), BAD, ids=[b[0] for b in BAD])
def test_bad_operands_raise_one_line_naming_the_operator_and_shapes(
    label: str, fn: Callable[..., Any], args: tuple[np.ndarray, ...], message: str
) -> None:
    with pytest.raises(en.OperandError, match=message) as caught:
        en.Function(fn, inputs=[f"a{i}" for i in range(len(args))])(*args)
    assert isinstance(caught.value, DataError) and caught.value.exit_code == 2  # the CLI's one-line Error:
    assert "\n" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__ or caught.value.__context__ is None


@pytest.mark.parametrize(("name", "engine_fn", "torch_fn", "shapes"), [c for c in CASES if "conv" in c[0]],
                         ids=[c[0] for c in CASES if "conv" in c[0]])
def test_conv2d_without_the_im2col_matrix_matches_pytorch(
    monkeypatch: pytest.MonkeyPatch, name: str, engine_fn: Callable[..., Any], torch_fn: Callable[..., Any],
    shapes: tuple[tuple[int, ...], ...],
) -> None:
    """The path large convolutions take (one matmul per kernel offset), forced on the small cases."""
    from jax_benchmarks.autodiff.spatial import Conv2d

    monkeypatch.setattr(Conv2d, "IM2COL_LIMIT_BYTES", 0)
    test_value_and_gradients_match_pytorch(name, engine_fn, torch_fn, shapes)
