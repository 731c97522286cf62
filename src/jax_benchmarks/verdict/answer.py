"""The verdict's plain answer: per topic, is JAX (JAX or Flax) worth it against the fastest other framework?

Built from the findings' records (`Finding.records`: the timed records behind each finding), with the
regression gate's own test (`jax_benchmarks.report.compare`): for a finding's largest case, JAX's fastest
label against the fastest other label (NumPy, PyTorch, the project's own engine), the ratio of the rounds'
fastest samples with its confidence interval, the topics judged as one family (Benjamini–Hochberg), with the
outcomes of `verdict/decide.py`:
* worth it: JAX is faster, by more than the margin or by an uncertain amount (the interval excludes 1);
* not worth it: the other is faster, or the two are the same within ±m % (an equivalence test);
* undecided: too few rounds, a busy machine, an interval wider than `WIDEST_INTERVAL`, or neither test
  resolved (the sentence gives the rounds and the smallest difference they detect).
A finding without both JAX and another framework (jit against eager within one framework, memory,
agreement) is not a question this answer asks, nor one whose JAX question is another finding's
(`Finding.asks_jax`: the engine's CNN step, whose Flax and PyTorch steps are mnist's train step again).

Pure functions of findings: no I/O, no printing, no timing.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jax_benchmarks.frameworks.descriptors import jax_backends
from jax_benchmarks.report.compare import round_medians
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, DEFAULT_MARGIN_PCT, WIDEST_INTERVAL, undecided_text
from jax_benchmarks.verdict.findings import Contrast, Finding, backend_name, contrasts

Word = Literal["worth it", "not worth it", "undecided"]
# The backends whose framework counts as "JAX" (their descriptors say so), for the groups' findings that ask it.
JAX_BACKENDS = jax_backends()
SCALE_BANNERS = {
    "quick": "quick scale: a smoke test, not a result",
    "standard": "standard scale: small sizes, three rounds a figure",
    "full": "full scale: the groups' default sizes",
}


@dataclass(frozen=True)
class Answer:
    """JAX's fastest figure against the fastest other framework's, on one finding's largest case."""

    key: str  # the finding's anchor
    topic: str
    case: str
    contrast: Contrast  # a = JAX's label, b = the other's

    @property
    def word(self) -> Word:
        judged = self.contrast.judged
        return "undecided" if judged == "undecided" else "worth it" if judged == "faster" else "not worth it"

    @property
    def reason(self) -> str:
        """Why, in a few words: '×7.6', 'numpy 1.3× faster', 'the same within ±5 %', 'undecided after 3 rounds…'."""
        interval, speedup = self.contrast.interval, self.contrast.speedup
        if self.contrast.judged == "undecided":
            # A comparison taken on a busy machine has an interval from its rounds but was never judged: its reason
            # is that, as its finding's row says, not the interval's width.
            judged = not (self.contrast.decision.busy or self.contrast.decision.refused)
            if judged and interval is not None and interval[1] / interval[0] > WIDEST_INTERVAL:
                return f"{DECISION_CONFIDENCE * 100:g} % CI {interval[0]:.2g}–{interval[1]:.2g}×, too wide to tell"
            return undecided_text(self.contrast.decision)
        if self.contrast.judged == "same":
            named = f", JAX {self.contrast.difference_text}" if self.contrast.decision.differs else ""
            return self.contrast.same_text + named
        if not self.contrast.decision.beyond_margin:
            return f"JAX {self.contrast.difference_text}"
        if self.contrast.judged == "faster":
            return f"×{speedup:.1f}"
        return f"{self.contrast.b} {1 / speedup:.1f}× faster"


def label(record: Record) -> str:
    return backend_name(record) + (f" {record.variant}" if record.variant else "")


def size_of(case: str) -> int:
    """The number of elements a case name gives (`matmul_1000x1000_float64` -> 1,000,000); 0 if none."""
    sizes = [part for part in case.split("_") if part.replace("x", "").isdigit() and part[:1].isdigit()]
    return math.prod(int(n) for n in sizes[0].split("x")) if sizes else 0


def fastest(records: Sequence[Record]) -> tuple[str, list[Record]] | None:
    """The label whose median of round medians is lowest, with its records."""
    by_label: dict[str, list[Record]] = {}
    for record in records:
        if record.median_s:
            by_label.setdefault(label(record), []).append(record)
    if not by_label:
        return None
    best = min(by_label, key=lambda name: statistics.median(round_medians(by_label[name])))
    return best, by_label[best]


def pairing(finding: Finding) -> tuple[str, str, list[Record], str, list[Record]] | None:
    """(case, JAX label, its records, other label, its records) on the finding's largest case with both; None
    where there is none or the finding does not ask it (`Finding.asks_jax`)."""
    if not finding.asks_jax:
        return None
    cases = sorted({r.case for r in finding.records if r.median_s}, key=size_of, reverse=True)
    jax_like = jax_backends()  # the backends whose framework's descriptor counts as "JAX"
    for case in cases:
        on_case = [r for r in finding.records if r.case == case]
        jax = fastest([r for r in on_case if r.backend in jax_like])
        other = fastest([r for r in on_case if r.backend not in jax_like])
        if jax is not None and other is not None:
            return case, jax[0], jax[1], other[0], other[1]
    return None


def answers(findings: Sequence[Finding], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Answer]:
    """One answer per finding that sets JAX against another framework, judged together at ±`margin_pct` %
    (findings.contrasts)."""
    paired = [(finding, pairing(finding)) for finding in findings]
    made = [(finding, found) for finding, found in paired if found is not None]
    judged = contrasts([(jax_label, jax_records, other_label, other_records)
                        for _, (_, jax_label, jax_records, other_label, other_records) in made], margin_pct)
    # Every pair is of timed records (`fastest` keeps no other), so `contrasts` keeps each one, in order.
    return [Answer(finding.key, finding.topic, found[0], contrast)
            for (finding, found), contrast in zip(made, judged, strict=True)]


def _listed(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def how_judged(margin_pct: float) -> str:
    """The four outcomes and the margin, in one sentence (the page's first lines and its legend)."""
    margin = f"±{margin_pct:g} %"
    return (f"Margin {margin} (--margin). Each comparison ends as one of: faster by more than {margin_pct:g} % (the "
            f"ratio's {DECISION_CONFIDENCE * 100:g} % confidence interval lies beyond the margin), the same within {margin} "
            "(the interval lies inside it; a difference it shows is named beside it), faster by a–b % (the interval "
            "excludes 1 and crosses the margin), or undecided (the interval holds 1 and crosses the margin; with the "
            "rounds a side that would decide it). The first three are decided.")


def plain_answer(found: Sequence[Answer], margin_pct: float = DEFAULT_MARGIN_PCT) -> list[str]:
    """Three to five lines: where JAX is worth it, where not, what is undecided; then how it was judged."""
    if not found:
        return ["No answer yet: the records hold no figure of JAX (or Flax) beside another framework's. "
                "Run `verdict` with JAX installed."]
    lines: list[str] = []
    for word, first, later in (("worth it", "On this machine JAX is worth it for", "JAX is worth it for"),
                               ("not worth it", "On this machine JAX is not worth it for", "Not for"),
                               ("undecided", "On this machine it is undecided for", "Undecided for")):
        topics = [f"{a.topic} ({a.reason})" for a in found if a.word == word]
        if topics:
            lines.append(f"{later if lines else first} {_listed(topics)}.")
    lines.append("Each answer sets JAX's fastest figure against the fastest other framework's on one case, at the "
                 f"margin ±{margin_pct:g} %.")
    return lines
