"""The project's own engine (src/jax_benchmarks/autodiff) on the mnist CNN, against PyTorch eager on the same
CPU: one train step's time, its peak host memory, and test accuracy after training on the embedded subset.

Goals (issue 39): a train step (batch 128) within 5x of PyTorch eager's; peak host memory at most 3x
PyTorch's; >= 97 % test accuracy on the embedded 5,000-image subset in <= 10 epochs.

* time: the three models in this one process, same batch, Adam (lr 1e-3), the steps of the autograd group's
  `cnn_train_step_128x28x28_float32` cases (the engine's; PyTorch eager's with mnist's `Net`; Flax's jitted
  step with mnist's flax.nnx `CNN`, synced on its outputs); each measured by the project's timing core
  (`jax_benchmarks.measure.timing.measure`: a first call apart, a warm-up, then at least --repeats samples),
  measured in alternation --rounds times; the ratios of medians. NumPy and PyTorch use the same number of
  threads (--threads: torch.set_num_threads, and NumPy's OpenBLAS's through threadpoolctl); XLA:CPU has no
  thread setting of that kind and uses its own pool. XLA:CPU runs the convolutions on the kernels
  --xla-cpu-conv names (mnist flax's option and default: XLA_FLAGS set before JAX loads).
* memory: each framework in a fresh process (python -c, the same model and batch): the peak resident memory
  of the first step (which also allocates the optimizer's state), then of --steps more steps, each above
  what the process held just before, read as the project reads it (`jax_benchmarks.measure.memory.HostPeak`,
  /proc VmHWM). After the first step the allocator keeps pages it was handed back, so the later steps'
  figure is what a step needs beyond them; the first step's is the whole working set.
* accuracy: the engine trains from scratch, one line per epoch (Adam 1e-3, batch 128, dropout on), and
  evaluates the 1,000 test images after each epoch.

    .venv/bin/python benchmarks/autodiff_cnn.py [--threads 2] [--epochs 10] [--no-training] [--xla-cpu-conv xla]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BATCH = 128
FRAMEWORKS = ("engine", "pytorch", "flax")

# One process measures one framework's memory: model, batch, a warm-up step, then HostPeak around the steps.
MEMORY_CHILD = """
import json, sys
import numpy as np
sys.path[:0] = [{src!r}, {root!r}]
from benchmarks.autodiff_cnn import make_steppers
from jax_benchmarks.measure.memory import HostPeak
step = make_steppers({threads}, ({framework!r},))[{framework!r}]
first = HostPeak()
first.start()
step()
figures = {{"first": first.stop()}}
peak = HostPeak()
peak.start()
for _ in range({steps}):
    step()
figures["steady"] = peak.stop()
print(json.dumps(figures))
"""


def limit_threads(threads: int) -> None:
    """The same thread count for NumPy's BLAS and PyTorch's intra-op pool."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))  # read when NumPy's OpenBLAS loads
    import torch

    torch.set_num_threads(threads)
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    threadpool_limits(threads, user_api="blas")


def make_steppers(threads: int, frameworks: tuple[str, ...] = ("engine", "pytorch")) -> dict[str, Any]:
    """A zero-argument train step per framework on the same batch: the autograd group's own cases' steps
    (`autograd numpy` / `autograd pytorch` / `autograd jax`, case cnn_train_step_128x28x28_float32); Flax's
    waits for its outputs (JAX dispatches asynchronously)."""
    limit_threads(threads)
    from jax_benchmarks.autograd.cnn_cases import load_batch
    from jax_benchmarks.autograd.settings import CnnSettings

    batch = load_batch(CnnSettings(cnn_batch=BATCH, dtype="float32"))
    steppers: dict[str, Any] = {}
    if "engine" in frameworks:
        from jax_benchmarks.autograd.numpy_backend import EngineCnnBench

        steppers["engine"] = EngineCnnBench(batch).step
    if "pytorch" in frameworks:
        from jax_benchmarks.autograd.pytorch_backend import TorchCnnBench
        from jax_benchmarks.frameworks.descriptors import TorchArrays

        steppers["pytorch"] = TorchCnnBench(batch, TorchArrays("cpu")).step
    if "flax" in frameworks:
        from jax_benchmarks.autograd.jax_backend import FlaxCnnBench
        from jax_benchmarks.frameworks.descriptors import jax_sync

        flax = FlaxCnnBench(batch, "cpu")
        steppers["flax"] = lambda: jax_sync(flax.step())
    return steppers


def set_xla_cpu_conv(conv: str) -> None:
    """mnist flax's --xla-cpu-conv, for this process: XLA reads XLA_FLAGS once, when JAX starts."""
    from jax_benchmarks.hardware import xla_flags

    os.environ["XLA_FLAGS"] = xla_flags.merged(os.environ.get("XLA_FLAGS", ""), xla_flags.cpu_flags(1, conv))


def time_steps(threads: int, rounds: int, repeats: int) -> None:
    steppers = make_steppers(threads, FRAMEWORKS)  # first: it sets the thread counts before NumPy loads
    from jax_benchmarks.measure.timing import measure

    medians: dict[str, list[float]] = {name: [] for name in steppers}
    for _ in range(rounds):
        for name, step in steppers.items():
            medians[name].append(measure(step, repeats=repeats, warmup=1, min_time_s=0.0).median_s)
    print(f"train step, batch {BATCH}, Adam, {threads} thread(s) each; {rounds} rounds of {repeats} samples")
    for name, values in medians.items():
        print(f"  {name:8s} median {statistics.median(values):.3f} s   (round medians "
              f"{', '.join(f'{v:.3f}' for v in values)})")
    ratio = statistics.median(medians["engine"]) / statistics.median(medians["pytorch"])
    print(f"  engine / pytorch: {ratio:.2f}x  (goal <= 5x: {'met' if ratio <= 5 else 'MISSED'})")
    print(f"  engine / flax:    {statistics.median(medians['engine']) / statistics.median(medians['flax']):.2f}x;"
          f"  pytorch / flax: {statistics.median(medians['pytorch']) / statistics.median(medians['flax']):.2f}x")


def memory(threads: int, steps: int) -> None:
    peaks: dict[str, dict[str, Any]] = {}
    for framework in FRAMEWORKS:
        code = MEMORY_CHILD.format(src=str(ROOT / "src"), root=str(ROOT), threads=threads, framework=framework,
                                   steps=steps)
        # the child inherits this process's XLA_FLAGS (the convolution kernels)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        peaks[framework] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"peak host memory above what the process held (fresh process each: model and batch built, then "
          f"the first step; then {steps} more steps)")
    ratios = {}
    for phase, what in (("first", "first step"), ("steady", f"next {steps} steps")):
        for framework, figures in peaks.items():
            phase_figures = figures[phase]
            if phase_figures.get("host_status") != "measured":
                print(f"  {framework:8s} {phase_figures.get('host_status')}")
                return
            print(f"  {what:13s} {framework:8s} peak {phase_figures['host_peak_bytes'] / 2**20:7.1f} MiB above "
                  f"{phase_figures['host_held_bytes'] / 2**20:7.1f} MiB held (process total "
                  f"{(phase_figures['host_peak_bytes'] + phase_figures['host_held_bytes']) / 2**20:.1f} MiB)")
        ratios[phase] = peaks["engine"][phase]["host_peak_bytes"] / peaks["pytorch"][phase]["host_peak_bytes"]
    total = {f: p["first"]["host_peak_bytes"] + p["first"]["host_held_bytes"] for f, p in peaks.items()}
    worst = max(ratios.values())
    print(f"  engine / pytorch: {ratios['first']:.2f}x (first step), {ratios['steady']:.2f}x (next steps), "
          f"{total['engine'] / total['pytorch']:.2f}x of the process's total  (goal <= 3x: "
          f"{'met' if worst <= 3 else 'MISSED'})")
    print(f"  engine / flax: {peaks['engine']['first']['host_peak_bytes'] / peaks['flax']['first']['host_peak_bytes']:.2f}x"
          f" (first step; flax's includes the step's compilation), "
          f"{total['engine'] / total['flax']:.2f}x of the process's total")


def train(threads: int, epochs: int) -> None:
    limit_threads(threads)
    import numpy as np

    from jax_benchmarks.autograd.cnn import CnnTrainer, MnistCNN, MnistSubset

    data = MnistSubset.load()
    trainer = CnnTrainer(MnistCNN(seed=0))
    rng = np.random.default_rng(0)
    print(f"training the engine's CNN on {len(data.y_train):,} images, testing on {len(data.y_test):,} "
          f"(batch {BATCH}, Adam 1e-3)")
    reached = None
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        loss = trainer.epoch(data.x_train, data.y_train, BATCH, rng)
        seconds = time.perf_counter() - start
        accuracy = trainer.accuracy(data.x_test, data.y_test)
        if reached is None and accuracy >= 0.97:
            reached = epoch
        print(f"  epoch {epoch:2d}: train loss {loss:.4f}, test accuracy {100 * accuracy:.1f} % ({seconds:.0f} s)",
              flush=True)
    print(f"  test accuracy after epoch {epochs}: {100 * accuracy:.1f} %; first epoch at >= 97 %: "
          f"{reached if reached is not None else 'none'}  (goal >= 97 % in <= 10 epochs: "
          f"{'met' if reached is not None and reached <= 10 else 'MISSED'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3, help="train steps under the memory probe")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--no-training", action="store_true", help="time and memory only")
    parser.add_argument("--xla-cpu-conv", choices=("xla", "ynnpack"), default="xla",
                        help="the kernels XLA:CPU runs Flax's convolutions on (mnist flax's option; default its default)")
    args = parser.parse_args()
    set_xla_cpu_conv(args.xla_cpu_conv)
    print(f"XLA_FLAGS={os.environ['XLA_FLAGS']}")
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)")
    time_steps(args.threads, args.rounds, args.repeats)
    memory(args.threads, args.steps)
    if not args.no_training:
        train(args.threads, args.epochs)
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    main()
