"""Operators on images in NCHW layout (batch, channels, height, width), as PyTorch's: 2-D convolution,
max and average pooling, zero padding; plus leaky_relu, flatten and detach.

Convolution is im2col + one BLAS matmul: one strided copy per kernel offset (kh·kw slices, never a
Python loop over pixels) fills a (N·Ho·Wo, kh·kw·C) matrix, and the output is that matrix times the
(kh·kw·C, O) weight matrix. The weight's gradient uses the same matrix (colsᵀ·g); the input's is g times
each kernel offset's (O, C) slice of W, added back onto the input by one strided `+=` per offset. The forward pass keeps its
matrix on the operator (one operator per node) for its VJP; past `Conv2d.IM2COL_LIMIT_BYTES` it builds
none, and runs one matmul per kernel offset instead. Pooling takes its windows as a strided view
(`sliding_window_view`, no copy).

Every operator checks its operands before computing, and raises `OperandError` (one line naming the
operator and the shapes) rather than letting NumPy fail with a broadcasting traceback.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from jax_benchmarks.autodiff.arrays import FloatArray, OperandError, check_finite
from jax_benchmarks.autodiff.operators import Grads, Operator, Reshape

Pair = tuple[int, int]
Padding = tuple[int, int, int, int]  # top, bottom, left, right


def pair(value: int | tuple[int, int], what: str, op: str, minimum: int) -> Pair:
    """An int or an (h, w) pair of ints, each at least `minimum`."""
    values = (value, value) if isinstance(value, int) else tuple(value)
    if len(values) != 2 or not all(isinstance(v, int | np.integer) and v >= minimum for v in values):
        raise OperandError(f"{op}: {what} must be an int or a pair of ints >= {minimum}, got {value!r}")
    return int(values[0]), int(values[1])


def padding4(value: int | tuple[int, ...], op: str) -> Padding:
    """An int (every side), an (h, w) pair (both sides of each axis) or (top, bottom, left, right); each >= 0."""
    values = (value,) * 4 if isinstance(value, int) else tuple(value)
    if len(values) == 2:
        values = (values[0], values[0], values[1], values[1])
    if len(values) != 4 or not all(isinstance(v, int | np.integer) and v >= 0 for v in values):
        raise OperandError(f"{op}: padding must be an int, an (h, w) pair or (top, bottom, left, right) of ints >= 0, "
                           f"got {value!r}")
    return int(values[0]), int(values[1]), int(values[2]), int(values[3])


def check_image(op: str, x: FloatArray, shapes: str) -> None:
    if x.ndim != 4:
        raise OperandError(f"{op}: the input must be 4-D (batch, channels, height, width), got {shapes}")
    check_finite(op, x, shapes)


def out_size(op: str, size: Pair, kernel: Pair, stride: Pair, shapes: str) -> Pair:
    """Output height and width of a kernel sliding over `size` (already padded) with `stride`."""
    if kernel[0] > size[0] or kernel[1] > size[1]:
        raise OperandError(f"{op}: kernel {kernel} is larger than the (padded) input {size}; {shapes}")
    return (size[0] - kernel[0]) // stride[0] + 1, (size[1] - kernel[1]) // stride[1] + 1


def windows(x: FloatArray, kernel: Pair, stride: Pair) -> FloatArray:
    """(N, C, Ho, Wo, kh, kw): every window of x, a strided view of x (no copy)."""
    return sliding_window_view(x, kernel, axis=(2, 3))[:, :, ::stride[0], ::stride[1]]


def scatter_windows(parts: FloatArray, shape: tuple[int, ...], stride: Pair) -> FloatArray:
    """The adjoint of `windows`: (N, C, Ho, Wo, kh, kw) summed back onto an array of `shape`; one strided
    slice per kernel offset (overlapping windows add up)."""
    _, _, ho, wo, kh, kw = parts.shape
    total = np.zeros(shape, dtype=parts.dtype)
    for i in range(kh):
        for j in range(kw):
            total[:, :, i:i + stride[0] * (ho - 1) + 1:stride[0], j:j + stride[1] * (wo - 1) + 1:stride[1]] += (
                parts[:, :, :, :, i, j])
    return total


def pad(x: FloatArray, padding: Padding) -> FloatArray:
    top, bottom, left, right = padding
    if not any(padding):
        return x
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))


def unpad(grad: FloatArray, padding: Padding) -> FloatArray:
    top, bottom, left, right = padding
    height, width = grad.shape[2], grad.shape[3]
    return grad[:, :, top:height - bottom, left:width - right]


def shapes_text(values: tuple[FloatArray, ...], names: tuple[str, ...]) -> str:
    return ", ".join(f"{name} {value.shape}" for name, value in zip(names, values, strict=False))


class Conv2d(Operator):
    """conv2d(x, w[, b]): x (N, C, H, W), w (O, C, kh, kw), b (O,) -> (N, O, Ho, Wo); cross-correlation, as
    PyTorch's F.conv2d and Flax's nn.Conv (no kernel flip).

    Inside, the pixels are channels-last: the im2col matrix is (N·Ho·Wo, kh·kw·C), built by one strided
    copy per kernel offset whose inner runs are whole channel vectors, and the output is the matmul's
    (N·Ho·Wo, O) result returned as an NCHW *view* (transposed strides, no copy). NumPy's elementwise
    operators keep that layout (order 'K'), so the next convolution's channels-last copy is free.
    """

    name = "conv2d"
    # Past this size the im2col matrix is not built: kh·kw matmuls, one per kernel offset, add up the output
    # instead (the same products; the input's copy per offset is temporary). The mnist CNN's conv2 at batch
    # 128 would keep an 85 MB matrix per step alive until its VJP; its conv1, 3 MB, keeps it.
    IM2COL_LIMIT_BYTES: ClassVar[int] = 16 * 2**20

    def __init__(self, stride: int | tuple[int, int] = 1, padding: int | tuple[int, ...] = 0) -> None:
        self.stride = pair(stride, "stride", self.name, 1)
        self.padding = padding4(padding, self.name)
        self.cols: FloatArray | None = None  # the forward pass's im2col matrix, for the VJP
        self.pixels: FloatArray | None = None  # or, past IM2COL_LIMIT_BYTES, its channels-last input

    def forward(self, *values: FloatArray) -> FloatArray:
        x, w = values[0], values[1]
        shapes = shapes_text(values, ("x", "w", "b"))
        check_image(self.name, x, shapes)
        if w.ndim != 4 or w.shape[1] != x.shape[1]:
            raise OperandError(f"{self.name}: the weight must be (out channels, {x.shape[1]} in channels, kh, kw) "
                               f"for an input of {x.shape[1]} channels; {shapes}")
        if len(values) == 3 and values[2].shape != (w.shape[0],):
            raise OperandError(f"{self.name}: the bias must be ({w.shape[0]},), one per output channel; {shapes}")
        n, c = x.shape[:2]
        kh, kw = w.shape[2], w.shape[3]
        padded = pad(x, self.padding)
        ho, wo = out_size(self.name, (padded.shape[2], padded.shape[3]), (kh, kw), self.stride, shapes)
        pixels = np.ascontiguousarray(padded.transpose(0, 2, 3, 1))  # NHWC; free when x is already laid out so
        dtype = np.result_type(x, w)
        if n * ho * wo * kh * kw * c * dtype.itemsize <= self.IM2COL_LIMIT_BYTES:
            cols = np.empty((n, ho, wo, kh, kw, c), dtype=dtype)
            for i, j, rows, columns in self.offsets(kh, kw, ho, wo):
                cols[:, :, :, i, j, :] = pixels[:, rows, columns, :]
            self.cols = cols.reshape(n * ho * wo, kh * kw * c)
            out = self.cols @ kernel_matrix(w).T  # (N·Ho·Wo, O)
        else:  # one matmul per kernel offset, each on a copy of the pixels that offset meets
            self.pixels = pixels
            taps = kernel_taps(w)
            out = np.zeros((n * ho * wo, w.shape[0]), dtype=dtype)
            for i, j, rows, columns in self.offsets(kh, kw, ho, wo):
                out += pixels[:, rows, columns, :].reshape(-1, c) @ taps[i, j].T
        if len(values) == 3:
            out += values[2]
        return out.reshape(n, ho, wo, w.shape[0]).transpose(0, 3, 1, 2)

    def offsets(self, kh: int, kw: int, ho: int, wo: int) -> list[tuple[int, int, slice, slice]]:
        """Per kernel offset (i, j): the rows and columns of the padded input it meets over the output."""
        s0, s1 = self.stride
        return [(i, j, slice(i, i + s0 * (ho - 1) + 1, s0), slice(j, j + s1 * (wo - 1) + 1, s1))
                for i in range(kh) for j in range(kw)]

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        x, w = values[0], values[1]
        o, c, kh, kw = w.shape
        n, _, ho, wo = grad.shape
        # gᵀ (O, N·Ho·Wo) as a contiguous copy: with 2 threads OpenBLAS multiplies gᵀ·cols (a long inner
        # dimension) about 5× slower when gᵀ is a transposed view (measured: 1.09 s against 0.22 s, mnist conv2).
        g_t = np.ascontiguousarray(grad.transpose(1, 0, 2, 3)).reshape(o, -1)
        grad_x = grad_w = grad_b = None
        if wants[0]:
            # col2im one kernel offset at a time: g·W[:, :, i, j] is that offset's share of every input pixel,
            # added onto the pixels it met (overlapping windows add up); no (N·Ho·Wo, kh·kw·C) temporary.
            g, taps = g_t.T, kernel_taps(w)
            top, bottom, left, right = self.padding
            total = np.zeros((n, x.shape[2] + top + bottom, x.shape[3] + left + right, c), dtype=grad.dtype)
            for i, j, rows, columns in self.offsets(kh, kw, ho, wo):
                total[:, rows, columns, :] += (g @ taps[i, j]).reshape(n, ho, wo, c)
            grad_x = unpad(total.transpose(0, 3, 1, 2), self.padding)
        if wants[1]:
            if self.cols is not None:
                grad_w = np.ascontiguousarray((g_t @ self.cols).reshape(o, kh, kw, c).transpose(0, 3, 1, 2))
            else:
                assert self.pixels is not None  # forward ran
                grad_taps = np.empty((kh, kw, o, c), dtype=grad.dtype)
                for i, j, rows, columns in self.offsets(kh, kw, ho, wo):
                    grad_taps[i, j] = g_t @ self.pixels[:, rows, columns, :].reshape(-1, c)
                grad_w = np.ascontiguousarray(grad_taps.transpose(2, 3, 0, 1))
        if len(values) == 3 and wants[2]:
            grad_b = g_t.sum(axis=1)
        return (grad_x, grad_w) if len(values) == 2 else (grad_x, grad_w, grad_b)


def kernel_taps(w: FloatArray) -> FloatArray:
    """(O, C, kh, kw) -> (kh, kw, O, C): per kernel offset, the (O, C) matrix it multiplies the pixels by."""
    return np.ascontiguousarray(w.transpose(2, 3, 0, 1))


def kernel_matrix(w: FloatArray) -> FloatArray:
    """(O, C, kh, kw) -> (O, kh·kw·C), the column order of the channels-last im2col matrix."""
    return np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(w.shape[0], -1)


class Pool2d(Operator):
    """A kernel×kernel window sliding with `stride` (default: the kernel) over each channel of NCHW."""

    name: ClassVar[str]

    def __init__(self, kernel: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        self.kernel = pair(kernel, "kernel", self.name, 1)
        self.stride = self.kernel if stride is None else pair(stride, "stride", self.name, 1)

    def windows(self, x: FloatArray) -> FloatArray:
        shapes = f"x {x.shape}, kernel {self.kernel}, stride {self.stride}"
        check_image(self.name, x, shapes)
        out_size(self.name, (x.shape[2], x.shape[3]), self.kernel, self.stride, shapes)
        return windows(x, self.kernel, self.stride)


class MaxPool2d(Pool2d):
    """The largest element of each window; its gradient goes to that element (the first one on a tie, as
    PyTorch's max_pool2d)."""

    name = "max_pool2d"

    def __init__(self, kernel: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        super().__init__(kernel, stride)
        self.winner: npt.NDArray[np.intp] | None = None  # index of each window's maximum, for the VJP

    def forward(self, *values: FloatArray) -> FloatArray:
        view = self.windows(values[0])
        flat = view.reshape(*view.shape[:4], -1)  # (N, C, Ho, Wo, kh·kw), a copy
        self.winner = np.argmax(flat, axis=-1)
        return np.take_along_axis(flat, self.winner[..., np.newaxis], axis=-1)[..., 0]

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        assert self.winner is not None  # forward ran
        kh, kw = self.kernel
        picks = self.winner[..., np.newaxis] == np.arange(kh * kw)  # (N, C, Ho, Wo, kh·kw)
        parts = (grad[..., np.newaxis] * picks).reshape(*grad.shape, kh, kw)
        return (scatter_windows(parts, values[0].shape, self.stride),)


class AvgPool2d(Pool2d):
    """The mean of each window (padding none, so every window holds kh·kw elements)."""

    name = "avg_pool2d"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.asarray(self.windows(values[0]).mean(axis=(-2, -1)))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        kh, kw = self.kernel
        parts = np.broadcast_to((grad / (kh * kw))[..., np.newaxis, np.newaxis], (*grad.shape, kh, kw))
        return (scatter_windows(parts, values[0].shape, self.stride),)


class Pad2d(Operator):
    """Zeros around the height and width of NCHW; the VJP cuts the border off the gradient."""

    name = "pad2d"

    def __init__(self, padding: int | tuple[int, ...]) -> None:
        self.padding = padding4(padding, self.name)

    def forward(self, *values: FloatArray) -> FloatArray:
        check_image(self.name, values[0], f"x {values[0].shape}, padding {self.padding}")
        return pad(values[0], self.padding)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (unpad(grad, self.padding),)


class LeakyRelu(Operator):
    """x where x > 0, negative_slope·x elsewhere (the derivative at 0 is the slope, as PyTorch's)."""

    name = "leaky_relu"

    def __init__(self, negative_slope: float = 0.01) -> None:
        self.negative_slope = negative_slope

    def forward(self, *values: FloatArray) -> FloatArray:
        x = values[0]
        return np.asarray(np.where(x > 0, x, x * np.asarray(self.negative_slope, dtype=x.dtype)))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (np.where(values[0] > 0, grad, grad * np.asarray(self.negative_slope, dtype=grad.dtype)),)


class Flatten(Reshape):
    """Axes from `start` on merged into one: (N, C, H, W) -> (N, C·H·W) with start 1, keeping the batch; the
    VJP is Reshape's (the gradient takes the input's shape back)."""

    name = "flatten"

    def __init__(self, start: int = 1) -> None:
        super().__init__(())
        self.start = start

    def forward(self, *values: FloatArray) -> FloatArray:
        x = values[0]
        if not -x.ndim <= self.start < max(x.ndim, 1):
            raise OperandError(f"{self.name}: start axis {self.start} is outside an input of shape {x.shape}")
        start = self.start % max(x.ndim, 1)
        self.shape = (*x.shape[:start], -1)
        return super().forward(x)


class Detach(Operator):
    """The value unchanged, no gradient through it (stop_gradient): its node takes no part in backprop."""

    name = "detach"
    differentiable = False

    def forward(self, *values: FloatArray) -> FloatArray:
        return values[0]

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (None,)
