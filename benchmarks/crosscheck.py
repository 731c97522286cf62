"""Cross-check the CLI's figures against measurements that bypass the project's measurement core.

    python benchmarks/crosscheck.py [--device auto|cpu|gpu] [--matrix-size N] [--precision float32|tf32]
                                    [--only xla|mnist]

For the xla product (float32, N×N) and the mnist training step (one batch of 128), each of PyTorch and
JAX is timed twice:
* "cli": the real command (`main.py xla <backend> --json`, `main.py mnist <backend> --dry-run --json`)
  in a fresh process, its recorded median;
* "independent": here, with the frameworks' own tools and none of src/jax_benchmarks/measure/timing.py:
  PyTorch through `torch.utils.benchmark.Timer.blocked_autorange` and, on a GPU, CUDA events; JAX through a
  plain loop that calls `block_until_ready`.
Each independent method times the same work the core timed: the same call on the same inputs (the mnist step
is the trainer's own `prepare_step()`, as the step case times it: the same batch, already on the device, the
same step index array every call; `end_step()` afterwards), under the core's rule: it waits for every call's
result before the next call starts ("sync per call"). Those lines are judged: a figure passes when cli /
independent lies within 1 ± 0.15; it cannot be judged where either side was timed while other processes held
the machine (the CLI's record's contention, and the same reading here around the independent figures: a busy
CPU slows each side by tens of per cent at its own time); the script exits 1 unless every judged line passed.
Lines that time something else are printed, labelled, and never judged: "back to back" (a block of calls, one
wait at its end: on a GPU the launch queue overlaps one call's host work with the previous call's kernels, so
the difference from "sync per call" is the launch and sync latency a call exposes when it is waited for), and,
for Flax, the step with a new index array made each call (`jnp.int32(i)`, as `train_epoch` passes it; what this
script timed before 2026-11-28).
The precision policy is set directly with each framework's own API, as the CLI sets it, and each framework
prepares this process's environment as the CLI prepares its own (JAX's GPU memory on demand); on a CPU, so
are the XLA flags `mnist flax` sets (convolutions on XLA's own kernels) and PyTorch's thread count.
On a GPU it also prints the product's share of the datasheet peak (src/jax_benchmarks/hardware/peaks.py).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jax_benchmarks.hardware.devices import gpu_name, resolve_device  # noqa: E402
from jax_benchmarks.frameworks.descriptors import JAX_PRECISION, TORCH_PRECISION, prepare_environments  # noqa: E402
from jax_benchmarks.hardware.peaks import datasheet_peak  # noqa: E402
from jax_benchmarks.hardware import xla_flags  # noqa: E402
from jax_benchmarks.measure.contention import Contention, Sampler, contention_between, of_fields  # noqa: E402

TOLERANCE = 0.15
MNIST_BATCH = 128
SECONDS = 0.5  # of timed calls per independent figure (at least 10 calls, 3 blocks)
SYNC_PER_CALL = "sync per call"


def back_to_back(calls: int) -> str:
    return f"back to back, 1 sync / {calls} calls"


@dataclass(frozen=True)
class Figure:
    """One independent timing: whose clock (`method`), how it waited (`how`: `SYNC_PER_CALL`, the core's rule, or
    `back_to_back`) and on what, seconds per call. Only a `judged` figure, the same work under the core's rule,
    is held to the tolerance; the others are printed beside it, labelled, as another quantity."""

    method: str
    how: str
    seconds: float
    judged: bool = True


def cli_median(args: list[str], case: str, backend: str) -> tuple[float, Contention | None]:
    """Run `main.py args --json` in a fresh process; the recorded median of `case` for `backend`, and what the
    record says other processes took of the machine while it was timed (None: the record says nothing)."""
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
    return median, of_fields(records[0].get("contention") or {})


def busy_reason(cli: Contention | None, independent: Contention | None) -> str | None:
    """Why a comparison cannot judge: the CLI's figure or the independent ones taken while other processes
    held the machine (a busy CPU slows either side by tens of per cent, each at its own time); None: neither.
    The CLI's GPU reading is left out: it counts this script's own process, which holds a CUDA context while
    the CLI runs, as another process on the GPU; the independent side's, taken just after, sees any other."""
    sides = (("CLI", None if cli is None else replace(cli, gpu=None)), ("independent", independent))
    for side, seen in sides:
        if seen is not None and seen.busy:
            return f"{side}: {seen.sentence()}"
    return None


def cpu_xla_flags(existing: str) -> str:
    """`existing` XLA_FLAGS with what `mnist flax` sets on a CPU by default (one XLA device, convolutions on
    XLA's own kernels: src/jax_benchmarks/hardware/xla_flags.py), so that the independent Flax step runs the same kernels."""
    return xla_flags.merged(existing, xla_flags.cpu_flags(1, "xla"))


def prepare_like_the_cli(environ: dict[str, str] | Any) -> dict[str, Any]:
    """What the CLI does to its process's environment before a framework loads (`prepare_environments`: JAX
    allocates GPU memory on demand where a GPU is visible, rather than preallocating 75 % of it), done to this
    one; what each framework said is in effect."""
    return prepare_environments(("jax", "torch"), environ)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection inside a timed loop, as the core and Python's timeit do. Written here, not imported
    from measure/timing.py (which has the same few lines): the independent side uses none of the core's code."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def loop_median(call: Callable[[], Any], wait: Callable[[Any], Any], seconds: float = SECONDS) -> float:
    """A plain loop under the core's rule: call, wait for the result, read the clock; median of the per-call
    times."""
    with gc_paused():
        for _ in range(3):
            wait(call())
        times: list[float] = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(times) < 10:
            start = time.perf_counter()
            wait(call())
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def back_to_back_median(call: Callable[[], Any], wait: Callable[[Any], Any], seconds: float = SECONDS,
                        block_s: float = 0.02, max_calls: int = 100) -> tuple[float, int]:
    """Blocks of calls made in a row, one wait for all their results at a block's end (as many calls as last
    `block_s`, 2 to `max_calls`); the median per call over the blocks, and the calls a block."""
    with gc_paused():
        for _ in range(2):
            wait(call())
        start = time.perf_counter()
        wait(call())
        one = time.perf_counter() - start
        calls = min(max_calls, max(2, math.ceil(block_s / max(one, 1e-9))))
        blocks: list[float] = []
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(blocks) < 3:
            start = time.perf_counter()
            wait([call() for _ in range(calls)])
            blocks.append((time.perf_counter() - start) / calls)
    return statistics.median(blocks), calls


def jax_figures(call: Callable[[], Any]) -> list[Figure]:
    """`block_until_ready` after every call (judged), and back to back."""
    import jax

    per_call = loop_median(call, jax.block_until_ready)
    seconds, calls = back_to_back_median(call, jax.block_until_ready)
    return [Figure("block_until_ready loop", SYNC_PER_CALL, per_call),
            Figure("block_until_ready loop", back_to_back(calls), seconds, judged=False)]


def cuda_events_per_call(fn: Callable[[], Any], seconds: float = SECONDS) -> float:
    """CUDA events around each call, the device synchronized after each: the median of the events' times."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times: list[float] = []
    with gc_paused():
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline or len(times) < 10:
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def cuda_events_back_to_back(fn: Callable[[], Any], calls: int = 10, blocks: int = 5) -> float:
    """CUDA events around `calls` calls in a row, one synchronization at the end: median per call of `blocks`."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call: list[float] = []
    with gc_paused():
        for _ in range(blocks):
            start.record()
            for _ in range(calls):
                fn()
            end.record()
            end.synchronize()
            per_call.append(start.elapsed_time(end) / 1e3 / calls)
    return statistics.median(per_call)


def torch_independent(fn: Callable[[], Any], device: Any, seconds: float = SECONDS) -> list[Figure]:
    """torch.utils.benchmark with a wait after every call (judged), plus on a GPU CUDA events per call
    (judged) and both back to back (`Timer`'s own clock synchronizes CUDA once per block). On a CPU PyTorch
    runs synchronously: back to back would time the same loop again."""
    import torch
    import torch.utils.benchmark as tb

    on_gpu = device.type == "cuda"

    def wait(_: object) -> None:
        if on_gpu:
            torch.cuda.synchronize()

    wait(fn())  # the first call apart (cuDNN autotunes its convolutions on it), as the core does

    def autorange(stmt: str) -> Any:
        # Timer runs stmt on one thread unless told otherwise (num_threads=1 is its default): give it the
        # process's intra-op pool, the one the CLI's figure used.
        timer = tb.Timer(stmt=stmt, globals={"fn": fn, "wait": wait}, num_threads=torch.get_num_threads())
        return timer.blocked_autorange(min_run_time=seconds)

    figures = [Figure("torch.utils.benchmark", SYNC_PER_CALL, autorange("wait(fn())").median)]
    if on_gpu:
        figures.append(Figure("cuda events", SYNC_PER_CALL, cuda_events_per_call(fn, seconds)))
        blocked = autorange("fn()")
        figures.append(Figure("torch.utils.benchmark", back_to_back(blocked.number_per_run), blocked.median,
                              judged=False))
        figures.append(Figure("cuda events", back_to_back(10), cuda_events_back_to_back(fn), judged=False))
    return figures


# ------------------------------------------------------------------ xla ---

def xla_pytorch(n: int, kind: str) -> list[Figure]:
    import torch

    device = torch.device("cuda" if kind == "gpu" else "cpu")
    a, b = (torch.rand((n, n), dtype=torch.float32, device=device) for _ in range(2))
    return torch_independent(lambda: a @ b, device)


def xla_jax(n: int, kind: str) -> list[Figure]:
    import jax

    device = jax.devices("gpu" if kind == "gpu" else "cpu")[0]
    keys = jax.random.split(jax.random.key(0))
    a, b = (jax.device_put(jax.random.uniform(k, (n, n)), device) for k in keys)
    product = jax.jit(lambda x, y: x @ y)
    return jax_figures(lambda: product(a, b))


# ---------------------------------------------------------------- mnist ---

def mnist_settings(kind: str) -> Any:
    """The settings of the CLI's mnist command below (`--dry-run --num-epochs 1 --comet off --data-source
    embedded`, the default batch of 128)."""
    from jax_benchmarks.mnist.settings import FlaxSettings

    return FlaxSettings(device=kind, data_source="embedded", comet="off", num_epochs=1, dry_run=True,
                        train_batch_size=MNIST_BATCH, results=Path(tempfile.mkdtemp()) / "unused.jsonl")


def mnist_data() -> Any:
    from jax_benchmarks.training.data import load_data

    return load_data("mnist", "embedded", Path(tempfile.mkdtemp()), log=lambda _: None)


def step_figures(trainer: Any, time_step: Callable[[Callable[[], Any]], list[Figure]]) -> list[Figure]:
    """The train step as the CLI's step case times it: the trainer's `prepare_step()` (the same batch, already
    on the device, and the same state handling), timed by `time_step`; `end_step()` then puts back what the
    timed steps changed, as the step case's teardown does."""
    step = trainer.prepare_step()
    try:
        return time_step(step)
    finally:
        trainer.end_step()


def mnist_pytorch(kind: str) -> list[Figure]:
    from jax_benchmarks.frameworks.rng import RNG_Provider
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    trainer = TorchTrainer(mnist_settings(kind), mnist_data(), RNG_Provider(0))
    return step_figures(trainer, lambda step: torch_independent(step, trainer.torch_device))


def flax_new_index_each_call(trainer: Any) -> Figure:
    """The step with a new index array made in every call (`jnp.int32(0)`, as `train_epoch` passes its step's
    index), waited for after each: other work than the step case's, which makes its index once. Not judged."""
    import jax
    import jax.numpy as jnp

    order = jax.device_put(jnp.arange(trainer.x_train.shape[0]), trainer.placement)
    acc = trainer._zero_acc(trainer.plan.steps)
    seconds = loop_median(
        lambda: trainer._train_step(trainer.state, acc, trainer.x_train, trainer.y_train, order, jnp.int32(0)),
        jax.block_until_ready)
    return Figure("block_until_ready loop", f"{SYNC_PER_CALL}, new index array each call", seconds, judged=False)


def mnist_flax(kind: str) -> list[Figure]:
    from jax_benchmarks.frameworks.rng import RNG_Provider
    from jax_benchmarks.training.flax_trainer import FlaxTrainer

    trainer = FlaxTrainer(mnist_settings(kind), mnist_data(), RNG_Provider(0))
    return [*step_figures(trainer, jax_figures), flax_new_index_each_call(trainer)]


def verdict(figure: Figure, ratio: float, busy: str | None = None) -> tuple[str, str]:
    """The line's verdict text and its kind: "ok", "off" (by more than the tolerance), "cannot judge" (a judged
    figure taken on a busy machine: `busy` says which side and how busy; never a pass), or "not judged"
    (another quantity)."""
    if not figure.judged:
        return "not judged (another quantity)", "not judged"
    if busy is not None:
        return f"CANNOT JUDGE, machine busy ({busy})", "cannot judge"
    if abs(ratio - 1) <= TOLERANCE:
        return "ok", "ok"
    return "OFF BY MORE THAN 15 %", "off"


def summary(kinds: list[str]) -> str:
    """The last line, from the verdicts' kinds: all judged figures within the tolerance only where every judged
    figure was judged."""
    off, unjudged = kinds.count("off"), kinds.count("cannot judge")
    if not off and not unjudged:
        return "all judged figures within 15 %"
    parts = ([f"{off} judged figure(s) off by more than 15 %"] if off else []) + (
        [f"{unjudged} could not be judged (the machine was busy: run again on a quiet one)"] if unjudged else [])
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    parser.add_argument("--matrix-size", type=int, default=0, help="default: 8192 on a GPU, 1024 on a CPU")
    parser.add_argument("--precision", choices=["float32", "tf32"], default="float32")
    parser.add_argument("--only", choices=["xla", "mnist"], default=None, help="one figure's lines (default: both)")
    options = parser.parse_args()
    kind = resolve_device(options.device)
    n = options.matrix_size or (8192 if kind == "gpu" else 1024)
    common = ["--device", kind, "--precision", options.precision]

    prepared = prepare_like_the_cli(os.environ)  # before JAX loads, as the CLI does
    if kind == "cpu":  # before JAX loads: XLA reads its flags once
        os.environ["XLA_FLAGS"] = cpu_xla_flags(os.environ.get("XLA_FLAGS", ""))
    import jax
    import torch

    torch.backends.cuda.matmul.fp32_precision = TORCH_PRECISION[options.precision]
    torch.backends.cudnn.conv.fp32_precision = TORCH_PRECISION[options.precision]  # type: ignore[attr-defined]
    torch.backends.cudnn.benchmark = True
    jax.config.update("jax_default_matmul_precision", JAX_PRECISION[options.precision])

    mnist = ["--dry-run", "--num-epochs", "1", "--comet", "off", "--data-source", "embedded"]
    step_case = f"train_step_{MNIST_BATCH}x28x28_float32"
    cases: list[tuple[str, str, list[str], str, Callable[[], list[Figure]]]] = [
        ("xla matmul", "pytorch", ["xla", "pytorch", "--matrix-size", str(n), "--dtype", "float32"],
         f"matmul_{n}x{n}_float32", lambda: xla_pytorch(n, kind)),
        ("xla matmul", "jax", ["xla", "jax", "--matrix-size", str(n), "--dtype", "float32"],
         f"matmul_{n}x{n}_float32", lambda: xla_jax(n, kind)),
        ("mnist train step", "pytorch", ["mnist", "pytorch", *mnist], step_case, lambda: mnist_pytorch(kind)),
        ("mnist train step", "flax", ["mnist", "flax", *mnist], step_case, lambda: mnist_flax(kind)),
    ]
    peak = datasheet_peak(gpu_name(), "float32", options.precision) if kind == "gpu" else None
    print(f"device {kind} ({gpu_name() or 'CPU'}), precision {options.precision}, xla N={n}, mnist batch {MNIST_BATCH}"
          + "".join(f", {name}: {value}" for name, value in prepared.items()))
    if peak is not None:
        print(f"peak used: {peak.gflops:,.0f} GFLOP/s ({peak.source})")
    print(f"{'figure':<18} {'backend':<8} {'cli':>10} {'independent':>12}  {'method':<22} {'how':<41} {'ratio':>6}"
          "  verdict")
    kinds: list[str] = []
    sampler = Sampler.of_this_machine(kind)
    for figure, backend, args, case, independent in cases:
        if options.only is not None and not figure.startswith(options.only):
            continue
        ours, cli_seen = cli_median([*args, *common], case, backend)
        before = sampler.read()
        figures = independent()
        seen = contention_between(before, sampler.read())
        if sampler.gpu is not None:
            seen = replace(seen, gpu=sampler.gpu())
        for theirs in figures:
            ratio = ours / theirs.seconds
            said, verdict_kind = verdict(theirs, ratio, busy_reason(cli_seen, seen))
            kinds.append(verdict_kind)
            extra = ""
            if figure == "xla matmul" and theirs.judged:
                gflops = 2 * n**3 / ours / 1e9
                extra = f"  {gflops:,.0f} GFLOP/s" + (f", {gflops / peak.gflops:.0%} of peak" if peak else "")
            print(f"{figure:<18} {backend:<8} {ours * 1e3:>8.3f}ms {theirs.seconds * 1e3:>10.3f}ms  "
                  f"{theirs.method:<22} {theirs.how:<41} {ratio:>6.2f}  {said}{extra}")
    print(summary(kinds))
    return 1 if {"off", "cannot judge"} & set(kinds) else 0


if __name__ == "__main__":
    sys.exit(main())
