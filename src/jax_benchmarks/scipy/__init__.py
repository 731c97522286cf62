"""The `scipy` group: the sensor-calibration fit in SciPy, JAX and PyTorch.

Never import this package as a top-level `scipy`: it lives at `jax_benchmarks.scipy`, so
`import scipy.optimize` inside its modules still finds the real SciPy.
"""
