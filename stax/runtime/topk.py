"""[TOPK] A per-row top-k compiled: the k largest (or smallest) of each row, sorted ascending.

`np.sort(x, axis)[..., -k:]` and `np.sort(np.partition(x, -k, axis)[..., -k:], axis)` (and
their `[..., :k]` twins for the smallest; `stax.frontend.topk` recognizes them) run this
instead of sorting or partitioning every row whole. Each row keeps a heap of the k best
elements seen so far; the rest of the row is scanned in blocks of 16 against the heap's worst
element (a vectorized compare: a block with no better element costs one test), and only an
element better than it enters (for random data about k * ln(n / k) of a row's n). The heap is
sorted at the end. NumPy's order: NaN after every number (so the largest), -0.0 equal to 0.0.
Rows are split over the cores idle at the call (OpenMP, a team as the wrapper's regions take).
"""

from __future__ import annotations

import ctypes
import functools
import math

import numpy as np

from stax.runtime.compiler import compile_source, isa_level
from stax.runtime.externs import PARALLEL_MIN_ELEMENTS
from stax.tiling.plan import thread_count
from stax.tiling.threads import team

# Element types by the code the library's entry takes (`_CODES`).
DTYPES = tuple(
    np.dtype(t)
    for t in (
        np.float32,
        np.float64,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
    )
)
_CODES = {t: code for code, t in enumerate(DTYPES)}

SOURCE = r"""
#include <algorithm>
#include <cstdint>
#include <type_traits>

template <typename T>
static inline bool before(T a, T b) {  // NumPy's sort order: NaN after every number
    if constexpr (std::is_floating_point_v<T>) return a < b || (b != b && a == a);
    else return a < b;
}

// Does x[0:16] hold an element at least as good as t (a number)? Largest: >= t, or NaN.
template <typename T, bool Largest>
static inline bool any_candidate(const T* x, T t) {
    int hit = 0;
    #pragma omp simd reduction(|:hit)
    for (int j = 0; j < 16; ++j) {
        if constexpr (Largest) hit |= (x[j] >= t) | (x[j] != x[j]);
        else hit |= x[j] <= t;
    }
    return hit != 0;
}

// bound = the worst of the best elements of k chunks of x[0:n]: k elements are at least as
// good, so no element worse than it is among the k best. False when x holds a NaN.
template <typename T, bool Largest>
static bool chunk_bound(const T* x, int64_t n, int64_t k, T& bound) {
    int nan = 0;
    for (int64_t c = 0; c < k; ++c) {
        const int64_t lo = c * n / k, hi = (c + 1) * n / k;
        T m = x[lo];
        if constexpr (Largest) {
            #pragma omp simd reduction(max:m) reduction(|:nan)
            for (int64_t i = lo; i < hi; ++i) {
                m = m > x[i] ? m : x[i];
                nan |= x[i] != x[i];
            }
        } else {
            #pragma omp simd reduction(min:m) reduction(|:nan)
            for (int64_t i = lo; i < hi; ++i) {
                m = m < x[i] ? m : x[i];
                nan |= x[i] != x[i];
            }
        }
        if (c == 0 || (Largest ? m < bound : m > bound)) bound = m;
    }
    return nan == 0;
}

// h[0:k] = the k best of x[0:n], ascending. A heap of the best so far (its worst first) is
// offered the elements of the blocks of 16 holding one at least as good as the threshold:
// the chunks' bound (a row of 16 k elements or more without NaN) or the heap's worst once
// it holds k (a NaN there: for the largest nothing is better, for the smallest test all).
template <typename T, bool Largest>
static void row_topk(const T* x, int64_t n, int64_t k, T* h) {
    auto worse = [](T a, T b) { return Largest ? before(a, b) : before(b, a); };
    auto first_worse = [&](T a, T b) { return worse(b, a); };  // std's heaps put the max first
    T bound{};
    const bool bounded = n >= 16 * k && chunk_bound<T, Largest>(x, n, k, bound);
    int64_t count = 0;  // elements in h
    auto offer = [&](T v) {
        if (bounded && worse(v, bound)) return;
        if (count < k) {
            h[count++] = v;
            if (count == k) std::make_heap(h, h + k, first_worse);
        } else if (worse(h[0], v)) {
            std::pop_heap(h, h + k, first_worse);
            h[k - 1] = v;
            std::push_heap(h, h + k, first_worse);
        }
    };
    int64_t i = 0;
    if (!bounded) {
        for (; i < k; ++i) offer(x[i]);
    }
    for (; i + 16 <= n; i += 16) {
        const T t = bounded && (count < k || worse(h[0], bound)) ? bound : h[0];
        if (t != t && Largest) break;
        if (t != t || any_candidate<T, Largest>(x + i, t)) {
            for (int j = 0; j < 16; ++j) offer(x[i + j]);
        }
    }
    for (; i < n && !(Largest && count == k && h[0] != h[0]); ++i) offer(x[i]);
    std::sort(h, h + k, before<T>);
}

template <typename T>
static void rows_topk(const void* x, int64_t rows, int64_t n, int64_t stride, int64_t k,
                      int largest, void* out, int threads) {
    #pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
    for (int64_t r = 0; r < rows; ++r) {
        const T* row = (const T*)x + r * stride;
        T* h = (T*)out + r * k;
        if (largest) row_topk<T, true>(row, n, k, h);
        else row_topk<T, false>(row, n, k, h);
    }
}

extern "C" {
// out[r, :] = the k largest (largest != 0) or smallest of row r (x + r * stride, n
// contiguous elements of type `code`: f32 f64 i8 i16 i32 i64 u8 u16 u32 u64), ascending.
void stax_topk(const void* x, int64_t rows, int64_t n, int64_t stride, int64_t k, int largest,
               int code, void* out, int threads) {
    switch (code) {
        case 0: rows_topk<float>(x, rows, n, stride, k, largest, out, threads); break;
        case 1: rows_topk<double>(x, rows, n, stride, k, largest, out, threads); break;
        case 2: rows_topk<int8_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 3: rows_topk<int16_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 4: rows_topk<int32_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 5: rows_topk<int64_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 6: rows_topk<uint8_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 7: rows_topk<uint16_t>(x, rows, n, stride, k, largest, out, threads); break;
        case 8: rows_topk<uint32_t>(x, rows, n, stride, k, largest, out, threads); break;
        default: rows_topk<uint64_t>(x, rows, n, stride, k, largest, out, threads);
    }
}
}
"""


@functools.cache
def _library() -> ctypes.CDLL:
    lib = compile_source(SOURCE, isa_level(None)).library
    lib.stax_topk.argtypes = [
        ctypes.c_void_p,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_int,
    ]
    lib.stax_topk.restype = None
    return lib


def select(x: np.ndarray, *, out: np.ndarray, axis: int, k: int, largest: bool) -> None:
    """`out` = the k largest (`largest`) or smallest elements along `axis` of `x` (whose dtype
    is one of DTYPES, `out`'s too), ascending: `np.sort(x, axis)[..., -k:]` (`[..., :k]`)."""
    rows_first = np.moveaxis(x, axis, -1)
    n = rows_first.shape[-1]
    lead = rows_first.shape[:-1]
    rows = math.prod(lead)
    if rows == 0 or k == 0:
        return
    flat = rows_first.reshape(rows, n)  # a view when the rows are evenly spaced
    size = flat.dtype.itemsize
    if flat.strides[1] != size or flat.strides[0] % size:
        flat = np.ascontiguousarray(flat)
    result = np.empty((rows, k), x.dtype)
    threads = team(min(thread_count(), rows)) if x.size >= PARALLEL_MIN_ELEMENTS else 1
    _library().stax_topk(
        flat.ctypes.data,
        rows,
        n,
        flat.strides[0] // size,
        k,
        int(largest),
        _CODES[x.dtype],
        result.ctypes.data,
        threads,
    )
    np.copyto(np.moveaxis(out, axis, -1), result.reshape(*lead, k))
