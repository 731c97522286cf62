"""The mnist group's findings for `verdict`: training speed per step between the frameworks, the best test
accuracy and the time to reach `target`. Pure functions of records."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import (TARGET_ACCURACY, Finding, Status, case_names, contrasts, images_per_s,
                                             label, run_ids, size_of, spread_text, status_of, typical_s)

TOPIC = "CNN training"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine).
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick", "-k", "train_step,train_epoch,validation"), 14.0),),
    "standard": (("all", ("--epochs", "1", "--data-source", "embedded", "--comet", "off"), 25.0),),
    "full": (("all", ("--epochs", "3", "--comet", "off"), 600.0),),
}


def findings(records: Sequence[Record], target: float) -> list[Finding]:
    return training_findings(records, target)


def step_records(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Per framework (label), the train-step records of one case: the one the most frameworks measured, then the
    largest (the case name holds the batch and the image shape: one name, the same CNN on the same batches)."""
    by_case: dict[str, dict[str, list[Record]]] = {}
    for record in records:
        if record.case.startswith("train_step_") and record.median_s:
            by_case.setdefault(record.case, {}).setdefault(label(record), []).append(record)
    if not by_case:
        return {}
    return by_case[max(by_case, key=lambda case: (len(by_case[case]), size_of(case)))]


def time_to_accuracy(records: Sequence[Record], target: float = TARGET_ACCURACY) -> float | None:
    """Training seconds until the test accuracy first reaches `target` (the median over the rounds that
    reach it; None when none does). Per round: the sum of the epoch times up to that epoch's validation."""
    per_round: dict[int | None, tuple[dict[int, float], dict[int, float]]] = {}
    for record in records:
        epoch = record.params.get("epoch")
        if not isinstance(epoch, int) or record.median_s is None:
            continue
        epochs, accuracy = per_round.setdefault(record.round_index, ({}, {}))
        if record.case.startswith("train_epoch_"):
            epochs[epoch] = record.median_s
        elif record.case.startswith("validation_") and isinstance(record.metrics.get("accuracy"), (int, float)):
            accuracy[epoch] = float(record.metrics["accuracy"])  # type: ignore[arg-type]
    reached = []
    for epochs, accuracy in per_round.values():
        hit = next((e for e in sorted(accuracy) if accuracy[e] >= target), None)
        if hit is not None and all(e in epochs for e in range(1, hit + 1)):
            reached.append(sum(epochs[e] for e in range(1, hit + 1)))
    return statistics.median(reached) if reached else None


def best_accuracy(records: Sequence[Record]) -> float | None:
    values = [float(r.metrics["accuracy"]) for r in records  # type: ignore[arg-type]
              if r.case.startswith("validation_") and isinstance(r.metrics.get("accuracy"), (int, float))]
    return max(values) if values else None


def training_findings(records: Sequence[Record], target: float = TARGET_ACCURACY) -> list[Finding]:
    steps = step_records(records)
    if not steps:
        return [Finding("training", TOPIC, "The mnist records hold no train-step figure: "
                        "training speed is not judged.", "missing", run_ids(records), ())]
    series = sorted(steps.values(), key=typical_s)
    rows = []
    by_framework: dict[str, list[Record]] = {}
    for record in records:
        by_framework.setdefault(label(record), []).append(record)
    for recs in series:
        name = label(recs[-1])
        mine = by_framework.get(name, [])
        reach = time_to_accuracy(mine, target)
        best = best_accuracy(mine)
        ips = images_per_s(recs)
        rows.append((name, spread_text(recs), "—" if ips is None else f"{ips:,.0f}",
                     "—" if best is None else f"{best:.1%}",
                     "not reached" if reach is None else format_seconds(reach)))
    evidence = tuple(r for recs in series for r in recs)
    cases = case_names(evidence)
    if len(series) < 2:
        sentence = f"Only {label(series[0][-1])} trained: {rows[0][2]} images/s per train step."
        status: Status = "measured"
    else:
        judged = contrasts([(label(series[0][-1]), series[0], label(s[-1]), s) for s in series[1:]])[0]
        model = f"the same CNN and batch ({series[0][-1].case})"
        ips_text = " vs ".join(f"{row[2]}" for row in rows[:2])
        if judged.judged == "faster":
            sentence = (f"With {model}, {judged.a} trains {judged.speedup:.2f}× faster per step than {judged.b} "
                        f"({ips_text} images/s; {judged.uncertainty})")
        else:
            sentence = f"With {model}, per train step: {judged.phrase()} ({ips_text} images/s)"
        status = status_of(judged)
    reached = [row for row in rows if row[4] != "not reached"]
    if reached:
        sentence += "; time to " + f"{target:.0%} test accuracy: " + ", ".join(f"{r[0]} {r[4]}" for r in reached)
    unreached = [row for row in rows if row[4] == "not reached"]
    if unreached:
        sentence += (f"; {target:.0%} test accuracy not reached by " +
                     ", ".join(f"{r[0]} (best {r[3]})" for r in unreached))
    return [Finding("training", "CNN training speed and time to accuracy", sentence + ".", status,
                    run_ids(records), tuple(dict.fromkeys((*cases, *case_names(
                        r for r in records if r.case.startswith(("train_epoch_", "validation_")))))),
                    ("framework", "train step", "images/s", "best test accuracy", f"time to {target:.0%}"),
                    tuple(rows), evidence)]
