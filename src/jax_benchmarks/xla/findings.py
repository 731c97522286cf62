"""The xla group's findings for `verdict`: per kind (matmul, inverse), the fastest framework at the largest size
measured, by how much, and whether the gap is the BLAS library's or the framework's. Pure functions of records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT
from jax_benchmarks.verdict.findings import (RATIO_HEADER, Contrast, Finding, contrasts, figures, label, ratio_rows,
                                             run_ids, size_of, status_of, typical_s)

TOPIC = "dense linear algebra"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine).
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick", "-k", "matmul"), 6.4),),  # 5.9-7.4 s a round, quiet, 2026-11-26
    "standard": (("all", ("--matrix-size", "1000"), 13.8),),  # 13.4-14.4 s a round, quiet, 2026-11-26
    "full": (("all", ("--matrix-size", "2000"), 40.0),),
}


def findings(records: Sequence[Record], target: float | None,
             margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    return linear_algebra(records, margin_pct)


def matmul_library(backend: str, device: str, env: Mapping[str, Scalar]) -> str | None:
    """The library that multiplies the matrices, where the records say it; None where they do not."""
    if device != "cpu":
        return "cuBLAS" if device.startswith("cuda") or device.startswith("gpu") else None
    if backend == "jax":
        return "XLA's own CPU kernels"
    if backend == "numpy" and env.get("blas"):
        return str(env["blas"]).split(";")[0].strip()
    return None  # PyTorch's CPU wheels link their BLAS statically: threadpoolctl (env.blas) does not see it


def library_clause(fast: Contrast) -> str:
    env_a, env_b = fast.a_records[-1].env, fast.b_records[-1].env
    ra, rb = fast.a_records[-1], fast.b_records[-1]
    lib_a, lib_b = matmul_library(ra.backend, ra.device, env_a), matmul_library(rb.backend, rb.device, env_b)
    if lib_a is None or lib_b is None:
        unknown = ra.backend if lib_a is None else rb.backend
        return f"whether it is the BLAS library or the framework cannot be told: {unknown}'s library is not recorded"
    if lib_a == lib_b:
        return f"both call {lib_a}, so the gap is the framework, not the BLAS library"
    return f"they use different libraries ({ra.backend}: {lib_a}; {rb.backend}: {lib_b}), so the gap is the libraries' kernels as much as the framework"


def linear_algebra(records: Sequence[Record], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    """Per kind (matmul, inverse): the fastest framework at the largest size measured, and by how much."""
    out = []
    timed = figures(records)
    for kind in ("matmul", "inverse"):
        chosen = {key: recs for key, recs in timed.items() if key[1].startswith(kind + "_")}
        if not chosen:
            continue
        largest = max(size_of(key[1]) for key in chosen)
        chosen = {key: recs for key, recs in chosen.items() if size_of(key[1]) == largest}
        for case in dict.fromkeys(key[1] for key in chosen):
            series = sorted((recs for key, recs in chosen.items() if key[1] == case), key=typical_s)
            rows = ratio_rows(series)
            evidence = tuple(r for recs in series for r in recs)
            topic = f"dense linear algebra: {kind}"
            if len(series) < 2:
                out.append(Finding(f"linear-algebra-{case}", topic,
                                   f"Only {label(series[0][-1])} was measured at {case}: nothing to compare.",
                                   "measured", run_ids(evidence), (case,), records=evidence))
                continue
            fastest = series[0]
            judged = contrasts([(label(fastest[-1]), fastest, label(other[-1]), other) for other in series[1:]],
                               margin_pct)
            runner_up = judged[0]
            sentence = f"At {case}: "
            if runner_up.judged == "faster":
                sentence += f"{runner_up.a} is fastest, {runner_up.how_much} than {runner_up.b}, the next ({runner_up.uncertainty})"
            else:
                sentence += f"no framework is clearly fastest: {runner_up.phrase()}"
            if kind == "matmul" and runner_up.judged == "faster":  # a gap to explain
                sentence += f"; {library_clause(runner_up)}"
            others = [c for c in judged[1:] if c.judged == "faster"]
            if others:
                sentence += f"; {runner_up.a} is " + ", ".join(f"{c.how_much} than {c.b}" for c in others)
            out.append(Finding(
                f"linear-algebra-{case}", topic, sentence + ".", status_of(runner_up), run_ids(evidence), (case,),
                ("framework", "median of round medians", RATIO_HEADER), rows, evidence, (runner_up.decision,)))
    return out


from jax_benchmarks.verdict.findings import GroupFindings, MemoryCase

# What the verdict reads of this group (its entry in jax_benchmarks.groups names this). One round on a GPU: measured
# on an NVIDIA H200, 2026-11-28 (`verdict --scale gpu`: 17, 17, 16 s from a round's first record to the next's, the
# process's start in); an H100 is the same Hopper chip with less and slower memory, and the round is mostly the
# process's start, the compiles and NumPy's CPU cases (the 1000² products take microseconds): about as long there.
DECLARED = GroupFindings(TOPIC, findings, VERDICT_STEPS, memory_case=MemoryCase("matmul", "the xla matrix product", 1),
                         gpu_round_s={"all": 17.0})
