"""The engine's operators, as functions: each call adds one node to the current graph."""

from src.autograd.engine.ops.arithmetic import add, divide, multiply, power, square, subtract
from src.autograd.engine.ops.linalg import dot, matmul
from src.autograd.engine.ops.reductions import mean, sum
from src.autograd.engine.ops.unary import cos, exp, log, relu, sin

__all__ = [
    "add", "subtract", "multiply", "divide", "power", "square",
    "sin", "cos", "exp", "log", "relu",
    "dot", "matmul", "sum", "mean",
]
