"""`mnist preprocess-images`: load the data set and show what training will see."""

from __future__ import annotations

import numpy as np

from src.core.results import Run
from src.mnist.settings import DataSettings
from src.mnist.training import load_and_record


def run(settings: DataSettings, run: Run) -> None:
    data = load_and_record(settings, run, "data")
    counts = np.bincount(np.asarray(data.y_train), minlength=10)
    run.log(
        f"source: {data.source}\n"
        f"train: {data.images_train.shape} · test: {data.images_test.shape} uint8 images, "
        f"normalized on reading to float32 [N, 28, 28, 1]\n"
        f"normalization (training set): mean {data.mean:.4f} · std {data.std:.4f}\n"
        f"train images per class: {' '.join(str(int(c)) for c in counts)}"
    )
