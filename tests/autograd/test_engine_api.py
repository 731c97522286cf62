"""How the engine is used: NumPy operands on either side, Parameter arithmetic, parameter discovery,
refused gradients, and one backward pass serving every gradient lookup."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jax_benchmarks import autodiff as en
from jax_benchmarks.autodiff import graph
from jax_benchmarks.autodiff.graph import Operable

ENGINE = Path(__file__).resolve().parents[2] / "src" / "jax_benchmarks" / "autodiff"


def test_numpy_array_on_the_left_builds_a_node() -> None:
    x0 = np.array([0.5, -1.5])

    def f(x: en.Node) -> Any:
        return np.array([2.0, 3.0]) * x + np.float64(4.0) - np.ones((2, 2)) @ x + np.exp(x) / np.array([1.0, 2.0])

    out = en.Function(f, inputs=("x",))(x0)
    assert isinstance(out, en.OperatorNode)
    out.backward()
    np.testing.assert_allclose(out.value, np.array([2, 3]) * x0 + 4 - x0.sum() + np.exp(x0) / [1, 2])
    np.testing.assert_allclose(out.grad("x"), np.array([2, 3]) - 2.0 + np.exp(x0) / [1, 2])


def test_a_ufunc_the_engine_cannot_differentiate_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="floor"):
        en.Function(lambda x: np.floor(x), inputs=("x",))(np.ones(2))


def test_arithmetic_on_parameters() -> None:
    class Square(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.p = en.Parameter("p", 3.0)

        def call(self, x: en.Node) -> Any:
            return self.p * self.p + np.float64(2.0) * self.p * x - abs(-self.p) + self.p.tanh()

    model = Square()
    y = model(5.0)
    y.backward()
    assert float(y.value) == pytest.approx(9 + 30 - 3 + np.tanh(3.0))
    assert float(y.grad(model.p)) == pytest.approx(2 * 3 + 2 * 5 - 1 + 1 - np.tanh(3.0) ** 2)
    assert float(y.grad("x")) == pytest.approx(6.0)


def test_parameter_arithmetic_outside_a_module_call_is_refused() -> None:
    p = en.Parameter("p", 1.0)
    with pytest.raises(RuntimeError, match="inside a Module call"):
        _ = p * p


def test_parameters_in_lists_and_dicts_are_found_and_trained() -> None:
    class Blocks(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.scales = [en.Parameter("s", 1.0), en.Parameter("s", 2.0)]
            self.shifts = {"first": en.Parameter("t", 0.5)}
            self.heads = [en.Function(lambda x: x, inputs=("x",))]  # a module without parameters
            self.alias = self.scales[0]  # the same object again: listed once

        def call(self, x: en.Node) -> Any:
            return (x * self.scales[0] * self.scales[1] + self.shifts["first"]) ** 2

    model = Blocks()
    assert list(model.parameters()) == ["scales.0", "scales.1", "shifts.first"]
    before = {name: float(p.value) for name, p in model.parameters().items()}
    loss = model(1.0)
    en.sgd_step(model, loss, 0.01)
    residual = 1.0 * 1.0 * 2.0 + 0.5
    expected = {"scales.0": 2 * residual * 2.0, "scales.1": 2 * residual * 1.0, "shifts.first": 2 * residual}
    for name, param in model.parameters().items():
        assert float(param.value) == pytest.approx(before[name] - 0.01 * expected[name])


def test_two_parameters_with_one_name_are_refused() -> None:
    class Clash(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.a, self.b = en.Parameter("w", 1.0), en.Parameter("w", 2.0)

        def call(self, x: en.Node) -> en.Node:
            return x * self.a * self.b

    with pytest.raises(ValueError, match="two parameters are named 'w'"):
        Clash().parameters()


def test_gradient_of_constants_only_is_refused() -> None:
    y = en.sin(3.0)  # an operator on a plain number: no input, no parameter
    with pytest.raises(ValueError, match="computed from constants only"):
        y.backward()
    out = en.Function(lambda x: x * en.cos(2.0), inputs=("x",))(1.0)
    out.backward()
    (constant,) = [n for n in out.parents if n.label == "cos"]
    with pytest.raises(ValueError, match="'cos' is computed from constants only"):
        out.grad(constant)
    other = en.Function(lambda x: x * 2.0, inputs=("x",))(1.0)
    with pytest.raises(ValueError, match="not part of"):
        out.grad(other)


def test_gradient_lookups_do_not_walk_the_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    class Chain(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.ws = [en.Parameter("w", 1.0 + i / 10) for i in range(20)]

        def call(self, x: en.Node) -> Any:
            for w in self.ws:
                x = en.tanh(x * w)
            return x

    model = Chain()
    y = model(0.3)
    walks: list[int] = []
    real = graph.graph_nodes
    monkeypatch.setattr(graph, "graph_nodes", lambda *a, **k: walks.append(1) or real(*a, **k))
    y.backward()
    grads = [y.grad(p) for p in model.parameters().values()] + [y.grad("x")]
    assert len(walks) == 1  # one walk for the backward pass, none for 21 lookups
    y.backward()  # a second pass reuses the graph it walked
    assert len(walks) == 1
    np.testing.assert_allclose([y.grad(p) for p in model.parameters().values()], [2 * g for g in grads[:-1]])


def test_the_operators_are_defined_on_the_one_base_class() -> None:
    """Python's operators, NumPy's ufunc hook and the method forms are written in the body of `Operable`
    (nothing is attached to it later, no stub is hidden for the type checker), and both Node and
    Parameter have them."""
    source = (ENGINE / "graph.py").read_text()
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Operable"]
    defined = {f.name for f in cls.body if isinstance(f, ast.FunctionDef)}
    for statement in cls.body:  # `__add__, __radd__ = binary(Add), reflected(Add)`
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                defined |= {n.id for n in names if isinstance(n, ast.Name)}
    expected = {"__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
                "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__array_ufunc__",
                "sum", "mean", "max", "reshape", "transpose", "T", "exp", "log", "sqrt", "sin", "cos", "tanh",
                "sigmoid", "relu", "log_softmax"}
    assert defined == expected
    for path in ENGINE.rglob("*.py"):
        text = path.read_text()
        assert "TYPE_CHECKING" not in text and "setattr(" not in text, path.name
    assert issubclass(en.Node, Operable) and issubclass(en.Parameter, Operable)


def test_no_import_inside_engine_functions() -> None:
    """The operator methods are attached once; no method imports the operators when it runs."""
    late = []
    for path in ENGINE.rglob("*.py"):
        if path.name == "plot.py":  # matplotlib is imported only when a graph is drawn
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                late += [f"{path.name}:{n.lineno}" for n in ast.walk(node) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert late == []


def test_a_graph_is_freed_with_its_output_without_the_cycle_collector() -> None:
    """No reference cycle: the timing core pauses the collector, and a step's activations must not pile up."""
    import gc
    import weakref

    f = en.Function(lambda x: en.sum(en.tanh(x) * x), inputs=("x",))
    out = f(np.ones(3))
    out.backward()
    assert out.grad("x").shape == (3,)
    inner = weakref.ref(out.inputs[0])
    gc.disable()
    try:
        del out
        f.last_call = None
        assert inner() is None
    finally:
        gc.enable()
