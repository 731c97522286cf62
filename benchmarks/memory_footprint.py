"""Benchmark: what one CPU run of `xla all`, `jit all` and `mnist all --epochs 1` records about memory, and
what taking it costs the timing.

    .venv/bin/python benchmarks/memory_footprint.py [rounds]     (rounds 0: only parts 3 and 4)

Part 1 runs each command on the CPU in fresh processes, with --memory and with --no-memory, alternating
which goes first from round to round (so machine noise hits both alike), and prints for every figure of
the --memory run: the peak host memory above what the process held before the case, the compiled
program's bytes (XLA's analysis: arguments + outputs + temporaries + code), and the arrays' own size.
Part 2 prints the timing overhead of the memory pass: per command, the ratio of each figure's fastest
sample and median with the pass to without it (geometric mean and range over the figures), and of the
command's wall time; on a shared machine these ratios carry the drift between processes. Part 3 does the
same in one process (xla all at N = 500, ten rounds alternating), free of that drift. Part 2 also gives
that ratio for the figures of work timed once (epochs, solves, loads), whose memory is read around the
timed work itself. Part 4 times the probe itself (reset VmHWM, read VmRSS, then read VmHWM), which is
all that runs around work timed once, against the shortest such figure, and the heap hand-back before
such work (outside the clock).

Sizes are small but show something: xla at N = 1000 float64, jit at its --quick lengths (and the Flax
training points), mnist on the embedded digits (offline) for one epoch of --dry-run batches.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from jax_benchmarks.measure.memory import Probe, format_bytes, release_freed_memory  # noqa: E402

N = 1000
COMMANDS = {
    "xla all": ["xla", "all", "--matrix-size", str(N), "--dtype", "float64"],
    "jit all": ["jit", "all", "--quick", "--repeats", "5"],
    "mnist all --epochs 1": ["mnist", "all", "--epochs", "1", "--dry-run", "--data-source", "embedded",
                             "--comet", "off", "--repeats", "5"],
}
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
IMAGE_BYTES = 28 * 28 * 4  # one float32 MNIST image as the model sees it
PROBES = 200
HANDBACKS = 10


def run(args: list[str], memory: bool, results: Path) -> tuple[list[dict[str, Any]], float]:
    """One command in a fresh process on the CPU; its records and its wall time."""
    cmd = [sys.executable, str(REPO / "main.py"), *args, "--device", "cpu", "--results", str(results),
           "--memory" if memory else "--no-memory", "--json"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=results.parent, capture_output=True, text=True, env={**os.environ, **OFFLINE})
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    records = [json.loads(line) for line in results.read_text().splitlines()]
    results.unlink()
    return records, wall


def label(record: dict[str, Any]) -> str:
    variant = f" [{record['variant']}]" if record.get("variant") else ""
    return f"{record['backend']}{variant} {record['case']}"


def arrays_bytes(record: dict[str, Any]) -> str:
    """The arrays' own size: what the figure's work holds or makes."""
    params, checks = record.get("params", {}), record.get("checks", {})
    if "memory_floor_bytes" in checks:  # xla: the matrices the case holds (its floor)
        return f"{format_bytes(checks['memory_floor_bytes'])} matrices held"
    if "array_length" in params:  # jit: the float32 input (the output is as large)
        return f"{format_bytes(4 * params['array_length'])} input"
    if record["case"].startswith("validation") and "test_images" in params:
        return f"{format_bytes(params['test_images'] * IMAGE_BYTES)} test images"
    if "batch" in params:
        return f"{format_bytes(params['batch'] * IMAGE_BYTES)} batch"
    return ""


def compiled_bytes(memory: dict[str, Any]) -> str:
    parts = ("compiled_argument_bytes", "compiled_output_bytes", "compiled_temp_bytes", "compiled_code_bytes")
    if not all(isinstance(memory.get(key), int) for key in parts):
        status = str(memory.get("compiled_status", ""))
        return "not available" if status.startswith("unavailable") else ""
    arg, out, temp, code = (memory[key] for key in parts)
    return f"{format_bytes(arg)} + {format_bytes(out)} + {format_bytes(temp)} temp + {format_bytes(code)}"


def print_footprint(name: str, records: list[dict[str, Any]]) -> None:
    print(f"\n## {name} (CPU): peak host memory above what was held · compiled program · the arrays")
    print(f"{'figure':58} {'host peak':>10}  {'compiled: arg + out + temp + code':38} arrays")
    for record in records:
        memory = record.get("memory", {})
        if not memory:
            continue
        peak = memory.get("host_peak_bytes")
        peak_text = format_bytes(peak) if isinstance(peak, int) else str(memory.get("host_status", ""))
        print(f"{label(record)[:58]:58} {peak_text:>10}  {compiled_bytes(memory):38} {arrays_bytes(record)}")


def ratios(with_pass: list[list[dict[str, Any]]], without: list[list[dict[str, Any]]], field: str,
           only: set[str] | None = None) -> list[float]:
    """Per figure (those labelled in `only`, else all): the median over rounds of `field` with the pass
    over the same without it."""
    def by_figure(rounds: list[list[dict[str, Any]]]) -> dict[str, float]:
        values: dict[str, list[float]] = {}
        for records in rounds:
            for record in records:
                if record.get(field):
                    values.setdefault(label(record), []).append(record[field])
        return {key: statistics.median(v) for key, v in values.items()}

    on, off = by_figure(with_pass), by_figure(without)
    return [on[key] / off[key] for key in on if key in off and (only is None or key in only)]


def timed_around(records: list[dict[str, Any]]) -> set[str]:
    """The figures whose memory was read around their timed work (epochs, solves, loads)."""
    return {label(r) for r in records if r.get("memory", {}).get("memory_method") == "around the timed run"}


def ratio_text(values: list[float]) -> str:
    if not values:
        return "no figure"
    geo = math.exp(statistics.fmean(math.log(v) for v in values))
    return f"×{geo:.3f} (range ×{min(values):.2f}–×{max(values):.2f}, {len(values)} figures)"


def probe_cost() -> float:
    """Seconds of one probe around a call: reset the peak, read what is held, read the peak."""
    probe = Probe.of("numpy", "cpu")
    start = time.perf_counter()
    for _ in range(PROBES):
        probe.start(settle=False)
        probe.stop("around the timed run")
    return (time.perf_counter() - start) / PROBES


def handback_cost() -> float:
    """Seconds of the heap hand-back (garbage collector, malloc_trim) that precedes work timed once."""
    start = time.perf_counter()
    for _ in range(HANDBACKS):
        release_freed_memory()
    return (time.perf_counter() - start) / HANDBACKS


def interleaved(rounds: int) -> list[str]:
    """In one process, the same cases timed with the memory pass and without it, alternating round by round:
    no process-to-process drift, so the ratio of the fastest samples shows what the pass does to the
    timing of the case after it (the pass itself comes after every timed sample)."""
    from jax_benchmarks.measure.harness import run_suite
    from jax_benchmarks.run import Run
    from jax_benchmarks.xla import jax_backend, numpy_backend, pytorch_backend
    from jax_benchmarks.xla.settings import XlaSettings

    settings = XlaSettings.model_validate({"matrix_size": 500, "device": "cpu", "repeats": 5})
    fastest: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for memory in ((True, False) if r % 2 == 0 else (False, True)):
                run = Run("xla", Path(tmp) / "results.jsonl")
                for module in (numpy_backend, pytorch_backend, jax_backend):
                    for suite in module.suites(settings):
                        run_suite(run, suite, repeats=settings.repeats, memory=memory)
                for record in run.records:
                    if record.min_s:
                        fastest[memory].setdefault(f"{record.backend} {record.case}", []).append(record.min_s)
    lines = []
    for figure, with_pass in fastest[True].items():
        ratio = min(with_pass) / min(fastest[False][figure])
        lines.append(f"  {figure:42} fastest sample with / without the pass ×{ratio:.3f}")
    values = [min(v) / min(fastest[False][k]) for k, v in fastest[True].items()]
    lines.append(f"  all {len(values)} figures: {ratio_text(values)}")
    return lines


def main(rounds: int) -> None:
    overhead: list[str] = []
    shortest_once = math.inf
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        if rounds:  # the first data load builds the data cache (in `tmp`): done untimed, not in a round
            run([*COMMANDS["mnist all --epochs 1"], "-k", "load_mnist"], False, results)
        for name, args in COMMANDS.items() if rounds else ():
            with_pass: list[list[dict[str, Any]]] = []
            without: list[list[dict[str, Any]]] = []
            walls: dict[bool, list[float]] = {True: [], False: []}
            for r in range(rounds):
                for memory in ((True, False) if r % 2 == 0 else (False, True)):
                    records, wall = run(args, memory, results)
                    (with_pass if memory else without).append(records)
                    walls[memory].append(wall)
            print_footprint(name, with_pass[0])
            for records in with_pass:
                for record in records:
                    if record.get("memory", {}).get("memory_method") == "around the timed run" and record["median_s"]:
                        shortest_once = min(shortest_once, record["median_s"])
            wall_ratio = statistics.median(walls[True]) / statistics.median(walls[False])
            overhead.append(
                f"{name}: fastest sample {ratio_text(ratios(with_pass, without, 'min_s'))}; "
                f"median {ratio_text(ratios(with_pass, without, 'median_s'))}; wall time ×{wall_ratio:.3f} "
                f"({statistics.median(walls[True]):.1f} s vs {statistics.median(walls[False]):.1f} s)")
            around = timed_around(with_pass[0])
            if around:
                overhead.append(f"  of which timed once, memory read around the timed work: median "
                                f"{ratio_text(ratios(with_pass, without, 'median_s', around))}")
    if rounds:
        print(f"\n## timing with the memory pass / without it ({rounds} round(s) each, fresh processes, "
              "order alternating)")
    for line in overhead:
        print(line)
    print("\n## in one process, xla all at N = 500, 10 rounds alternating --memory / --no-memory")
    for line in interleaved(10):
        print(line)
    cost = probe_cost()
    print(f"\n## the probe around work timed once (epochs, solves, loads): {cost * 1e6:.0f} µs per case, before "
          "the first timed call and after the last (outside time_call's clock, so 0 on the figure itself)"
          + (f"; against the shortest such figure ({shortest_once:.3g} s) it would be {cost / shortest_once:.2e}"
             if math.isfinite(shortest_once) else ""))
    print(f"\n## the heap hand-back before work timed once (with or without the memory figures): "
          f"{handback_cost() * 1e3:.0f} ms per case, outside the clock (this process has NumPy, PyTorch and "
          "JAX loaded)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
