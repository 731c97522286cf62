"""The GPU session's plan: one device call of at most 8 minutes of command time, most valuable first.

    benchmarks/gpu_session.sh [--device gpu|cpu] [--from STEP] [--done STEPS_TSV] [--budget SECONDS] [--list]
    python benchmarks/gpu_plan.py --carry [PATH ...]    what would travel to the GPU machine, against its 64 MiB
    python benchmarks/gpu_plan.py --round-times VERDICT_JSONL   each verdict round's wall time, beside gpu_round_s

A GPU machine is lent to a session by chance, for 15 minutes of device time in all (its start-up included) and at
most 10 minutes a command. The plan runs the steps below in order, each a command, each with its estimate on the
lent GPU (an H100 or an H200) beside it (`Step.estimate_s`: its time on an H200 on 2026-11-28 where it ran there,
else sized from those; docs/gpu.md#the-plan-sized-from-figures). A step runs only while its estimate fits what is
left of `--budget` (480 s on a GPU: 8 minutes, the wheels' installation counted in); a step after the 8-minute line
runs only when the steps before it ran faster than estimated, and is the first thing a resumed session runs.

  (a) the versions, then `pytest -m installation`
  (b) a verdict whose rounds run on the GPU (`--scale gpu`: the steps of standard's that fit, each group saying why
      it leaves one out), which gives the headline's GPU column, and the check that its timed records are the GPU's
  (c) the cross-check of the timing core against CUDA events, under both precision policies
  (d) `mnist flax` and `mnist pytorch`, then with `--compile` / `--precision bf16|tf32` where those options exist
      (issue 52's table of modes on the GPU: `verdict --from results.jsonl` shows it)
  (e) every group with `--device auto`, `--devices all`, the refused size, the GPU reader's cost, the default suite

Each step appends to these files in --out (the device call brings back at most 8 files from $OUT) as it
finishes, so a call cut short still returns what was done:

  versions.txt   the GPU, its driver, Python and the frameworks' versions
  steps.tsv      one line a finished step: name, status (ok / failed (exit N) / timed out / skipped: why), seconds,
                 the estimate (`--round-times verdict.jsonl` gives the verdict's rounds apart)
  session.log    every step's command and output
  results.jsonl  the groups' records (mnist, the auto groups, --devices all)
  verdict.jsonl, verdict.md, verdict-<run id>.log   the verdict's records, its page and its rounds' output

Resuming: put the steps.tsv a call returned into the checkout (e.g. `benchmarks/gpu_done.tsv`, committed) and run
`benchmarks/gpu_session.sh --done benchmarks/gpu_done.tsv`: the steps it marks ok are skipped, the others run in
the plan's order. `--from STEP` starts at a step instead.

On a CPU (`--device cpu`, the dry run) every step that a CPU can run runs with `--device cpu` and no budget; the
steps that need a GPU are skipped with the reason; the summary prints each step's time here beside its estimate
on the GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jax_benchmarks.verdict.scale import SCALES, Step as ScaleStep, gpu_round_times  # noqa: E402  (framework-free)

GPU_BUDGET_S = 480.0  # 8 minutes of the 10 a command may take: the rest is the margin for estimates that miss
CARRY_LIMIT_BYTES = 64 * 1024 * 1024  # what travels to the GPU machine: tracked, untracked-not-ignored, carried
# gpu_session.sh installs the carried wheels (23, 8.6 MiB, --no-deps) into /tmp/site before the plan: counted in.
# Measured on the H200, 2026-11-28: 1 s in both calls (bash's SECONDS, whole seconds).
WHEELS_S = 2.0
H200 = "measured on an H200, 2026-11-28"
EMBEDDED_DATA = "src/jax_benchmarks/training/data"
MNIST = ("--epochs", "2", "--data-source", "embedded", "--comet", "off")


@dataclass(frozen=True)
class Step:
    name: str
    part: str  # (a)-(e) of issue 49's order
    args: tuple[str, ...]  # {py}, {device}, {out} are filled in when it runs
    estimate_s: float  # command time on the lent GPU (an H100 or an H200), seconds
    basis: str  # how the estimate was made
    gpu_only: str = ""  # why it runs only on a GPU; empty: it runs on the CPU's dry run too
    needs: tuple[tuple[str, ...], str] | None = None  # (a command, text its --help must show): else skipped
    expect_rc: int = 0

    def argv(self, py: str, device: str, out: Path) -> list[str]:
        return [arg.format(py=py, device=device, out=out) for arg in self.args]


def group(name: str, *args: str) -> tuple[str, ...]:
    return ("{py}", "main.py", name, *args)


# Sized from the first GPU run (an NVIDIA H200, 2026-11-28, benchmarks/gpu_runs/2026-11-28-h200/: steps.tsv, the
# verdict's records): each step that ran is estimated at its time there, the others from those. An H100 is the same
# Hopper chip with less and slower memory (80 GB of HBM3 at 3.35 TB/s against 141 GB of HBM3e at 4.8 TB/s); these
# steps are mostly the start of fresh processes (imports, a CUDA context a framework: the versions step, one process
# that imports JAX and PyTorch, took 11 s), compiles and the CPU's work, their arithmetic milliseconds (an 8192²
# float32 product: 1.1 TFLOP, 21.5 ms measured), so they should take about as long there.
STEPS: tuple[Step, ...] = (
    Step("versions", "a", ("{py}", "benchmarks/gpu_plan.py", "--versions", "--out", "{out}"), 11.0,
         f"{H200}: one process that imports JAX and PyTorch and lists their devices, nvidia-smi once"),
    Step("installation", "a", ("{py}", "-m", "pytest", "-p", "no:cacheprovider", "-m", "installation", "-v", "-rs"),
         31.2, f"{H200}: 9 tests in one process (27.6 s by pytest's clock)"),
    Step("verdict", "b", group("verdict", "--scale", "gpu", "--format", "markdown", "-o", "{out}/verdict.md",
                               "--results", "{out}/verdict.jsonl"),
         SCALES["gpu"].budget_s + 10, "3 rounds of the gpu scale (each group's gpu_round_s, from its rounds on an "
         "H200, 2026-11-28, where they ran: " + " + ".join(f"{step.group} {step.command} {step.round_s:.0f} s"
                                            for step in SCALES["gpu"].steps) + "), the verdict's start and page 10 s"),
    Step("verdict-on-gpu", "b", ("{py}", "benchmarks/gpu_plan.py", "--devices-of", "{out}/verdict.jsonl",
                                 "--want", "{device}"), 1, "reads the verdict's records; no framework imported"),
    Step("crosscheck-float32", "c", ("{py}", "benchmarks/crosscheck.py", "--device", "{device}", "--precision",
                                     "float32"),
         105.0, f"{H200} (to its end: exit 1, 3 figures off): 4 CLI processes and the independent timings"),
    Step("crosscheck-tf32", "c", ("{py}", "benchmarks/crosscheck.py", "--device", "{device}", "--precision", "tf32"),
         73.9, f"{H200} (to its end: exit 1, 2 figures off), after crosscheck-float32",
         "TF32 exists only on NVIDIA's tensor cores"),
    Step("mnist-flax", "d", group("mnist", "flax", "--device", "{device}", *MNIST, "--results", "{out}/results.jsonl"),
         22.5, f"{H200}: the step's jit compile 8.3 s, 2 epochs of 4,000 images 0.04 s each"),
    Step("mnist-pytorch", "d", group("mnist", "pytorch", "--device", "{device}", *MNIST,
                                     "--results", "{out}/results.jsonl"),
         12.4, f"{H200}: 2 epochs of 32 eager steps, 0.08-0.13 s each"),
    Step("mnist-pytorch-compile", "d", group("mnist", "pytorch", "--device", "{device}", "--compile", *MNIST,
                                             "--results", "{out}/results.jsonl"),
         45, "mnist-pytorch's 12.4 s and torch.compile's build of the step, not measured on a GPU (jit's f built in "
             "3.1 s there; this step took 24-65 s on the 2-core CPU): 30 s",
         needs=(("mnist", "pytorch"), "--compile")),
    Step("mnist-flax-bf16", "d", group("mnist", "flax", "--device", "{device}", "--precision", "bf16", *MNIST,
                                       "--results", "{out}/results.jsonl"),
         16.7, f"{H200}: as mnist-flax, bf16 products and convolutions", needs=(("mnist", "flax"), "bf16")),
    Step("mnist-pytorch-bf16", "d", group("mnist", "pytorch", "--device", "{device}", "--precision", "bf16", *MNIST,
                                          "--results", "{out}/results.jsonl"),
         13, "as mnist-pytorch (12.4 s on the H200): bf16 changes milliseconds of arithmetic",
         needs=(("mnist", "pytorch"), "bf16")),
    # The rest of issue 52's table of modes (framework × mode × precision) on the GPU: torch.compile's step under
    # autocast, and TF32 in each mode. Their records share the plain mnist steps' setting, so `verdict --from
    # results.jsonl` shows them in one table, each row's final accuracy against float32 eager PyTorch's. bf16 mixed
    # precision runs on a CPU too (6.5-16 s a step here, 2026-11-29), so the dry run runs the bf16 steps' very
    # commands; TF32 does not exist there (a CPU computes IEEE float32 under either policy).
    Step("mnist-pytorch-compile-bf16", "d", group("mnist", "pytorch", "--device", "{device}", "--compile",
                                                  "--precision", "bf16", *MNIST, "--results", "{out}/results.jsonl"),
         45, "as mnist-pytorch-compile: torch.compile builds the step again under autocast",
         needs=(("mnist", "pytorch"), "bf16")),
    Step("mnist-flax-tf32", "d", group("mnist", "flax", "--device", "{device}", "--precision", "tf32", *MNIST,
                                       "--results", "{out}/results.jsonl"),
         22.5, "as mnist-flax (22.5 s on the H200): TF32 changes the products' and convolutions' arithmetic only",
         "TF32 exists only on NVIDIA's tensor cores", needs=(("mnist", "flax"), "tf32")),
    Step("mnist-pytorch-tf32", "d", group("mnist", "pytorch", "--device", "{device}", "--precision", "tf32", *MNIST,
                                          "--results", "{out}/results.jsonl"),
         13, "as mnist-pytorch (12.4 s on the H200): TF32 changes the products' and convolutions' arithmetic only",
         "TF32 exists only on NVIDIA's tensor cores", needs=(("mnist", "pytorch"), "tf32")),
    Step("mnist-pytorch-compile-tf32", "d", group("mnist", "pytorch", "--device", "{device}", "--compile",
                                                  "--precision", "tf32", *MNIST, "--results", "{out}/results.jsonl"),
         45, "as mnist-pytorch-compile: torch.compile builds the step again for TF32",
         "TF32 exists only on NVIDIA's tensor cores", needs=(("mnist", "pytorch"), "tf32")),
    Step("auto-xla", "e", group("xla", "all", "--device", "auto", "--quick", "--results", "{out}/results.jsonl"),
         15.0, f"{H200}: 3 backends' quick cases"),
    Step("auto-jit", "e", group("jit", "all", "--device", "auto", "--quick", "--results", "{out}/results.jsonl"),
         28, "as a verdict round of jit all on the H200 (26-31 s): start-up and torch.compile's builds, not the sizes"),
    Step("auto-autograd", "e", group("autograd", "all", "--device", "auto", "--quick",
                                     "--results", "{out}/results.jsonl"),
         41, "as a verdict round of autograd all on the H200 (39-44 s): start-up, JAX's CNN compile, the engine's "
             "CPU work"),
    Step("auto-scipy", "e", group("scipy", "all", "--device", "auto", "--quick", "--results", "{out}/results.jsonl"),
         17, "as a verdict round of scipy all (17 s, estimated from its partial round on the H200)"),
    Step("auto-mnist", "e", group("mnist", "all", "--device", "auto", "--quick", "--results", "{out}/results.jsonl"),
         35, "mnist-flax and mnist-pytorch on the H200 added (22.5 + 12.4 s): dry-run epochs save nothing there"),
    Step("devices-all-flax", "e", group("mnist", "flax", "--device", "{device}", "--devices", "all", "--epochs", "1",
                                        "--data-source", "embedded", "--comet", "off", "--results",
                                        "{out}/results.jsonl"),
         23, "as mnist-flax (22.5 s on the H200), one epoch",
         "on a CPU --devices counts cores: another question than the GPU's"),
    Step("devices-all-pytorch", "e", group("mnist", "pytorch", "--device", "{device}", "--devices", "all", "--epochs",
                                           "1", "--data-source", "embedded", "--comet", "off", "--results",
                                           "{out}/results.jsonl"),
         13, "as mnist-pytorch (12.4 s on the H200), one epoch",
         "on a CPU --devices counts cores: another question than the GPU's"),
    Step("refused-size", "e", group("xla", "jax", "--device", "{device}", "--matrix-size", "200000",
                                    "--results", "{out}/results.jsonl"),
         5, "refused before anything is allocated: start-up only (0.8 s on the 2-core CPU)", expect_rc=2),
    Step("gpu-reader-cost", "e", ("{py}", "benchmarks/contention.py", "10"), 15,
         "10 readings of nvidia-smi (tens of ms each) beside the CPU's", "it times the GPU's contention reader"),
    Step("suite", "e", ("{py}", "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "-x"), 360,
         "the default suite: 6 minutes on the 2-core CPU (issue 53's goal), about as long on the GPU machine "
         "(start-up dominated)", "on a CPU the default suite is CI's (.ci/run)"),
)


NAME_WIDTH = max(len(step.name) for step in STEPS)  # the step column of the plan and of the summary


def cumulative(steps: Sequence[Step]) -> list[float]:
    """The running total of the estimates, the wheels' installation first."""
    total, out = WHEELS_S, []
    for step in steps:
        total += step.estimate_s
        out.append(total)
    return out


def within_one_call(steps: Sequence[Step] = STEPS, budget_s: float = GPU_BUDGET_S) -> list[Step]:
    """The steps whose estimates, added in order, stay within one call's budget: the plan proper."""
    return [step for step, upto in zip(steps, cumulative(steps)) if upto <= budget_s]


def done_steps(tsv: str) -> set[str]:
    """The steps a steps.tsv marks ok."""
    rows = (line.split("\t") for line in tsv.splitlines() if line.strip() and not line.startswith("#"))
    return {row[0] for row in rows if len(row) >= 2 and row[1] == "ok"}


def to_run(steps: Sequence[Step], start: str | None, done: Iterable[str]) -> list[Step]:
    """The steps from `start` (every step when None), less those `done`, in the plan's order."""
    names = [step.name for step in steps]
    if start is not None and start not in names:
        raise ValueError(f"--from: no step {start!r}; allowed: {', '.join(names)}")
    first = names.index(start) if start is not None else 0
    finished = set(done)
    return [step for step in steps[first:] if step.name not in finished]


def plan_lines(steps: Sequence[Step], budget_s: float = GPU_BUDGET_S) -> list[str]:
    """The plan in order: part, name, estimate, running total, with the line where one call's budget ends."""
    lines = [f"{'part':<4} {'step':<{NAME_WIDTH}} {'GPU est.':>9} {'total':>7}  basis",
             f"(a)  {'wheels':<{NAME_WIDTH}} {WHEELS_S:>7.0f} s {WHEELS_S:>5.0f} s  gpu_session.sh: pip install "
             "--no-deps of the carried wheels into /tmp/site (1 s on the H200)"]
    marked = False
    for step, upto in zip(steps, cumulative(steps)):
        if upto > budget_s and not marked:
            lines.append(f"---- {budget_s / 60:.0f} minutes: the steps below run when time is left, else in the "
                         "next session")
            marked = True
        lines.append(f"({step.part})  {step.name:<{NAME_WIDTH}} {step.estimate_s:>7.0f} s {upto:>5.0f} s  {step.basis}")
    return lines


# ----------------------------------------------------------------------------- what travels with the tree ---

def travelling_files(root: Path) -> list[Path]:
    """What the device call copies: tracked files and untracked files git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.decode()
    return [root / name for name in dict.fromkeys(listed.split("\0")) if name and (root / name).is_file()]


def tree_bytes(paths: Iterable[Path]) -> int:
    total = 0
    for path in paths:
        if path.is_file() and not path.is_symlink():
            total += path.stat().st_size
        elif path.is_dir() and not path.is_symlink():
            total += sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return total


def carry_sizes(root: Path, carried: Sequence[str]) -> dict[str, int]:
    """Bytes that would travel, by kind: the embedded data, the rest of the tree, each carried path (ignored
    paths named in the call's `carry`, e.g. the wheels in .whl/)."""
    files = travelling_files(root)
    data = root / EMBEDDED_DATA
    embedded = [f for f in files if data in f.parents]
    sizes = {"code and docs (tracked and untracked, not ignored)": tree_bytes(f for f in files if f not in embedded),
             f"embedded data ({EMBEDDED_DATA})": tree_bytes(embedded)}
    for path in carried:
        sizes[f"carried {path}"] = tree_bytes([root / path])
    return sizes


def carry_report(sizes: dict[str, int], limit: int = CARRY_LIMIT_BYTES) -> tuple[list[str], bool]:
    total = sum(sizes.values())
    lines = [f"{size / 2**20:9.2f} MiB  {name}" for name, size in sizes.items()]
    fits = total <= limit
    lines.append(f"{total / 2**20:9.2f} MiB  in all, of {limit / 2**20:.0f} MiB: "
                 f"{'fits' if fits else 'DOES NOT FIT'}")
    return lines, fits


# ------------------------------------------------------------------------------- the verdict's round times ---

@dataclass(frozen=True)
class RoundTime:
    step: ScaleStep  # one of standard's steps, with its declared GPU round time (gpu_round_s)
    left_out: str  # why the gpu scale leaves it out; "" where it runs it
    rounds_s: tuple[float, ...]  # each timed round: its first record to the next round's first
    started: int  # rounds that recorded something, the timed ones included


def round_times(text: str) -> list[RoundTime]:
    """Each round's wall time in a verdict's records (the latest run in a JSON-lines store), for every step of the
    standard scale (the gpu scale's are among them; none where a step did not run) with its declared GPU round time.
    A round is a run of consecutive records with one group and round index; its time runs from its first record to
    the next round's first (the next process's start included, as a round's time in the scale is; records carry
    whole seconds), so the last round recorded has none. Rounds are matched to steps in the scale's order (each
    step's rounds in turn: `jit all`'s round 0 before `jit flax`'s); a round the scale did not plan there (one the
    verdict added) ends it."""
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    latest = records[-1]["run_id"] if records else None
    runs: list[tuple[str, int, datetime]] = []  # (group, round index, first record's time)
    for record in records:
        if record["run_id"] != latest:
            continue
        key = (record["group"], int(record["round_index"]))
        if not runs or runs[-1][:2] != key:
            runs.append((*key, datetime.fromisoformat(record["timestamp"])))
    steps = gpu_round_times()
    planned = [(step, left_out, index) for step, left_out in steps for index in range(SCALES["standard"].rounds)]
    timed: dict[int, list[float]] = {}
    started: dict[int, int] = {}
    at = 0
    for number, (group, index, began) in enumerate(runs):
        match = next((i for i in range(at, len(planned))
                      if planned[i][0].group == group and planned[i][2] == index), None)
        if match is None:
            break
        at = match + 1
        step_at = match // SCALES["standard"].rounds
        started[step_at] = started.get(step_at, 0) + 1
        if number + 1 < len(runs):
            timed.setdefault(step_at, []).append((runs[number + 1][2] - began).total_seconds())
    return [RoundTime(step, left_out, tuple(timed.get(i, ())), started.get(i, 0))
            for i, (step, left_out) in enumerate(steps)]


def round_lines(times: Sequence[RoundTime]) -> list[str]:
    """One line a step (its group and command; its options are standard's): its rounds, their mean, its declared
    round time and whether the gpu scale runs it."""
    lines = [f"{'step':<14} {'rounds (s)':<20} {'mean':>6}  gpu_round_s  gpu scale"]
    for t in times:
        rounds = ", ".join(f"{s:.0f}" for s in t.rounds_s) or "—"
        if t.started > len(t.rounds_s):
            rounds += f" (+{t.started - len(t.rounds_s)} untimed)"
        mean = f"{statistics.fmean(t.rounds_s):6.1f}" if t.rounds_s else f"{'—':>6}"
        lines.append(f"{t.step.group + ' ' + t.step.command:<14} {rounds:<20} {mean}  {t.step.round_s:>9.0f} s  "
                     f"{'left out' if t.left_out else 'runs'}")
    return lines


# ------------------------------------------------------------------------------------------- small steps ---

def devices_of(results: Path) -> dict[str, int]:
    """Timed records by device in a JSON-lines results file."""
    counts: dict[str, int] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if record.get("median_s") is not None:
                counts[record["device"]] = counts.get(record["device"], 0) + 1
    return counts


def devices_verdict(counts: dict[str, int], want: str) -> tuple[str, bool]:
    """The line on the verdict's devices; on a GPU it fails where no timed record is the GPU's (the NumPy
    backends' and the engine's stay on the CPU by design)."""
    text = ", ".join(f"{n} on {device}" for device, n in sorted(counts.items())) or "none"
    ok = counts.get("gpu", 0) > 0 if want == "gpu" else bool(counts)
    return f"timed records of the verdict: {text}", ok


def versions(out: Path) -> int:
    lines = [f"python {sys.version.split()[0]} ({sys.executable})"]
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        lines.append(subprocess.run([smi, "--query-gpu=name,driver_version,memory.total,power.limit",
                                     "--format=csv"], capture_output=True, text=True, check=False).stdout.strip())
    import jax
    import numpy
    import torch

    lines.append(f"jax {jax.__version__}, torch {torch.__version__} (CUDA {torch.version.cuda}, cuDNN "
                 f"{torch.backends.cudnn.version()}), numpy {numpy.__version__}")  # type: ignore[no-untyped-call]
    for name in ("flax", "optax", "orbax.checkpoint", "scipy", "pydantic", "pynvml"):
        try:
            module = __import__(name, fromlist=["__version__"])
            lines.append(f"{name} {getattr(module, '__version__', '?')}")
        except ImportError as exc:
            lines.append(f"{name}: not importable ({exc})")
    lines.append(f"jax devices: {jax.devices()}")
    lines.append(f"torch: {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device'}")
    text = "\n".join(lines) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    (out / "versions.txt").write_text(text, encoding="utf-8")
    print(text, end="")
    return 0


# ------------------------------------------------------------------------------------------------ running ---

def help_text(command: Sequence[str], py: str) -> str:
    """The command's --help, wide enough that an option's name is never wrapped."""
    return subprocess.run([py, "main.py", *command, "--help"], cwd=ROOT, capture_output=True, text=True,
                          check=False, env={**os.environ, "COLUMNS": "200"}).stdout


def missing_option(step: Step, shown: str) -> str | None:
    """Why the step cannot run here (its command's --help, `shown`, lacks the option it needs), else None."""
    if step.needs is None or step.needs[1] in shown:
        return None
    command, text = step.needs
    return f"`{' '.join(command)}` has no {text} option in this checkout (issue 52 adds it)"


def run_step(step: Step, argv: list[str], log: Path, limit_s: float | None) -> tuple[str, float]:
    """Run one step, its output appended to `log`; its status and wall time. The step runs in a process group of
    its own: past its limit, every process it started (a verdict's rounds, the cross-check's CLI runs) is sent
    SIGTERM, on which the CLI saves what it measured, then SIGKILL 10 s later; none keeps the GPU from the next."""
    began = time.monotonic()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n=== ({step.part}) {step.name}: $ {' '.join(argv)}\n")
        out.flush()
        process = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            rc = process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            stop_group(process)
            seconds = time.monotonic() - began
            return f"timed out after {seconds:.0f} s", seconds
    seconds = time.monotonic() - began
    if rc == step.expect_rc:
        return "ok", seconds
    return f"failed (exit {rc}, expected {step.expect_rc})", seconds


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the step's process group (its leader's id is the group's), up to 10 s for the leader to end,
    then SIGKILL to whatever of the group is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def main(argv: Sequence[str] | None = None, plan: Sequence[Step] = STEPS) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["gpu", "cpu"], default="gpu")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "/tmp/gpu_out"))
    parser.add_argument("--from", dest="start", default=None, metavar="STEP", help="start at this step")
    parser.add_argument("--done", type=Path, default=None, metavar="STEPS_TSV",
                        help="a steps.tsv an earlier call returned: the steps it marks ok are skipped")
    parser.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                        help=f"command time for the whole plan (default: {GPU_BUDGET_S:.0f} on a GPU, none on a CPU)")
    parser.add_argument("--spent", type=float, default=0.0, metavar="SECONDS",
                        help="seconds the call already spent before the plan (gpu_session.sh: installing wheels)")
    parser.add_argument("--list", action="store_true",
                        help="print the plan (with --done/--from: what would run) and its estimates; run nothing")
    parser.add_argument("--carry", nargs="*", default=None, metavar="PATH",
                        help="print what would travel (the tree and these carried paths) against 64 MiB; "
                             "exit 1 if over")
    parser.add_argument("--round-times", type=Path, default=None, metavar="VERDICT_JSONL",
                        help="each round's wall time in a verdict's records, beside the declared gpu_round_s")
    parser.add_argument("--versions", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--devices-of", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--want", default="gpu", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)

    if options.carry is not None:
        lines, fits = carry_report(carry_sizes(ROOT, options.carry or [".whl"]))
        print("\n".join(lines))
        return 0 if fits else 1
    if options.round_times is not None:
        try:
            times = round_times(options.round_times.read_text(encoding="utf-8"))
        except (OSError, ValueError, KeyError, TypeError) as exc:  # unreadable, not JSON lines, not records
            print(f"Error: --round-times: {options.round_times} is not a readable verdict store ({exc!r})",
                  file=sys.stderr)
            return 2
        print("\n".join(round_lines(times)))
        return 0
    if options.versions:
        return versions(options.out)
    if options.devices_of is not None:
        line, ok = devices_verdict(devices_of(options.devices_of), options.want)
        print(line if ok else f"{line}: none on {options.want}")
        return 0 if ok else 1
    budget = options.budget if options.budget is not None else (GPU_BUDGET_S if options.device == "gpu" else math.inf)
    try:
        done = done_steps(options.done.read_text(encoding="utf-8")) if options.done is not None else set()
        steps = to_run(plan, options.start, done)
    except (OSError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    if options.list:  # with --done / --from: what a resumed call would run, and where its 8 minutes end
        print("\n".join(plan_lines(steps, options.budget if options.budget is not None else GPU_BUDGET_S)))
        return 0
    out: Path = options.out
    out.mkdir(parents=True, exist_ok=True)
    log, table = out / "session.log", out / "steps.tsv"
    if not table.exists():
        table.write_text("# step\tstatus\tseconds\testimate_s (the GPU)\n", encoding="utf-8")
    py = sys.executable
    started = time.monotonic() - options.spent
    print(f"plan: {len(steps)} step(s) on {options.device}, budget "
          f"{'none' if math.isinf(budget) else f'{budget:.0f} s'}; output in {out}", flush=True)
    summary: list[tuple[Step, str, float]] = []
    for step in steps:
        left = budget - (time.monotonic() - started)
        status, seconds = "", 0.0
        if step.gpu_only and options.device != "gpu":
            status = f"skipped: needs a GPU ({step.gpu_only})"
        elif step.estimate_s > left:
            status = f"skipped: needs about {step.estimate_s:.0f} s on the GPU, {max(left, 0):.0f} s left"
        elif step.needs is not None and (why := missing_option(step, help_text(step.needs[0], py))) is not None:
            status = f"skipped: {why}"
        else:
            # A step may overrun its estimate by half a minute and twice itself, never past the budget.
            limit = None if math.isinf(left) else min(left, 2 * step.estimate_s + 30)
            print(f"=== ({step.part}) {step.name} (about {step.estimate_s:.0f} s on the GPU) ...", flush=True)
            status, seconds = run_step(step, step.argv(py, options.device, out), log, limit)
        if status.startswith("skipped"):
            with log.open("a", encoding="utf-8") as text:
                text.write(f"\n=== ({step.part}) {step.name}: {status}\n")
        with table.open("a", encoding="utf-8") as rows:
            rows.write(f"{step.name}\t{status}\t{seconds:.1f}\t{step.estimate_s:.0f}\n")
        print(f"    ({step.part}) {step.name}: {status}" + (f" in {seconds:.1f} s" if seconds else ""), flush=True)
        summary.append((step, status, seconds))
    print(f"\n{'part':<4} {'step':<{NAME_WIDTH}} {'here':>8} {'GPU est.':>9}  status")
    for step, status, seconds in summary:
        here = f"{seconds:.1f} s" if seconds else "—"
        print(f"({step.part})  {step.name:<{NAME_WIDTH}} {here:>8} {step.estimate_s:>7.0f} s  {status}")
    ran = sum(seconds for _, _, seconds in summary)
    print(f"{ran:.0f} s of steps ({ran / 60:.1f} min) on {options.device}")
    return 0 if all(s == "ok" or s.startswith("skipped") for _, s, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
