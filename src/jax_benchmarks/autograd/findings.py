"""The autograd group's findings for `verdict`: the fastest gradient implementation at the largest size, against
the next; and the mnist CNN's train step in the project's own engine (plain NumPy) against PyTorch eager and
Flax (jit). Pure functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT
from jax_benchmarks.verdict.findings import (ENGINE, Finding, contrasts, fastest_findings, figures, images_per_s, label,
                                             run_ids, size_of, spread_text, status_of)

TOPIC = "gradients"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine). The gradient cases' 7 and 8 s were measured on a quiet
# machine (2026-11-24); the mnist CNN's train step in three frameworks came later, and a round with it took
# 2.5–2.9× (quick) and 3.1× (standard) a round of the gradient cases alone, measured back to back on 2026-11-25
# with load 8–13 on the 2 cores: those ratios scale the quiet figures (an estimate, not a quiet measurement).
# Flax's convolutions then moved to XLA's own kernels (`--xla-cpu-conv xla`, the default since 2026-11-26): its
# step got 1.9–7.4× faster, but a round's wall time against YNNPACK's was 0.77× and 1.12× (quick), 0.86× and
# 1.03× (standard) in two back-to-back pairs under load 1.9–5.8, no change beyond the noise: the figures stay.
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick",), 20.4),),  # 19.6-20.9 s a round, quiet, 2026-11-26
    "standard": (("all", (), 30.4),),  # 29.1-32.8 s a round, quiet, 2026-11-26
    "full": (("all", (), 31.0),),
}

# The mnist CNN's train step (autograd/cnn_cases.py): the engine is the `numpy` backend, PyTorch eager the
# `pytorch` one, Flax (jitted, mnist's flax.nnx model) the `jax` one.
CNN_STEP = "cnn_train_step_"
CNN_TOPIC = "the CNN train step beside the engine"
CNN_NAMES = {"numpy": ENGINE, "pytorch": "PyTorch eager", "jax": "Flax (jit)"}
# Every label of the verdict names the `numpy` backend as what it is (verdict.findings.backend_name).
BACKEND_NAMES = {"numpy": ENGINE}


def cnn_findings(records: Sequence[Record], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    """The same CNN as mnist's in plain NumPy (the engine) against PyTorch eager, with Flax's jitted step beside
    them, at the largest batch measured."""
    timed = {key: recs for key, recs in figures(records).items() if key[1].startswith(CNN_STEP)}
    if not timed:
        return []
    largest = max(size_of(key[1]) for key in timed)
    case = next(key[1] for key in timed if size_of(key[1]) == largest)
    series = {recs[-1].backend: recs for key, recs in timed.items() if key[1] == case}
    evidence = tuple(r for recs in series.values() for r in recs)
    rows = tuple((label(recs[-1]), spread_text(recs), speed(recs)) for recs in series.values())
    headers = ("implementation", "median of round medians", "images/s")
    # Its own topic: the plain answer names it apart from the gradients of f (verdict/answer.py, per topic).
    key, topic = f"autograd-{case}", CNN_TOPIC
    engine = series.get("numpy")
    others = [backend for backend in ("pytorch", "jax") if backend in series]
    if engine is None or not others:
        only = ", ".join(label(recs[-1]) for recs in series.values())
        return [Finding(key, topic, f"At {case}: only {only} was measured: the same CNN in plain NumPy is not "
                        "compared.", "measured", run_ids(evidence), (case,), headers, rows, evidence)]
    judged = contrasts([(CNN_NAMES[other], series[other], CNN_NAMES["numpy"], engine) for other in others], margin_pct)
    against = " and ".join(f"{CNN_NAMES[other]}'s {speed(series[other])}" for other in others)
    sentence = (f"At {case}, the same CNN as mnist's in plain NumPy (the project's autodiff engine) trains at "
                f"{speed(engine)} images/s against {against}: {'; '.join(c.phrase() for c in judged)}.")
    # The finding's status is the comparison with PyTorch eager when there is one (the engine's question is what
    # a framework's machinery buys over plain NumPy on the same eager work), else with Flax. Its Flax and PyTorch
    # steps are mnist's train step (the same model, batch and dtype), whose finding asks whether JAX is worth it
    # there: asked here too, the page would answer and count that one question twice.
    return [Finding(key, topic, sentence, status_of(judged[0]), run_ids(evidence), (case,), headers, rows, evidence,
                    (judged[0].decision,), asks_jax=False)]


def speed(records: Sequence[Record]) -> str:
    return f"{ips:,.0f}" if (ips := images_per_s(records)) else "—"


def findings(records: Sequence[Record], target: float | None,
             margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    return [*fastest_findings("autograd", records, ("grad_",), margin_pct), *cnn_findings(records, margin_pct)]


from jax_benchmarks.verdict.findings import GroupFindings, gradient_agreement

# One round on a GPU: measured on an NVIDIA H200, 2026-11-28 (`verdict --scale gpu`: 39, 44, 41 s from a round's
# first record to the next's, the process's start in; JAX's CNN step compiled in 8-9 s of each); an H100 is the same
# Hopper chip with less and slower memory, and the round is mostly start-up, compiles and the engine's CPU work: about
# as long there.
GPU_LEFT_OUT = {
    "all": "41 s a round on the H200, and its comparisons cannot be made there: the gradients and the CNN step set "
           "JAX and PyTorch on the GPU against the project's engine and NumPy, which stay on the CPU (the H200's "
           "page: \"not compared: they differ in device\"); only the gradients' agreement was judged",
}

# What the verdict reads of this group (its entry in jax_benchmarks.groups names this).
DECLARED = GroupFindings(TOPIC, findings, VERDICT_STEPS, backend_names=BACKEND_NAMES, agreement=gradient_agreement,
                         gpu_round_s={"all": 41.0}, gpu_left_out=GPU_LEFT_OUT)
