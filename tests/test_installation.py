"""`pytest -m installation`: the frameworks import, compute, and use the GPU when one is visible."""

from __future__ import annotations

import pytest

from src.core.devices import gpu_names

pytestmark = pytest.mark.installation

NO_GPU = "no NVIDIA GPU visible (nvidia-smi lists none): GPU checks do not apply on this machine"


def test_jax_computes() -> None:
    import jax.numpy as jnp

    x = jnp.arange(6.0).reshape(2, 3)
    assert float((x @ x.T).sum()) == 83.0  # [[5, 14], [14, 50]]


def test_pytorch_computes() -> None:
    import torch

    x = torch.arange(6.0).reshape(2, 3)
    assert float((x @ x.T).sum()) == 83.0  # [[5, 14], [14, 50]]


def test_flax_and_optax_import() -> None:
    import optax
    from flax import nnx

    layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    assert layer.kernel.shape == (3, 2)
    assert optax.adam(1e-3) is not None


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
def test_jax_uses_the_gpu() -> None:
    import jax

    platforms = {d.platform for d in jax.devices()}
    assert "gpu" in platforms, (
        f"nvidia-smi sees {gpu_names()} but JAX only has {platforms}: "
        "install the CUDA plugin with `pip install -U 'jax[cuda12]'` (./cli.sh does this on a GPU machine)"
    )
    import jax.numpy as jnp

    assert float(jnp.ones(4).sum()) == 4.0


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
def test_pytorch_uses_the_gpu() -> None:
    import torch

    assert torch.cuda.is_available(), (
        f"nvidia-smi sees {gpu_names()} but torch {torch.__version__} has no CUDA: "
        "reinstall torch from the CUDA index (delete .venv and rerun ./cli.sh on the GPU machine)"
    )
    assert float(torch.ones(4, device="cuda").sum()) == 4.0
