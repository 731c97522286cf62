"""Benchmark: the report's everyday views on a long history, per results store (JSON lines, SQLite, PostgreSQL).

    python benchmarks/store_scale.py [RECORDS]          (default 100,000 records: 10,000 runs of 10)

Goals (100,000 records / 10,000 runs): the latest-run views and --baseline previous ≤ 0.5 s wall, within 1.5×
of the same view on a one-run history, and ≤ 150 MB; --history for one group ≤ 2 s; appending one run's
records ≤ 50 ms; importing the JSON-lines file ≤ 10 s.

The history is built from real records: the CLI runs four small benchmarks first (xla, jit, autograd, scipy
with NumPy), and every run of the history is one of them, its cases renamed to ten sizes, its samples (at
most 100 kept: ~3.4 KB a record, a 100,000-record file of ~340 MB) scaled per machine and jittered per sample, on one of 4 machines (own host, CPU, core count and library
versions), the git commit changing every 50 runs. Every view runs `python main.py report` in a child process,
whose own peak RSS `os.wait4` reads. PostgreSQL is measured where its server binaries and psycopg are
installed (a server is started in a temporary folder, as the tests do).
"""

from __future__ import annotations

import copy
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO)]

from jax_benchmarks.store.location import open_store  # noqa: E402
from jax_benchmarks.store.record import Record  # noqa: E402

RUN_SIZE = 10
MAX_SAMPLES = 100
SEEDS = (("xla", "numpy", "--matrix-size", "64", "--repeats", "3"), ("jit", "numpy", "--quick"),
         ("autograd", "numpy", "--quick"), ("scipy", "numpy", "--quick"))
MACHINES = [
    {"host": "lab-1", "cpu": "AMD EPYC 7763", "cpu_cores": 2, "numpy": "2.4.6", "jax": "0.10.2", "torch": "2.13.0+cpu"},
    {"host": "lab-2", "cpu": "Intel Xeon 8375C", "cpu_cores": 8, "numpy": "2.3.1", "jax": "0.9.0", "torch": "2.12.1+cpu"},
    {"host": "ci-3", "cpu": "AMD EPYC 9654", "cpu_cores": 16, "numpy": "2.4.6", "jax": "0.10.1", "torch": "2.13.0+cpu"},
    {"host": "laptop", "cpu": "Apple M3", "cpu_cores": 12, "numpy": "2.2.0", "jax": "0.8.2", "torch": "2.11.0"},
]
SPEED = (1.0, 0.7, 0.45, 0.8)  # each machine's time per call, relative
VIEWS = {
    "report (latest run of each group)": [],
    "--baseline previous": ["--baseline", "previous"],
    "--run RUN (a mid-history run)": ["--run", "{run}"],
    "--group jit": ["--group", "jit"],
    "--format json": ["--format", "json"],
    "--format csv": ["--format", "csv"],
    "--history --group jit --format csv": ["--history", "--group", "jit", "--format", "csv"],
}


def seed_records(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Real records, written by the CLI (one small run per group)."""
    seeds = {}
    for command in SEEDS:
        path = folder / f"seed-{command[0]}.jsonl"
        subprocess.run([sys.executable, str(REPO / "main.py"), *command, "--results", str(path)],
                       check=True, capture_output=True, cwd=folder)
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:  # ~3.4 KB a record with its memory figures, as in a long real history (autograd's --quick keeps ~400)
            record["samples_s"] = record["samples_s"][:MAX_SAMPLES]
        seeds[command[0]] = records
    return seeds


def varied_run(seeds: dict[str, list[dict[str, Any]]], run: int, rng: random.Random) -> list[dict[str, Any]]:
    group = rng.choice(list(seeds))
    machine = rng.randrange(len(MACHINES))
    minutes = run * 7 + rng.randrange(5)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(1_700_000_000 + minutes * 60))
    run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(1_700_000_000 + minutes * 60)) + f"-{run:06x}"
    base = seeds[group]
    records = []
    for i in range(RUN_SIZE):
        record = copy.deepcopy(base[i % len(base)])
        size = 2 ** (4 + i)
        record["case"] = re.sub(r"\d+", str(size), record["case"], count=1)
        record.update(run_id=run_id, timestamp=stamp)
        factor = SPEED[machine] * size / 1024 * rng.lognormvariate(0, 0.1)
        samples = [s * factor * rng.lognormvariate(0, 0.05) for s in record["samples_s"]] or [factor * 1e-3]
        ordered = sorted(samples)
        record.update(samples_s=samples, median_s=statistics.median(samples), min_s=ordered[0],
                      iqr_s=ordered[3 * len(ordered) // 4] - ordered[len(ordered) // 4])
        record["env"] = {**record["env"], **MACHINES[machine], "git_commit": f"{run // 50:012x}"}
        records.append(record)
    return records


def write_history(path: Path, seeds: dict[str, list[dict[str, Any]]], runs: int) -> list[dict[str, Any]]:
    """`runs` runs as JSON lines; returns the records of a jit run from the middle (for --run, and the one-run
    history, which all views then show something of)."""
    rng = random.Random(0)
    middle: list[dict[str, Any]] = []
    with path.open("w", encoding="utf-8") as fh:
        for run in range(runs):
            records = varied_run(seeds, run, rng)
            if run >= runs // 2 and not middle and records[0]["group"] == "jit":
                middle = records
            fh.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return middle


def child(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, peak RSS MB, exit code) of `python main.py report ARGS` in a fresh process."""
    began = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(REPO / "main.py"), "report", *args], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - began, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def append_run(location: str, records: list[dict[str, Any]]) -> float:
    """Seconds to open the store and append one run's records (a new run id), each in its own transaction."""
    fresh = [Record.model_validate({**r, "run_id": r["run_id"] + "-new"}) for r in records]

    def append() -> None:
        store = open_store(location)
        for record in fresh:
            store.append(record)
        store.close()

    return timed(append)


def views_in_process(location: str) -> tuple[float, float]:
    """(ms, ms) of the latest run of every group, and of each one's previous run on the same machine, read
    from an open store: the views' own cost, without the interpreter's start (~0.4 s of every child)."""
    from jax_benchmarks.report.envdiff import same_machine
    from jax_benchmarks.report.select import previous_on_machine

    store = open_store(location, create=False)
    try:
        began = time.perf_counter()
        runs = [store.latest_run(group, None) for group in store.groups(None)]
        latest = time.perf_counter() - began
        began = time.perf_counter()
        for run in runs:
            previous_on_machine(store, run, None, same_machine)
        return latest * 1000, (time.perf_counter() - began) * 1000
    finally:
        store.close()


def postgres() -> tuple[Any, Callable[[], None]] | None:
    """A started PostgreSQL server (tests/store/conftest.py), or None where none can be started."""
    try:
        import psycopg  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
        from tests.store.conftest import server_binaries, start_server, stop_server
    except ImportError:
        return None
    if server_binaries() is None:
        return None
    server = start_server()
    return server, lambda: stop_server(server)


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = count // RUN_SIZE
    folder = Path(tempfile.mkdtemp(prefix="store-scale-"))
    seeds = seed_records(folder)
    history = folder / "history.jsonl"
    middle = write_history(history, seeds, runs)
    one = folder / "one.jsonl"
    one.write_text("".join(json.dumps(r) + "\n" for r in middle))
    print(f"history: {count:,} records, {runs:,} runs, 4 machines, {history.stat().st_size / 1e6:.0f} MB "
          f"({folder}); one-run history: {RUN_SIZE} records", flush=True)

    stores: dict[str, tuple[str, str]] = {"jsonl": (str(history), str(one))}
    imports: dict[str, float] = {}
    imports["sqlite"] = timed(lambda: open_store(folder / "history.sqlite").close())  # imports history.jsonl
    open_store(folder / "one.sqlite").close()
    stores["sqlite"] = (str(folder / "history.sqlite"), str(folder / "one.sqlite"))
    server = postgres()
    if server is not None:
        pg, stop = server
        big, small = pg.create_database(), pg.create_database()
        for url, source in ((big, history), (small, one)):
            store = open_store(url)
            took = timed(lambda: store.import_jsonl(source))  # type: ignore[attr-defined]
            store.close()
            imports.setdefault("postgres", took)
        stores["postgres"] = (big, small)
    try:
        names = list(stores)
        print(f"\n{'view':38}" + "".join(f"{name + ' 100k':>22}{name + ' 1 run':>22}" for name in names))
        print(f"{'':38}" + "".join(f"{'wall s / peak MB':>22}" * 2 for _ in names))
        for label, args in VIEWS.items():
            cells = []
            for name in names:
                for location in stores[name]:
                    wanted = [a.replace("{run}", middle[0]["run_id"]) for a in args]
                    wall, rss, code = child(["--results", location, *wanted], folder)
                    cells.append(f"{wall:8.2f} / {rss:4.0f}" + (" !" if code else "  "))
            print(f"{label:38}" + "".join(f"{cell:>22}" for cell in cells), flush=True)
        inside = {name: [views_in_process(location) for location in stores[name]] for name in names}
        for index, label in enumerate(("latest runs, in the process (ms)", "previous runs, in the process (ms)")):
            print(f"{label:38}" + "".join(f"{figures[index]:>22.1f}" for name in names for figures in inside[name]))
        print(f"\n{'append one run (10 records)':38}" + "".join(
            f"{append_run(stores[name][0], middle) * 1000:>19.1f} ms{'':>22}" for name in names))
        print(f"{'import the JSON-lines file':38}{'':>44}" + "".join(
            f"{imports[name]:>20.2f} s{'':>22}" for name in names if name != "jsonl"))
        print("\n(! = the view exited non-zero.) Each figure is one run on a shared, noisy machine.")
    finally:
        if server is not None:
            server[1]()


if __name__ == "__main__":
    main()
