"""The engine's operators, as functions: each call adds one node to the current graph.

Importing this package also attaches the operator methods (`x * y`, `x.sum()`, ...) to
Node and Parameter (see ops/methods.py).
"""

from src.autograd.engine.ops import methods as methods
from src.autograd.engine.ops.arithmetic import add, divide, maximum, multiply, power, square, subtract
from src.autograd.engine.ops.linalg import dot, matmul
from src.autograd.engine.ops.reductions import log_softmax, max, mean, sum
from src.autograd.engine.ops.shape import reshape, transpose
from src.autograd.engine.ops.unary import abs, cos, exp, log, relu, sigmoid, sin, sqrt, tanh

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "square", "maximum",
    "sin", "cos", "exp", "log", "relu", "tanh", "sigmoid", "sqrt", "abs",
    "dot", "matmul", "sum", "mean", "max", "log_softmax", "reshape", "transpose",
]
