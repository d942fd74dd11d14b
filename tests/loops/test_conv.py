"""npbench's deep-learning kernels (conv2d_bias, lenet, resnet): loops over output pixels in
helper functions of the jitted one, with `np.newaxis` and symbolic slices in the body. They
are compiled once per body (issue 10), not unrolled; results against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import stax
from stax.loops import records

from .test_loops import check


def conv2d(input, weights):
    K = weights.shape[0]
    N = input.shape[0]
    H_out = input.shape[1] - K + 1
    W_out = input.shape[2] - K + 1
    C_out = weights.shape[3]
    output = np.empty((N, H_out, W_out, C_out), dtype=np.float32)
    for i in range(H_out):
        for j in range(W_out):
            output[:, i, j, :] = np.sum(input[:, i:i + K, j:j + K, :, np.newaxis] *
                                        weights[np.newaxis, :, :, :], axis=(1, 2, 3))
    return output


def conv2d_bias(input, weights, bias):
    return conv2d(input, weights) + bias


def maxpool2d(x):
    output = np.empty([x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]], dtype=x.dtype)
    for i in range(x.shape[1] // 2):
        for j in range(x.shape[2] // 2):
            output[:, i, j, :] = np.max(x[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :], axis=(1, 2))
    return output


def relu(x):
    return np.maximum(x, 0)


def lenet_like(input, conv1, bias1, conv2, bias2, fcw):
    x = maxpool2d(relu(conv2d(input, conv1) + bias1))
    x = maxpool2d(relu(conv2d(x, conv2) + bias2))
    return relu(np.reshape(x, (x.shape[0], -1)) @ fcw)


CALLS = []


def conv_counted(input, weights):  # assigns a global: runs with the module's own globals
    global CALLS
    CALLS = [*CALLS, 1]
    return conv2d(input, weights)


def via_counted(input, weights):
    return conv_counted(input, weights)


def _sites(jitted) -> set[str]:
    recs = records(jitted)
    assert all(r.compiled for r in recs), [str(r) for r in recs]
    return {r.site[2] for r in recs}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,h,w,k", [(2, 5, 4, 2), (3, 4, 6, 1), (0, 4, 4, 2)])
def test_conv2d_bias_in_a_helper_is_compiled_once(dtype, n, h, w, k):
    x = make_array((n, h, w, 3), dtype, seed=1)
    wt = make_array((k, k, 3, 2), dtype, seed=2)
    bias = make_array((2,), dtype, seed=3)
    jitted = check(conv2d_bias, x, wt, bias, compiled=2, rtol=1e-5)
    assert _sites(jitted) == {"conv2d"}


def test_conv2d_one_output_pixel():
    """1x1 output: one iteration per loop (run as Python runs it, unrolled)."""
    x = make_array((2, 3, 3, 2), "float32", seed=4)
    wt = make_array((3, 3, 2, 4), "float32", seed=5)
    check(conv2d, x, wt, compiled=0, rtol=1e-5)


def test_strided_input():
    x = make_array((6, 5, 4, 3), "float32", seed=6)[::2, :, ::-1]
    wt = np.asfortranarray(make_array((2, 2, 3, 2), "float32", seed=7))
    check(conv2d, x, wt, compiled=2, rtol=1e-5)


def test_lenet_like_chain():
    """conv, bias, relu, pool twice, then a dense layer: every loop of both helpers, at
    each of their two calls, compiled once; but the second pool's inner loop runs once
    (Python runs it, no record), its index a Python int bound in the outer loop's body."""
    args = (make_array((2, 12, 11, 1), "float32", seed=8),
            make_array((3, 3, 1, 4), "float32", seed=9), make_array((4,), "float32", seed=10),
            make_array((2, 2, 4, 3), "float32", seed=11), make_array((3,), "float32", seed=12),
            make_array((6, 5), "float32", seed=13))
    jitted = check(lenet_like, *args, compiled=7, rtol=1e-4)
    assert _sites(jitted) == {"conv2d", "maxpool2d"}


def test_pool_nan_and_inf():
    x = make_array((1, 4, 6, 2), "float64", seed=14)
    x[0, 0, 1, 0], x[0, 3, 5, 1], x[0, 2, 2, 0] = np.nan, np.inf, -np.inf
    check(maxpool2d, x, compiled=2)


def test_helper_writing_a_global_keeps_its_globals():
    x = make_array((2, 4, 4, 3), "float32", seed=15)
    wt = make_array((2, 2, 3, 2), "float32", seed=16)
    before = len(CALLS)
    want = conv2d(x, wt)
    jitted = stax.jit(via_counted, strict=True)
    np.testing.assert_allclose(jitted(x, wt), want, rtol=1e-5)
    assert len(CALLS) > before  # the module's global, not a copy, was assigned
    assert records(jitted) == ()  # its loops (module globals: the builtin range) unrolled


def body_constants(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        scale = 2.5  # bound in the body, the same in every iteration
        for j in range(1):
            out[i] = x[i] * scale + j
    return out * scale + j  # their values after the loop


def counter(x):
    k = 0
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * k
        k = k + 1  # bound before the loop: a Python value that changes, so unrolled
    return out + k


def test_python_scalars_bound_in_the_body():
    x = make_array((5, 3), "float64", seed=17)
    check(body_constants, x, compiled=1)
    check(counter, x, compiled=0, unrolled=1)
