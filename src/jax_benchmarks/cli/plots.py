"""Where PNG files go, and matplotlib without a display."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS_DIR = Path("data/plots")


def save_figure(fig: Figure, name: str, directory: Path = PLOTS_DIR) -> Path:
    """Write `fig` as `<directory>/<name>.png` and return the path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    path.write_bytes(png_bytes(fig))
    return path


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes (what `save_figure` writes, and what an HTML page embeds)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """A figure drawn with the Agg backend (works on a headless machine)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))
