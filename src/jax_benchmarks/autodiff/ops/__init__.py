"""The engine's operators, as functions: each call adds one node to the current graph.

Importing this package also attaches the operator methods (`x * y`, `x.sum()`, ...) to
Node and Parameter (see ops/methods.py).
"""

from jax_benchmarks.autodiff.ops import methods as methods
from jax_benchmarks.autodiff.ops.arithmetic import add, divide, maximum, multiply, power, square, subtract
from jax_benchmarks.autodiff.ops.linalg import dot, matmul
from jax_benchmarks.autodiff.ops.reductions import log_softmax, max, mean, sum
from jax_benchmarks.autodiff.ops.shape import reshape, transpose
from jax_benchmarks.autodiff.ops.unary import abs, cos, exp, log, relu, sigmoid, sin, sqrt, tanh

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "square", "maximum",
    "sin", "cos", "exp", "log", "relu", "tanh", "sigmoid", "sqrt", "abs",
    "dot", "matmul", "sum", "mean", "max", "log_softmax", "reshape", "transpose",
]
