"""Options of the `xla` commands, validated before anything is allocated."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from jax_benchmarks.settings import BenchSettings, OptionError
from jax_benchmarks.xla.memory import memory_shortfall

Dtype = Literal["float64", "float32"]
ITEMSIZE: dict[str, int] = {"float64": 8, "float32": 4}


class XlaSettings(BenchSettings):
    """`xla <backend> --matrix-size N --dtype D`."""

    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "matrix_size": 300}

    matrix_size: int = Field(default=5000, ge=1, description="N: every matrix is N×N.")
    dtype: Dtype = Field(default="float64", description="Element type of every matrix.")

    @model_validator(mode="after")
    def _fits_in_memory(self) -> Self:
        problem = memory_shortfall(self.matrix_size, self.dtype, ITEMSIZE[self.dtype], self.device_kind)
        if problem is not None:
            raise OptionError("--matrix-size", problem)
        return self
