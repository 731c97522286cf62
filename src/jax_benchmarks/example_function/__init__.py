"""The example function of the `jit` and `autograd` groups, written once per framework:

    f(x) = 0.2·x + sin(x) + cos(2x),   f′(x) = 0.2 + cos(x) − 2·sin(2x).

`jit` times f itself (eager against compiled), `autograd` times its derivative. Each framework's f
lives in its own module (`in_numpy`, `in_jax`, `in_torch`), so importing one loads no other
framework, and the function a benchmark calls is a plain module-level function (no import or
dispatch inside the timed call).
"""
