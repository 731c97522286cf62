"""Options of the `scipy` group, validated by pydantic (see src/jax_benchmarks/settings.py)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from jax_benchmarks.settings import BenchSettings


class ScipySettings(BenchSettings):
    """The calibration fit: data length and the optimizers' stopping tolerance."""

    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "array_length": 1000}

    array_length: int = Field(
        10_000, ge=10, le=10_000_000,
        description="Samples per sensor (timestamps spread over 0..100).",
    )
    tol: float = Field(
        1e-4, gt=0, le=1,
        description=(
            "Stop when the gradient's max-norm is below this, in every optimizer "
            "(SciPy tol, JAX gtol, torch tolerance_grad)."
        ),
    )
