"""Cross-check the CLI's figures against measurements that bypass the project's measurement core.

    python benchmarks/crosscheck.py [--device auto|cpu|gpu] [--matrix-size N] [--precision float32|tf32]

For the xla product (float32, N×N) and the mnist training step (one batch of 128), each of PyTorch and
JAX is timed twice:
* "cli": the real command (`main.py xla <backend> --json`, `main.py mnist <backend> --dry-run --json`)
  in a fresh process, its recorded median;
* "independent": here, with the frameworks' own tools and none of src/jax_benchmarks/measure/timing.py:
  PyTorch through `torch.utils.benchmark.Timer.blocked_autorange` (which synchronizes CUDA) and, on a
  GPU, CUDA events around a loop; JAX through a plain loop that calls `block_until_ready` on every result.
The precision policy is set directly with each framework's own API, as the CLI sets it; on a CPU, so are
the XLA flags `mnist flax` sets (convolutions on XLA's own kernels) and PyTorch's thread count.
A figure passes when cli / independent lies within 1 ± 0.15; the script exits 1 otherwise.
On a GPU it also prints the product's share of the datasheet peak (src/jax_benchmarks/hardware/peaks.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jax_benchmarks.hardware.devices import gpu_name, resolve_device  # noqa: E402
from jax_benchmarks.frameworks.descriptors import JAX_PRECISION, TORCH_PRECISION  # noqa: E402
from jax_benchmarks.hardware.peaks import datasheet_peak  # noqa: E402
from jax_benchmarks.hardware import xla_flags  # noqa: E402

TOLERANCE = 0.15
MNIST_BATCH = 128


def cli_median(args: list[str], case: str, backend: str) -> float:
    """Run `main.py args --json` in a fresh process; the recorded median of `case` for `backend`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), *args, "--json", "--results", f"{tmp}/r.jsonl"],
            cwd=tmp, capture_output=True, text=True, check=False,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
        )
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    records = [r for r in json.loads(out.stdout) if r["case"] == case and r["backend"] == backend]
    if len(records) != 1:
        raise SystemExit(f"{' '.join(args)}: expected one {case} record, got {len(records)}")
    median: float = records[0]["median_s"]
    return median


def cpu_xla_flags(existing: str) -> str:
    """`existing` XLA_FLAGS with what `mnist flax` sets on a CPU by default (one XLA device, convolutions on
    XLA's own kernels: src/jax_benchmarks/hardware/xla_flags.py), so that the independent Flax step runs the same kernels."""
    return xla_flags.merged(existing, xla_flags.cpu_flags(1, "xla"))


def loop_median(call: Callable[[], Any], wait: Callable[[Any], Any], seconds: float = 1.0) -> float:
    """A plain loop: call, wait for the result, read the clock; median of the per-call times."""
    for _ in range(3):
        wait(call())
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 10:
        start = time.perf_counter()
        wait(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def torch_independent(fn: Callable[[], Any], device: Any) -> dict[str, float]:
    """torch.utils.benchmark (it synchronizes CUDA itself), plus CUDA events on a GPU."""
    import torch
    import torch.utils.benchmark as tb

    # Timer runs stmt on one thread unless told otherwise (num_threads=1 is its default): give it the
    # process's intra-op pool, the one the CLI's figure used.
    timer = tb.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    figures = {"torch.utils.benchmark": timer.blocked_autorange(min_run_time=1.0).median}
    if device.type == "cuda":
        for _ in range(3):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        per_call = []
        for _ in range(5):
            start.record()
            for _ in range(10):
                fn()
            end.record()
            end.synchronize()
            per_call.append(start.elapsed_time(end) / 1e3 / 10)
        figures["cuda events"] = statistics.median(per_call)
    return figures


# ------------------------------------------------------------------ xla ---

def xla_pytorch(n: int, kind: str) -> dict[str, float]:
    import torch

    device = torch.device("cuda" if kind == "gpu" else "cpu")
    a, b = (torch.rand((n, n), dtype=torch.float32, device=device) for _ in range(2))
    return torch_independent(lambda: a @ b, device)


def xla_jax(n: int, kind: str) -> dict[str, float]:
    import jax

    device = jax.devices("gpu" if kind == "gpu" else "cpu")[0]
    keys = jax.random.split(jax.random.key(0))
    a, b = (jax.device_put(jax.random.uniform(k, (n, n)), device) for k in keys)
    product = jax.jit(lambda x, y: x @ y)
    return {"block_until_ready loop": loop_median(lambda: product(a, b), jax.block_until_ready)}


# ---------------------------------------------------------------- mnist ---

def mnist_settings(kind: str) -> Any:
    from jax_benchmarks.mnist.settings import FlaxSettings

    return FlaxSettings(device=kind, data_source="embedded", comet="off", num_epochs=1,
                        train_batch_size=MNIST_BATCH, results=Path(tempfile.mkdtemp()) / "unused.jsonl")


def mnist_data() -> Any:
    from jax_benchmarks.training.data import load_data

    return load_data("mnist", "embedded", Path(tempfile.mkdtemp()), log=lambda _: None)


def mnist_pytorch(kind: str) -> dict[str, float]:
    from jax_benchmarks.frameworks.rng import RNG_Provider
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    trainer = TorchTrainer(mnist_settings(kind), mnist_data(), RNG_Provider(0))
    trainer.model.train()
    x, y = trainer.x_train[:MNIST_BATCH], trainer.y_train[:MNIST_BATCH]
    return torch_independent(lambda: trainer._step(x, y), trainer.torch_device)


def mnist_flax(kind: str) -> dict[str, float]:
    import jax
    import jax.numpy as jnp

    from jax_benchmarks.frameworks.rng import RNG_Provider
    from jax_benchmarks.training.flax_trainer import FlaxTrainer

    trainer = FlaxTrainer(mnist_settings(kind), mnist_data(), RNG_Provider(0))
    order = jax.device_put(jnp.arange(trainer.x_train.shape[0]), trainer.placement)
    acc = trainer._zero_acc(trainer.plan.steps)
    step = trainer._train_step  # the jitted step the epochs run, called as train_epoch calls it
    return {"block_until_ready loop": loop_median(
        lambda: step(trainer.state, acc, trainer.x_train, trainer.y_train, order, jnp.int32(0)), jax.block_until_ready)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    parser.add_argument("--matrix-size", type=int, default=0, help="default: 8192 on a GPU, 1024 on a CPU")
    parser.add_argument("--precision", choices=["float32", "tf32"], default="float32")
    options = parser.parse_args()
    kind = resolve_device(options.device)
    n = options.matrix_size or (8192 if kind == "gpu" else 1024)
    common = ["--device", kind, "--precision", options.precision]

    if kind == "cpu":  # before JAX loads: XLA reads its flags once
        os.environ["XLA_FLAGS"] = cpu_xla_flags(os.environ.get("XLA_FLAGS", ""))
    import jax
    import torch

    torch.backends.cuda.matmul.fp32_precision = TORCH_PRECISION[options.precision]
    torch.backends.cudnn.conv.fp32_precision = TORCH_PRECISION[options.precision]  # type: ignore[attr-defined]
    torch.backends.cudnn.benchmark = True
    jax.config.update("jax_default_matmul_precision", JAX_PRECISION[options.precision])

    cases: list[tuple[str, str, list[str], str, Callable[[], dict[str, float]]]] = [
        ("xla matmul", "pytorch", ["xla", "pytorch", "--matrix-size", str(n), "--dtype", "float32"],
         f"matmul_{n}x{n}_float32", lambda: xla_pytorch(n, kind)),
        ("xla matmul", "jax", ["xla", "jax", "--matrix-size", str(n), "--dtype", "float32"],
         f"matmul_{n}x{n}_float32", lambda: xla_jax(n, kind)),
        ("mnist train step", "pytorch", ["mnist", "pytorch", "--dry-run", "--num-epochs", "1", "--comet", "off",
                                         "--data-source", "embedded"], f"train_step_{MNIST_BATCH}x28x28_float32", lambda: mnist_pytorch(kind)),
        ("mnist train step", "flax", ["mnist", "flax", "--dry-run", "--num-epochs", "1", "--comet", "off",
                                      "--data-source", "embedded"], f"train_step_{MNIST_BATCH}x28x28_float32", lambda: mnist_flax(kind)),
    ]
    peak = datasheet_peak(gpu_name(), "float32", options.precision) if kind == "gpu" else None
    print(f"device {kind} ({gpu_name() or 'CPU'}), precision {options.precision}, xla N={n}, mnist batch {MNIST_BATCH}")
    if peak is not None:
        print(f"peak used: {peak.gflops:,.0f} GFLOP/s ({peak.source})")
    print(f"{'figure':<18} {'backend':<8} {'cli':>10} {'independent':>12}  {'method':<22} {'ratio':>6}  verdict")
    failed = 0
    for figure, backend, args, case, independent in cases:
        ours = cli_median([*args, *common], case, backend)
        for method, theirs in independent().items():
            ratio = ours / theirs
            ok = abs(ratio - 1) <= TOLERANCE
            failed += not ok
            extra = ""
            if figure == "xla matmul":
                gflops = 2 * n**3 / ours / 1e9
                extra = f"  {gflops:,.0f} GFLOP/s" + (f", {gflops / peak.gflops:.0%} of peak" if peak else "")
            print(f"{figure:<18} {backend:<8} {ours * 1e3:>8.3f}ms {theirs * 1e3:>10.3f}ms  {method:<22} "
                  f"{ratio:>6.2f}  {'ok' if ok else 'OFF BY MORE THAN 15 %'}{extra}")
    print("all within 15 %" if not failed else f"{failed} figure(s) off by more than 15 %")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
