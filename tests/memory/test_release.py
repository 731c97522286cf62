"""`release_freed_memory` before each case: garbage is collected, and what survives is frozen so that later calls
walk only what was made since (a full collection with JAX and PyTorch imported cost 0.1–0.19 s a call)."""

from __future__ import annotations

import gc
import weakref

from jax_benchmarks.measure.memory import release_freed_memory


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def dropped_cycle() -> weakref.ref[Node]:
    return weakref.ref(Node())


def test_garbage_is_collected_before_the_survivors_are_frozen() -> None:
    gone = dropped_cycle()
    kept = Node()
    before = gc.get_freeze_count()
    release_freed_memory()
    assert gone() is None
    assert gc.get_freeze_count() > before  # the survivors, `kept` among them, are out of later collections' way
    assert kept.me is kept


def test_garbage_made_after_a_release_is_collected_by_the_next() -> None:
    release_freed_memory()
    gone = dropped_cycle()
    release_freed_memory()
    assert gone() is None
