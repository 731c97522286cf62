"""The autograd group's findings for `verdict`: the fastest gradient implementation at the largest size, against
the next; and the mnist CNN's train step in the project's own engine (plain NumPy) against PyTorch eager. Pure
functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import (Finding, contrasts, fastest_findings, figures, images_per_s, label,
                                             run_ids, size_of, spread_text, status_of, topic_of)

TOPIC = "gradients"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine).
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick",), 7.0),),
    "standard": (("all", (), 8.0),),
    "full": (("all", (), 10.0),),
}

# The mnist CNN's train step (autograd/cnn_cases.py): the engine is the `numpy` backend, PyTorch eager the other.
CNN_STEP = "cnn_train_step_"


def cnn_findings(records: Sequence[Record]) -> list[Finding]:
    """The same CNN as mnist's in plain NumPy (the engine) against PyTorch eager, at the largest batch measured."""
    timed = {key: recs for key, recs in figures(records).items() if key[1].startswith(CNN_STEP)}
    if not timed:
        return []
    largest = max(size_of(key[1]) for key in timed)
    case = next(key[1] for key in timed if size_of(key[1]) == largest)
    series = {recs[-1].backend: recs for key, recs in timed.items() if key[1] == case}
    evidence = tuple(r for recs in series.values() for r in recs)
    rows = tuple((label(recs[-1]), spread_text(recs), f"{ips:,.0f}" if (ips := images_per_s(recs)) else "—")
                 for recs in series.values())
    headers = ("implementation", "median of round medians", "images/s")
    key, topic = f"autograd-{case}", topic_of("autograd")
    engine, torch = series.get("numpy"), series.get("pytorch")
    if engine is None or torch is None:
        only = ", ".join(label(recs[-1]) for recs in series.values())
        return [Finding(key, topic, f"At {case}: only {only} was measured: the same CNN in plain NumPy is not "
                        "compared.", "measured", run_ids(evidence), (case,), headers, rows, evidence)]
    [judged] = contrasts([("pytorch eager", torch, "the project's engine", engine)])
    speeds = (f"{ips:,.0f}" if (ips := images_per_s(engine)) else "—",
              f"{ips:,.0f}" if (ips := images_per_s(torch)) else "—")
    sentence = (f"At {case}, the same CNN as mnist's in plain NumPy (the project's autodiff engine) trains at "
                f"{speeds[0]} images/s against PyTorch eager's {speeds[1]}: {judged.phrase()}.")
    return [Finding(key, topic, sentence, status_of(judged), run_ids(evidence), (case,), headers, rows, evidence)]


def findings(records: Sequence[Record], target: float | None) -> list[Finding]:
    return [*fastest_findings("autograd", records, ("grad_",)), *cnn_findings(records)]
