"""Coverage fixes of session 17 (HUNT10, from tests/corpus/test_corpus_wild15.py), each tested
against NumPy computed in the test. Graph breaks are allowed here (they run NumPy); wrong
results, wrong types and crashes are not."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from corpus.test_corpus_wild import same

import stax
from stax.frontend.breaks import GraphBreakWarning


def run(fn, *args: Any) -> set[str]:  # type: ignore[no-untyped-def]
    """`fn` under stax.jit, twice (the second call warm), equals NumPy's on copies (the
    corpus's comparison: types, dtypes, values); the graph breaks met."""
    jitted = stax.jit(fn)
    breaks: set[str] = set()
    for _ in range(2):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fn(*copies)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = jitted(*args)
        breaks |= {str(w.message) for w in caught if w.category is GraphBreakWarning}
        same(got, want)
    return breaks


WORDS = np.array(["apple", "Banana", "cherry", "fig"])
DAYS = np.array(["2024-01-31", "2024-03-01", "2023-12-25"], dtype="datetime64[D]")
RECORDS = np.array([(1, 2.5), (0, -1.0), (1, 4.0)], dtype=[("id", "i4"), ("x", "f8")])


@pytest.mark.parametrize("arg", [WORDS, WORDS[::-2], WORDS[:0], np.array("kiwi"), DAYS,
                                 DAYS[::-1], RECORDS, np.array([b"ab", b"c"]),
                                 np.array([1, "a"], dtype=object)], ids=str)
def test_argument_of_a_dtype_kernels_never_compute_in(arg: np.ndarray) -> None:
    """[HUNT10] An argument of strings, dates, records or objects was refused with a TypeError
    (`np.char.upper(w)`, `d.astype("datetime64[M]")`, `a["x"]`): the call now runs in NumPy
    with a graph break naming the dtype (strict=True keeps the TypeError)."""
    def fn(a, x):
        return a.copy(), a[..., ::-1] if a.ndim else a[()], a.shape, x * 2
    breaks = run(fn, arg, np.arange(3.0))
    assert any(f"dtype {arg.dtype}" in b for b in breaks), breaks
    with pytest.raises(TypeError, match="not supported"):
        stax.jit(fn, strict=True)(arg, np.arange(3.0))


def test_strings_dates_and_records_in_user_code() -> None:
    """[HUNT10] What such arguments meet in ordinary programs, against NumPy."""
    run(lambda w, v: (np.char.upper(w), np.char.str_len(w) * v, w[v > 0]), WORDS,
        np.array([1.0, -1.0, 2.0, 0.0]))
    run(lambda d: (d.astype("datetime64[M]"), np.diff(np.sort(d)).astype(int)), DAYS)
    run(lambda a: (a["x"] * 2, np.sort(a, order="x")["id"], a[a["id"] == 1]), RECORDS)


def test_values_of_such_dtypes_made_inside_the_function() -> None:
    """[HUNT10] A string, date or timedelta value made from a traced array (`x.astype(str)`,
    `t0 + secs.astype("timedelta64[s]")`) raised TypeError while tracing: a graph break."""
    secs = np.array([0.0, 3600.0, 5400.0])

    def stamps(s):
        t = np.datetime64("2024-03-10T00:00") + s.astype("timedelta64[s]")
        return t, np.diff(t) / np.timedelta64(1, "m"), (s * 2).astype(str)
    run(stamps, secs)
    run(stamps, secs[::-1])
    run(stamps, secs[:0])
    run(lambda x: (np.round(x, 1).astype(str), np.char.add("v=", x.astype("U8"))),
        np.array([[1.25, -2.0]]).T)
    f = stax.jit(stamps)  # [HUNT10] a call run in NumPy for a stax.jit error (here: a string
    with warnings.catch_warnings():  # value) is remembered: later calls run NumPy at once
        warnings.simplefilter("ignore")  # (each traced in segments again: 30-200x NumPy)
        for _ in range(3):
            same(f(secs), stamps(secs))
    assert f.segment_counts[f.key((secs,))][0] == 1
    for day in (np.datetime64("2024-02-28"), np.datetime64("2024-03-01")):  # a NumPy scalar of
        run(lambda d, k: (d + k.astype("timedelta64[D]"), k * 2), day, np.arange(3))  # such a
        # dtype: specialized on its value


def test_fft2_and_fftn() -> None:
    """[HUNT10] np.fft.fft2 / ifft2 / rfft2 / irfft2 / fftn / ifftn (2-D image filtering) were
    a graph break: now one extern call of NumPy's transform, with s=, axes= and norm=."""
    def lowpass(img):
        F = np.fft.fft2(img)
        F[2:-2, :] = 0
        return np.fft.ifft2(F).real, np.abs(F).sum()

    def variety(x):
        return (np.fft.fftn(x, axes=(0,)), np.fft.rfft2(x, s=(4, 6), norm="ortho"),
                np.fft.irfft2(np.fft.rfft2(x)), np.fft.ifftn(x, s=(3,), axes=(1,)),
                np.fft.rfftn(x, axes=(1, 0)))
    r = np.random.default_rng(0)
    img = r.standard_normal((6, 8))
    for x in (img, img.T, img[::2, ::-3], img.astype(np.float32), img[:1, :2]):
        assert not run(lowpass, x)
        assert not run(variety, x)
    assert not run(lambda z: np.fft.fft2(z, axes=(0, 2)), r.standard_normal((2, 3, 4)) + 1j)
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stax.jit(lambda x: np.fft.fft2(x, s=(0, 2)))(img)


def test_bincount_of_constant_labels_with_traced_weights() -> None:
    """[HUNT10] A radial profile (`np.bincount(r.ravel(), img.ravel()) / np.bincount(r.ravel())`
    with `r` from np.mgrid, a constant): the weighted count had a length known only at run
    time, the unweighted one NumPy's: the division broke. Constant labels give a known length."""
    def profile(img):
        h, w = img.shape
        yy, xx = np.mgrid[:h, :w]
        rr = np.hypot(yy - h // 2, xx - w // 2).astype(int)
        return np.bincount(rr.ravel(), img.ravel()) / np.bincount(rr.ravel()), \
            np.bincount(np.arange(3), minlength=5, weights=img.ravel()[:3])
    r = np.random.default_rng(1)
    for img in (r.standard_normal((5, 5)), r.standard_normal((4, 6)).T, np.ones((1, 3))):
        assert not run(profile, img)


def test_multi_dot() -> None:
    """[HUNT10] np.linalg.multi_dot was a graph break: matmuls from the left (1-d ends as
    vectors; NumPy's errors for fewer than two arrays or a 3-d one)."""
    r = np.random.default_rng(2)
    A, B, C = r.standard_normal((3, 4)), r.standard_normal((4, 5)), r.standard_normal((5, 2))
    v, w = r.standard_normal(3), r.standard_normal(2)
    assert not run(lambda a, b, c: np.linalg.multi_dot([a, b, c]), A, B, C)
    assert not run(lambda a, b, c: np.linalg.multi_dot((a.T.T, b, c)), A, B[:, ::-1], C)
    assert not run(lambda v, a, b, c, w: np.linalg.multi_dot([v, a, b, c, w]), v, A, B, C, w)
    assert not run(lambda a, b: np.linalg.multi_dot([a, b]), A.astype(np.float32), B[:, :0])
    assert not run(lambda a, b: np.linalg.multi_dot([a, b]), A, B[None])  # np.dot's rules
    for bad in ([A], [A, B, C[None]]):
        try:
            np.linalg.multi_dot(bad)
        except Exception as e:  # noqa: BLE001 - Stax raises NumPy's class
            with pytest.raises(type(e)), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stax.jit(lambda *a: np.linalg.multi_dot(a))(*bad)
        else:
            raise AssertionError("NumPy raises here")
