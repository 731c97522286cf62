"""Where a round's wall time goes, and whether forking rounds from a warm worker buys more independent rounds a
minute (issue 48, item 1).

A round of a group command (`--rounds`, the verdict's rounds) is a fresh process today: interpreter start, imports,
framework init, data, compile, warm-up, the timed window and writing the records all happen in every round. This
script measures, for each group command of a verdict scale (`verdict/scale.py`), side by side in ONE run with the
modes interleaved round by round (the order rotated each round, so that the machine's drift hits every mode alike):

- fresh:  today's rounds: `cli/relaunch.run_fresh` of the round's argv (`round_argv`), records from its --json.
- forked: a warm worker (its own exec'd interpreter, started once per group command and mode, not timed) that has
          imported the CLI, the group's module and the frameworks (numpy, scipy, torch, jax, flax: import only; no
          array made, no thread pool started, no JAX backend) and forks one child per round; the child runs the
          same argv through `cli/root.main` and exits.
- light:  the same, but the worker imports only the CLI's own light modules (click, pydantic, numpy, the group's
          command module): what a worker that never imports JAX or torch before forking would save.

Figures printed, per group command and mode: the rounds' wall times (median), rounds per minute, what the records
say a round spent in compiling (`compile_s`) and in the timed window (the sum of `samples_s`), the ceiling of any
cheaper round that keeps today's figures (today's round time over its compiles' and windows'), the spread of each
figure's medians across the rounds (the coefficient of variation, CV); "variance per minute" is CV² divided by the
rounds a minute (the variance of the mean of a minute's rounds: lower is better). Against fresh: the ratio of rounds
a minute, of that variance a minute, and the A/A bias (each figure's mean median in the mode over fresh: the
geometric mean over the figures, and the largest |log ratio| as a percentage). Once, per group: the wall time of
`python -c pass` (interpreter start) and of the worker's imports in a fresh interpreter.

    .venv/bin/python benchmarks/round_cost.py [--scale quick|standard] [--rounds N] [--groups xla,scipy]
                                              [--modes fresh,forked,light]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

HEAVY = ("numpy", "scipy", "scipy.optimize", "torch", "jax", "jax.numpy", "flax", "flax.linen", "optax")
LIGHT = ("numpy", "click", "pydantic")


def preload(group_module: str, heavy: bool) -> list[str]:
    return ["jax_benchmarks.cli.root", "jax_benchmarks.store.record", group_module, *(HEAVY if heavy else LIGHT)]


def worker(modules: Sequence[str]) -> None:
    """The warm worker: import `modules`, then for each request line {"argv", "out"} on stdin fork a child that
    runs argv through the CLI with its stdout to the file `out` (stderr appended to the file "err" where the request names
    one, else to /dev/null), and answer {"code", "wall_s", "threads_before"} (the worker's thread count before
    forking: 1 is what fork is safe with; OpenBLAS stops its own pool at fork)."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from jax_benchmarks.cli.root import main

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        threads = len(os.listdir("/proc/self/task"))
        sys.stdout.flush()
        began = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # the child: the round, then exit without running the worker's atexit handlers
            code = 1
            try:
                out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                null = os.open(request.get("err", os.devnull), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.dup2(out, 1)
                os.dup2(null, 2)
                sys.stdin = open(os.devnull)  # noqa: SIM115 - the child ends with os._exit
                sys.argv = [request["argv"][0]]
                main(request["argv"][2:])  # argv: the interpreter, the package's __main__.py, then the arguments
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        wall = time.perf_counter() - began
        print(json.dumps({"code": os.waitstatus_to_exitcode(status), "wall_s": wall, "threads_before": threads}),
              flush=True)


@dataclass
class Worker:
    process: subprocess.Popen[str]

    @classmethod
    def start(cls, modules: Sequence[str]) -> Worker:
        process = subprocess.Popen([sys.executable, __file__, "--worker", ",".join(modules)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": src_path()})
        assert process.stdout is not None
        json.loads(process.stdout.readline())  # ready
        return cls(process)

    def run(self, argv: Sequence[str], out: Path) -> tuple[int, float, int]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"argv": list(argv), "out": str(out)}) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        return answer["code"], answer["wall_s"], answer["threads_before"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def src_path() -> str:
    return str(Path(__file__).resolve().parents[1] / "src")


@dataclass
class Mode:
    name: str
    walls: list[float] = field(default_factory=list)
    compile_s: list[float] = field(default_factory=list)
    window_s: list[float] = field(default_factory=list)
    medians: dict[str, list[float]] = field(default_factory=dict)
    failed: int = 0
    threads_before: set[int] = field(default_factory=set)
    env: dict[str, object] = field(default_factory=dict)

    def add(self, wall: float, code: int, records: Sequence[object]) -> None:
        from jax_benchmarks.store.record import Record

        self.walls.append(wall)
        self.failed += code != 0
        compile_total = window = 0.0
        for record in records:
            assert isinstance(record, Record)
            compile_total += record.compile_s or 0.0
            window += sum(record.samples_s)
            self.env.update({f"{record.backend} {key}": value for key, value in record.env.items()})
            if record.median_s:
                key = f"{record.backend}{'/' + record.variant if record.variant else ''} {record.case}"
                self.medians.setdefault(key, []).append(record.median_s)
        self.compile_s.append(compile_total)
        self.window_s.append(window)

    def per_minute(self) -> float:
        return 60.0 / statistics.mean(self.walls)

    def cvs(self) -> dict[str, float]:
        return {key: statistics.stdev(values) / statistics.mean(values)
                for key, values in self.medians.items() if len(values) >= 2}

    def variance_per_minute(self) -> float:
        cvs = list(self.cvs().values())
        return statistics.median(cv * cv for cv in cvs) / self.per_minute() if cvs else math.nan


def wall_of(argv: Sequence[str], repeats: int = 3) -> float:
    walls = []
    for _ in range(repeats):
        began = time.perf_counter()
        subprocess.run(argv, check=True, env={**os.environ, "PYTHONPATH": src_path()})
        walls.append(time.perf_counter() - began)
    return statistics.median(walls)


def measure_step(step: object, rounds: int, modes: Sequence[str], folder: Path) -> dict[str, Mode]:
    from jax_benchmarks.cli.relaunch import round_argv, run_fresh
    from jax_benchmarks.cli.rounds import parse_records
    from jax_benchmarks.groups import GROUPS
    from jax_benchmarks.verdict.scale import Step, round_options

    assert isinstance(step, Step)
    module = GROUPS[step.group].module
    workers = {name: Worker.start(preload(module, heavy=name == "forked")) for name in modes if name != "fresh"}
    results: dict[str, Mode] = {name: Mode(name) for name in modes}
    try:
        for index in range(rounds):
            order = list(modes[index % len(modes):]) + list(modes[: index % len(modes)])  # rotated each round
            for name in order:
                store = folder / f"{step.group}-{step.command}-{name}.jsonl"
                argv = round_argv(step.group, step.command,
                                  [*round_options(step, index), "--results", str(store), "--json"],
                                  rounds=rounds, index=index, run_id=f"round-cost-{name}")
                if name == "fresh":
                    began = time.perf_counter()
                    done = run_fresh(argv, capture=True, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
                    wall, code, text = time.perf_counter() - began, done.returncode, done.stdout or ""
                else:
                    out = folder / "child.out"
                    code, wall, threads = workers[name].run(argv, out)
                    results[name].threads_before.add(threads)
                    text = out.read_text(encoding="utf-8", errors="replace")
                results[name].add(wall, code, parse_records(text))
                print(f"  {step.label} round {index + 1}/{rounds} {name}: {wall:.1f} s, exit {code}", flush=True)
    finally:
        for each in workers.values():
            each.close()
    return results


def bias(mode: Mode, fresh: Mode) -> tuple[float, float]:
    """Geometric mean over the figures of mode's mean median / fresh's, and the largest |log ratio| (%)."""
    logs = [math.log(statistics.mean(mode.medians[key]) / statistics.mean(values))
            for key, values in fresh.medians.items() if key in mode.medians]
    if not logs:
        return math.nan, math.nan
    return math.exp(statistics.mean(logs)), 100 * (math.exp(max(abs(x) for x in logs)) - 1)


def report(step_label: str, results: dict[str, Mode]) -> None:
    fresh = results.get("fresh")
    print(f"\n{step_label}")
    print(f"  {'mode':7} {'wall s':>7} {'rounds/min':>10} {'compile s':>9} {'window s':>8} {'figures':>7} "
          f"{'median CV':>9} {'CV²/min':>9} {'x rounds/min':>12} {'x var/min':>9} {'A/A bias':>8} {'max |bias|':>10} "
          f"failed  threads at fork")
    for mode in results.values():
        cvs = list(mode.cvs().values())
        line = (f"  {mode.name:7} {statistics.median(mode.walls):7.1f} {mode.per_minute():10.2f} "
                f"{statistics.median(mode.compile_s):9.2f} {statistics.median(mode.window_s):8.2f} {len(cvs):7d} "
                f"{(statistics.median(cvs) if cvs else math.nan):9.3f} {mode.variance_per_minute():9.5f}")
        if fresh is not None and mode is not fresh:
            gm, worst = bias(mode, fresh)
            line += (f" {mode.per_minute() / fresh.per_minute():12.2f} "
                     f"{fresh.variance_per_minute() / mode.variance_per_minute():9.2f} {gm:8.3f} {worst:9.1f}%")
        else:
            line += f" {'':12} {'':9} {'':8} {'':10}"
        line += f" {mode.failed:6d}  {sorted(mode.threads_before) or '-'}"
        print(line, flush=True)
    if fresh is not None:
        round_s, compile_s, window_s = (statistics.median(fresh.walls), statistics.median(fresh.compile_s),
                                        statistics.median(fresh.window_s))
        print(f"  ceiling: a round that kept only its compiles and timed windows would be "
              f"{round_s / (compile_s + window_s):.1f}x cheaper, one that kept only its windows "
              f"{round_s / window_s:.1f}x (today's round ÷ those seconds)")
    for key, values in (fresh.medians.items() if fresh is not None else ()):
        print(f"    {key}: mean median " + ", ".join(
            f"{mode.name} {statistics.mean(mode.medians[key]) * 1e3:.3g} ms" for mode in results.values()
            if key in mode.medians))
    for mode in results.values():
        if fresh is not None and mode is not fresh:
            differ = {key: (fresh.env.get(key), value) for key, value in mode.env.items()
                      if fresh.env.get(key) != value and not key.endswith(("pid", "timestamp"))}
            print(f"    records' env, {mode.name} differs from fresh in: {differ or 'nothing'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scale", default="quick", choices=("quick", "standard"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--groups", default="xla,jit,autograd,scipy,mnist")
    parser.add_argument("--modes", default="fresh,forked,light")
    parser.add_argument("--skip-start", action="store_true", help="do not time interpreter start and imports")
    args = parser.parse_args()
    if args.worker is not None:
        worker(args.worker.split(","))
        return
    sys.path.insert(0, src_path())
    from jax_benchmarks.groups import GROUPS
    from jax_benchmarks.verdict.scale import SCALES

    groups = args.groups.split(",")
    modes = args.modes.split(",")
    print(f"round_cost: scale {args.scale}, {args.rounds} rounds a mode, modes {modes} interleaved; "
          f"{os.cpu_count()} CPUs; load at start {os.getloadavg()}", flush=True)
    if not args.skip_start:
        start_s = wall_of([sys.executable, "-c", "pass"])
        print(f"interpreter start (python -c pass): {start_s:.2f} s", flush=True)
        for group in groups:
            module = GROUPS[group].module
            heavy = wall_of([sys.executable, "-c", "import " + ", ".join(preload(module, heavy=True))], 1)
            light = wall_of([sys.executable, "-c", "import " + ", ".join(preload(module, heavy=False))], 1)
            print(f"{group}: start + the forked worker's imports {heavy:.2f} s, the light worker's {light:.2f} s",
                  flush=True)
    with tempfile.TemporaryDirectory(prefix="round-cost-") as tmp:
        for step in SCALES[args.scale].steps:
            if step.group not in groups:
                continue
            results = measure_step(step, args.rounds, modes, Path(tmp))
            report(step.label, results)
    print(f"load at end {os.getloadavg()}", flush=True)


if __name__ == "__main__":
    main()
