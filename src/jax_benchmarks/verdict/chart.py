"""The verdict's summary chart: per answer, how many times faster JAX is, with its 95 % confidence interval."""

from __future__ import annotations

import math
from collections.abc import Sequence

from jax_benchmarks.report.page import Chart
from jax_benchmarks.verdict.answer import Answer
from jax_benchmarks.verdict.decide import WIDEST_INTERVAL

COLOURS = {"worth it": "#1a7f37", "not worth it": "#0969da", "undecided": "#9a6700"}


def ticks(found: Sequence[Answer]) -> list[float]:
    """1, 2, 5, 10, ... and their inverses, over the range the speed-ups and intervals span."""
    values = [a.contrast.speedup for a in found]
    values += [end for a in found if a.contrast.interval is not None for end in a.contrast.interval]
    low, high = min(values + [1.0]), max(values + [1.0])
    steps = [m * 10.0**e for e in range(-4, 5) for m in (1, 2, 5)]
    return [s for s in steps if low / 2 <= s <= high * 2]


def summary_chart(found: Sequence[Answer]) -> Chart | None:
    """One row per answer on a log axis: a dot at the speed-up, a bar for its interval, a line at 1×
    (no difference). An answer without an interval gets its dot only (marked undecided); None without any."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from jax_benchmarks.cli.plots import new_figure, png_bytes

    shown = [a for a in found if math.isfinite(a.contrast.speedup) and a.contrast.speedup > 0]
    if not shown:
        return None
    fig = new_figure(7.5, max(2.6, 0.45 * len(shown) + 1.3))
    ax = fig.add_subplot()
    for row, answer in enumerate(reversed(shown)):
        colour = COLOURS[answer.word]
        interval = answer.contrast.interval
        if interval is not None:
            ax.plot(interval, (row, row), color=colour, linewidth=3, alpha=0.6)
        ax.plot(answer.contrast.speedup, row, "o", color=colour)
    ax.axvline(1.0, color="#59636e", linewidth=1, linestyle="--")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ticks(shown)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"×{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(range(len(shown)), [f"{a.topic}\n{a.contrast.a} vs {a.contrast.b}" for a in reversed(shown)], fontsize=8)
    ax.set_xlabel("times faster with JAX (log scale; right of the dashed line: JAX faster)")
    ax.set_title(f"JAX against the fastest other framework, 95 % CI (wider than {WIDEST_INTERVAL:g}×: undecided)",
                 fontsize=9)
    fig.tight_layout()
    return Chart("how many times faster JAX is, per comparison, with its 95 % confidence interval", png_bytes(fig))
