"""The verdict's summary chart: per answer, how many times faster JAX is, with the interval every outcome rests on
(`DECISION_CONFIDENCE`, verdict/decide.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from jax_benchmarks.report.page import Chart
from jax_benchmarks.verdict.answer import Answer
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, WIDEST_INTERVAL

COLOURS = {"worth it": "#1a7f37", "not worth it": "#0969da", "undecided": "#9a6700"}
NOT_JUDGED_COLOUR = "#8c959f"


@dataclass(frozen=True)
class Point:
    """One answer as the chart draws it: a filled dot and its interval where it was judged; a hollow grey dot, no
    interval and "not judged" in its label where it was not (a busy machine, too few rounds, unlike records), so that
    the chart never shows as judged what the text says was not."""

    label: str
    speedup: float
    interval: tuple[float, float] | None
    judged: bool
    colour: str


def points(found: Sequence[Answer]) -> list[Point]:
    """The answers the chart draws (a finite, positive speed-up), in order."""
    out = []
    for answer in found:
        contrast = answer.contrast
        if not (math.isfinite(contrast.speedup) and contrast.speedup > 0):
            continue
        decision = contrast.decision
        judged = not decision.refused and decision.detectable_pct is not None
        label = f"{answer.topic}\n{contrast.a} vs {contrast.b}"
        if not judged:
            why = "busy machine" if contrast.comparison.busy is not None else (
                "unlike records" if decision.refused else "too few rounds")
            label += f" · not judged ({why})"
        out.append(Point(label, contrast.speedup, contrast.interval if judged else None, judged,
                         COLOURS[answer.word] if judged else NOT_JUDGED_COLOUR))
    return out


def ticks(shown: Sequence[Point]) -> list[float]:
    """1, 2, 5, 10, ... and their inverses, over the range the speed-ups and intervals drawn span."""
    values = [point.speedup for point in shown]
    values += [end for point in shown if point.interval is not None for end in point.interval]
    low, high = min(values + [1.0]), max(values + [1.0])
    steps = [m * 10.0**e for e in range(-4, 5) for m in (1, 2, 5)]
    return [s for s in steps if low / 2 <= s <= high * 2]


def summary_chart(found: Sequence[Answer]) -> Chart | None:
    """One row per answer on a log axis: a dot at the speed-up, a bar for its interval, a line at 1×
    (no difference). An answer without an interval gets its dot only (marked undecided); None without any."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from jax_benchmarks.cli.plots import new_figure, png_bytes

    shown = points(found)
    if not shown:
        return None
    fig = new_figure(7.5, max(2.6, 0.45 * len(shown) + 1.3))
    ax = fig.add_subplot()
    for row, point in enumerate(reversed(shown)):
        if point.interval is not None:
            ax.plot(point.interval, (row, row), color=point.colour, linewidth=3, alpha=0.6)
        ax.plot(point.speedup, row, "o", color=point.colour, markerfacecolor=point.colour if point.judged else "none")
    ax.axvline(1.0, color="#59636e", linewidth=1, linestyle="--")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks(shown)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"×{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(shown)), [point.label for point in reversed(shown)], fontsize=8)
    ax.set_xlabel("times faster with JAX (log scale; right of the dashed line: JAX faster)")
    ax.set_title(f"JAX against the fastest other framework, {DECISION_CONFIDENCE * 100:g} % CI (wider than "
                 f"{WIDEST_INTERVAL:g}×: undecided; hollow grey: not judged)", fontsize=9)
    fig.tight_layout()
    return Chart(f"how many times faster JAX is, per comparison, with its {DECISION_CONFIDENCE * 100:g} % confidence "
                 "interval; a hollow grey dot: not judged", png_bytes(fig))
