"""Where PNG files go, and matplotlib without a display."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS_DIR = Path("data/plots")


def save_figure(fig: Figure, name: str, directory: Path = PLOTS_DIR) -> Path:
    """Write `fig` as `<directory>/<name>.png` and return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """A figure drawn with the Agg backend (works on a headless machine)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))
