"""[SLOW2] Warm-call cost of a stax.jit function in every call form (issue 9 item 4: at most
2 µs above the equivalent NumPy call).

    python benchmarks/call_forms.py [--n 1000] [--calls 2000] [--repeat 9] [--only SUBSTR]
                                    [--markdown OUT.md]

One row per call form: positional, keyword and default arguments, `*args`, Python and NumPy
scalars, 0-d arrays, tuples/lists of arrays, None and dtype arguments, strided, transposed and
Fortran-order inputs, float32/int64/bool/complex, results as tuple/dict/scalar/0-d/view/mutated
argument, a function with a graph break, and shapes that change between calls (the
shape-generic path). Each form's jitted call and its NumPy equivalent (the same function run
by NumPy) are timed in batches of `--calls` calls, interleaved for `--repeat` rounds, by the
process's CPU clock (garbage collection off); the table gives medians per call and
Stax - NumPy. Every form's result is checked against NumPy's first.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's stax
import stax  # noqa: E402
from benchmarks.overhead import per_call_us, table  # noqa: E402

Form = tuple[Callable[..., Any], Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]]


def add(x: np.ndarray, y: Any) -> Any:
    return x + y


def scaled(x: np.ndarray, y: float = 2.0) -> np.ndarray:
    return x * y


def star(*xs: np.ndarray) -> np.ndarray:
    return xs[0] + xs[1]


def pair_sum(xs: Sequence[np.ndarray]) -> np.ndarray:
    return xs[0] + xs[1]


def maybe(x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    return x if y is None else x + y


def maybe_none(x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    return x * 2.0 if y is None else x + y


def cast(x: np.ndarray, dtype: Any) -> np.ndarray:
    return x.astype(dtype) * 2


def both(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x + y, x - y


def named(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    return {"sum": x + y, "diff": x - y}


def mean_float(x: np.ndarray) -> float:
    return float(x.sum()) / x.size


def total(x: np.ndarray) -> Any:
    return x.sum()


def stride_view(x: np.ndarray) -> np.ndarray:
    return x[::2]


def bump(x: np.ndarray) -> np.ndarray:
    x += 1.0
    return x


def with_break(x: np.ndarray) -> np.ndarray:
    y = x * 2.0
    if y.sum() > 0:  # a graph break: a value decides Python control flow
        return y + 1.0
    return y - 1.0


def forms(n: int) -> dict[str, Form]:
    """name -> (function, arguments of each call as (args, kwargs)). Each call gets the same
    argument objects, except the shape-changing form, which alternates two lengths."""
    rng = np.random.default_rng(0)
    a, b = rng.random(n), rng.random(n)
    m = int(np.sqrt(n)) or 1
    sq, sq2 = rng.random((m, m)), rng.random((m, m))
    fortran, fortran2 = np.asfortranarray(sq), np.asfortranarray(sq2)
    big, big2 = rng.random(2 * n), rng.random(2 * n)
    f32, f32b = a.astype(np.float32), b.astype(np.float32)
    i64, i64b = np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64)[::-1].copy()
    bools, bools2 = a > 0.5, b > 0.5
    c128, c128b = a + 1j * b, b - 1j * a
    mutated = np.zeros(n)
    lengths = [a, rng.random(n + 8)]
    other = [b, rng.random(n + 8)]
    flip = [0]

    def changing() -> tuple[tuple[Any, ...], dict[str, Any]]:
        flip[0] ^= 1
        return (lengths[flip[0]], other[flip[0]]), {}

    def fixed(*args: Any, **kwargs: Any) -> Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]:
        return lambda: (args, kwargs)

    return {
        "positional f(x, y)": (add, fixed(a, b)),
        "keyword f(x, y=y)": (add, fixed(a, y=b)),
        "keywords f(x=x, y=y)": (add, fixed(x=a, y=b)),
        "default f(x) (y=2.0)": (scaled, fixed(a)),
        "*args f(x, y)": (star, fixed(a, b)),
        "Python int": (add, fixed(a, 3)),
        "Python float": (add, fixed(a, 2.5)),
        "Python bool": (add, fixed(a, True)),
        "0-d array": (add, fixed(a, np.array(2.5))),
        "NumPy scalar np.float64": (add, fixed(a, np.float64(2.5))),
        "tuple of arrays": (pair_sum, fixed((a, b))),
        "list of arrays": (pair_sum, fixed([a, b])),
        "None argument": (maybe_none, fixed(a, None)),
        "dtype argument": (cast, fixed(a, np.float32)),
        "strided x[::2]": (add, fixed(big[::2], big2[::2])),
        "transposed x.T": (add, fixed(sq.T, sq2)),
        "Fortran order": (add, fixed(fortran, fortran2)),
        "float32": (add, fixed(f32, f32b)),
        "int64": (add, fixed(i64, i64b)),
        "bool": (add, fixed(bools, bools2)),
        "complex128": (add, fixed(c128, c128b)),
        "result tuple": (both, fixed(a, b)),
        "result dict": (named, fixed(a, b)),
        "result Python float": (mean_float, fixed(a)),
        "result 0-d (x.sum())": (total, fixed(a)),
        "result view x[::2]": (stride_view, fixed(a)),
        "mutated argument x += 1": (bump, fixed(mutated)),
        "graph break (if on a value)": (with_break, fixed(a)),
        "shape changes every call": (add, changing),
    }


def pairs(n: int, only: str | None) -> dict[str, tuple[Callable[[], Any], Callable[[], Any]]]:
    """name -> (NumPy call, warm Stax call), results checked equal first."""
    out = {}
    for name, (fn, call_args) in forms(n).items():
        if only and only not in name:
            continue
        jitted = stax.jit(fn)
        for _ in range(4):  # compile (both shapes of the changing form), then warm
            args, kwargs = call_args()
            expected = fn(*args, **kwargs)
            got = jitted(*args, **kwargs)
            if isinstance(expected, dict):
                expected, got = list(expected.values()), list(got.values())
            np.testing.assert_allclose(got, expected, rtol=1e-6)
        args, kwargs = call_args()
        # (each form's arguments are built outside the timed lambdas where they are fixed)
        if name == "shape changes every call":
            out[name] = (
                (lambda fn=fn, c=call_args: fn(*c()[0])),
                (lambda j=jitted, c=call_args: j(*c()[0])),
            )
        else:
            out[name] = (
                (lambda fn=fn, a=args, k=kwargs: fn(*a, **k)),
                (lambda j=jitted, a=args, k=kwargs: j(*a, **k)),
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="elements per array")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timed batch")
    parser.add_argument("--repeat", type=int, default=9, help="interleaved rounds")
    parser.add_argument("--only", help="forms whose name contains this")
    parser.add_argument("--markdown", type=Path, help="also write the table as markdown here")
    args = parser.parse_args(argv)
    rows = []
    for name, (numpy_call, stax_call) in pairs(args.n, args.only).items():
        us = per_call_us(
            {"numpy": numpy_call, "stax": stax_call}, args.calls, args.repeat, time.process_time
        )
        rows.append(
            [name, f"{us['numpy']:.2f}", f"{us['stax']:.2f}", f"{us['stax'] - us['numpy']:+.2f}"]
        )
        print(f"{name}: {rows[-1][1:]}", file=sys.stderr, flush=True)
    headers = ["call form", "numpy µs", "stax µs", "stax - numpy µs"]
    print(table(rows, headers, markdown=False))
    if args.markdown:
        args.markdown.write_text(table(rows, headers, markdown=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
