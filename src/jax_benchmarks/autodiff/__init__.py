"""A small reverse-mode automatic differentiation engine on NumPy arrays.

A Module call records a DAG of fresh nodes (inputs and parameters as leaves, operator nodes above them);
every Operator defines its forward pass and its vector-Jacobian product; one `backward()` on the output
computes every gradient, and `grad(input_or_param)` looks one up. Python's operators and NumPy's ufuncs
on nodes and Parameters (`x * w`, `np.ones(3) @ x`, `np.exp(x)`, `x.sum()`) build operator nodes: they
are defined on the one base class of both, `Operable` (as micrograd defines them on its `Value`).

    f = Function(lambda x: 0.2 * x + sin(x) + cos(2.0 * x), inputs=("x",))
    y = f(3.0); y.backward(); y.grad("x")   # -0.2311615...
    grad(f, "x")(3.0)                         # the same, as a function of new inputs (jax.grad)

Modules, each importing only those above it: `arrays` (float arrays, unbroadcast, OperandError) <-
`operators` (forward and VJP of each primitive, no graph) <- `spatial` (conv2d, pooling, padding on
NCHW images; leaky_relu, flatten, detach) <- `graph` (Operable, Parameter, the nodes, backprop, the
call session, `apply`) <- `functions` (the operators as functions), `module` (Module, Function, grad) <-
`optim` (SGD with momentum or Nesterov, Adam, RMSprop); `layout` <- `plot` draw a graph.
"""

from jax_benchmarks.autodiff.arrays import FloatArray, OperandError
from jax_benchmarks.autodiff.functions import (
    abs, add, avg_pool2d, conv2d, cos, detach, divide, dot, exp, flatten, leaky_relu, log, log_softmax, matmul, max,
    max_pool2d, maximum, mean, multiply, pad2d, power, relu, reshape, sigmoid, sin, sqrt, square, subtract, sum, tanh,
    transpose,
)
from jax_benchmarks.autodiff.graph import InputNode, Node, Operable, Operand, OperatorNode, Parameter, apply
from jax_benchmarks.autodiff.module import Function, Gradient, Module, grad
from jax_benchmarks.autodiff.operators import Operator
from jax_benchmarks.autodiff.optim import SGD, Adam, Optimizer, RMSprop, sgd_step

__all__ = [
    "Function", "Module", "Parameter", "Node", "InputNode", "OperatorNode", "Operable", "Operator", "Operand",
    "FloatArray", "apply", "sgd_step", "grad", "Gradient", "Optimizer", "SGD", "Adam", "RMSprop",
    "add", "subtract", "multiply", "divide", "power", "square", "maximum",
    "sin", "cos", "exp", "log", "relu", "tanh", "sigmoid", "sqrt", "abs",
    "dot", "matmul", "sum", "mean", "max", "log_softmax", "reshape", "transpose",
    "conv2d", "max_pool2d", "avg_pool2d", "pad2d", "leaky_relu", "flatten", "detach", "OperandError",
]
