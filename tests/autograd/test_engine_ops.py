"""Every operator's VJP, with broadcasting, against jax.vjp in float64; graph invariants."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_benchmarks import autodiff as en
from jax_benchmarks.autodiff.graph import graph_nodes
from jax_benchmarks.autograd.numpy_backend import loop_grad, make_function, vectorised_grad
from jax_benchmarks.autograd.reference import EXPECTED_DF_X1, EXPECTED_F_X1, df_exact
from tests.autograd.numeric import assert_vjp_matches_central_differences

pytestmark = pytest.mark.usefixtures("x64")

EngineFn = Callable[..., en.Node]
JaxFn = Callable[..., jax.Array]

# name, engine function, the same in jnp, input shapes (the broadcasting cases are the mixed shapes)
CASES: list[tuple[str, EngineFn, JaxFn, tuple[tuple[int, ...], ...]]] = [
    ("add_matrix_row", en.add, jnp.add, ((3, 4), (4,))),
    ("subtract_scalar_matrix", en.subtract, jnp.subtract, ((), (2, 3))),
    ("multiply_column_row", en.multiply, jnp.multiply, ((3, 1), (1, 4))),
    ("divide_by_row", en.divide, jnp.divide, ((2, 3), (3,))),
    ("power_both", en.power, jnp.power, ((2, 3), (2, 1))),
    ("square", en.square, jnp.square, ((3, 4),)),
    ("sin", en.sin, jnp.sin, ((5,),)),
    ("cos", en.cos, jnp.cos, ((2, 3),)),
    ("exp", en.exp, jnp.exp, ((4,),)),
    ("log", en.log, jnp.log, ((2, 2),)),
    ("relu", en.relu, jax.nn.relu, ((3, 4),)),
    ("matmul_batched_broadcast", en.matmul, jnp.matmul, ((2, 3, 4), (4, 5))),
    ("matmul_vector_matrix", en.matmul, jnp.matmul, ((4,), (4, 5))),
    ("matmul_matrix_vector", en.matmul, jnp.matmul, ((3, 4), (4,))),
    ("dot_vectors", en.dot, jnp.dot, ((4,), (4,))),
    ("dot_matrices", en.dot, jnp.dot, ((2, 4), (4, 3))),
    ("sum_all", en.sum, jnp.sum, ((3, 4),)),
    ("sum_axis0", lambda x: en.sum(x, axis=0), lambda x: jnp.sum(x, axis=0), ((3, 4),)),
    ("mean_axis1_keepdims", lambda x: en.mean(x, axis=1, keepdims=True), lambda x: jnp.mean(x, axis=1, keepdims=True), ((3, 4),)),
    ("mean_negative_axes", lambda x: en.mean(x, axis=(-1, 0)), lambda x: jnp.mean(x, axis=(-1, 0)), ((2, 3, 4),)),
    ("tanh", en.tanh, jnp.tanh, ((3, 4),)),
    ("sigmoid", en.sigmoid, jax.nn.sigmoid, ((3, 4),)),
    ("sqrt", en.sqrt, jnp.sqrt, ((2, 3),)),
    ("abs", en.abs, jnp.abs, ((3, 4),)),
    ("maximum_matrix_row", en.maximum, jnp.maximum, ((3, 4), (4,))),
    ("max_all", en.max, jnp.max, ((3, 4),)),
    ("max_axis1", lambda x: en.max(x, axis=1), lambda x: jnp.max(x, axis=1), ((3, 4),)),
    ("max_axis0_keepdims", lambda x: en.max(x, axis=0, keepdims=True), lambda x: jnp.max(x, axis=0, keepdims=True), ((3, 4),)),
    ("reshape", lambda x: en.reshape(x, (4, 6)), lambda x: jnp.reshape(x, (4, 6)), ((2, 3, 4),)),
    ("reshape_inferred", lambda x: en.reshape(x, -1), lambda x: jnp.reshape(x, -1), ((2, 3),)),
    ("transpose_reverse", en.transpose, jnp.transpose, ((2, 3, 4),)),
    ("transpose_axes", lambda x: en.transpose(x, (1, 2, 0)), lambda x: jnp.transpose(x, (1, 2, 0)), ((2, 3, 4),)),
    ("log_softmax_last", en.log_softmax, jax.nn.log_softmax, ((3, 5),)),
    ("log_softmax_axis0", lambda x: en.log_softmax(x, axis=0), lambda x: jax.nn.log_softmax(x, axis=0), ((3, 5),)),
]

# Inputs with a sign (the rest are positive, which keeps log, sqrt and power real); none lands on a kink.
SIGNED = {"relu", "tanh", "sigmoid", "abs", "maximum_matrix_row", "max_all", "max_axis1", "max_axis0_keepdims",
          "log_softmax_last", "log_softmax_axis0", "transpose_axes"}


def case_inputs(name: str, shapes: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(len(name))
    return [rng.uniform(0.5, 2.0, size=s) * (rng.choice([-1, 1], size=s) if name in SIGNED else 1) for s in shapes]


@pytest.mark.parametrize(("name", "engine_fn", "jax_fn", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_vjp_matches_jax(
    name: str, engine_fn: EngineFn, jax_fn: JaxFn, shapes: tuple[tuple[int, ...], ...]
) -> None:
    rng = np.random.default_rng(len(name))
    args = case_inputs(name, shapes)
    names = [f"a{i}" for i in range(len(args))]
    out = en.Function(engine_fn, inputs=names)(*args)
    expected, vjp = jax.vjp(jax_fn, *[jnp.asarray(a) for a in args])
    cotangent = rng.normal(size=np.shape(expected))  # a random seed tests the whole VJP, not just ones
    out.backward(cotangent)
    np.testing.assert_allclose(out.value, expected, rtol=1e-12, atol=1e-12)
    for arg_name, arg, grad in zip(names, args, vjp(jnp.asarray(cotangent)), strict=True):
        got = out.grad(arg_name)
        assert got.shape == np.shape(arg)  # unbroadcast back to the input's shape
        np.testing.assert_allclose(got, np.asarray(grad), rtol=1e-10, atol=1e-10)


NEW_OPS = [c for c in CASES if c[0] in {
    "tanh", "sigmoid", "sqrt", "abs", "maximum_matrix_row", "max_all", "max_axis1", "max_axis0_keepdims", "reshape",
    "reshape_inferred", "transpose_reverse", "transpose_axes", "log_softmax_last", "log_softmax_axis0"}]


@pytest.mark.parametrize(("name", "engine_fn", "jax_fn", "shapes"), NEW_OPS, ids=[c[0] for c in NEW_OPS])
def test_vjp_matches_central_differences(
    name: str, engine_fn: EngineFn, jax_fn: JaxFn, shapes: tuple[tuple[int, ...], ...]
) -> None:
    assert_vjp_matches_central_differences(engine_fn, case_inputs(name, shapes))


def test_log_softmax_is_stable_for_large_inputs() -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    out = en.Function(en.log_softmax, inputs=("x",))(x)
    cotangent = np.array([[1.0, -2.0, 0.5], [0.3, 0.0, 1.0]])
    out.backward(cotangent)
    expected, vjp = jax.vjp(jax.nn.log_softmax, jnp.asarray(x))
    assert np.all(np.isfinite(out.value)) and np.all(np.isfinite(out.grad("x")))
    np.testing.assert_allclose(out.value, np.asarray(expected), atol=1e-12)
    np.testing.assert_allclose(out.grad("x"), np.asarray(vjp(jnp.asarray(cotangent))[0]), atol=1e-12)


def test_sigmoid_does_not_overflow() -> None:
    out = en.Function(en.sigmoid, inputs=("x",))(np.array([-1000.0, 0.0, 1000.0]))
    out.backward()
    np.testing.assert_array_equal(out.value, [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(out.grad("x"), [0.0, 0.25, 0.0])


def test_ties_share_the_gradient_like_jax() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])
    out = en.Function(en.maximum, inputs=("a", "b"))(a, b)
    out.backward()
    _, vjp = jax.vjp(jnp.maximum, jnp.asarray(a), jnp.asarray(b))
    ga, gb = vjp(jnp.ones(3))
    np.testing.assert_array_equal(out.grad("a"), np.asarray(ga))  # [0.5, 0, 0.5]
    np.testing.assert_array_equal(out.grad("b"), np.asarray(gb))
    x = np.array([[2.0, 7.0, 7.0], [1.0, 1.0, 1.0]])
    out = en.Function(lambda v: en.max(v, axis=1), inputs=("x",))(x)
    out.backward()
    _, vjp = jax.vjp(lambda v: jnp.max(v, axis=1), jnp.asarray(x))
    np.testing.assert_allclose(out.grad("x"), np.asarray(vjp(jnp.ones(2))[0]), atol=1e-15)


def test_f_reference_values() -> None:
    f = make_function()
    y = f(3.0)
    y.backward()
    assert y.value == pytest.approx(EXPECTED_F_X1, abs=5e-8)
    assert y.grad("x") == pytest.approx(EXPECTED_DF_X1, abs=5e-8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_f_gradient_over_points_keeps_dtype(dtype: Any) -> None:
    x = np.linspace(0, 4 * np.pi, 20).astype(dtype)
    f = make_function()
    vector, loop = vectorised_grad(f, x), loop_grad(f, x)
    assert vector.dtype == dtype and loop.dtype == dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(vector, df_exact(x), atol=tolerance)
    np.testing.assert_allclose(loop, vector, atol=tolerance)


def test_every_call_records_a_fresh_graph() -> None:
    f = make_function()
    first, second = f(3.0), f(3.0)
    nodes1, nodes2 = graph_nodes(first), graph_nodes(second)
    assert {n.call_id for n in nodes1} == {first.call_id}
    assert {n.call_id for n in nodes2} == {second.call_id}
    assert first.call_id != second.call_id
    assert not {id(n) for n in nodes1} & {id(n) for n in nodes2}
    assert f.last_call is second


def test_input_used_three_times_accumulates_once_per_use() -> None:
    x = np.array([0.3, 1.7])
    y = make_function()(x)
    (leaf,) = [n for n in graph_nodes(y) if isinstance(n, en.InputNode) and n.kind == "input"]
    assert len([n for n in graph_nodes(y) if leaf in n.parents]) == 3  # multiply, sin, multiply
    y.backward()
    np.testing.assert_allclose(y.grad(leaf), df_exact(x), atol=1e-12)


def test_backward_twice_accumulates() -> None:
    y = make_function()(3.0)
    y.backward()
    y.backward()
    assert y.grad("x") == pytest.approx(2 * EXPECTED_DF_X1, abs=1e-7)


def test_grad_before_backward_and_unknown_input_are_refused() -> None:
    y = make_function()(3.0)
    with pytest.raises(RuntimeError, match="backward"):
        y.grad("x")
    y.backward()
    with pytest.raises(KeyError, match="no input named 'z'"):
        y.grad("z")


def test_nodes_of_two_calls_cannot_be_mixed() -> None:
    f = make_function()
    with pytest.raises(ValueError, match="different calls"):
        en.add(f(1.0), f(2.0))
    g = en.Function(lambda x: en.sin(x), inputs=("x",))
    with pytest.raises(ValueError, match="another call"):
        g(f(1.0))


def test_dot_refuses_higher_ranks() -> None:
    with pytest.raises(ValueError, match="use matmul"):
        en.Function(en.dot, inputs=("a", "b"))(np.ones((2, 2, 2)), np.ones((2, 2)))
