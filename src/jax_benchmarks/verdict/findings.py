"""Findings: each one sentence computed from the records, with its number, its uncertainty and its evidence.

Honest by construction:
* Two figures are compared with the regression gate's own test (`jax_benchmarks.report.compare`): the
  ratio of the geometric means of the rounds' fastest samples, its 95 % confidence interval from
  Welch's t, and Benjamini–Hochberg over the figures of one finding; three words (`verdict/decide.py`):
  "A is 2.1× faster than B" only when the ratio lies beyond the equivalence margin, "the same within
  ±m %" when an equivalence test (TOST) puts it inside, otherwise "undecided after N rounds". With fewer
  than `MIN_ROUNDS` rounds a side the typical times are given and the sentence says why it is undecided.
* A group without records is said to be missing; a figure the records do not hold is never guessed.
* Every finding names the run ids and case names it was computed from.

Pure functions of records: no I/O, no printing, no timing.
"""

from __future__ import annotations

import importlib
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jax_benchmarks.cli.rounds import ROUND_INDEX as ROUND_INDEX  # what a group's VERDICT_STEPS options use
from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS
from jax_benchmarks.measure.rounds import spreads
from jax_benchmarks.measure.timing import NOISY_IQR_RATIO
from jax_benchmarks.report.compare import MIN_ROUNDS, Comparison, compare, round_medians
from jax_benchmarks.report.plot import COMPILED_VARIANTS
from jax_benchmarks.report.select import FigureKey, figure_key
from jax_benchmarks.store.views import by_group, by_run, run_key
from jax_benchmarks.store.record import Record, Scalar, of_operation
from jax_benchmarks.verdict.decide import (DECISION_CONFIDENCE, DEFAULT_MARGIN_PCT, Decision, Word, decide, percent_text,
                                           refusal, undecided_text)

# "not compared": the records are not the same work (`unlike`); "undecided": more rounds may decide it.
Status = Literal["found", "same", "undecided", "not compared", "missing", "measured"]



@dataclass(frozen=True)
class Finding:
    key: str  # stable anchor, e.g. "linear-algebra-matmul"
    topic: str
    sentence: str
    status: Status
    run_ids: tuple[str, ...]
    cases: tuple[str, ...]
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    records: tuple[Record, ...] = ()  # the timed records behind it (drawn as box plots)
    # The decisions its status rests on (the comparisons that would make it decided): what sequential rounds ask of
    # it, e.g. the rounds still needed (verdict/sequential.py); empty where its status is not one comparison's.
    decisions: tuple[Decision, ...] = ()
    # Whether the page's plain answer (JAX against the fastest other framework, verdict/answer.py) is asked of it:
    # False where that question is another finding's, so that one question is answered and counted once.
    asks_jax: bool = True
    notes: tuple[str, ...] = ()  # under its rows: what a figure in them rests on, why a cell is '—'
    # Its rows are figures a reader came for (the table of modes), not the evidence behind one comparison: the
    # markdown page, which shows no finding's evidence, shows these rows too (the HTML page shows every finding's).
    rows_are_the_answer: bool = False

    @property
    def source(self) -> str:
        """Where the numbers come from: 'run R · cases a, b'."""
        runs = ", ".join(self.run_ids) or "none"
        return f"run {runs} · cases {', '.join(self.cases)}" if self.cases else f"run {runs}"


@dataclass(frozen=True)
class Contrast:
    """Figure `a` against figure `b` (each: all its rounds' records), with its word (`verdict/decide.py`)."""

    a: str
    b: str
    a_records: tuple[Record, ...]
    b_records: tuple[Record, ...]
    comparison: Comparison
    decision: Decision

    @property
    def a_median_s(self) -> float:
        return statistics.median(round_medians(self.a_records))

    @property
    def b_median_s(self) -> float:
        return statistics.median(round_medians(self.b_records))

    @property
    def speedup(self) -> float:
        """How many times faster a is than b: the judged ratio (fastest samples) when judged, else of the medians."""
        if self.comparison.log_ratio is not None:
            return math.exp(-self.comparison.log_ratio.value)
        return self.b_median_s / self.a_median_s

    @property
    def interval(self) -> tuple[float, float] | None:
        """The interval of `speedup` every outcome rests on (`DECISION_CONFIDENCE`); None with too few rounds."""
        ratio = self.comparison.log_ratio
        if ratio is None:
            return None
        low, high = ratio.interval(DECISION_CONFIDENCE)
        return 1 / high, 1 / low

    @property
    def judged(self) -> Word:
        """faster, slower, the same (within the margin) or undecided: a's speed against b's."""
        return self.decision.word

    @property
    def uncertainty(self) -> str:
        """'99.9 % CI 1.8–2.4×, margin ±10 %, q = 0.001, 3 vs 3 rounds' ('8 paired rounds' where the rounds were taken in
        turns), or why there is none."""
        rounds = (f"{self.comparison.rounds} paired round(s)" if self.comparison.paired
                  else f"{self.comparison.rounds} vs {self.comparison.baseline_rounds} round(s)")
        interval = self.interval
        if interval is None or self.comparison.busy is not None or self.decision.refused:
            return rounds
        q = "" if self.decision.q_value is None else f", q = {self.decision.q_value:.2g}"
        return (f"{DECISION_CONFIDENCE * 100:g} % CI {interval[0]:.2f}–{interval[1]:.2f}×, margin "
                f"{self.decision.margin_text}{q}, {rounds}")

    @property
    def same_text(self) -> str:
        """'the same within ±10 %' (the equivalence test's margin)."""
        return f"the same within {self.decision.margin_text}"

    @property
    def difference_text(self) -> str:
        """The difference the interval shows, in % of the slower's time saved or lost: 'faster by 2.1–3.9 %' (a
        faster), 'slower by 2.1–3.9 %' (a slower); '' where the interval holds 1."""
        interval = self.interval
        if interval is None or not self.decision.differs:
            return ""
        low, high = interval
        if low > 1:
            return f"faster by {percent_text((low - 1) * 100)}–{percent_text((high - 1) * 100)} %"
        return f"slower by {percent_text((1 / high - 1) * 100)}–{percent_text((1 / low - 1) * 100)} %"

    @property
    def how_much(self) -> str:
        """How much faster (or slower) a decided-different comparison says a is: '2.10× faster' where the
        interval lies beyond the margin, 'faster by 2.0–14 %' where it crosses it."""
        if self.decision.beyond_margin:
            return f"{self.speedup:.2f}× faster" if self.judged == "faster" else f"{1 / self.speedup:.2f}× slower"
        return self.difference_text

    def phrase(self) -> str:
        """'jax is 2.10× faster than numpy (99.9 % CI …)', 'jax is faster than numpy, by 2.0–14 % (…)', 'jax and
        numpy are the same within ±10 % (…)' or 'undecided after N rounds'."""
        if self.decision.refused:
            return f"{self.a} against {self.b}: {undecided_text(self.decision)}"
        if self.judged == "undecided":
            return (f"{self.a} {format_seconds(self.a_median_s)} against {self.b} {format_seconds(self.b_median_s)}: "
                    f"{undecided_text(self.decision)} ({self.uncertainty})")
        if self.judged == "same":
            named = f"{self.a} {self.difference_text}; " if self.decision.differs else ""
            return (f"{self.a} and {self.b} are {self.same_text} ({named}ratio {self.speedup:.2f}, "
                    f"{self.uncertainty})")
        if not self.decision.beyond_margin:
            word, by = self.difference_text.split(" by ", 1)
            return f"{self.a} is {word} than {self.b}, by {by} ({self.uncertainty})"
        return f"{self.a} is {self.how_much} than {self.b} ({self.uncertainty})"


def contrasts(pairs: Sequence[tuple[str, Sequence[Record], str, Sequence[Record]]],
              margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Contrast]:
    """Each (label a, records a, label b, records b) compared and decided as one family at ±`margin_pct` %
    (`decide`); a pair whose records differ in what `unlike` checks is refused (undecided, naming what differs),
    never compared."""
    made = [(a, ra, b, rb, compare(ra, rb)) for a, ra, b, rb in pairs]
    kept = [(a, ra, b, rb, c) for a, ra, b, rb, c in made if c is not None]
    differs = [unlike(ra, rb) for _, ra, _, rb, _ in kept]
    decisions = iter(decide([c for (*_, c), why in zip(kept, differs, strict=True) if why is None], margin_pct))
    return [Contrast(a, b, tuple(ra), tuple(rb), c,
                     next(decisions) if why is None else refusal(min(c.rounds, c.baseline_rounds), why))
            for (a, ra, b, rb, c), why in zip(kept, differs, strict=True)]


def precision_policy(record: Record) -> object:
    """The run's --precision where it matters: CPUs compute float32 in IEEE arithmetic whatever the float32 policy
    says (hardware/gpu_policy.py), so on a CPU float32 and tf32 are one ("float32"); bf16 (mixed precision) differs
    from both on every device. A GPU record that does not say its policy: None (not compared on it)."""
    policy = record.env.get("precision")
    if policy == "bf16":
        return "bf16"
    return "float32" if record.device == "cpu" else policy


def batch_of(record: Record) -> object:
    return next((record.params[k] for k in ("batch", "train_batch_size", "batch_size") if k in record.params), None)


# What two figures' records must agree on before their times (or memory) are compared: the case (its name holds
# the work, its size, its dtype and its batch), dtype, device, precision policy (TF32 against IEEE), batch, model
# and how the timer synchronized, each as far as the records hold it (a field one side lacks is not compared).
LIKE_FIELDS: tuple[tuple[str, Callable[[Record], object]], ...] = (
    ("case", lambda r: r.case), ("dtype", lambda r: r.dtype), ("device", lambda r: r.device),
    ("precision policy", precision_policy), ("batch", batch_of), ("model", lambda r: r.params.get("model")),
    ("sync", lambda r: r.params.get("sync")),
)


def unlike(a: Sequence[Record], b: Sequence[Record]) -> str | None:
    """'they differ in dtype (float32 vs float64), …' where two figures' records are not the same work; None alike."""
    diffs = []
    for name, field in LIKE_FIELDS:
        mine, theirs = {field(r) for r in a} - {None}, {field(r) for r in b} - {None}
        if mine and theirs and mine != theirs:
            diffs.append(f"{name} ({', '.join(map(str, sorted(mine, key=str)))} vs "
                         f"{', '.join(map(str, sorted(theirs, key=str)))})")
    return "they differ in " + ", ".join(diffs) if diffs else None


# ------------------------------------------------------------------ helpers ---

def latest_runs(records: Iterable[Record], run_id: str | None = None) -> dict[str, list[Record]]:
    """Per group, each figure's records from the latest run that has it (or only run `run_id`'s records):
    a group's commands may have been run apart (`jit all` and `jit flax`), each under its own run id."""
    chosen: dict[str, list[Record]] = {}
    for group, group_records in by_group(records).items():
        runs = by_run(group_records)
        if run_id is not None:
            if run_id in runs:
                chosen[group] = runs[run_id]
            continue
        latest: dict[FigureKey, list[Record]] = {}
        for run in sorted(runs.values(), key=run_key):  # oldest first: a later run's figure wins
            mine: dict[FigureKey, list[Record]] = {}
            for record in run:
                mine.setdefault(figure_key(record), []).append(record)
            latest.update(mine)
        chosen[group] = [r for rs in latest.values() for r in rs]
    return chosen


def one_machine(records: Sequence[Record], run_id: str | None = None) -> tuple[list[Record], tuple[str, ...]]:
    """The records of the runs measured on one machine (`same_machine`: host, CPU, cores, vector set and GPU, each
    where recorded): run `run_id`'s machine where given, else the latest run's; and the ids of the runs of other
    machines left out (none named with `run_id`: that page judges one run, so no other run was in question). A
    page judges one machine: from a store that several machines append to (one PostgreSQL store for a lab, two
    results files put together) it would otherwise set one machine's figure against another's. A run's machine
    is its first process's (process 0's where recorded): the other processes of a multi-host run record their own
    hosts, and belong to the run."""
    from jax_benchmarks.report.envdiff import same_machine

    runs = by_run(records)
    if not runs:
        return list(records), ()

    def machine_of(run: Sequence[Record]) -> Mapping[str, Scalar]:
        return next((r.env for r in run if r.params.get("process_index", 0) == 0), run[0].env)

    chosen = runs[run_id] if run_id in runs else max(runs.values(), key=run_key)
    env = machine_of(chosen)
    kept = {run for run, mine in runs.items() if same_machine(machine_of(mine), env)}
    left_out = () if run_id in runs else tuple(sorted(set(runs) - kept))
    return [r for r in records if r.run_id in kept], left_out


# A round whose process died twice (cli/rounds.py): its group, its round index and what ended it ('round 2 of xla
# failed twice: killed by SIGKILL, then exit 3').
FailedRound = tuple[str, int, str]


def without_failed(records: Iterable[Record], run_id: str | None, failed: Sequence[FailedRound]) -> list[Record]:
    """`records` less those of run `run_id`'s rounds that failed twice: what such a round recorded stays in the
    store, but it is never judged as a measured round."""
    dropped = {(group, index) for group, index, _ in failed}
    return [r for r in records if not (r.run_id == run_id and (r.group, r.round_index) in dropped)]


def failed_round(group: str, run_id: str | None, why: str) -> Finding:
    """The line in a group's findings for one of its rounds that failed twice."""
    return Finding(f"failed-round-{group}", topic_of(group), f"{why[:1].upper()}{why[1:]}; what it recorded stays in "
                   "the store, not judged.", "missing", (run_id,) if run_id else (), ())


def figures(records: Iterable[Record]) -> dict[FigureKey, list[Record]]:
    """Every record of a figure (one per round), timed figures only."""
    out: dict[FigureKey, list[Record]] = {}
    for record in records:
        if record.median_s:
            out.setdefault(figure_key(record), []).append(record)
    return out


# What a backend is where its name is not what ran (the autograd group's `numpy` is the project's own reverse-mode
# engine on NumPy arrays): a label names what ran.
ENGINE = "the project's engine (NumPy)"


def backend_name(record: Record) -> str:
    """What ran, as a label says it: the backend, or the name its group declares for it (`backend_names` of its
    `GroupFindings`)."""
    declared = group_findings(record.group)
    return declared.backend_names.get(record.backend, record.backend) if declared is not None else record.backend


def label(record: Record) -> str:
    text = backend_name(record) + (f" {record.variant}" if record.variant else "")
    return text if record.device == "cpu" else f"{text} @{record.device}"


def typical_s(records: Sequence[Record]) -> float:
    return statistics.median(round_medians(records))


def spread_text(records: Sequence[Record]) -> str:
    """'1.2 ms (IQR 30 µs, 3 rounds)': the median of the round medians and their spread."""
    medians = round_medians(records)
    if len(medians) > 1:
        q1, _, q3 = statistics.quantiles(medians, n=4, method="inclusive")
        return f"{format_seconds(statistics.median(medians))} (IQR of rounds {format_seconds(q3 - q1)}, {len(medians)} rounds)"
    return f"{format_seconds(records[-1].median_s or 0.0)} (IQR {format_seconds(records[-1].iqr_s or 0.0)}, 1 round)"


def images_per_s(records: Sequence[Record]) -> float | None:
    """The median of the recorded images/s over `records` (None where none recorded it)."""
    values = [float(r.metrics["images_per_s"]) for r in records  # type: ignore[arg-type]
              if isinstance(r.metrics.get("images_per_s"), (int, float))]
    return statistics.median(values) if values else None


def run_ids(records: Iterable[Record]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.run_id for r in records))


def case_names(records: Iterable[Record]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.case for r in records))


def is_compiled(variant: str | None) -> bool:
    text = (variant or "").lower()
    return text in COMPILED_VARIANTS or text.startswith("jit")


def size_of(case: str) -> int:
    """The first number of a case name (f_100000_float32 → 100000, matmul_300x300_float64 → 300)."""
    digits = next((part for part in case.replace("x", "_").split("_") if part.isdigit()), "0")
    return int(digits)


def missing(group: str) -> Finding:
    topic = topic_of(group)
    return Finding(f"missing-{group}", topic, f"No {group} records: {topic} is not judged here "
                   f"(run `verdict` or `{group} all --rounds {MIN_ROUNDS}`).", "missing", (), ())


STATUS_OF: dict[Word, Status] = {"faster": "found", "slower": "found", "same": "same", "undecided": "undecided"}


def status_of(contrast: Contrast) -> Status:
    return "not compared" if contrast.decision.refused else STATUS_OF[contrast.judged]


# The column of a finding's table that says how much slower each implementation is than the fastest.
RATIO_HEADER = "× the fastest's time"


def ratio_rows(series: Sequence[Sequence[Record]]) -> tuple[tuple[str, ...], ...]:
    """Per implementation (`series`: each one's records, the fastest first): its label, its median of round
    medians, and how many times the fastest's time it takes: the ratio the finding's sentence judges and states
    (`Contrast.speedup`: from the rounds' fastest samples where there are enough rounds, else the medians), so a
    table never gives another figure than its sentence."""
    fastest = series[0]
    rows = [(label(fastest[-1]), spread_text(fastest), "1.00")]
    for recs in series[1:]:
        [against] = contrasts([(label(fastest[-1]), fastest, label(recs[-1]), recs)])
        rows.append((label(recs[-1]), spread_text(recs), f"{against.speedup:.2f}"))
    return tuple(rows)


def fastest_findings(group: str, records: Sequence[Record], prefixes: Sequence[str],
                     margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    """Per case starting with one of `prefixes` (largest size of each): the fastest figure against the next (the
    findings of a group whose cases are implementations of one computation: autograd, scipy)."""
    timed = figures(records)
    out = []
    for prefix in prefixes:
        chosen = {key: recs for key, recs in timed.items() if key[1].startswith(prefix)}
        if not chosen:
            continue
        largest = max(size_of(key[1]) for key in chosen)
        for case in dict.fromkeys(key[1] for key in chosen if size_of(key[1]) == largest):
            series = sorted((recs for key, recs in chosen.items() if key[1] == case), key=typical_s)
            evidence = tuple(r for recs in series for r in recs)
            rows = ratio_rows(series)
            headers = ("implementation", "median of round medians", RATIO_HEADER)
            if len(series) < 2:
                out.append(Finding(f"{group}-{case}", topic_of(group), f"Only {label(series[0][-1])} was "
                                   f"measured at {case}: nothing to compare.", "measured", run_ids(evidence),
                                   (case,), headers, rows, evidence))
                continue
            judged = contrasts([(label(series[0][-1]), series[0], label(s[-1]), s) for s in series[1:2]],
                               margin_pct)[0]
            sentence = (f"At {case}: {judged.a} is fastest, {judged.how_much} than {judged.b}, the next "
                        f"({judged.uncertainty})" if judged.judged == "faster"
                        else f"At {case}: no implementation is clearly fastest: {judged.phrase()}")
            if len(series) > 2:
                sentence += f"; the slowest, {rows[-1][0]}, takes {float(rows[-1][2]):.0f}× the fastest's time"
            out.append(Finding(f"{group}-{case}", topic_of(group), sentence + ".", status_of(judged),
                               run_ids(evidence), (case,), headers, rows, evidence, (judged.decision,)))
    return out


# ---------------------------------------------------------------- memory ---

MEMORY_KEYS = ("host_peak_bytes", "device_peak_bytes")


def memory_of(record: Record) -> Mapping[str, Scalar] | None:
    """The record's `memory` figures (written by the memory pass), None when it has none."""
    value = getattr(record, "memory", None)
    return value if isinstance(value, Mapping) and value else None


@dataclass(frozen=True)
class MemoryCase:
    """The case whose memory peaks a group has compared between frameworks (`GroupFindings.memory_case`): memory is
    compared per case, never each framework's largest case. `operation`: its cases are this operation's
    (`{operation}_{shape}_{dtype}`: store.record.of_operation; the largest of them is compared); `what`: what the case
    is, in the finding's topic; `order`: the page's order among the groups' memory comparisons (the lowest first)."""

    operation: str
    what: str
    order: int = 0


def memory_peak(record: Record, key: str) -> float | None:
    memory = memory_of(record)
    value = None if memory is None else memory.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def memory_cases() -> list[tuple[str, MemoryCase]]:
    """Each group that declares a memory case (`GroupFindings.memory_case`), with it, in the page's order."""
    declared = [(group, found.memory_case) for group in BENCHMARK_GROUPS
                if (found := group_findings(group)) is not None and found.memory_case is not None]
    return sorted(declared, key=lambda item: item[1].order)


def memory_findings(chosen: Mapping[str, Sequence[Record]]) -> list[Finding]:
    """Per group's declared memory case (`memory_cases`; of its cases, the one the most frameworks measured, then
    the largest): each framework's memory peaks, the median over its rounds; a framework whose records differ from
    the first's in what `unlike` checks is left out, and the sentence names what differs."""
    every = [r for rs in chosen.values() for r in rs]
    if not any(memory_of(r) is not None for r in every):
        return [Finding("memory", "memory per case", "Memory not measured in these records.", "missing",
                        run_ids(every), ())]
    out = []
    for group, declared in memory_cases():
        operation, what = declared.operation, declared.what
        records = chosen.get(group)
        if not records:
            continue  # the group's own line says it has no records
        by_case: dict[str, dict[str, list[Record]]] = {}
        for record in records:
            if of_operation(record.case, operation) and memory_of(record) is not None:
                by_case.setdefault(record.case, {}).setdefault(label(record), []).append(record)
        topic = f"memory: {what}"
        if not by_case:
            out.append(Finding(f"memory-{group}", topic, f"The {group} records hold no memory figure of {what} "
                               f"({operation}_*): its memory is not compared.", "missing", run_ids(records), ()))
            continue
        case = max(by_case, key=lambda c: (len(by_case[c]), size_of(c)))
        series = by_case[case]
        # Compared against a framework on the device most of them ran on: on a GPU machine NumPy's host figure
        # is the one left out (`unlike` refuses two devices), not the GPU frameworks'.
        devices = [recs[0].device for recs in series.values()]
        common = max(devices, key=devices.count)
        first = next(recs for recs in series.values() if recs[0].device == common)
        refused = {name: why for name, recs in series.items() if (why := unlike(first, recs)) is not None}
        kept = {name: recs for name, recs in series.items() if name not in refused}
        # The sentence names the peak of the memory the case ran in: on a GPU the device's (the host's peak of a
        # GPU step is its Python objects: 8-16 KiB for the mnist step on the H200, 2026-11-28), else the host's.
        on_gpu = all(r.device == "gpu" for recs in kept.values() for r in recs)
        said = MEMORY_KEYS.index("device_peak_bytes" if on_gpu else "host_peak_bytes")
        rows = []
        for name, recs in sorted(kept.items(), key=lambda kv: statistics.median(
                [v for r in kv[1] if (v := memory_peak(r, MEMORY_KEYS[said])) is not None] or [0.0])):
            cells = []
            for key in MEMORY_KEYS:
                values = [v for r in recs if (v := memory_peak(r, key)) is not None]
                cells.append(f"{statistics.median(values) / 2**20:,.1f} MiB" if values else "—")
            rows.append((name, *cells, str(len(round_medians(recs)) or len(recs))))
        text = ", ".join(f"{row[0]} {row[1 + said]}" for row in rows if row[1 + said] != "—")
        unmeasured = [row[0] for row in rows if row[1 + said] == "—"]
        where = "Device" if on_gpu else "Host"
        sentence = (f"{where} memory peak of {case}: {text} (the median over each framework's rounds)" if text
                    else f"At {case}: no {where.lower()} memory peak recorded, see the table")
        if text and unmeasured:
            sentence += f"; {', '.join(unmeasured)}: no {where.lower()} peak recorded"
        if len(kept) < 2:
            sentence += "; only one framework measured it: nothing to compare"
        sentence += "".join(f"; {name} not compared: {why}" for name, why in refused.items())
        used = [r for recs in series.values() for r in recs]
        out.append(Finding(f"memory-{group}", topic, sentence + ".", "measured", run_ids(used), (case,),
                           ("framework", "host peak", "device peak", "rounds"), tuple(rows)))
    return out


# ------------------------------------------------------------- agreement ---

def number(value: object) -> float:
    """A check's figure as a float; 0.0 where it is missing or not a number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def is_gradient_agreement(record: Record) -> bool:
    """autograd's cross-implementation check: backend `all`, case `agreement_grad_*` (before schema 2's
    harness, backend `parity`, case `parity_grad_*`); both carry max_abs_diff_df, tolerance and passed."""
    return record.case.startswith("agreement_grad_") or record.backend == "parity"


def agreed(checks: Mapping[str, Any]) -> bool:
    """The check's verdict: `passed` today, `agree` in scipy's records before the shared agreement check."""
    return checks.get("passed", checks.get("agree")) is True


def gradient_agreement(records: Sequence[Record]) -> Finding | None:
    """The gradients' agreement across implementations, from the group's latest cross-implementation check
    (`is_gradient_agreement`); None where its records hold none."""
    parity = [r for r in records if is_gradient_agreement(r)]
    if not parity:
        return None
    record = parity[-1]
    df, tol = record.checks.get("max_abs_diff_df"), record.checks.get("tolerance")
    compared = record.params.get("compared")  # the implementations the check compared (schema 2)
    implementations = (len(compared) if isinstance(compared, list)
                       else len({label(r) for r in records if r.median_s}))
    agree = agreed(record.checks)
    measured = (f"max |Δf′| = {df:.2g} (tolerance {tol:g}, {record.dtype or 'float32'})"
                if isinstance(df, (int, float)) and isinstance(tol, (int, float)) else "see the checks")
    sentence = f"Gradients {'agree' if agree else 'DISAGREE'} across {implementations} implementations: {measured}."
    return Finding("agreement-gradients", "gradient agreement", sentence, "measured" if agree else "found",
                   run_ids(parity), case_names(parity), ("check", "value"),
                   tuple((k, str(v)) for k, v in record.checks.items()))


def optimizer_agreement(records: Sequence[Record]) -> Finding | None:
    """The optimizers' agreement on the fit, from the group's latest `agreement_*` check; None where its records
    hold none."""
    agreement = [r for r in records if r.case.startswith("agreement_")]
    if not agreement:
        return None
    record = agreement[-1]
    checks = record.checks
    diff, limit = checks.get("max_rel_diff"), checks.get("tolerance", checks.get("limit"))
    agree = agreed(checks)
    # The pair that differs most: the offset's when it is the larger difference, else the slope's.
    offset_larger = number(checks.get("max_rel_diff_offset")) > number(checks.get("max_rel_diff_slope"))
    pair = checks.get("offset_pair") if offset_larger else checks.get("slope_pair") or checks.get("offset_pair")
    measured = (f"largest relative difference of the fitted parameters {diff:.2g} ({pair}; limit {limit:g})"
                if isinstance(diff, (int, float)) and isinstance(limit, (int, float)) else "see the checks")
    sentence = (f"The optimizers (SciPy BFGS, JAX BFGS, PyTorch L-BFGS) "
                f"{'reach the same fit' if agree else 'DISAGREE'}: {measured}.")
    return Finding("agreement-optimizers", "optimizer agreement", sentence, "measured" if agree else "found",
                   run_ids(agreement), case_names(agreement), ("check", "value"),
                   tuple((k, str(v)) for k, v in checks.items()))


def agreement_findings(chosen: Mapping[str, Sequence[Record]]) -> list[Finding]:
    """Each group's agreement between frameworks, as the group declares it (`GroupFindings.agreement`), in the
    groups' order; one line where none of them has its agreement records."""
    declared = [(group, found.agreement) for group in BENCHMARK_GROUPS
                if (found := group_findings(group)) is not None and found.agreement is not None]
    out = [finding for group, agreement in declared if (finding := agreement(chosen.get(group, ()))) is not None]
    if not out:
        commands = ", ".join(f"{group} all" for group, _ in declared)
        out.append(Finding("agreement", "agreement between frameworks", "No parity or agreement records "
                           f"({commands}): agreement between frameworks is not judged.", "missing", (), ()))
    return out


# ----------------------------------------------------------------- noise ---

def noise_findings(chosen: Mapping[str, Sequence[Record]]) -> list[Finding]:
    records = [r for rs in chosen.values() for r in rs if r.median_s]
    if not records:
        return []
    noisy = sum(1 for r in records if r.noisy)
    spread = sorted(spreads(records), key=lambda s: s.spread_pct)
    with_rounds = [s for s in spread if len(s.round_medians) > 1]
    rounds = sorted({len(round_medians(recs)) for recs in figures(records).values()})
    sentence = (f"{noisy} of {len(records)} timed records are noisy (IQR above {NOISY_IQR_RATIO:.0%} of the median)")
    rows: tuple[tuple[str, ...], ...] = ()
    if with_rounds:
        typical = statistics.median(s.spread_pct for s in with_rounds)
        widest = with_rounds[-1]
        sentence += (f"; between rounds a figure's median moves by {typical:.0f} % typically and up to "
                     f"{widest.spread_pct:.0f} % ({widest.case}, {widest.column}): a difference smaller than that "
                     "is not claimed unless the rounds' confidence interval excludes it")
        rows = tuple((s.case, s.column, f"{len(s.round_medians)}", format_seconds(s.median_s), f"{s.spread_pct:.0f} %")
                     for s in reversed(with_rounds))
    if rounds and rounds[0] < MIN_ROUNDS:
        sentence += (f"; some figures have only {rounds[0]} round(s): they are shown, never judged "
                     f"({MIN_ROUNDS} needed)")
    return [Finding("noise", "where the figures are noisy", sentence + ".", "measured", run_ids(records), (),
                    ("case", "framework", "rounds", "median", "round spread"), rows)]


# ------------------------------------------------------------------ all ---

def all_findings(chosen: Mapping[str, Sequence[Record]], target: float | None = None,
                 margin_pct: float = DEFAULT_MARGIN_PCT, failed: Sequence[FailedRound] = (),
                 run_id: str | None = None) -> list[Finding]:
    """Every finding the records allow, in the page's order: each group's own (its `findings` module), then
    memory, agreement and noise across groups; a missing group is said to be missing, and a group whose records
    yield no finding says so in one line. A round of run `run_id` that failed twice (`failed`) is said first among
    its group's findings."""
    out: list[Finding] = []
    for group in BENCHMARK_GROUPS:
        out += [failed_round(group, run_id, why) for failed_group, _, why in failed if failed_group == group]
        records = chosen.get(group)
        if not records:
            out.append(missing(group))
            continue
        declared = group_findings(group)
        if declared is None:
            out.append(Finding(f"no-findings-{group}", group, f"The {group} group declares no findings: its records "
                               "are not judged.", "missing", run_ids(records), case_names(records)))
            continue
        out += declared.findings(records, target, margin_pct) or [missing_figures(group, records)]
    out += memory_findings(chosen)
    out += agreement_findings(chosen)
    out += noise_findings(chosen)
    return out


# A group's findings from its records: (records, target, margin_pct) -> findings. `target`: the test accuracy a
# training run must reach, for a group that trains (None: the group's own rule); `margin_pct`: the margin ±m % every
# comparison is decided at (verdict/decide.py).
FindingsOf = Callable[[Sequence[Record], float | None, float], list[Finding]]
# Per scale name, the commands `verdict --scale` runs of a group: (command, options, one round's wall time in
# seconds on the reference machine).
VerdictSteps = Mapping[str, tuple[tuple[str, tuple[str, ...], float], ...]]


@dataclass(frozen=True)
class GroupFindings:
    """What a group declares for the verdict (its `GroupEntry.findings` in jax_benchmarks.groups names where): its
    topic, its findings from its records, the commands `verdict --scale` runs of it (jax_benchmarks.verdict.scale)
    and, where it has them, the names its backends go by on the page, the case whose memory is compared between
    frameworks, its agreement check between frameworks, one round's seconds on one GPU per command of its standard
    steps (`gpu_round_s`: as measured on an H200, else estimated, saying how: docs/gpu.md) and, per command the `gpu`
    scale leaves out of standard's, why (`gpu_left_out`). The verdict reads these and names no group."""

    topic: str
    findings: FindingsOf
    verdict_steps: VerdictSteps
    backend_names: Mapping[str, str] = field(default_factory=dict)
    memory_case: MemoryCase | None = None
    agreement: Callable[[Sequence[Record]], Finding | None] | None = None
    gpu_round_s: Mapping[str, float] = field(default_factory=dict)
    gpu_left_out: Mapping[str, str] = field(default_factory=dict)


class UndeclaredFindings(LookupError):
    """A group's entry names findings that are not there: a misnamed module, or no `GroupFindings` under the name."""


def group_findings(group: str) -> GroupFindings | None:
    """The findings the group declares where its entry in jax_benchmarks.groups says ("module:NAME", imported when
    asked for: the module imports this one); None for a group whose entry declares none. A declaration that is not
    there is an error, never "no findings"."""
    where = GROUPS[group].findings
    if where is None:
        return None
    module_name, _, name = where.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not f"{module_name}.".startswith(f"{exc.name}."):  # another module: an error in it
            raise
        raise UndeclaredFindings(f"the {group} group's findings are declared in {where}, but there is no module "
                                 f"{module_name}") from None
    declared = getattr(module, name, None)
    if not isinstance(declared, GroupFindings):
        raise UndeclaredFindings(f"the {group} group's findings are declared in {where}, but {module_name} has no "
                                 f"GroupFindings called {name!r}")
    return declared


def topic_of(group: str) -> str:
    declared = group_findings(group)
    return declared.topic if declared is not None else group


def missing_figures(group: str, records: Sequence[Record]) -> Finding:
    return Finding(f"missing-figures-{group}", topic_of(group),
                   f"The {group} records hold none of the figures {topic_of(group)} is judged from.",
                   "missing", run_ids(records), case_names(records))
