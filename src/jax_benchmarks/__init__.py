"""jax-benchmarks: NumPy vs PyTorch vs JAX vs Flax, measured honestly."""
