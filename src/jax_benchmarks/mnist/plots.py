"""A 5×5 grid of test images with the model's predicted labels (wrong ones in red)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jax_benchmarks.cli.plots import new_figure, save_figure


def prediction_grid(images: np.ndarray, labels: np.ndarray, predictions: np.ndarray, *, title: str, name: str) -> Path:
    """Save the grid as data/plots/<name>.png and return its path."""
    n = len(images)
    side = max(1, math.ceil(math.sqrt(n)))
    fig = new_figure(7.0, 7.5)
    fig.suptitle(title)
    for i in range(n):
        ax = fig.add_subplot(side, side, i + 1)
        ax.imshow(np.asarray(images[i]).reshape(images.shape[1], images.shape[2]), cmap="gray")
        wrong = int(predictions[i]) != int(labels[i])
        text = f"{int(predictions[i])} (true {int(labels[i])}) ✗" if wrong else f"{int(predictions[i])}"
        ax.set_title(text, color="red" if wrong else "black", fontsize=9)
        ax.axis("off")
    return save_figure(fig, name)
