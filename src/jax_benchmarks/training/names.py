"""The names defined once: the data sets and data sources (settings, the data pipeline and `jit` use them), and the
names of the cases that train the model (`TrainedCase`: the training cases spell their names through it, the
findings read stored names back through it)."""

from __future__ import annotations

import re
from typing import Literal, NamedTuple, get_args

DatasetName = Literal["mnist", "fashion_mnist"]
DataSource = Literal["auto", "hub", "local", "embedded"]
DATASETS: tuple[DatasetName, ...] = get_args(DatasetName)
SOURCES: tuple[DataSource, ...] = get_args(DataSource)

IMAGE = "28x28"  # the shape of one image, in every training case's `{op}_{shape}_{dtype}` name
TrainedKind = Literal["step", "epoch", "validation"]
# The op of each kind's name: train_step_128x28x28_float32, train_epoch_…, validation_1000x28x28_float32.
TRAINED_OPS: dict[TrainedKind, str] = {"step": "train_step", "epoch": "train_epoch", "validation": "validation"}


class TrainedCase(NamedTuple):
    """The typed key of a case that trains or tests the model: its kind, its batch (a step's and an epoch's:
    --train-batch-size; a validation's: --test-batch-size) and the dtype it computes in (float32, bf16). `name`
    is the one place its name is spelled; `of` reads a stored name back (every record since the names were
    introduced), so that whoever selects records by kind says which kind, never a prefix of the name."""

    kind: TrainedKind
    batch: int
    dtype: str

    @property
    def name(self) -> str:
        return f"{TRAINED_OPS[self.kind]}_{self.batch}x{IMAGE}_{self.dtype}"

    @classmethod
    def of(cls, name: str) -> TrainedCase | None:
        """The key a stored case name spells, or None for a case that trains nothing (the load, the peak, another
        group's case)."""
        for kind, op in TRAINED_OPS.items():
            found = re.fullmatch(rf"{op}_([0-9]+)x{IMAGE}_([a-z0-9]+)", name)
            if found:
                return cls(kind, int(found[1]), found[2])
        return None

    def sibling(self, kind: TrainedKind) -> TrainedCase:
        """The case of another kind on the same batch and dtype (an epoch's own train step)."""
        return self._replace(kind=kind)


def kind_of(name: str) -> TrainedKind | None:
    """Which kind of trained case a stored case name is, or None."""
    key = TrainedCase.of(name)
    return None if key is None else key.kind
