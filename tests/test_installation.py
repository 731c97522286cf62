"""`pytest -m installation`: the frameworks import, compute, and use the GPU when one is visible."""

from __future__ import annotations

import pytest

from jax_benchmarks.hardware.devices import gpu_names

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
    import numpy as np
    import optax
    from flax import nnx

    layer = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    assert layer.kernel.shape == (3, 2)
    # Adam's first update is -learning_rate × sign(gradient): m̂ / √v̂ = g / |g|.
    adam = optax.adam(0.1)
    updates, _ = adam.update(np.array([2.0, -0.5]), adam.init(np.zeros(2)))
    np.testing.assert_allclose(np.asarray(updates), [-0.1, 0.1], rtol=1e-5)


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
def test_jax_uses_the_gpu() -> None:
    import jax

    platforms = {d.platform for d in jax.devices()}
    assert "gpu" in platforms, (
        f"nvidia-smi sees {gpu_names()} but JAX only has {platforms}: "
        "install the CUDA plugin with `pip install -U 'jax[cuda13]'` (./cli.sh does this on a GPU machine)"
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


def relative_error_of_float32_product(framework: str, precision: str) -> float:
    """‖A·B − ref‖ / ‖ref‖ of a 1024² float32 product on the GPU under the run's policy, ref in float64."""
    import numpy as np

    from jax_benchmarks.hardware.gpu_policy import applied

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1024, 1024))
    ref = a @ b
    with applied(precision, [framework]):  # type: ignore[arg-type]
        if framework == "jax":
            import jax

            gpu = jax.devices("gpu")[0]
            x, y = (jax.device_put(m.astype(np.float32), gpu) for m in (a, b))
            out = np.asarray(jax.jit(lambda p, q: p @ q)(x, y), np.float64)
        else:
            import torch

            x, y = (torch.from_numpy(m.astype(np.float32)).cuda() for m in (a, b))
            out = (x @ y).cpu().double().numpy()
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
@pytest.mark.parametrize("framework", ["jax", "torch"])
def test_precision_policy_holds_on_the_gpu(framework: str) -> None:
    """--precision float32 computes IEEE float32 (error ~1e-7) in both frameworks; tf32 rounds inputs to
    10 mantissa bits (error ~3e-4) in both: the policy reaches the GPU, not only the flags."""
    ieee = relative_error_of_float32_product(framework, "float32")
    tf32 = relative_error_of_float32_product(framework, "tf32")
    assert ieee < 1e-5, f"{framework}: --precision float32 gave error {ieee:.2e}: not IEEE float32"
    assert tf32 > 3e-5, f"{framework}: --precision tf32 gave error {tf32:.2e}: TF32 tensor cores not used"


# Known answer on the device: a case that allocates 256 MiB on the GPU records a device peak of that much.
# Tolerance: at least the bytes (the allocators count whole blocks, rounded up), at most 4 MiB more
# (PyTorch rounds to 512 B and 2 MiB segments; XLA's BFC allocator to 256 B plus a scratch buffer).
DEVICE_BYTES = 256 * 2**20
DEVICE_ABOVE = 4 * 2**20


def device_peak_of(backend: str, call: object, tmp_path: object) -> dict[str, object]:
    from pathlib import Path

    from jax_benchmarks.measure.harness import Case, Target, Timed, run_cases
    from jax_benchmarks.frameworks.descriptors import jax_device_memory, jax_sync, torch_device_memory, torch_sync
    from jax_benchmarks.run import Run

    sync = jax_sync if backend == "jax" else torch_sync("cuda")
    run = Run("test", Path(str(tmp_path)) / "results.jsonl")
    run_cases(run, Target(backend, "gpu"), [Case("alloc_256MiB", lambda: Timed(call, sync))], repeats=2,  # type: ignore[arg-type]
              device_memory=jax_device_memory if backend == "jax" else torch_device_memory)
    return dict(run.records[0].memory)


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
def test_pytorch_device_peak_is_the_known_allocation(tmp_path: object) -> None:
    import torch

    memory = device_peak_of("pytorch", lambda: torch.ones(DEVICE_BYTES // 4, device="cuda"), tmp_path)
    assert memory["device_status"] == "measured", memory
    peak, reserved = memory["device_peak_bytes"], memory["device_reserved_bytes"]
    assert isinstance(peak, int) and DEVICE_BYTES <= peak <= DEVICE_BYTES + DEVICE_ABOVE, memory
    assert isinstance(reserved, int) and reserved >= peak, memory


@pytest.mark.skipif(not gpu_names(), reason=NO_GPU)
def test_jax_device_peak_is_the_known_allocation(tmp_path: object) -> None:
    import jax
    import jax.numpy as jnp

    gpu = jax.devices("gpu")[0]
    # Larger than anything earlier in the process: JAX's lifetime peak is then this case's.
    size = max(DEVICE_BYTES, int((gpu.memory_stats() or {}).get("peak_bytes_in_use", 0)) + DEVICE_BYTES)
    make = jax.jit(lambda: jnp.ones(size // 4, jnp.float32), device=gpu)
    memory = device_peak_of("jax", make, tmp_path)
    assert memory["device_status"] == "measured", memory
    peak = memory["device_peak_bytes"]
    assert isinstance(peak, int) and size <= peak <= size + DEVICE_ABOVE, memory
