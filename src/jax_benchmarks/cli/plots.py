"""Where PNG files go, and matplotlib without a display."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLOTS_DIR = Path("data/plots")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"  # the first bytes of every PNG file


def save_figure(fig: Figure, name: str, directory: Path = PLOTS_DIR) -> Path:
    """Write `fig` as `<directory>/<name>.png` and return the path. An existing file of that name is replaced only
    where it is a PNG image (a plot drawn before): anything else there is not this program's, and is kept (a
    DataError, exit 2)."""
    from jax_benchmarks.errors import DataError

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.png"
    if path.exists() and not is_png(path):
        raise DataError(f"{path} exists and is not a PNG image; it is kept: move it away to draw the plot there")
    path.write_bytes(png_bytes(fig))
    return path


def is_png(path: Path) -> bool:
    """A regular file that starts as a PNG image does."""
    try:
        if not path.is_file():  # opening a FIFO would wait for a writer
            return False
        with path.open("rb") as fh:
            return fh.read(len(PNG_SIGNATURE)) == PNG_SIGNATURE
    except OSError:
        return False


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes (what `save_figure` writes, and what an HTML page embeds)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def new_figure(width: float = 8.0, height: float = 4.5) -> Figure:
    """A figure drawn with the Agg backend (works on a headless machine)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))
