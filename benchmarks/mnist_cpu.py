"""Benchmark: MNIST CNN training throughput on this CPU, Flax against PyTorch (the goal: Flax with
`--devices all` at ≥ 0.9× PyTorch's single-process images/s, and well above Flax on one device).

    .venv/bin/python benchmarks/mnist_cpu.py [rounds] [epochs]

Part 1 runs the real commands (each in its own process: XLA flags must precede the JAX import) in
interleaved rounds, so machine noise hits every configuration alike, and prints the median images/s of
the timed epochs and of the compiled step. Part 2 times the backward pass of the two ways to write the
2×2 max-pool (why the Flax model uses `max_pool_2x2`).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

CONFIGS = {
    "pytorch (1 process)": ["pytorch"],
    "flax --devices 1": ["flax", "--devices", "1"],
    "flax --devices all": ["flax", "--devices", "all"],
    "flax --devices 1 --xla-cpu-conv ynnpack": ["flax", "--devices", "1", "--xla-cpu-conv", "ynnpack"],
    "flax --devices all --xla-cpu-conv ynnpack": ["flax", "--devices", "all", "--xla-cpu-conv", "ynnpack"],
}


def run_config(args: list[str], epochs: int, results: Path) -> tuple[list[float], float]:
    """One command; returns the images/s of each epoch and of the compiled step."""
    cmd = [sys.executable, str(REPO / "main.py"), "mnist", *args, "--num-epochs", str(epochs),
           "--comet", "off", "--results", str(results), "--json"]
    subprocess.run(cmd, cwd=results.parent, capture_output=True, check=True)
    records = [json.loads(line) for line in results.read_text().splitlines()]
    results.unlink()
    epochs_ips = [r["metrics"]["images_per_s"] for r in records if r["case"].startswith("train_epoch_")]
    (step,) = [r["metrics"]["images_per_s"] for r in records if r["case"].startswith("train_step_")]
    return epochs_ips, step


def throughput(rounds: int, epochs: int) -> None:
    epoch_ips: dict[str, list[float]] = {name: [] for name in CONFIGS}
    step_ips: dict[str, list[float]] = {name: [] for name in CONFIGS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name, args in CONFIGS.items():
                per_epoch, step = run_config(args, epochs, Path(tmp) / "results.jsonl")
                epoch_ips[name] += per_epoch
                step_ips[name].append(step)
                print(f"  round {r + 1}: {name:<42} epochs {', '.join(f'{v:.0f}' for v in per_epoch)} images/s",
                      flush=True)
    torch = statistics.median(epoch_ips["pytorch (1 process)"])
    print(f"\n{'configuration':<42} {'epoch images/s':>15} {'step images/s':>14} {'epoch ÷ PyTorch':>16}")
    for name in CONFIGS:
        epoch = statistics.median(epoch_ips[name])
        print(f"{name:<42} {epoch:>15.0f} {statistics.median(step_ips[name]):>14.0f} {epoch / torch:>15.2f}×")


def pool_backward() -> None:
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from jax_benchmarks.frameworks.descriptors import jax_sync
    from jax_benchmarks.measure.timing import measure
    from jax_benchmarks.training.flax_trainer import max_pool_2x2

    x = jax.random.normal(jax.random.key(0), (128, 24, 24, 64))
    def flax_pool(v: jax.Array) -> jax.Array:
        return nnx.max_pool(v, window_shape=(2, 2), strides=(2, 2))  # type: ignore[no-untyped-call,no-any-return]

    pools: dict[str, Callable[[jax.Array], jax.Array]] = {
        "nnx.max_pool (reduce_window)": flax_pool,
        "max_pool_2x2 (reshape + max)": max_pool_2x2,
    }
    print(f"\nbackward of a 2×2 max-pool on {x.shape} float32, jitted, one XLA CPU device:")
    for name, pool in pools.items():
        grad = jax.jit(jax.grad(lambda v: jnp.sum(pool(v) ** 2)))
        m = measure(lambda: grad(x), jax_sync, repeats=20, warmup=2)
        print(f"  {name:<30} median {m.median_s * 1e3:7.2f} ms  IQR {m.iqr_s * 1e3:.2f} ms  (n={m.repeats})")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    print(f"mnist CNN on the embedded digits, batch 128, {rounds} interleaved rounds of {epochs} epochs each")
    throughput(rounds, epochs)
    pool_backward()


if __name__ == "__main__":
    main()
