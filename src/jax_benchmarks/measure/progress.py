"""How long work reports how far it is without printing.

The harness (`jax_benchmarks.measure.harness.run_cases`) opens one bar per backend and advances it per case; a long
case (a training epoch) may open a nested bar for its steps. The CLI layer puts a drawing
implementation on the `Run` (`jax_benchmarks.cli.console.RichProgress`); everything else gets `NoProgress`.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def start(self, label: str, total: int) -> None:
        """Open a bar of `total` steps; bars nest: `advance` and `stop` act on the last one opened."""

    def advance(self, detail: str = "") -> None: ...

    def stop(self) -> None: ...


class NoProgress:
    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, detail: str = "") -> None:
        pass

    def stop(self) -> None:
        pass
