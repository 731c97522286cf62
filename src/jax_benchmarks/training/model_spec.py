"""The CNN both backends build, as numbers: layer shapes, parameters, FLOPs.

conv 32 (3×3, no padding) → relu → conv 64 (3×3, no padding) → relu →
max-pool 2×2 → dropout 0.25 → dense 256 → relu → dropout 0.5 → dense 10 →
log-softmax. Unpadded ('VALID') convolutions in both frameworks: with Flax's default
'SAME' padding the convolutions keep 28×28, the dense layer sees 14×14×64
inputs and the Flax model would have 3,232,906 parameters against PyTorch's
2,380,938.
"""

from __future__ import annotations

IMAGE = 28
KERNEL = 3
CONV1, CONV2, HIDDEN, CLASSES = 32, 64, 256, 10
DROPOUT_CONV, DROPOUT_DENSE = 0.25, 0.5
CONV1_OUT = IMAGE - KERNEL + 1  # 26
CONV2_OUT = CONV1_OUT - KERNEL + 1  # 24
POOLED = CONV2_OUT // 2  # 12
FLAT = POOLED * POOLED * CONV2  # 9216


def parameter_count() -> int:
    """Weights and biases of the four layers (2,380,938)."""
    conv1 = KERNEL * KERNEL * 1 * CONV1 + CONV1
    conv2 = KERNEL * KERNEL * CONV1 * CONV2 + CONV2
    dense1 = FLAT * HIDDEN + HIDDEN
    dense2 = HIDDEN * CLASSES + CLASSES
    return conv1 + conv2 + dense1 + dense2


def forward_flops() -> int:
    """Multiply-adds × 2 of one image's forward pass (the convolutions and dense layers)."""
    conv1 = 2 * CONV1_OUT**2 * CONV1 * KERNEL * KERNEL * 1
    conv2 = 2 * CONV2_OUT**2 * CONV2 * KERNEL * KERNEL * CONV1
    dense = 2 * (FLAT * HIDDEN + HIDDEN * CLASSES)
    return conv1 + conv2 + dense


def train_flops() -> int:
    """Forward + backward ≈ 3 × forward (the usual estimate: two matmuls back per one forward)."""
    return 3 * forward_flops()
