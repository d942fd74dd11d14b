"""[SEL] Boolean-mask compaction compiled: `x[mask]`, `np.extract`, `np.flatnonzero(mask)`.

The extern calls that bind a data-dependent size (`stax.frontend.data_dependent`) run these
instead of NumPy's boolean indexing when the arrays are C-contiguous: a parallel count per
block of the mask (OpenMP; a team of the cores idle at the call, as the wrapper's regions
take), the blocks' offsets by an exclusive scan, then a parallel pass writing each block's
selected elements (or their indices) at its offset, branch-free (every element is written at
the current position, which advances by the mask's 0/1; a block stops after its last
selected element, so it never writes into the next block's part); with AVX-512, elements of
4 or 8 bytes and indices are compress-stored 64 mask bytes at a time. Elements of 1, 2, 4 or 8
bytes (a row of the trailing axes counts as one element when its bytes are one of these);
anything else is NumPy's routine.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from stax.runtime.compiler import compile_source, isa_level
from stax.tiling.plan import thread_count
from stax.tiling.threads import team

BLOCK = 1 << 16  # mask elements per block (per task of the parallel passes)
# Smaller masks go to NumPy's routine: the passes' fixed cost (two ctypes calls, the team, the
# offsets) is ~10 us, and NumPy's is faster below about this many elements (one thread: 40 to
# 4,000 elements 0.3-6 us against 10-16; 16,000: flatnonzero 9 vs 14, x[mask] 44 vs 18).
MIN_ELEMENTS = 8192

SOURCE = r"""
#include <cstdint>

template <typename T>
static void compact_block(const T* x, const uint8_t* m, int64_t i, int64_t j, int64_t end,
                          T* out) {
    for (; j < end; ++i) {  // branch-free: write, then advance by the mask's 0/1
        out[j] = x[i];
        j += m[i];
    }
}

static void index_block(const uint8_t* m, int64_t i, int64_t j, int64_t end, int64_t* out) {
    for (; j < end; ++i) {
        out[j] = i;
        j += m[i];
    }
}

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define STAX_COMPRESS 1
// AVX-512: 64 mask bytes to 64 bits, then each vector of 4- or 8-byte elements (or of
// indices, `x` null) compress-stored at out[j:] (exactly the selected lanes are written);
// the block's last < 64 elements one by one. Returns the next position.
template <typename T>
static int64_t compress_block(const T* x, const uint8_t* m, int64_t i, int64_t hi, int64_t j,
                              T* out) {
    constexpr int lanes = 64 / sizeof(T);
    const __m512i step = sizeof(T) == 8 ? _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)
        : _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (; i + 64 <= hi; i += 64) {
        const uint64_t bits = _mm512_test_epi8_mask(_mm512_loadu_si512(m + i),
                                                    _mm512_set1_epi8(-1));
        for (int s = 0; s < 64; s += lanes) {
            const uint32_t k = (uint32_t)(bits >> s) & (uint32_t)((1ull << lanes) - 1);
            __m512i v;
            if (x != nullptr) v = _mm512_loadu_si512(x + i + s);
            else v = _mm512_add_epi64(step, _mm512_set1_epi64(i + s));  // indices (int64)
            if constexpr (sizeof(T) == 8) _mm512_mask_compressstoreu_epi64(out + j, (__mmask8)k, v);
            else _mm512_mask_compressstoreu_epi32(out + j, (__mmask16)k, v);
            j += __builtin_popcount(k);
        }
    }
    for (; i < hi; ++i) {  // a branch: a write past the block's part would be another's
        if (m[i]) out[j++] = x != nullptr ? x[i] : (T)i;
    }
    return j;
}
#endif

extern "C" {
// counts[b] = the selected elements of block b (blocks of `block` mask elements)
void stax_mask_counts(const uint8_t* m, int64_t n, int64_t block, int64_t* counts,
                      int threads) {
    const int64_t blocks = (n + block - 1) / block;
    #pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t lo = b * block, hi = lo + block < n ? lo + block : n;
        int64_t c = 0;
        #pragma omp simd reduction(+:c)
        for (int64_t i = lo; i < hi; ++i) c += m[i];
        counts[b] = c;
    }
}

// Block b's selected elements (itemsize 1/2/4/8 bytes; 0: their indices, int64) written at
// out[offsets[b]:offsets[b + 1]].
void stax_compact(const void* x, int64_t itemsize, const uint8_t* m, int64_t n, int64_t block,
                  const int64_t* offsets, void* out, int threads) {
    const int64_t blocks = (n + block - 1) / block;
    #pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
    for (int64_t b = 0; b < blocks; ++b) {
        const int64_t i = b * block, j = offsets[b], end = offsets[b + 1];
#ifdef STAX_COMPRESS
        const int64_t hi = i + block < n ? i + block : n;
        if (itemsize == 4) {
            compress_block((const uint32_t*)x, m, i, hi, j, (uint32_t*)out);
            continue;
        }
        if (itemsize == 8 || itemsize == 0) {
            compress_block((const uint64_t*)x, m, i, hi, j, (uint64_t*)out);
            continue;
        }
#endif
        switch (itemsize) {
            case 1: compact_block((const uint8_t*)x, m, i, j, end, (uint8_t*)out); break;
            case 2: compact_block((const uint16_t*)x, m, i, j, end, (uint16_t*)out); break;
            case 4: compact_block((const uint32_t*)x, m, i, j, end, (uint32_t*)out); break;
            case 8: compact_block((const uint64_t*)x, m, i, j, end, (uint64_t*)out); break;
            default: index_block(m, i, j, end, (int64_t*)out);
        }
    }
}
}
"""


@functools.cache
def _library() -> ctypes.CDLL:
    lib = compile_source(SOURCE, isa_level(None)).library
    lib.stax_mask_counts.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                     ctypes.c_void_p, ctypes.c_int]
    lib.stax_compact.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_int]
    for fn in (lib.stax_mask_counts, lib.stax_compact):
        fn.restype = None
    return lib


def _compact(x: np.ndarray | None, mask: np.ndarray, out_row: tuple[int, ...],
             dtype: np.dtype) -> np.ndarray:
    """The selected rows of `x` (None: the selected positions) as a new C-contiguous array."""
    lib = _library()
    n = mask.size
    blocks = (n + BLOCK - 1) // BLOCK
    threads = team(min(blocks, thread_count()))  # the cores idle now (as the wrapper's)
    counts = np.empty(blocks + 1, np.int64)
    counts[0] = 0
    lib.stax_mask_counts(mask.ctypes.data, n, BLOCK, counts[1:].ctypes.data, threads)
    offsets = np.cumsum(counts)
    out = np.empty((int(offsets[-1]), *out_row), dtype)
    itemsize = 0 if x is None else x.nbytes // max(n, 1)
    lib.stax_compact(None if x is None else x.ctypes.data, itemsize, mask.ctypes.data, n, BLOCK,
                     offsets.ctypes.data, out.ctypes.data, threads)
    return out


def _fits(mask: Any) -> bool:
    return isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.ndim > 0 and \
        mask.flags.c_contiguous and mask.size >= MIN_ELEMENTS


def select(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """`x[mask]` for a boolean mask over x's leading axes."""
    rest = x.shape[mask.ndim:] if _fits(mask) else ()
    if not _fits(mask) or not x.flags.c_contiguous or x.shape[:mask.ndim] != mask.shape or \
            x.dtype.itemsize * int(np.prod(rest)) not in (1, 2, 4, 8):
        return x[mask]
    return _compact(x, mask, rest, x.dtype)


def flatnonzero(a: np.ndarray) -> np.ndarray:
    """`np.flatnonzero(a)`."""
    if not _fits(a):
        return np.flatnonzero(a)
    return _compact(None, a, (), np.dtype(np.intp))


def extract(condition: np.ndarray, arr: np.ndarray) -> np.ndarray:
    """`np.extract(condition, arr)`: `arr`'s elements where a boolean `condition` of its size
    holds, in C order."""
    if not _fits(condition) or condition.size != arr.size:
        return np.extract(condition, arr)
    return select(np.ravel(arr), condition.reshape(-1))
