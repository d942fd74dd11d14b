"""A fifteenth wave of the wild corpus (s17 HUNT10): ordinary NumPy programs in styles the first
fourteen waves use least — data wrangling (group-by with np.unique return_inverse and
np.bincount weights, lexsort, stable argsort, merging sorted keys with searchsorted, digitize
and histogram bins, isin and set operations, run-length encoding); structured and record
arrays (fields, x['a'], np.rec); datetime64/timedelta64 arithmetic; masked arrays (np.ma);
string dtypes (np.char, np.strings, astype(str)); signal and image processing (2-D FFT,
windows, np.convolve 'same', separable blur by slicing, np.pad modes, rot90/flip, 2-D roll);
statistics (corrcoef, quantile methods, z-scores with ddof, weighted averages over axes, a
seeded bootstrap); geometry (cross, norm with ord/axis, rotations, barycentric coordinates,
solve/lstsq/det/eigh); simulations (game of life, seeded random walks, an SIR model,
particles reflected by np.where); iteration (np.nditer, np.ndindex, np.ndenumerate); in-place
idioms (`x[...] =`, np.copyto with where=, np.put/place/putmask, np.fill_diagonal); 0-d and
empty inputs throughout.

Harness: test_corpus_wild.run_case with `warm=True`, `views=True` and `warns=True`.
`cd tests && python -m corpus.test_corpus_wild15 [names]` prints each function's class.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

from corpus.test_corpus_wild import main, normal, run_case, wild
from corpus.test_corpus_wild9 import ints
from corpus.test_corpus_wild14 import pos, u8

CASES15: dict[str, Any] = {}


def case(*inputs: Any) -> Any:
    return wild(*inputs, cases=CASES15)


REC = np.dtype([("id", "i4"), ("x", "f8"), ("y", "f8")])


def records(r: np.random.Generator, n: int) -> np.ndarray:
    a = np.zeros(n, dtype=REC)
    a["id"] = r.integers(0, 4, n)
    a["x"] = r.standard_normal(n)
    a["y"] = r.standard_normal(n)
    return a


def days(r: np.random.Generator, n: int) -> np.ndarray:
    return np.datetime64("2024-01-01") + r.integers(0, 400, n).astype("timedelta64[D]")


def words(r: np.random.Generator, n: int) -> np.ndarray:
    pool = np.array(["apple", "Banana", "cherry", "date", "fig", "grape", "kiwi", "Lemon"])
    return pool[r.integers(0, len(pool), n)]


# ---- data wrangling -------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 5, 12), normal(r, 12)), lambda r: (ints(r, 0, 2, 1), normal(r, 1)),
      lambda r: (ints(r, 0, 3, 0), normal(r, 0)))
def groupby_mean_unique_inverse(keys, vals):
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=vals, minlength=len(uniq))
    counts = np.bincount(inv, minlength=len(uniq))
    return uniq, sums / np.maximum(counts, 1), counts


@case(lambda r: (ints(r, 0, 4, 10), normal(r, 10)), lambda r: (ints(r, 0, 1, 3), normal(r, 3)))
def groupby_max_sorted(keys, vals):
    order = np.lexsort((vals, keys))
    k, v = keys[order], vals[order]
    last = np.r_[np.flatnonzero(np.diff(k)), len(k) - 1]
    return k[last], v[last]


@case(lambda r: (ints(r, 0, 3, 9), ints(r, 0, 3, 9)),
      lambda r: (ints(r, 0, 2, 2), ints(r, 0, 2, 2)))
def lexsort_two_keys_rank(a, b):
    order = np.lexsort((b, a))
    ranks = np.empty_like(order)
    ranks[order] = np.arange(len(order))
    return order, ranks, a[order] * 10 + b[order]


@case(lambda r: (ints(r, 0, 4, 11),), lambda r: (ints(r, 0, 1, 1),))
def stable_argsort_ties(x):
    s = np.argsort(x, kind="stable")
    s2 = np.argsort(-x, kind="stable")
    return s, s2, x[s]


@case(lambda r: (np.sort(ints(r, 0, 20, 8)), np.sort(ints(r, 0, 20, 5))),
      lambda r: (np.sort(ints(r, 0, 5, 3)), ints(r, 0, 5, 0)))
def merge_sorted_searchsorted(a, b):
    pos_ = np.searchsorted(a, b, side="right")
    merged = np.insert(a, pos_, b)
    return merged, np.all(np.diff(merged) >= 0), pos_


@case(lambda r: (np.sort(ints(r, 0, 30, 10)), ints(r, 0, 30, 6)),
      lambda r: (np.arange(4), np.array([3, 0])))
def sorted_lookup_found(keys, q):
    i = np.searchsorted(keys, q)
    i = np.minimum(i, len(keys) - 1)
    found = keys[i] == q
    return i, found, np.where(found, i, -1)


@case(lambda r: (normal(r, 15),), lambda r: (normal(r, 1),), lambda r: (normal(r, 0),))
def digitize_bins_counts(x):
    bins = np.array([-1.0, 0.0, 1.0])
    idx = np.digitize(x, bins)
    right = np.digitize(x, bins, right=True)
    return idx, right, np.bincount(idx, minlength=len(bins) + 1)


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 3),))
def histogram_edges_cumulative(x):
    h, edges = np.histogram(x, bins=5, range=(-2, 2))
    cdf = np.cumsum(h) / max(h.sum(), 1)
    centers = 0.5 * (edges[1:] + edges[:-1])
    return h, cdf, centers


@case(lambda r: (ints(r, 0, 10, 12), ints(r, 0, 10, 4)),
      lambda r: (ints(r, 0, 3, 0), ints(r, 0, 3, 2)))
def isin_filter_and_invert(x, allowed):
    keep = np.isin(x, allowed)
    drop = np.isin(x, allowed, invert=True)
    return x[keep], drop.sum(), np.where(keep, x, -1)


@case(lambda r: (ints(r, 0, 10, 8), ints(r, 0, 10, 8)),
      lambda r: (ints(r, 0, 3, 1), ints(r, 3, 5, 2)))
def set_ops_union_diff(a, b):
    return (np.union1d(a, b), np.setdiff1d(a, b), np.intersect1d(a, b), np.setxor1d(a, b),
            np.intersect1d(a, b, return_indices=True)[1])


@case(lambda r: (ints(r, 0, 3, 14),), lambda r: (np.array([5, 5, 5]),),
      lambda r: (ints(r, 0, 3, 1),))
def run_length_encode(x):
    starts = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
    lengths = np.diff(np.r_[starts, len(x)])
    return x[starts], lengths, np.repeat(x[starts], lengths)


@case(lambda r: (ints(r, 0, 2, 15).astype(bool),), lambda r: (np.zeros(4, dtype=bool),))
def longest_true_run(m):
    d = np.diff(np.r_[0, m.astype(int), 0])
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    lens = ends - starts
    return lens.max() if len(lens) else 0, starts, lens


@case(lambda r: (ints(r, 0, 4, 10),), lambda r: (ints(r, 0, 2, 1),))
def cumulative_count_per_key(keys):
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    first = np.r_[0, np.flatnonzero(np.diff(sk)) + 1]
    grp = np.repeat(first, np.diff(np.r_[first, len(sk)]))
    cc = np.empty_like(keys)
    cc[order] = np.arange(len(keys)) - grp
    return cc


@case(lambda r: (normal(r, 10), ints(r, 0, 3, 10)), lambda r: (normal(r, 2), ints(r, 0, 1, 2)))
def groupby_std_via_bincount(v, g):
    n = np.bincount(g)
    s = np.bincount(g, weights=v)
    s2 = np.bincount(g, weights=v * v)
    mean = s / np.where(n == 0, 1, n)
    var = s2 / np.where(n == 0, 1, n) - mean ** 2
    return mean, np.sqrt(np.maximum(var, 0))


@case(lambda r: (ints(r, 0, 6, 12),), lambda r: (np.array([2]),))
def value_counts_sorted(x):
    vals, counts = np.unique(x, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    return vals[order], counts[order], vals[np.argmax(counts)]


@case(lambda r: (normal(r, 8), normal(r, 8)), lambda r: (normal(r, 1), normal(r, 1)))
def dedupe_pairs_rows(a, b):
    P = np.round(np.stack([a, b], axis=1), 0)
    u, idx = np.unique(P, axis=0, return_index=True)
    return u, np.sort(idx)


@case(lambda r: (ints(r, 0, 5, 7), normal(r, 7)), lambda r: (ints(r, 0, 5, 0), normal(r, 0)))
def pivot_sum_table(k, v):
    table = np.zeros(5)
    np.add.at(table, k, v)
    share = table / (np.abs(table).sum() or 1.0)
    return table, share


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 2),))
def ranks_with_ties_average(x):
    x = np.round(x, 0)
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    u, inv = np.unique(x, return_inverse=True)
    avg = np.bincount(inv, weights=ranks) / np.bincount(inv)
    return avg[inv]


@case(lambda r: (np.sort(normal(r, 10)), normal(r, 4)), lambda r: (np.array([0.0]), normal(r, 2)))
def nearest_neighbor_sorted(grid, q):
    i = np.clip(np.searchsorted(grid, q), 1, max(len(grid) - 1, 1))
    left = grid[i - 1]
    right = grid[np.minimum(i, len(grid) - 1)]
    return np.where(np.abs(q - left) <= np.abs(q - right), left, right)


@case(lambda r: (ints(r, 0, 3, 10), ints(r, 0, 2, 10)),
      lambda r: (ints(r, 0, 1, 2), ints(r, 0, 1, 2)))
def crosstab_two_keys(a, b):
    tab = np.zeros((a.max(initial=0) + 1, b.max(initial=0) + 1), dtype=np.int64)
    np.add.at(tab, (a, b), 1)
    return tab, tab.sum(axis=0), tab / tab.sum()


# ---- structured and record arrays -----------------------------------------------------------

@case(lambda r: (records(r, 8),), lambda r: (records(r, 1),))
def struct_field_math(a):
    return a["x"] + a["y"], np.hypot(a["x"], a["y"]).max(), a["id"].sum()


@case(lambda r: (records(r, 9),), lambda r: (records(r, 0),))
def struct_sort_by_field(a):
    s = np.sort(a, order=["id", "x"])
    return s["id"], s["x"], np.argsort(a, order="y")


@case(lambda r: (records(r, 7),), lambda r: (records(r, 2),))
def struct_mask_and_update(a):
    b = a.copy()
    b["x"][b["id"] == 1] = 0.0
    b["y"] *= 2
    return b["x"], b["y"], b[b["id"] > 1]["id"]


@case(lambda r: (normal(r, 5), normal(r, 5)), lambda r: (normal(r, 0), normal(r, 0)))
def struct_build_from_columns(x, y):
    out = np.empty(len(x), dtype=[("x", "f8"), ("y", "f8"), ("r", "f8")])
    out["x"], out["y"] = x, y
    out["r"] = np.sqrt(x ** 2 + y ** 2)
    return out["r"], out[np.argsort(out["r"])]["x"]


@case(lambda r: (records(r, 6),), lambda r: (records(r, 1),))
def recarray_attribute_access(a):
    ra = a.view(np.recarray)
    return ra.x * ra.y, ra.id.max(), np.rec.fromarrays([ra.x, ra.id], names="x,id").x


@case(lambda r: (records(r, 8),), lambda r: (records(r, 3),))
def struct_groupby_field(a):
    g = a["id"]
    s = np.bincount(g, weights=a["x"], minlength=4)
    return s, np.unique(g), a[["x", "y"]][g == 0]["y"]


@case(lambda r: (records(r, 5),), lambda r: (records(r, 0),))
def struct_field_names_loop(a):
    totals = {}
    for name in a.dtype.names:
        totals[name] = a[name].astype(float).sum()
    return totals


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def unstructured_roundtrip(X):
    from numpy.lib import recfunctions as rfn
    s = rfn.unstructured_to_structured(np.ascontiguousarray(X), names=["a", "b", "c"])
    return s["a"] - s["c"], rfn.structured_to_unstructured(s).sum(1)


# ---- datetime64 / timedelta64 ---------------------------------------------------------------

@case(lambda r: (days(r, 8),), lambda r: (days(r, 1),), lambda r: (days(r, 0),))
def dates_diff_days(d):
    s = np.sort(d)
    gaps = np.diff(s)
    return s, gaps, gaps.astype(int), (s - np.datetime64("2024-01-01")).astype("timedelta64[D]")


@case(lambda r: (days(r, 10),), lambda r: (days(r, 2),))
def dates_month_year(d):
    months = d.astype("datetime64[M]")
    years = d.astype("datetime64[Y]").astype(int) + 1970
    m = months.astype(int) % 12 + 1
    return months, years, m


@case(lambda r: (days(r, 9),), lambda r: (days(r, 1),))
def weekday_by_hand(d):
    dow = (d.astype("datetime64[D]").astype(np.int64) + 3) % 7  # Monday = 0
    return dow, np.bincount(dow, minlength=7), d[dow >= 5]


@case(lambda r: (days(r, 6), ints(r, 0, 30, 6)), lambda r: (days(r, 0), ints(r, 0, 3, 0)))
def dates_plus_offsets(d, k):
    due = d + k.astype("timedelta64[D]")
    late = due > np.datetime64("2024-06-01")
    return due, late, (due - d).astype("timedelta64[h]")


@case(lambda r: (np.arange(6) * 3600.0,), lambda r: (np.zeros(1),))
def seconds_to_datetime(secs):
    t = np.datetime64("2024-03-10T00:00:00") + secs.astype("timedelta64[s]")
    return t, t.astype("datetime64[h]"), np.diff(t) / np.timedelta64(1, "m")


@case(lambda r: (days(r, 12), normal(r, 12)), lambda r: (days(r, 1), normal(r, 1)))
def resample_monthly_mean(d, v):
    m = d.astype("datetime64[M]")
    um, inv = np.unique(m, return_inverse=True)
    return um, np.bincount(inv, weights=v) / np.bincount(inv)


@case(lambda r: (days(r, 5),), lambda r: (days(r, 1),))
def timedelta_stats(d):
    td = d - d.min()
    return td.max(), td.mean() if len(td) else td.sum(), np.median(td.astype(float))


@case(lambda r: ("2024-01-31", 14),)
def date_range_arange(start, n):
    d = np.arange(np.datetime64(start), np.datetime64(start) + n, 2)
    return d, d.astype(str), np.datetime_as_string(d[:2], unit="D")


# ---- masked arrays --------------------------------------------------------------------------

@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 1),))
def masked_where_mean(x):
    m = np.ma.masked_where(x < 0, x)
    return m.mean(), m.filled(0.0), m.count()


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 2),))
def masked_invalid_axis_stats(X):
    Y = X.copy()
    Y[Y > 1] = np.nan
    m = np.ma.masked_invalid(Y)
    return (m.mean(axis=0).filled(np.nan), m.sum(axis=1).data,
            float(m.std()) if m.count() else 0.0)


@case(lambda r: (normal(r, 8), normal(r, 8)), lambda r: (normal(r, 2), normal(r, 2)))
def masked_arithmetic(a, b):
    ma = np.ma.masked_less(a, -0.5)
    mb = np.ma.masked_greater(b, 0.5)
    c = ma * mb + 1
    return c.filled(-1), np.ma.getmaskarray(c), c.compressed()


@case(lambda r: (normal(r, 6),), lambda r: (np.full(3, -1.0),))
def masked_all_masked(x):
    m = np.ma.masked_less(x, 0)
    return m.max() is np.ma.masked, m.filled(np.nan), np.ma.average(m, weights=np.abs(x) + 1)


@case(lambda r: (ints(r, -5, 5, 9),), lambda r: (ints(r, -5, 5, 1),))
def masked_values_sentinel(x):
    m = np.ma.masked_values(x.astype(float), 0.0)
    recip = 1.0 / m
    return recip.filled(0.0), np.ma.median(m) if m.count() else 0.0


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 2, 2),))
def masked_array_constructor(X):
    m = np.ma.array(X, mask=X < 0)
    return m.sum(axis=0).filled(0), m.argmax(fill_value=-np.inf), (m ** 2).mean()


# ---- strings --------------------------------------------------------------------------------

@case(lambda r: (words(r, 8),), lambda r: (words(r, 1),))
def char_upper_len(w):
    return np.char.upper(w), np.char.str_len(w), np.char.startswith(w, "a")


@case(lambda r: (words(r, 10),), lambda r: (words(r, 2),))
def string_group_counts(w):
    lw = np.char.lower(w)
    u, c = np.unique(lw, return_counts=True)
    return u, c, u[np.argmax(c)]


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 0),))
def floats_to_strings(x):
    s = np.round(x, 2).astype(str)
    return s, np.char.add("v=", s), np.char.zfill(np.arange(len(x)).astype(str), 3)


@case(lambda r: (words(r, 6), normal(r, 6)), lambda r: (words(r, 1), normal(r, 1)))
def strings_filter_by_value(w, v):
    sel = w[v > 0]
    return sel, np.char.find(w, "a"), np.char.replace(w, "a", "A")


@case(lambda r: (np.array(["1.5", "2", "-3.25", "4e1"]),), lambda r: (np.array(["0"]),))
def parse_numbers_from_strings(s):
    x = s.astype(float)
    return x, x.sum(), np.char.count(s, ".")


@case(lambda r: (words(r, 7),), lambda r: (words(r, 2),))
def strings_module_np2(w):
    return np.strings.upper(w), np.strings.str_len(w) > 4, np.strings.endswith(w, "e")


@case(lambda r: (np.array(["a,b", "c,d", "e,f"]),), lambda r: (np.array(["x,y"]),))
def split_csv_like(s):
    parts = np.char.partition(s, ",")
    return parts[:, 0], parts[:, 2], np.char.join("-", s)


# ---- signal and image processing ------------------------------------------------------------

@case(lambda r: (normal(r, 8, 8),), lambda r: (normal(r, 4, 6).T,))
def fft2_lowpass(img):
    F = np.fft.fft2(img)
    F[2:-2, :] = 0
    F[:, 2:-2] = 0
    return np.fft.ifft2(F).real, np.abs(F).sum()


@case(lambda r: (normal(r, 16),), lambda r: (normal(r, 5),))
def windowed_spectrum(x):
    w = np.hanning(len(x))
    spec = np.abs(np.fft.rfft(x * w)) ** 2
    freqs = np.fft.rfftfreq(len(x), d=0.1)
    return spec, freqs[np.argmax(spec)], np.hamming(len(x)) @ x


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 3),))
def convolve_same_smoothing(x):
    k = np.ones(3) / 3
    return np.convolve(x, k, mode="same"), np.convolve(x, [1, -1], mode="valid"), np.convolve(x, k)


@case(lambda r: (normal(r, 7, 6),), lambda r: (normal(r, 3, 3),))
def separable_blur_slicing(img):
    p = np.pad(img, 1, mode="edge")
    h = (p[:, :-2] + 2 * p[:, 1:-1] + p[:, 2:]) / 4
    v = (h[:-2] + 2 * h[1:-1] + h[2:]) / 4
    return v


@case(lambda r: (normal(r, 4, 5),), lambda r: (normal(r, 1, 1),))
def pad_modes(img):
    return (np.pad(img, 2, mode="reflect") if min(img.shape) > 2 else img,
            np.pad(img, ((1, 0), (0, 2)), mode="wrap"), np.pad(img, 1, mode="symmetric"),
            np.pad(img, 1, mode="linear_ramp"), np.pad(img, (0, 1), mode="maximum"))


@case(lambda r: (u8(r, 3, 4),), lambda r: (u8(r, 1, 1),))
def rot_flip_transforms(img):
    return np.rot90(img), np.rot90(img, 2), np.rot90(img, k=-1), np.flip(img), np.fliplr(img)


@case(lambda r: (normal(r, 5, 5), 1, 2), lambda r: (normal(r, 2, 3), -1, 0))
def roll_2d_shift(img, dy, dx):
    return np.roll(img, (dy, dx), axis=(0, 1)), np.roll(img, dy), np.roll(img, dx, axis=1)


@case(lambda r: (u8(r, 8, 8, 3),), lambda r: (u8(r, 1, 2, 3),))
def rgb_to_gray_threshold(img):
    gray = img @ np.array([0.299, 0.587, 0.114])
    bw = (gray > gray.mean()).astype(np.uint8) * 255
    return gray, bw, np.histogram(gray, bins=4, range=(0, 256))[0]


@case(lambda r: (u8(r, 8, 8),), lambda r: (u8(r, 4, 4),))
def downsample_block_mean(img):
    h, w = img.shape
    blocks = img[: h // 2 * 2, : w // 2 * 2].reshape(h // 2, 2, w // 2, 2)
    return blocks.mean(axis=(1, 3)), blocks.max(axis=(1, 3)), img[::2, ::2]


@case(lambda r: (normal(r, 32),), lambda r: (normal(r, 8),))
def fft_convolution_circular(x):
    k = np.zeros_like(x)
    k[:3] = [0.25, 0.5, 0.25]
    y = np.fft.irfft(np.fft.rfft(x) * np.fft.rfft(k), n=len(x))
    return y, np.fft.fftshift(np.fft.fftfreq(len(x)))


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 2),))
def correlate_lag(x):
    c = np.correlate(x - x.mean(), x - x.mean(), mode="full")
    lag = np.argmax(c) - (len(x) - 1)
    return c, lag


@case(lambda r: (u8(r, 5, 5),), lambda r: (u8(r, 1, 4),))
def image_normalize_gamma(img):
    f = img / 255.0
    g = f ** (1 / 2.2)
    lo, hi = np.percentile(img, [2, 98])
    st = np.clip((img - lo) / max(hi - lo, 1e-9), 0, 1)
    return g, st, (g * 255).round().astype(np.uint8)


@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 3, 3),))
def median_filter_3x3(img):
    p = np.pad(img, 1, mode="reflect")
    h, w = img.shape
    stack = np.stack([p[i:i + h, j:j + w] for i in range(3) for j in range(3)])
    return np.median(stack, axis=0)


# ---- statistics -----------------------------------------------------------------------------

@case(lambda r: (normal(r, 3, 10),), lambda r: (normal(r, 2, 2),))
def corrcoef_rows_cols(X):
    return np.corrcoef(X), np.corrcoef(X[0], X[1]), np.corrcoef(X, rowvar=False).shape


@case(lambda r: (normal(r, 11),), lambda r: (normal(r, 1),))
def quantile_methods(x):
    return (np.quantile(x, 0.3, method="lower"), np.quantile(x, [0.1, 0.9], method="nearest"),
            np.quantile(x, 0.5, method="midpoint"), np.percentile(x, 75, method="higher"),
            np.quantile(x, 0.25, method="median_unbiased"))


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 2, 3).T,))
def zscore_ddof(X):
    mu = X.mean(axis=0)
    sd = X.std(axis=0, ddof=1)
    return (X - mu) / np.where(sd == 0, 1, sd), X.var(ddof=1), np.std(X, axis=1, ddof=0)


@case(lambda r: (normal(r, 4, 5), pos(r, 5)), lambda r: (normal(r, 1, 2), pos(r, 2)))
def weighted_average_axes(X, w):
    a1 = np.average(X, axis=1, weights=w)
    a0, s = np.average(X.T, axis=0, weights=w, returned=True)
    return a1, a0, s, np.average(X, weights=np.broadcast_to(w, X.shape))


@case(lambda r: (normal(r, 20),), lambda r: (normal(r, 3),))
def bootstrap_mean_ci(x):
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(x), size=(50, len(x)))
    means = x[idx].mean(axis=1)
    return np.percentile(means, [2.5, 97.5]), means.std()


@case(lambda r: (normal(r, 9),), lambda r: (normal(r, 2),))
def iqr_outliers(x):
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    out = (x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)
    return out, np.clip(x, q1 - 1.5 * iqr, q3 + 1.5 * iqr)


@case(lambda r: (normal(r, 10), normal(r, 10)), lambda r: (normal(r, 3), normal(r, 3)))
def spearman_by_ranks(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return np.corrcoef(ra, rb)[0, 1], np.cov(ra, rb, ddof=0)


@case(lambda r: (normal(r, 12), 3), lambda r: (normal(r, 4), 4))
def rolling_mean_cumsum(x, w):
    c = np.cumsum(np.r_[0.0, x])
    roll = (c[w:] - c[:-w]) / w
    sw = np.lib.stride_tricks.sliding_window_view(x, w)
    return roll, sw.std(axis=1), sw.max(axis=1)


@case(lambda r: (normal(r, 30),), lambda r: (normal(r, 4),))
def skew_kurtosis_by_hand(x):
    d = x - x.mean()
    m2, m3, m4 = (d ** 2).mean(), (d ** 3).mean(), (d ** 4).mean()
    return m3 / m2 ** 1.5, m4 / m2 ** 2 - 3


@case(lambda r: (normal(r, 40),), lambda r: (normal(r, 5),))
def permutation_test_seeded(x):
    rng = np.random.default_rng(42)
    a, b = x[: len(x) // 2], x[len(x) // 2:]
    obs = a.mean() - b.mean()
    perms = np.array([(p[: len(a)].mean() - p[len(a):].mean())
                      for p in (rng.permutation(x) for _ in range(30))])
    return obs, (np.abs(perms) >= abs(obs)).mean()


@case(lambda r: (ints(r, 0, 2, 15), normal(r, 15)), lambda r: (ints(r, 0, 2, 4), normal(r, 4)))
def confusion_and_auc_ish(y, score):
    pred = (score > 0).astype(int)
    cm = np.zeros((2, 2), int)
    np.add.at(cm, (y, pred), 1)
    order = np.argsort(-score)
    tpr = np.cumsum(y[order]) / max(y.sum(), 1)
    return cm, tpr, np.trapezoid(tpr, dx=1.0 / len(y))


# ---- geometry -------------------------------------------------------------------------------

@case(lambda r: (normal(r, 5, 3), normal(r, 5, 3)), lambda r: (normal(r, 1, 3), normal(r, 1, 3)))
def triangle_normals_cross(a, b):
    n = np.cross(a, b)
    return n / np.linalg.norm(n, axis=1, keepdims=True), np.cross(a[:, :2], b[:, :2])


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def norms_ord_axis(X):
    return (np.linalg.norm(X, ord=1, axis=1), np.linalg.norm(X, ord=np.inf, axis=0),
            np.linalg.norm(X, "fro"), np.linalg.norm(X, ord=2), np.linalg.norm(X[0], ord=3))


@case(lambda r: (normal(r, 6, 2), 0.3), lambda r: (normal(r, 1, 2), -1.0))
def rotate_points_2d(P, theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    Q = P @ R.T
    return Q, np.allclose(np.linalg.norm(Q, axis=1), np.linalg.norm(P, axis=1)), np.linalg.det(R)


@case(lambda r: (normal(r, 3), 0.7), lambda r: (np.array([0.0, 0, 1]), 3.14))
def rodrigues_rotation(axis, ang):
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R = np.eye(3) + np.sin(ang) * K + (1 - np.cos(ang)) * K @ K
    return R, R @ R.T, np.trace(R)


@case(lambda r: (normal(r, 3, 2), normal(r, 5, 2)), lambda r: (np.eye(3)[:, :2], normal(r, 1, 2)))
def barycentric_coords(tri, P):
    a, b, c = tri
    T = np.column_stack([b - a, c - a])
    lam = np.linalg.solve(T, (P - a).T).T
    bary = np.column_stack([1 - lam.sum(1), lam])
    return bary, np.all(bary >= 0, axis=1)


@case(lambda r: (normal(r, 10), 2), lambda r: (normal(r, 4), 1))
def lstsq_polyfit(y, deg):
    x = np.linspace(0, 1, len(y))
    A = np.vander(x, deg + 1)
    coef, res, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    return coef, rank, sv, A @ coef


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def eigh_of_covariance(X):
    C = X.T @ X / len(X)
    w, V = np.linalg.eigh(C)
    idx = np.argsort(w)[::-1]
    return w[idx], np.abs(V[:, idx][:, 0]), np.linalg.det(C), np.linalg.slogdet(C)[0]


@case(lambda r: (normal(r, 8, 2),), lambda r: (normal(r, 2, 2),))
def pairwise_distances_broadcast(P):
    D = np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    return D.min(axis=1), D.argmin(axis=1)


@case(lambda r: (normal(r, 7, 3), normal(r, 3)), lambda r: (normal(r, 1, 3), normal(r, 3)))
def project_onto_plane(P, n):
    n = n / np.linalg.norm(n)
    d = P @ n
    return P - np.outer(d, n), d, np.einsum("ij,j->i", P, n)


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.eye(2),))
def inverse_and_condition(A):
    return np.linalg.inv(A), np.linalg.cond(A), np.linalg.matrix_rank(A), np.linalg.pinv(A)


@case(lambda r: (normal(r, 5, 2),), lambda r: (normal(r, 2, 2),))
def bounding_box_and_hull_extent(P):
    lo, hi = P.min(axis=0), P.max(axis=0)
    center = (lo + hi) / 2
    ang = np.arctan2(P[:, 1] - center[1], P[:, 0] - center[0])
    return lo, hi, P[np.argsort(ang)]


# ---- simulations ----------------------------------------------------------------------------

@case(lambda r: (ints(r, 0, 2, 8, 8).astype(np.uint8),), lambda r: (ints(r, 0, 2, 3, 3),))
def game_of_life_steps(g):
    for _ in range(4):
        n = sum(np.roll(np.roll(g, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1)
                if (i, j) != (0, 0))
        g = ((n == 3) | ((g == 1) & (n == 2))).astype(g.dtype)
    return g, g.sum()


@case(lambda r: (6, 20),)
def random_walks_seeded(n, steps):
    rng = np.random.default_rng(7)
    s = rng.choice([-1, 1], size=(n, steps))
    paths = np.cumsum(s, axis=1)
    return paths[:, -1], np.abs(paths).max(axis=1), (paths == 0).sum(axis=1)


@case(lambda r: (0.3, 0.1, 30), lambda r: (0.0, 0.5, 5))
def sir_model_loop(beta, gamma, steps):
    s, i, rr = 0.99, 0.01, 0.0
    hist = np.zeros((steps, 3))
    for t in range(steps):
        new_i = beta * s * i
        new_r = gamma * i
        s, i, rr = s - new_i, i + new_i - new_r, rr + new_r
        hist[t] = s, i, rr
    return hist, hist[:, 1].argmax()


@case(lambda r: (r.uniform(0, 1, (6, 2)), normal(r, 6, 2)),
      lambda r: (r.uniform(0, 1, (1, 2)), normal(r, 1, 2)))
def particles_reflect_box(pos_, vel):
    p, v = pos_.copy(), vel.copy()
    for _ in range(10):
        p = p + 0.1 * v
        hit = (p < 0) | (p > 1)
        v = np.where(hit, -v, v)
        p = np.where(p < 0, -p, np.where(p > 1, 2 - p, p))
    return p, v


@case(lambda r: (normal(r, 8), 0.1), lambda r: (normal(r, 2), 0.5))
def heat_equation_1d(u0, alpha):
    u = u0.copy()
    for _ in range(20):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


@case(lambda r: (5,), lambda r: (1,))
def brownian_bridge_seeded(n):
    rng = np.random.default_rng(3)
    dW = rng.normal(0, np.sqrt(1 / max(n, 1)), n)
    W = np.concatenate([[0.0], np.cumsum(dW)])
    t = np.linspace(0, 1, n + 1)
    return W - t * W[-1]


@case(lambda r: (np.array([[0.9, 0.1], [0.5, 0.5]]), 8),
      lambda r: (np.array([[0.2, 0.3, 0.5], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]]), 3))
def markov_chain_power(P, k):
    p = np.zeros(len(P))
    p[0] = 1
    hist = [p]
    for _ in range(k):
        p = p @ P
        hist.append(p)
    w, v = np.linalg.eig(P.T)
    return np.array(hist), np.isclose(w, 1).any()


@case(lambda r: (100, 0.05),)
def monte_carlo_pi_seeded(n, r_):
    rng = np.random.default_rng(11)
    xy = rng.random((n, 2))
    inside = (xy ** 2).sum(1) <= 1
    return 4 * inside.mean(), inside.cumsum()[-1], rng.uniform(-r_, r_, 3)


@case(lambda r: (u8(r, 5, 5) % 2,), lambda r: (np.zeros((2, 2), dtype=np.uint8),))
def flood_fill_iterative(grid):
    filled = np.zeros(grid.shape, dtype=bool)
    filled[0, 0] = grid[0, 0] == 0
    for _ in range(grid.size):
        prev = filled.copy()
        nb = np.zeros_like(filled)
        nb[1:] |= filled[:-1]
        nb[:-1] |= filled[1:]
        nb[:, 1:] |= filled[:, :-1]
        nb[:, :-1] |= filled[:, 1:]
        filled |= nb & (grid == 0)
        if (filled == prev).all():
            break
    return filled


@case(lambda r: (np.array([1.0, 0.0]), 0.01, 50),)
def predator_prey_euler(z0, h, n):
    z = z0 + np.array([0.0, 0.5])
    out = np.empty((n, 2))
    for k in range(n):
        x, y = z
        z = z + h * np.array([x - x * y, x * y - y])
        out[k] = z
    return out[-1], out.min(axis=0)


# ---- iteration helpers ----------------------------------------------------------------------

@case(lambda r: (normal(r, 3, 4),), lambda r: (normal(r, 1, 1),))
def ndindex_loop_sum(X):
    total = 0.0
    out = np.empty_like(X)
    for i, j in np.ndindex(X.shape):
        out[i, j] = X[i, j] * (i + j)
        total += X[i, j]
    return out, total


@case(lambda r: (normal(r, 2, 3),), lambda r: (normal(r, 1, 2),))
def ndenumerate_argmax(X):
    best, where = -np.inf, None
    for idx, v in np.ndenumerate(X):
        if v > best:
            best, where = v, idx
    return best, where


@case(lambda r: (normal(r, 2, 3),), lambda r: (normal(r, 1, 1),))
def nditer_readwrite(X):
    Y = X.copy()
    with np.nditer(Y, op_flags=["readwrite"]) as it:
        for v in it:
            v[...] = v * 2 + 1
    return Y


@case(lambda r: (normal(r, 4), normal(r, 4)), lambda r: (normal(r, 1), normal(r, 1)))
def nditer_two_operands(a, b):
    out = []
    for x, y in np.nditer([a, b]):
        out.append(float(x) * float(y))
    return np.array(out), sum(out)


@case(lambda r: (normal(r, 3, 2),), lambda r: (normal(r, 0, 2),))
def iterate_rows_enumerate(X):
    acc = np.zeros(X.shape[1])
    for k, row in enumerate(X):
        acc += row * (k + 1)
    return acc, [float(r.sum()) for r in X]


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 1, 3),))
def iterate_columns_transpose(X):
    cols = [c.max() - c.min() for c in X.T]
    return np.array(cols), np.argmax(cols)


@case(lambda r: (normal(r, 2, 2, 2),), lambda r: (normal(r, 1, 1, 1),))
def flat_iterator_write(X):
    Y = X.copy()
    Y.flat[::2] = 0
    return Y, X.flat[1] if X.size > 1 else X.flat[0], list(X.flat)[:3]


# ---- in-place idioms ------------------------------------------------------------------------

@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 0, 3),))
def ellipsis_assign(X):
    Y = np.empty_like(X)
    Y[...] = X * 2
    Z = X.copy()
    Z[..., 0] = -1
    return Y, Z


@case(lambda r: (normal(r, 6), normal(r, 6)), lambda r: (normal(r, 1), normal(r, 1)))
def copyto_where(a, b):
    out = a.copy()
    np.copyto(out, b, where=b > a)
    z = np.zeros(len(a), dtype=np.float32)
    np.copyto(z, a, casting="same_kind")
    return out, z


@case(lambda r: (ints(r, 0, 9, 8),), lambda r: (ints(r, 0, 9, 2),))
def put_place_putmask(x):
    a = x.copy()
    np.put(a, [0, -1], [100, 200])
    b = x.copy()
    np.place(b, b > 4, [-1, -2])
    c = x.copy()
    np.putmask(c, c % 2 == 0, c * 10)
    return a, b, c


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 3, 5),))
def fill_diagonal_variants(A):
    B = A.copy()
    np.fill_diagonal(B, 0)
    C = np.zeros((5, 3))
    np.fill_diagonal(C, [1, 2, 3], wrap=True)
    D = A.copy()
    np.fill_diagonal(D[:, ::-1], -1)
    return B, C, D


@case(lambda r: (normal(r, 5, 4),), lambda r: (normal(r, 1, 1),))
def inplace_ops_on_views(X):
    Y = X.copy()
    Y[:, ::2] *= -1
    Y[1:] += Y[:-1]
    Y.T[0] = 9
    return Y


@case(lambda r: (normal(r, 6),), lambda r: (normal(r, 0),))
def inplace_ufunc_out(x):
    y = x.copy()
    np.exp(y, out=y)
    np.add(y, 1, out=y)
    np.sqrt(y, out=y)
    return y, np.negative(x, out=np.empty_like(x))


@case(lambda r: (ints(r, 0, 5, 3, 4),), lambda r: (ints(r, 0, 5, 1, 1),))
def put_along_axis_argmax(X):
    Y = np.zeros_like(X)
    idx = X.argmax(axis=1)[:, None]
    np.put_along_axis(Y, idx, 1, axis=1)
    return Y, np.take_along_axis(X, idx, axis=1)


@case(lambda r: (normal(r, 4, 4),), lambda r: (normal(r, 2, 2),))
def triangular_inplace_mask(A):
    B = A.copy()
    B[np.tril_indices_from(B, k=-1)] = 0
    C = A.copy()
    C[np.triu(np.ones(A.shape, bool), 1)] = np.nan
    return B, C, np.nansum(C)


@case(lambda r: (normal(r, 8),), lambda r: (normal(r, 1),))
def swap_halves_inplace(x):
    y = x.copy()
    h = len(y) // 2
    y[:h], y[h:2 * h] = y[h:2 * h].copy(), y[:h].copy()
    y[::-1].sort()
    return y


@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 2, 3),))
def row_swap_fancy(X):
    Y = X.copy()
    Y[[0, -1]] = Y[[-1, 0]]
    Z = X.copy()
    Z[:, [0, 2]] = Z[:, [2, 0]]
    return Y, Z


@case(lambda r: (normal(r, 5),), lambda r: (np.array(2.0),))
def resize_and_shape_assign(x):
    y = np.resize(x, 7)
    z = x.copy()
    z.shape = (-1, 1) if z.ndim else ()
    return y, z


# ---- 0-d, empty and mixed -------------------------------------------------------------------

@case(lambda r: (np.array(3.5),), lambda r: (np.array(-1.0),))
def zero_d_arithmetic_and_index(x):
    y = np.array(x * 2)
    y[()] = y + 1
    return y, x[...], x.item(), np.atleast_1d(x), float(x) + 1


@case(lambda r: (np.empty((0, 3)),), lambda r: (np.empty((3, 0)),))
def empty_reductions_safe(X):
    return (X.sum(axis=0), X.max(axis=0, initial=-np.inf), X.mean(axis=1) if X.shape[1] else
            np.zeros(X.shape[0]), np.prod(X, axis=0), X.any(), X.all())


@case(lambda r: (np.empty(0, dtype=np.int64),), lambda r: (np.array([4]),))
def empty_group_ops(k):
    u, inv, c = np.unique(k, return_inverse=True, return_counts=True)
    return u, inv, c, np.bincount(k, minlength=3), np.cumsum(k)


@case(lambda r: (np.array(5),), lambda r: (np.array(0),))
def zero_d_int_ops(n):
    return np.arange(n), np.zeros(n), n // 2, n % 3, np.power(2, n), np.eye(int(n)).sum()


@case(lambda r: (normal(r, 0),), lambda r: (normal(r, 3),))
def empty_sort_search_unique(x):
    return np.sort(x), np.argsort(x), np.searchsorted(np.sort(x), 0.0), np.unique(x), np.diff(x)


@case(lambda r: (np.float64(2.5), normal(r, 3)), lambda r: (np.float64(-1.0), normal(r, 0)))
def numpy_scalar_and_array(s, x):
    return s * x, np.maximum(s, x), np.float32(s) + x.astype(np.float32), isinstance(s * 2, float)


# ---- miscellaneous user code ----------------------------------------------------------------

@case(lambda r: (normal(r, 6, 3),), lambda r: (normal(r, 1, 3),))
def minmax_scale_columns(X):
    lo, hi = X.min(0), X.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return (X - lo) / span, np.ptp(X, axis=0)


@case(lambda r: (ints(r, 0, 3, 10),), lambda r: (ints(r, 0, 3, 1),))
def one_hot_and_back(y):
    k = y.max() + 1
    oh = np.eye(k, dtype=np.int8)[y]
    return oh, oh.argmax(axis=1), oh.sum(0)


@case(lambda r: (normal(r, 8, 3), ints(r, 0, 2, 8)), lambda r: (normal(r, 2, 3), np.array([0, 1])))
def class_means_lda_like(X, y):
    mus = np.array([X[y == c].mean(0) for c in (0, 1)])
    Sw = sum(np.cov(X[y == c].T, bias=True) * (y == c).sum() for c in (0, 1))
    return mus, Sw


@case(lambda r: (normal(r, 10, 2), 2), lambda r: (normal(r, 3, 2), 1))
def kmeans_few_iterations(X, k):
    C = X[:k].copy()
    for _ in range(5):
        lab = ((X[:, None] - C[None]) ** 2).sum(-1).argmin(1)
        for j in range(k):
            if (lab == j).any():
                C[j] = X[lab == j].mean(0)
    return C, lab


@case(lambda r: (normal(r, 12),), lambda r: (normal(r, 2),))
def ewma_loop(x):
    a = 0.3
    out = np.empty_like(x)
    acc = x[0] if len(x) else 0.0
    for i, v in enumerate(x):
        acc = a * v + (1 - a) * acc
        out[i] = acc
    return out


@case(lambda r: (prices_like(r, 15),), lambda r: (prices_like(r, 2),))
def drawdown_and_returns(p):
    r = np.diff(np.log(p))
    peak = np.maximum.accumulate(p)
    dd = p / peak - 1
    return r, dd.min(), np.argmin(dd), np.exp(r.sum())


def prices_like(r: np.random.Generator, n: int) -> np.ndarray:
    return 50 * np.exp(np.cumsum(0.02 * r.standard_normal(n)))


@case(lambda r: (ints(r, 0, 100, 10),), lambda r: (ints(r, 0, 100, 1),))
def bit_flags_unpack(x):
    b = np.unpackbits(x.astype(np.uint8)[:, None], axis=1)
    return b, b.sum(1), np.packbits(b, axis=1).ravel()


@case(lambda r: (normal(r, 5, 5),), lambda r: (normal(r, 1, 1),))
def meshgrid_radial_profile(img):
    h, w = img.shape
    yy, xx = np.mgrid[:h, :w]
    rr = np.hypot(yy - h // 2, xx - w // 2).astype(int)
    prof = np.bincount(rr.ravel(), img.ravel()) / np.bincount(rr.ravel())
    return prof, np.ogrid[:h, :w][1].shape


@case(lambda r: (normal(r, 3, 4), normal(r, 4, 2)), lambda r: (normal(r, 1, 1), normal(r, 1, 1)))
def matmul_chain_and_einsum(A, B):
    return (A @ B, np.einsum("ij,jk->ik", A, B), np.linalg.multi_dot([A, B, B.T]),
            np.einsum("ij,ij->i", A, A), np.matmul(A, B).trace() if A.shape[0] == B.shape[1] else 0)


@case(lambda r: (normal(r, 6),), lambda r: (np.array([np.nan, 1.0, np.inf]),))
def nan_inf_cleanup(x):
    y = np.nan_to_num(x, nan=0.0, posinf=1e3, neginf=-1e3)
    bad = ~np.isfinite(x)
    fill = np.nanmean(np.where(bad, np.nan, x)) if (~bad).any() else 0.0
    return y, bad.sum(), np.where(bad, fill, x)


@case(lambda r: (ints(r, 1, 50, 8),), lambda r: (ints(r, 1, 50, 1),))
def int_math_chain(n):
    return (np.gcd.reduce(n), np.lcm(n, 6), n // 7, -n % 7, np.divmod(n, 4),
            np.left_shift(n, 2) ^ n, (n & -n), np.bitwise_count(n.astype(np.uint64)))


@case(lambda r: (normal(r, 10),), lambda r: (normal(r, 1),))
def argpartition_topk(x):
    k = min(3, len(x))
    idx = np.argpartition(-x, k - 1)[:k]
    top = np.sort(x[idx])[::-1]
    return top, np.partition(x, len(x) // 2)[len(x) // 2]


@case(lambda r: (normal(r, 4, 3),), lambda r: (normal(r, 2, 1),))
def stack_concat_variety(X):
    return (np.vstack([X, X[:1]]), np.hstack([X, X[:, :1]]), np.dstack([X, X]).shape,
            np.column_stack([X[:, 0], X[:, -1]]), np.concatenate([X, X], axis=None).size,
            np.stack([X, X], axis=-1).shape)


@case(lambda r: (normal(r, 7),), lambda r: (normal(r, 2),))
def interp_resample(y):
    x = np.arange(len(y))
    xn = np.linspace(0, len(y) - 1, 2 * len(y))
    return np.interp(xn, x, y), np.interp(-1, x, y), np.interp(xn, x, y, left=0, right=0)


@case(lambda r: (normal(r, 6, 4),), lambda r: (normal(r, 1, 4),))
def softmax_cross_entropy(logits):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = np.arange(len(logits)) % logits.shape[1]
    return p, -np.log(p[np.arange(len(y)), y]).mean()


@case(lambda r: (normal(r, 5),), lambda r: (normal(r, 1),))
def tolist_and_back(x):
    lst = x.tolist()
    lst.sort()
    return np.array(lst), len(lst), max(lst), np.asarray(lst[::-1]).dtype


@case(lambda r: (np.array([3, 1, 2]), np.array(["c", "a", "b"])),
      lambda r: (np.array([1]), np.array(["z"])))
def argsort_strings_parallel(n, s):
    o = np.argsort(s)
    return n[o], s[o], np.searchsorted(s[o], "b")


@case(lambda r: (normal(r, 6, 6),), lambda r: (normal(r, 2, 2),))
def diag_offsets_and_trace(A):
    return (np.diagonal(A, 1), np.diag(A, -1), np.trace(A, offset=1), np.diag(np.diag(A)),
            A[np.diag_indices_from(A)], np.tri(len(A)) * A)


@case(lambda r: (normal(r, 3, 3),), lambda r: (np.eye(3) * 2,))
def qr_and_cholesky(A):
    Q, R = np.linalg.qr(A)
    S = A @ A.T + np.eye(len(A))
    L = np.linalg.cholesky(S)
    return np.abs(np.diag(R)), np.allclose(Q @ R, A), L @ L.T, np.linalg.eigvalsh(S)


@case(lambda r: (normal(r, 4, 4), normal(r, 4)), lambda r: (np.eye(1), normal(r, 1)))
def solve_multiple_rhs(A, b):
    A = A + 4 * np.eye(len(A))
    x = np.linalg.solve(A, b)
    X = np.linalg.solve(A, np.stack([b, 2 * b], axis=1))
    return x, X, np.linalg.norm(A @ x - b) < 1e-9


@pytest.mark.parametrize("name", sorted(CASES15))
def test_wild15_function_matches_numpy(name: str) -> None:
    run_case(name, CASES15, warm=True, views=True, warns=True)


if __name__ == "__main__":
    main(sys.argv[1:], CASES15, warm=True, views=True, warns=True)
