"""f(x) = 0.2·x + sin(x) + cos(2x) in PyTorch."""

from __future__ import annotations

import torch


def f(x: torch.Tensor) -> torch.Tensor:
    return 0.2 * x + torch.sin(x) + torch.cos(2 * x)
