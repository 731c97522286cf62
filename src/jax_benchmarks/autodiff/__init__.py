"""A small reverse-mode automatic differentiation engine on NumPy arrays.

Design (after the "zkynet" framework): a Module call records a DAG of fresh
nodes (inputs and parameters as leaves, operator nodes above them); every
Operator defines its forward pass and its vector-Jacobian product; one
`backward()` on the output computes every gradient, and `grad(input_or_param)`
looks one up. Python's operators and NumPy's ufuncs on nodes and Parameters
(`x * w`, `np.ones(3) @ x`, `np.exp(x)`, `x.sum()`) build operator nodes.

    f = Function(lambda x: 0.2 * x + sin(x) + cos(2.0 * x), inputs=("x",))
    y = f(3.0); y.backward(); y.grad("x")   # -0.2311615...
"""

from jax_benchmarks.autodiff.module import Function, Module
from jax_benchmarks.autodiff.nodes import InputNode, Node, OperatorNode
from jax_benchmarks.autodiff.operator import Operand, Operator
from jax_benchmarks.autodiff.ops import (
    abs, add, cos, divide, dot, exp, log, log_softmax, matmul, max, maximum, mean, multiply, power, relu, reshape,
    sigmoid, sin, sqrt, square, subtract, sum, tanh, transpose,
)
from jax_benchmarks.autodiff.optim import sgd_step
from jax_benchmarks.autodiff.parameter import FloatArray, Parameter

__all__ = [
    "Function", "Module", "Parameter", "Node", "InputNode", "OperatorNode", "Operator", "Operand", "FloatArray",
    "sgd_step",
    "add", "subtract", "multiply", "divide", "power", "square", "maximum",
    "sin", "cos", "exp", "log", "relu", "tanh", "sigmoid", "sqrt", "abs",
    "dot", "matmul", "sum", "mean", "max", "log_softmax", "reshape", "transpose",
]
