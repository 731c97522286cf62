"""Framework-free core: settings, measurement, results, devices, rng, typed helpers.

Nothing here imports torch, jax, flax or comet_ml at import time; the few
functions that need a framework import it inside their body.
"""
