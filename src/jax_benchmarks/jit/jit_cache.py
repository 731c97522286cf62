"""`jax.jit`'s compilation cache over a training run: when the train step compiled, and why."""

from __future__ import annotations

from dataclasses import dataclass, field

from jax_benchmarks.frameworks.typed import jit_cache_size
from jax_benchmarks.jit.batching import Batching


@dataclass
class CacheTrace:
    """jax.jit's cache size before training, after each step of epoch 1, after each epoch."""

    before: int
    after_step: list[int] = field(default_factory=list)
    after_epoch: list[int] = field(default_factory=list)

    @property
    def compilations(self) -> int:
        return self.after_epoch[-1] if self.after_epoch else self.before

    def record_step(self, jitted: object) -> None:
        self.after_step.append(jit_cache_size(jitted))

    def steps_that_compiled(self) -> list[int]:
        """1-based steps of epoch 1 after which the cache grew."""
        sizes = [self.before, *self.after_step]
        return [i for i in range(1, len(sizes)) if sizes[i] > sizes[i - 1]]


def describe_cache(cache: CacheTrace, batching: Batching) -> str:
    steps = cache.after_step
    parts = [f"before {cache.before}"]
    shown = sorted({1, max(len(steps) - 1, 1), len(steps)})
    for step in shown:
        if 1 <= step <= len(steps):
            size = batching.last_batch if step == batching.steps and batching.last_batch else batching.batch_size
            parts.append(f"after step {step} (batch of {size}): {steps[step - 1]}")
    parts.append(f"after epoch {len(cache.after_epoch)}: {cache.compilations}")
    return "jit cache size: " + " · ".join(parts)


def explain_cache(cache: CacheTrace, batching: Batching) -> str:
    grew = cache.steps_that_compiled()
    where = ", ".join(str(s) for s in grew) or "none"
    text = f"  → {cache.compilations} compilation(s), at step(s) {where} of epoch 1"
    if batching.last_batch and batching.full_batches:
        return text + "; the last, smaller batch compiled the step a second time (--drop-last avoids it)"
    return text + "; later epochs reuse the cache"
