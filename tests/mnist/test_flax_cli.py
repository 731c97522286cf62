"""`mnist flax` end to end on tiny synthetic data (its own file: JAX compiles take a while here)."""

from __future__ import annotations

from pathlib import Path

from tests.mnist.test_mnist_cli import _synthetic, check_dry_run_and_round_trip

__all__ = ["_synthetic"]  # the autouse fixture: synthetic data, no COMET_API_KEY


def test_flax_dry_run_and_checkpoint_round_trip(results_path: Path) -> None:
    check_dry_run_and_round_trip("flax", results_path)
