"""The jit group's findings for `verdict`: per backend, each compiled variant against eager (the gain, its
interval) and the calls after which compiling has paid for itself. Pure functions of records.

`jit flax` records two shapes of training epoch. Since it runs the mnist group's training cases, one record per
epoch (param `epoch`; a round's figure is its last epoch, as for every figure with several records in a round,
`report.compare.round_medians`), run on a step compiled before them: the compile time is on the jitted
`train_step_...` record of the same run, and the epoch's break-even counts epochs. Before, one record per mode held
every epoch after the first as its samples, the first epoch's extra time as its own compile time. Both read alike.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.report.select import FigureKey
from jax_benchmarks.store.record import Record, first_call_extra_s
from jax_benchmarks.training.names import TrainedCase, kind_of
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, DEFAULT_MARGIN_PCT, undecided_text
from jax_benchmarks.verdict.findings import (Contrast, Finding, Status, case_names, contrasts, figures, is_compiled,
                                             label, plural, run_ids, size_of)

TOPIC = "jit / torch.compile against eager"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine). `jit flax`'s rounds grew when it became mnist's training
# cases (the peak, a train step per mode and a validation per epoch): 136 s before, 162 s after, one after the other
# on 2026-11-26 with other processes taking about 1 of the 2 cores; its 53 s measured on a quiet machine (and full's
# 30 s estimate) are raised by that ratio, 1.19: an estimate, not measured on a quiet machine.
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick", "-k", "f_100000*"), 13.0),),  # 11.2-15.7 s a round, quiet, 2026-11-26
    # standard, measured quietly 2026-11-26 (03:05-03:22 UTC): `all` 17.8-19.8 s a round; `flax` on XLA's convolution
    # kernels trains on 1,024 images (8 steps an epoch: the eager epochs dominate, 9.6 s each on all 4,000) in
    # 36.8-42.7 s a round.
    "standard": (("all", ("--total-items", "1e6"), 18.5),
                 ("flax", ("--repeats", "3", "--train-images", "1024"), 40.0),),
    "full": (("all", ("--total-items", "1e7"), 120.0), ("flax", (), 36.0),),
}


def findings(records: Sequence[Record], target: float | None,
             margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    return jit_findings(records, margin_pct)


@dataclass(frozen=True)
class JitGain:
    backend: str
    case: str
    compiled: str  # the compiled variant's name (jit, compile)
    contrast: Contrast  # compiled against eager
    compile_s: float | None
    # Eager's own one-off cost: its first call above its steady calls (JAX's eager mode compiles each operation the
    # first time it runs it: 0.2 s for f, 10 s for the CNN's train step on a 2-core CPU); None where not recorded.
    eager_first_s: float | None = None

    @property
    def call(self) -> str:
        """What the break-even counts: epochs of a training epoch's figure, else calls."""
        return "epoch" if kind_of(self.case) == "epoch" else "call"

    @property
    def break_even_calls(self) -> int | None:
        """Calls after which the compilation has paid for itself against eager, eager's own first call counted;
        None when compiled is not faster."""
        return break_even(self.compile_s, self.contrast.b_median_s, self.contrast.a_median_s,
                          self.eager_first_s or 0.0)


def break_even(compile_s: float | None, eager_s: float, compiled_s: float, eager_first_s: float = 0.0) -> int | None:
    """Smallest n ≥ 1 with eager_first + n · eager ≥ compile + n · compiled (each side's one-off cost above its
    steady calls, then n steady calls); None when compiled is not faster or no compile time."""
    if compile_s is None or compiled_s >= eager_s:
        return None
    return max(1, math.ceil((compile_s - eager_first_s) / (eager_s - compiled_s)))


def jit_gains(records: Sequence[Record], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[JitGain]:
    timed = figures(records)
    pairs: list[tuple[str, Sequence[Record], str, Sequence[Record]]] = []
    meta: list[tuple[str, str, str, float | None, float | None]] = []
    for key, recs in timed.items():
        group, case, backend, variant, device = key
        if not is_compiled(variant):
            continue
        eager_key = (group, case, backend, "eager", device)
        eager = timed.get(eager_key)
        if eager is None:
            continue
        compile_times = one_off_times(timed, key, compile_time)
        eager_first = one_off_times(timed, eager_key, first_call_extra_s)
        pairs.append((label(recs[-1]), recs, label(eager[-1]), eager))
        meta.append((backend, case, variant or "", statistics.median(compile_times) if compile_times else None,
                     statistics.median(eager_first) if eager_first else None))
    # One family per backend: the comparisons of one finding are corrected together.
    judged: dict[int, Contrast] = {}
    for backend in dict.fromkeys(m[0] for m in meta):
        mine = [i for i, m in enumerate(meta) if m[0] == backend]
        judged.update(zip(mine, contrasts([pairs[i] for i in mine], margin_pct), strict=True))
    return [JitGain(b, c, v, judged[i], s, e) for i, (b, c, v, s, e) in enumerate(meta)]


def compile_time(record: Record) -> float | None:
    """A compiled figure's one-off cost: its first call above its steady calls (trace and compile)."""
    return record.compile_s


def one_off_times(timed: dict[FigureKey, list[Record]], key: FigureKey,
                  one_off: Callable[[Record], float | None]) -> list[float]:
    """The one-off cost (`one_off`: `compile_time`, `first_call_extra_s`) a figure paid, one per round: its own
    records', or for a training epoch run on a step warmed up before it (mnist's per-epoch records), its train step's
    in the same runs."""
    recs = timed.get(key, [])
    own = [x for r in recs if (x := one_off(r)) is not None]
    group, case, backend, variant, device = key
    epoch = TrainedCase.of(case)
    if own or epoch is None or epoch.kind != "epoch":
        return own
    runs = {r.run_id for r in recs}
    step = timed.get((group, epoch.sibling("step").name, backend, variant, device), [])
    return [x for r in step if r.run_id in runs and (x := one_off(r)) is not None]


def gain_text(gain: JitGain) -> str:
    c = gain.contrast
    if c.judged == "same":
        return f"{gain.compiled} and eager are {c.same_text} (ratio {c.speedup:.2f}, {c.uncertainty})"
    if c.judged == "undecided":
        return (f"{gain.compiled} {format_seconds(c.a_median_s)} vs eager {format_seconds(c.b_median_s)}: "
                f"{undecided_text(c.decision)} ({c.uncertainty})")
    return f"{gain.compiled} is {c.how_much} than eager ({c.uncertainty})"


def cost_text(gain: JitGain) -> str:
    """'compiling costs 2 s, paid back after 9 epochs'; with eager's own first call where it was recorded:
    'compiling costs 50 ms against eager's first call 250 ms above its steady calls: ahead from the first call' (or
    epoch, for a training epoch's figure)."""
    if gain.compile_s is None:
        return "compile time not recorded"
    calls, cost = gain.break_even_calls, format_seconds(gain.compile_s)
    if gain.eager_first_s:
        cost += f" against eager's first call {format_seconds(gain.eager_first_s)} above its steady calls"
    if calls is None or gain.contrast.judged in ("same", "slower"):
        return f"compiling costs {cost} and never pays off here"
    ahead = gain.eager_first_s is not None and gain.compile_s <= gain.eager_first_s
    paid = f"ahead from the first {gain.call}" if ahead else f"paid back after {plural(calls, gain.call)}"
    if gain.contrast.judged == "undecided":
        return f"compiling costs {cost}; at the median times it would be {paid} (undecided)"
    return f"compiling costs {cost}: {paid}" if ahead else f"compiling costs {cost}, {paid}"


def jit_findings(records: Sequence[Record], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    gains = jit_gains(records, margin_pct)
    out = []
    for backend in dict.fromkeys(g.backend for g in gains):
        mine = sorted((g for g in gains if g.backend == backend), key=lambda g: (size_of(g.case), g.case))
        parts = [f"At {g.case}: {gain_text(g)}; {cost_text(g)}" for g in mine]
        best = [g for g in mine if g.contrast.judged == "faster"]
        status: Status = "found" if best else ("same" if any(g.contrast.judged == "same" for g in mine)
                                                 else "undecided")
        rows = tuple((g.case, format_seconds(g.contrast.b_median_s), format_seconds(g.contrast.a_median_s),
                      f"{g.contrast.speedup:.2f}", "—" if g.contrast.interval is None else
                      f"{g.contrast.interval[0]:.2f}–{g.contrast.interval[1]:.2f}", g.contrast.judged,
                      "—" if g.eager_first_s is None else format_seconds(g.eager_first_s),
                      "—" if g.compile_s is None else format_seconds(g.compile_s),
                      "never" if g.break_even_calls is None or g.contrast.judged in ("same", "slower")
                      else f"{g.break_even_calls:,}") for g in mine)
        evidence = tuple(r for g in mine for r in (*g.contrast.a_records, *g.contrast.b_records))
        compiled = mine[0].compiled
        out.append(Finding(
            f"jit-{backend}", f"{backend} {compiled} against eager",
            ". ".join(parts) + ".", status,
            run_ids(evidence), case_names(evidence),
            ("case", "eager", compiled, "speed-up", f"{DECISION_CONFIDENCE * 100:g} % CI", "judged",
             "eager's first call (above its steady ones)", "compile", "break-even calls (epochs for an epoch)"),
            rows, evidence, tuple(g.contrast.decision for g in mine)))  # any size decided decides the finding
    return out


from jax_benchmarks.verdict.findings import GroupFindings

# One round of each standard command on a GPU: measured on an NVIDIA H200, 2026-11-28 (`verdict --scale gpu`, from a
# round's first record to the next's, the process's start in): `all` 31, 26, 26 s; `flax` 58, 51, 56 s. An H100 is the
# same Hopper chip with less and slower memory; a round is mostly the process's start, the compiles and the CPU's
# dispatch (f on 10⁶ items takes 0.1 ms there): about as long on it.
GPU_ROUND_S = {"all": 28.0, "flax": 55.0}
GPU_LEFT_OUT = {
    "flax": "55 s a round on the H200, 165 s for three: most of what the 8-minute GPU plan leaves the whole verdict "
            "(benchmarks/gpu_plan.py); eager Flax's first train step took 28-31 s of it (eager JAX compiles each "
            "operation the first time it runs it), its eager epochs 0.6-0.7 s (1,024 images), so fewer images would "
            "not shorten it; jit against eager stays answered by `jit all` (f at three sizes, JAX and PyTorch)",
}

# What the verdict reads of this group (its entry in jax_benchmarks.groups names this).
DECLARED = GroupFindings(TOPIC, findings, VERDICT_STEPS, gpu_round_s=GPU_ROUND_S, gpu_left_out=GPU_LEFT_OUT)
