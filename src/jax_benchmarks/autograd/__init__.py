"""The `autograd` group: gradients of f(x) = 0.2·x + sin(x) + cos(2x) in JAX, PyTorch and our own engine."""
