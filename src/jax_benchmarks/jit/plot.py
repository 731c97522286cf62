"""The bar chart of `jit flax --plot`: epoch time jitted vs not jitted, per model."""

from __future__ import annotations

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
    """Median epoch time (IQR as error bar) per model and variant, each bar labelled.

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
            rec = next((r for r in records if r.variant == variant and r.params.get("model") == model), None)
            if rec is None or rec.median_s is None:
                continue
            x = j + (i - (len(variants) - 1) / 2) * width
            ax.bar(x, rec.median_s, width, yerr=(rec.iqr_s or 0.0) / 2, color=COLORS[variant],
                   label=LABELS[variant] if j == 0 else None, capsize=3)
            ax.annotate(format_seconds(rec.median_s), (x, rec.median_s), ha="center", va="bottom",
                        xytext=(0, 3), textcoords="offset points", fontsize=8)
    for j, model in enumerate(models):
        ratio = speedup_of(records, model)
        if ratio is not None:
            ax.annotate(f"×{ratio:.1f} with jit", (j, 0.93), xycoords=("data", "axes fraction"), ha="center")
    ax.set_xticks(range(len(models)), [m.upper() for m in models])
    ax.set_xlim(-0.6, len(models) - 0.4)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
    ax.set_ylabel("one training epoch (s, median)")
    device = records[0].device if records else "?"
    ax.set_title(f"jit flax: train step jitted vs not jitted ({device})")
    ax.legend(loc="center right")
    return fig


def speedup_of(records: Sequence[Record], model: str) -> float | None:
    for rec in records:
        value = rec.metrics.get("speedup")
        if rec.params.get("model") == model and isinstance(value, (int, float)):
            return float(value)
    return None
