"""What the Flax train step's index argument costs: the step case passes one index array made once, `train_epoch`
makes a new one each step (`jnp.int32(i)`), and the cross-check once did too (docs/gpu.md#what-the-cross-check-compares).

    python benchmarks/step_index.py [--device auto|cpu|gpu] [--calls N]

The mnist step (batch 128, the CLI's `--dry-run` settings) is called with its index passed five ways, in turn, N
times each way; for each way it prints the median host time until the call returns (the dispatch: what a loop
that never waits pays per step) and the median time per call waited for (`block_until_ready` after each, the
core's rule). The ways: the array made once (the step case's), the same with the garbage collector paused (as
the core times), `jnp.int32(0)` made in each call (`train_epoch`'s), `np.int32(0)` (a host scalar that jit
transfers itself) and `jnp.int32(0)` made and waited for before the clock starts (the cost of making it, left
out). Last, what making `jnp.int32(0)` alone costs.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import crosscheck  # noqa: E402  (benchmarks/crosscheck.py: the trainer built as the CLI's, the CPU's XLA flags)

from jax_benchmarks.hardware.devices import gpu_name, resolve_device  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    parser.add_argument("--calls", type=int, default=30, help="calls each way, for each of the two figures")
    options = parser.parse_args()
    if options.calls < 1:
        parser.error(f"--calls {options.calls}: allowed 1 or more")
    kind = resolve_device(options.device)
    crosscheck.prepare_like_the_cli(os.environ)
    if kind == "cpu":  # before JAX loads: XLA reads its flags once
        os.environ["XLA_FLAGS"] = crosscheck.cpu_xla_flags(os.environ.get("XLA_FLAGS", ""))
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jax_benchmarks.frameworks.rng import RNG_Provider
    from jax_benchmarks.training.flax_trainer import FlaxTrainer

    trainer = FlaxTrainer(crosscheck.mnist_settings(kind), crosscheck.mnist_data(), RNG_Provider(0))
    order = jax.device_put(jnp.arange(trainer.x_train.shape[0]), trainer.placement)
    acc = trainer._zero_acc(trainer.plan.steps)
    once = jnp.int32(0)

    def step(index: Any) -> Any:
        return trainer._train_step(trainer.state, acc, trainer.x_train, trainer.y_train, order, index)

    def made_and_waited() -> Any:
        index = jnp.int32(0)
        index.block_until_ready()
        return index

    def collector_paused(_: object) -> Any:
        gc.disable()
        try:
            return step(once)
        finally:
            gc.enable()

    # Each way: what is made before the clock starts, and the call timed with it.
    ways: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {
        "made once (the step case's)": (lambda: None, lambda _: step(once)),
        "made once, garbage collector paused": (lambda: None, collector_paused),
        "jnp.int32(0) each call (train_epoch's)": (lambda: None, lambda _: step(jnp.int32(0))),
        "np.int32(0) each call": (lambda: None, lambda _: step(np.int32(0))),
        "jnp.int32(0) made and waited for before the clock": (made_and_waited, step),
    }
    for before, call in ways.values():  # compile, and warm each way
        for _ in range(2):
            jax.block_until_ready(call(before()))
    returned: dict[str, list[float]] = {name: [] for name in ways}
    waited: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(options.calls):  # the ways in turn, so a busy spell falls on all of them
        for name, (before, call) in ways.items():
            made = before()
            start = time.perf_counter()
            result = call(made)
            returned[name].append(time.perf_counter() - start)
            jax.block_until_ready(result)
            waited[name].append(time.perf_counter() - start)
            del result
    print(f"device {kind} ({gpu_name() or 'CPU'}), mnist flax train step, batch {crosscheck.MNIST_BATCH}, "
          f"{options.calls} calls each way, medians")
    print(f"{'index passed':<52} {'call returns':>13} {'waited for':>12}")
    for name in ways:
        print(f"{name:<52} {statistics.median(returned[name]) * 1e6:>10.0f} µs "
              f"{statistics.median(waited[name]) * 1e3:>9.3f} ms")
    start = time.perf_counter()
    made = [jnp.int32(0) for _ in range(1000)]
    print(f"making jnp.int32(0) alone: {(time.perf_counter() - start) / len(made) * 1e6:.0f} µs (mean of {len(made)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
