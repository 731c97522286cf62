"""Issue 48's unmeasured question: do calls a fraction of a second apart, in two warm processes, cancel the drift
that makes a verdict's rounds spread?

A verdict's round measures one framework after another in one process, seconds apart, and the CPU's speed here
wanders by up to 1.8× over seconds (benchmarks/between_rounds.py): two frameworks' figures in one round see
different machines, so the ratio of their figures spreads by 6–18 % from round to round. This script measures
an alternative on the same work (a 1000×1000 float64 matmul, each library's default threads):

* a *session* is two fresh worker processes, A and B, each with its library imported and its case warmed up;
* the coordinator asks them, in turn, for one sampling window of WINDOW seconds each (back-to-back calls, the
  window's fastest call kept, as the measurement core keeps it), with GAP seconds of nothing between turns so that
  one library's worker threads have stopped spinning before the other's window starts; the order alternates
  ABBA so that a steady drift cancels;
* per session: the median over the pairs of log(A) − log(B) for *adjacent* windows (a fraction of a second
  apart), and the same for windows SHIFT pairs apart (seconds apart, as in a round);
* over sessions (fresh processes each): the spread (sd) of the session's estimate, against the spread of a
  single window pair seconds apart, which is what a round's ratio is today.

A/A (both sides the same library) shows whether adjacent pairing lowers the spread and has no bias; A/B (NumPy
against JAX) whether turns in two processes measure each library as it runs alone (the ratio against the
ratio of the two measured in separate sessions, each with its own A/A partner).

    .venv/bin/python benchmarks/adjacent_workers.py [--sessions 6] [--pairs 16] [--window 0.2] [--gap 0.2]
        [--sides numpy:numpy,jax:jax,numpy:jax]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

SIZE = 1000


def make_call(library: str) -> Callable[[], object]:
    import numpy as np

    a, b = np.random.default_rng(0).random((2, SIZE, SIZE))
    if library == "numpy":
        return lambda: a @ b
    if library == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        product = jax.jit(jnp.matmul)
        return lambda: product(ja, jb).block_until_ready()
    if library == "torch":
        import torch

        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return lambda: ta @ tb
    raise SystemExit(f"unknown library {library!r}: numpy, jax or torch")


def worker(library: str) -> None:
    """Answer each line `WINDOW` on stdin with the fastest call of a window of that many seconds."""
    call = make_call(library)
    for _ in range(5):
        call()
    print("ready", flush=True)
    for line in sys.stdin:
        window = float(line)
        best, start = math.inf, time.perf_counter()
        while time.perf_counter() - start < window:
            t = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - t)
        print(json.dumps(best), flush=True)


def session(a: str, b: str, pairs: int, window: float, gap: float) -> tuple[list[float], list[float], float]:
    """Two fresh workers' windows, taken in turn (ABBA), and the session's wall time."""
    began = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", lib], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for lib in (a, b)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    windows: list[list[float]] = [[], []]
    for index in range(pairs):
        order = (0, 1) if index % 2 == 0 else (1, 0)
        for side in order:
            proc = procs[side]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{window}\n")
            proc.stdin.flush()
            windows[side].append(float(proc.stdout.readline()))
            time.sleep(gap)
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    return windows[0], windows[1], time.perf_counter() - began


def sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else float("nan")


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=16)
    parser.add_argument("--window", type=float, default=0.2)
    parser.add_argument("--gap", type=float, default=0.2)
    parser.add_argument("--shift", type=int, default=4, help="pairs apart for 'seconds apart'")
    parser.add_argument("--sides", default="numpy:numpy,jax:jax,numpy:jax")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores; {args.sessions} sessions of "
          f"{args.pairs} pairs, windows of {args.window} s, {args.gap} s apart, 'seconds apart' = {args.shift} pairs",
          flush=True)
    pairs_of = [tuple(sides.split(":")) for sides in args.sides.split(",")]
    results: dict[tuple[str, ...], dict[str, list[float]]] = {
        sides: {key: [] for key in ("adjacent", "apart", "one_adjacent", "one_apart", "within_adjacent",
                                    "within_apart", "wall", "log_a", "log_b")} for sides in pairs_of}
    for index in range(args.sessions):
        # The sides' sessions take turns, the order rotated each time, so that a slow spell of the machine
        # falls on each in turn.
        for sides in pairs_of[index % len(pairs_of):] + pairs_of[:index % len(pairs_of)]:
            a, b = sides
            wa, wb, wall = session(a, b, args.pairs, args.window, args.gap)
            adjacent = [math.log(x) - math.log(y) for x, y in zip(wa, wb)]
            apart = [math.log(wa[i]) - math.log(wb[i + args.shift]) for i in range(len(wa) - args.shift)]
            r = results[sides]
            r["adjacent"].append(statistics.median(adjacent))
            r["apart"].append(statistics.median(apart))
            r["one_adjacent"].append(adjacent[len(adjacent) // 2])
            r["one_apart"].append(apart[0])
            r["within_adjacent"].append(sd(adjacent))
            r["within_apart"].append(sd(apart))
            r["wall"].append(wall)
            r["log_a"] += [math.log(x) for x in wa]
            r["log_b"] += [math.log(y) for y in wb]
            print(f"{a}/{b} session {index + 1}: {wall:.1f} s; A windows (ms) "
                  + " ".join(f"{x * 1e3:.1f}" for x in wa) + "; B " + " ".join(f"{y * 1e3:.1f}" for y in wb)
                  + f"; adjacent ratio median {math.exp(r['adjacent'][-1]):.3f} (sd of logs "
                  f"{r['within_adjacent'][-1]:.3f}), {args.shift} pairs apart {math.exp(r['apart'][-1]):.3f} "
                  f"(sd {r['within_apart'][-1]:.3f})", flush=True)
    for (a, b), r in results.items():
        print(f"{a}/{b}: session wall {statistics.median(r['wall']):.1f} s (median); within a session, sd of log "
              f"ratio: adjacent {statistics.median(r['within_adjacent']):.3f}, {args.shift} pairs apart "
              f"{statistics.median(r['within_apart']):.3f} (medians over sessions)")
        print(f"{a}/{b}: across sessions, sd of the estimate: session median of adjacent pairs "
              f"{sd(r['adjacent']):.3f} (geometric mean ratio {math.exp(statistics.fmean(r['adjacent'])):.3f}), of "
              f"pairs {args.shift} apart {sd(r['apart']):.3f}; one adjacent pair {sd(r['one_adjacent']):.3f}, one "
              f"pair seconds apart {sd(r['one_apart']):.3f}")
    # Alone: each library's windows in its A/A sessions (its partner the same library), against the ratio the
    # two libraries' turns gave.
    alone = {a: statistics.fmean(r["log_a"] + r["log_b"]) for (a, b), r in results.items() if a == b}
    for (a, b), r in results.items():
        if a != b and a in alone and b in alone:
            print(f"{a}/{b}: ratio of the two in turns {math.exp(statistics.fmean(r['adjacent'])):.3f}, of each in "
                  f"its own A/A sessions {math.exp(alone[a] - alone[b]):.3f} ({math.exp(alone[a]) * 1e3:.1f} / "
                  f"{math.exp(alone[b]) * 1e3:.1f} ms, geometric means of the windows)")
    print(f"load average {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
