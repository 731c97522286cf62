"""How a training loop reports progress without printing.

The loops call a `TrainProgress`; the CLI layer installs one that draws rich
progress bars (`src/mnist/cli.py`), everything else gets the silent default.
A context variable carries it from the click command to the backend, since
the core's `execute` calls `run(settings, run)` with nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class TrainProgress(Protocol):
    def start(self, label: str, epochs: int, steps_per_epoch: int) -> None: ...
    def step(self) -> None: ...
    def epoch_done(self) -> None: ...
    def stop(self) -> None: ...


class SilentProgress:
    def start(self, label: str, epochs: int, steps_per_epoch: int) -> None:
        pass

    def step(self) -> None:
        pass

    def epoch_done(self) -> None:
        pass

    def stop(self) -> None:
        pass


_CURRENT: ContextVar[TrainProgress] = ContextVar("mnist_progress", default=SilentProgress())


def current_progress() -> TrainProgress:
    return _CURRENT.get()


@contextmanager
def using_progress(progress: TrainProgress) -> Iterator[None]:
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)
