"""A small reverse-mode automatic differentiation engine on NumPy arrays.

Design (after the "zkynet" framework): a Module call records a DAG of fresh
nodes (inputs and parameters as leaves, operator nodes above them); every
Operator defines its forward pass and its vector-Jacobian product; `backward()`
on the output accumulates gradients and `grad(input_or_param)` returns them.

    f = Function(lambda x: 0.2 * x + sin(x) + cos(2.0 * x), inputs=("x",))
    y = f(3.0); y.backward(); y.grad("x")   # -0.2311615...
"""

from src.autograd.engine.module import Function, Module
from src.autograd.engine.nodes import InputNode, Node, OperatorNode
from src.autograd.engine.operator import Operand, Operator
from src.autograd.engine.ops import (
    add, cos, divide, dot, exp, log, matmul, mean, multiply, power, relu, sin, square, subtract, sum,
)
from src.autograd.engine.optim import sgd_step
from src.autograd.engine.parameter import FloatArray, Parameter

__all__ = [
    "Function", "Module", "Parameter", "Node", "InputNode", "OperatorNode", "Operator", "Operand", "FloatArray",
    "sgd_step",
    "add", "subtract", "multiply", "divide", "power", "square",
    "sin", "cos", "exp", "log", "relu", "dot", "matmul", "sum", "mean",
]
