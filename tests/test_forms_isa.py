"""The same programs under each ISA level and each kernel form (forced by option) give NumPy's
results; and a set of programs runs clean under AddressSanitizer + UBSan (STAX_SANITIZE=1)."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest
from conftest import run_sanitized

import stax
from stax.runtime.compiler import ISA_LEVELS, isa_level
from stax.tiling.plan import FORMS


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def colstats(x):
    return x.sum(0), x.max(0), (x > 0).any(0), x.argmax(1)


def transpose_add(x):
    return x.T * 2.0 + np.tanh(x)


def big_sum(x):
    return x.sum(), np.nanmax(x) if False else x.min()


def col_var_mean(x):  # a fused group in the outer-reduction form (with CSE of the sums)
    return x.var(0), x.mean(0), x.std(0, keepdims=True) * 2.0


def arg_lanes(x):  # argmax/argmin vector lanes: NaN first, ties to the first position
    y = np.round(x * 2)
    return y.argmax(-1), y.argmin(-1), x.argmax(0), (x > 0).argmax(-1)


def checks_without_branches(x):  # error bits collected per region; bools read as bytes
    m = x > 0.3
    ints = (x * 40).astype(np.int32)  # NaN -> INT_MIN with a warning
    q = ints // (ints % 5)  # division by zero: 0 with a warning
    return np.where(m, np.sin(x) + np.cos(x), np.sign(x)), q, ints % -7, m.astype(np.float32)


PROGRAMS = [softmax, colstats, transpose_add, big_sum, col_var_mean, arg_lanes,
            checks_without_branches]
RUNNABLE = ISA_LEVELS[ISA_LEVELS.index(isa_level()):]


def inputs(fn):
    rng = np.random.default_rng(1)
    if fn is big_sum:
        return (rng.standard_normal(70_001).astype(np.float32),)
    x = rng.standard_normal((67, 67)).astype(np.float32)
    x[3, 5] = np.nan
    return (x,)


def check(got, want) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(got, want)


def _check(got, want) -> None:
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _check(g, w)
        return
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("isa", RUNNABLE)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_isa_levels(fn, isa) -> None:
    args = inputs(fn)
    check(*_both(stax.jit(fn, isa=isa), fn, args))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_forms(fn, form) -> None:
    args = inputs(fn)
    check(*_both(stax.jit(fn, form=form), fn, args))


def _both(jitted, fn, args):
    """Stax's and NumPy's results; the same warnings, by category and message."""
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = jitted(*args)
    with warnings.catch_warnings(record=True) as theirs, np.errstate(all="warn"):
        warnings.simplefilter("always")
        want = fn(*args)
    assert {(w.category, str(w.message)) for w in ours} >= {
        (w.category, str(w.message)) for w in theirs}
    return got, want


def test_fused_column_statistics_use_the_outer_reduction_form() -> None:
    x = inputs(col_var_mean)[0]
    forms = _form_decisions(col_var_mean, x)
    assert any(d.value == "outer-reduction" and "fused nodes" in d.text for d in forms)


def test_forms_are_chosen_and_explained() -> None:
    x = inputs(transpose_add)[0]
    assert "tiled" in [d.value for d in _form_decisions(transpose_add, x)]
    assert "outer-reduction" in [d.value for d in _form_decisions(lambda a: a.sum(0), x)]
    assert "scalar" in [d.value for d in _form_decisions(softmax, x, form="scalar")]


def _form_decisions(fn, *args, **options):
    """The plans' `form` decision records (G: decisions as records with a rule name)."""
    report = stax.explain(fn, *args, **options)
    return [d for p in report.compilation.program.plans for d in p.decisions if d.rule == "form"]


def test_bad_isa_and_form_options() -> None:
    x = np.ones(3)
    with pytest.raises(ValueError, match="not one of"):
        stax.jit(lambda a: a + 1, isa="sse9")(x)
    with pytest.raises(ValueError, match="not one of"):
        stax.jit(lambda a: a + 1, form="diagonal")(x)


SANITIZED = textwrap.dedent("""
    import warnings
    import numpy as np
    import stax
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 65))
    i = np.arange(12).reshape(3, 4) - 5
    progs = [
        (lambda a: np.exp(a - a.max(-1, keepdims=True)).sum(0), (x,)),
        (lambda a: a.T[::2, ::-3] + 1.0, (x,)),
        (lambda a: np.cumsum(a, axis=0)[-1], (x,)),
        (lambda a, b: a // b, (i, i % 3)),
        (lambda a: a.astype(np.int32), (np.array([np.nan, 1e20, 3.5]),)),
        (lambda a: np.take_along_axis(a, np.argsort(a, axis=1)[:, :3], axis=1)
         if False else a[:, [0, 64, -1]], (x,)),
        (lambda a: (a > 0).sum(), (x,)),
        (lambda a: np.concatenate([a, a[:1]], axis=0).std(1), (x,)),
        (lambda a: (a.var(0), a.mean(0)), (x,)),
        (lambda a: (a.argmax(-1), a[:, :5].argmin(-1)), (x,)),
        (lambda a, b: (a // b, a % b), (i.astype(np.int32), (i % 3).astype(np.int32))),
        (lambda a: np.where(a > 0, np.sin(a), np.sign(a)), (x,)),
        (lambda a: (np.cumsum(a.ravel()), np.cumsum(a, 0)), (np.tile(x, (4, 1)),)),
    ]
    jitted = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, args in progs:
            # programs stay alive: this checks kernels; unloading a library (dlclose) that
            # ran OpenMP regions crashed a worker thread under ASan (reported, runtime's)
            jitted.append(stax.jit(fn))
            got = jitted[-1](*args)
            want = fn(*args)
            pairs = zip(got, want) if isinstance(want, tuple) else [(got, want)]
            for g, w in pairs:
                assert np.allclose(g, w, equal_nan=True), fn
    print("sanitized ok")
""")


def test_kernels_run_clean_under_sanitizers(tmp_path) -> None:
    run_sanitized(SANITIZED, tmp_path, STAX_PARALLEL_MIN_NS="0")  # every kernel threaded


ULP_CASES = {
    "exp": (np.exp, (-80.0, 80.0)), "log": (np.log, (1e-30, 1e30)),
    "tanh": (np.tanh, (-20.0, 20.0)), "sin": (np.sin, (-100.0, 100.0)),
    "cos": (np.cos, (-100.0, 100.0)), "expm1": (np.expm1, (-10.0, 10.0)),
    "log1p": (np.log1p, (-0.9, 1e6)), "arctan": (np.arctan, (-1e4, 1e4)),
}


@pytest.mark.parametrize("name", sorted(ULP_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_vector_math_accuracy_within_4_ulp(name, dtype) -> None:
    """Vectorized transcendentals (glibc libmvec) against a correctly rounded reference:
    float64 NumPy for float32, and an extended-precision (longdouble) evaluation for float64."""
    fn, (lo, hi) = ULP_CASES[name]
    rng = np.random.default_rng(7)
    x = rng.uniform(lo, hi, 20_000).astype(dtype)
    if name == "log":
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), 20_000)).astype(dtype)
    got = stax.jit(fn)(x)
    wide = np.float64 if dtype == np.float32 else np.longdouble
    want = fn(x.astype(wide)).astype(dtype)
    ulps = np.abs(got.astype(wide) - want.astype(wide)) / np.spacing(np.abs(want)).astype(wide)
    assert float(np.max(ulps)) <= 4.0
