"""2-D max pooling over non-overlapping windows as the NumPy expressions Stax traces.

In a training graph, `max_pool2d_with_indices` as an extern call ran PyTorch's pooling twice
(once per result: an extern node computes one), each on a channels-last copy of its input,
and copied both results back. When the windows tile the input (stride equal to the kernel,
no padding, no dilation, sizes divisible by the kernel, at most `MAX_WINDOW` positions),
Stax computes values and indices in one elementwise pass over strided slices, fused with
the batch norm and ReLU before it. (The backward stays PyTorch's extern call: written as a
broadcast through the windows, `where(index == position, grad, 0)`, it fused into the batch
norm backward but as a scalar loop with divided indices, measured slower.)

PyTorch's indices: the first maximum in the window in row-major order, or the LAST NaN when
the window holds NaNs (`val > maxval || isnan(val)`); positions are flat in the H x W plane.
Other pooling shapes return None (the caller uses the extern call).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Windows of more positions are left to the extern call (one slice per position).
MAX_WINDOW = 16

def _tiling(shape: tuple[int, ...], kernel: Any, stride: Any, padding: Any, dilation: Any
            ) -> tuple[int, int] | None:
    """(kh, kw) when windows of `kernel` tile the last two axes of a 4-D `shape`."""
    if len(shape) != 4:
        return None
    kh, kw = (list(kernel) * 2)[:2] if len(kernel) == 1 else list(kernel)
    stride = list(stride) or [kh, kw]
    sh, sw = (stride * 2)[:2] if len(stride) == 1 else stride
    pads = (list(padding) * 2)[:2] if len(padding) == 1 else list(padding)
    dils = (list(dilation) * 2)[:2] if len(dilation) == 1 else list(dilation)
    h, w = shape[2], shape[3]
    if (sh, sw) != (kh, kw) or any(pads) or dils != [1, 1] or min(h, w, kh, kw) < 1 \
            or h % kh or w % kw or shape[0] * shape[1] == 0:
        return None
    return kh, kw


def max_pool(x: Any, kernel: Any, stride: Any = (), padding: Any = (0,), dilation: Any = (1,),
             ceil_mode: bool = False, *, nhwc: bool = False) -> tuple[Any, Any] | None:
    """`max_pool2d_with_indices(x, ...)` as (values, int64 indices), or None. PyTorch's loop,
    elementwise over the windows: one strided slice per window position, in row-major
    order, taken when `val > best || isnan(val)`. [TORCH3] `nhwc`: `x` is the NCHW view of a
    channels-last buffer (an inference graph's convolution result); the windows are sliced
    from its NHWC transpose, so that the loop runs over the buffer in its own order (channels
    innermost, contiguous) and the results come back as NCHW views of NHWC values. Sliced
    from the NCHW view, the pooling read the buffer with a stride of 2 channels-last pixels
    per vector lane (a gather: 2x the extern call's time, s8)."""
    tiles = _tiling(tuple(x.shape), kernel, stride, padding, dilation)
    if tiles is None or tiles[0] * tiles[1] > MAX_WINDOW:
        return None
    (kh, kw), w = tiles, x.shape[3]
    if nhwc:
        x = np.transpose(x, (0, 2, 3, 1))
    best = at = None
    for i in range(kh):
        for j in range(kw):
            val = x[:, i::kh, j::kw, :] if nhwc else x[:, :, i::kh, j::kw]
            if best is None:
                best, at = val, np.zeros((), np.int64)
                continue
            take = (val > best) | np.isnan(val)
            best, at = np.where(take, val, best), np.where(take, i * w + j, at)
    ho, wo = x.shape[1 if nhwc else 2] // kh, w // kw
    corner = (np.arange(ho) * (kh * w)).reshape(ho, 1) + np.arange(wo) * kw
    at = (np.reshape(corner, (ho, wo, 1)) if nhwc else corner) + at
    if nhwc:
        return np.transpose(best, (0, 3, 1, 2)), np.transpose(at, (0, 3, 1, 2)).astype(np.int64)
    return best, at.astype(np.int64)
