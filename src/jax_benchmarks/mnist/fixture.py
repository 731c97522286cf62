"""Suite fixtures: what the cases of one suite share, with a lifetime the suite shows.

A `Fixture` is a value built once per suite, on first use (by `setup`), or by the one case that times its
building (`build`); `close` releases it (`teardown`) and `closing(...)` does that for a suite's fixtures
when the suite ends, however it ends. Cases read a fixture; a judge never writes one. Case order matters
only where a case reads a fixture another case builds (e.g. the data the load case times).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Fixture(Generic[T]):
    def __init__(self, name: str, setup: Callable[[], T], teardown: Callable[[T], object] | None = None) -> None:
        self.name = name
        self._setup = setup
        self._teardown = teardown
        self._value: list[T] = []  # empty until built; one value at most

    @property
    def ready(self) -> bool:
        return bool(self._value)

    def get(self) -> T:
        """The value, built now if no case built it yet."""
        return self._value[0] if self._value else self.build()

    def build(self) -> T:
        """Build the value now (again, if it was), e.g. inside the case that times its building."""
        self.close()
        value = self._setup()
        self._value.append(value)
        return value

    def provide(self, value: T) -> None:
        """Hand the fixture a value built elsewhere (e.g. the run the harness gives `before`)."""
        self.close()
        self._value.append(value)

    def close(self) -> object:
        """Release the value (what `teardown` returns, e.g. an archive's path); a no-op when none is built."""
        if not self._value:
            return None
        value = self._value.pop()
        return self._teardown(value) if self._teardown is not None else None


@contextmanager
def closing(*fixtures: Fixture[Any]) -> Iterator[None]:
    """The fixtures' lifetime: released, last built first, when the block ends, however it ends."""
    try:
        yield
    finally:
        for fixture in reversed(fixtures):
            fixture.close()
