"""The bar chart of `jit flax --plot`: epoch time jitted vs not jitted, per model."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jax_benchmarks.cli.plots import new_figure
from jax_benchmarks.store.record import Record
from jax_benchmarks.cli.tables import format_seconds

if TYPE_CHECKING:
    from matplotlib.figure import Figure

COLORS = {"eager": "#d62728", "jit": "#1f77b4"}
LABELS = {"eager": "not jitted", "jit": "jax.jit"}


def epoch_time_chart(records: Sequence[Record]) -> Figure:
    """Typical epoch time (`epoch_figure`, its IQR as error bar) per model and variant, each bar labelled.

    A linear axis, so bar heights compare honestly; on small models the jitted
    bar is a sliver, which is the finding, and its label gives the figure.
    """
    models = list(dict.fromkeys(str(r.params.get("model", r.case)) for r in records))
    variants = [v for v in LABELS if any(r.variant == v for r in records)]
    fig = new_figure(2.5 + 2.5 * len(models), 4.5)
    ax = fig.add_subplot()
    width = 0.7 / max(len(variants), 1)
    for i, variant in enumerate(variants):
        for j, model in enumerate(models):
            figure = epoch_figure(of_model(records, model, variant))
            if figure is None:
                continue
            x, (seconds, iqr) = j + (i - (len(variants) - 1) / 2) * width, figure
            ax.bar(x, seconds, width, yerr=iqr / 2, color=COLORS[variant],
                   label=LABELS[variant] if j == 0 else None, capsize=3)
            ax.annotate(format_seconds(seconds), (x, seconds), ha="center", va="bottom",
                        xytext=(0, 3), textcoords="offset points", fontsize=8)
    for j, model in enumerate(models):
        eager, jit = (epoch_figure(of_model(records, model, variant)) for variant in LABELS)
        if eager is not None and jit is not None:
            ax.annotate(f"×{eager[0] / jit[0]:.1f} with jit", (j, 0.93), xycoords=("data", "axes fraction"),
                        ha="center")
    ax.set_xticks(range(len(models)), [m.upper() for m in models])
    ax.set_xlim(-0.6, len(models) - 0.4)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
    ax.set_ylabel("one training epoch (s, median)")
    device = records[0].device if records else "?"
    ax.set_title(f"jit flax: train step jitted vs not jitted ({device})")
    ax.legend(loc="center right")
    return fig


def of_model(records: Sequence[Record], model: str, variant: str) -> list[Record]:
    return [r for r in records if r.variant == variant and str(r.params.get("model", r.case)) == model]


def epoch_figure(epochs: Sequence[Record]) -> tuple[float, float] | None:
    """One epoch's typical time and its spread, from one mode's epoch records of one run: the median and IQR over
    the epochs, each timed once (a record per epoch, param `epoch`); a record of the older shape, which held every
    epoch after the first as its samples, gives its own median and IQR. None when nothing was timed."""
    timed = [r for r in epochs if r.median_s is not None]
    if len(timed) == 1:
        return timed[0].median_s or 0.0, timed[0].iqr_s or 0.0
    if not timed:
        return None
    seconds = [r.median_s or 0.0 for r in timed]
    q1, _, q3 = statistics.quantiles(seconds, n=4, method="inclusive")
    return statistics.median(seconds), q3 - q1
