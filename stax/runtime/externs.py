"""NumPy routines run by a compiled program's wrapper as extern calls (like matmul's BLAS call).

The frontend registers each routine under a key that spells it out (`np.sort(axis=1)`); a
LoopProgram's extern node names the key; the wrapper calls `EXTERNS[key](*inputs, out=buffer)`.
The key is deterministic, so compiled segments and the structural cache see equal programs.

A spelled key may miss a fact the routine depends on (np.copyto's key once lacked whether a
`where=` mask was passed, and the routine first registered under it served both forms). So a
key never names two different routines: each registration is compared with the routines already
under its spelling by `specification` (code, closure contents, defaults: what the routine does),
and a different routine gets its own key (`np.copyto(...) #2`). Equal specifications share one.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

import numpy as np

EXTERNS: dict[str, Callable[..., Any]] = {}
# [DYN16] Keys of routines that return their result (its length depends on the data): the
# wrapper binds the data-dependent size from it instead of allocating the node's buffer.
SIZED: set[str] = set()
# Keys of one result of a routine returning several (`np.linalg.eigh`'s vectors): not run when
# that result is unused, as the routine's errors come with its other results. Every other
# routine runs even so: NumPy's errors (LinAlgError, np.choose's ValueError) must come through.
PARTS: set[str] = set()
# The specifications registered under each spelled key, in registration order: the n-th
# (from 0) is served by key `spelled` (n == 0) or `f"{spelled} #{n + 1}"`.
SPECIFICATIONS: dict[str, list[Hashable]] = {}

_VALUES = (type(None), bool, int, str, bytes, np.dtype, type(Ellipsis))


def specification(obj: Any, within: frozenset[int] = frozenset()) -> Hashable:
    """What `obj` is, as a hashable value that is equal exactly for objects that behave alike:
    functions by their code, closure contents and defaults; containers, arrays and scalars by
    value; anything else (NumPy's functions, ufuncs, types, loop bodies) by identity (a
    registered routine keeps it alive, so its id is not reused)."""
    if isinstance(obj, types.FunctionType):
        if id(obj) in within:  # a function whose closure holds itself
            return ("recursive", obj.__code__)
        within = within | {id(obj)}
        cells = tuple(specification(c.cell_contents, within) if _filled(c) else ("empty",)
                      for c in obj.__closure__ or ())
        return ("function", obj.__code__, id(obj.__globals__), cells,
                specification(obj.__defaults__, within),
                specification(obj.__kwdefaults__, within))
    if isinstance(obj, functools.partial):
        return ("partial", specification(obj.func, within), specification(obj.args, within),
                specification(obj.keywords, within))
    if isinstance(obj, types.BuiltinMethodType):  # `np.add.reduceat`: a new object each time
        return ("builtin", obj.__name__, specification(obj.__self__, within))
    if isinstance(obj, types.MethodType):
        return ("method", specification(obj.__func__, within),
                specification(obj.__self__, within))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(specification(o, within) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((specification(k, within), specification(v, within))
                              for k, v in obj.items()))
    if isinstance(obj, (set, frozenset)):
        return ("set", frozenset(specification(o, within) for o in obj))
    if isinstance(obj, slice):
        return ("slice", specification((obj.start, obj.stop, obj.step), within))
    if isinstance(obj, np.ndarray):
        return ("array", obj.dtype.str, obj.shape, obj.strides, obj.tobytes())
    if isinstance(obj, np.generic):
        return ("scalar", obj.dtype.str, obj.tobytes())
    if isinstance(obj, (float, complex)):  # -0.0 is not 0.0; nan is nan
        return (type(obj).__name__, repr(obj))
    if isinstance(obj, _VALUES):
        return (type(obj).__name__, obj)
    return ("object", id(obj))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - raises ValueError for an empty cell
    except ValueError:
        return False
    return True


def register(key: str, routine: Callable[..., Any], output: int | None = None) -> str:
    """`routine(*arrays)` (its `output`-th result when it returns several) is written into the
    node's buffer; NumPy's own errors and warnings come through unchanged. Returns the key the
    node names: `key`, or a variant of it when a different routine is registered under `key`."""

    def call(*arrays: np.ndarray, out: np.ndarray) -> None:
        result = routine(*arrays)
        np.copyto(out, result if output is None else result[output], casting="unsafe")

    key = _registered(key, call)
    if output is not None:
        PARTS.add(key)
    return key


def register_into(key: str, routine: Callable[..., None]) -> str:
    """[H13] The official `out=` hook: `routine(*arrays, out=buffer)` writes the result into
    the node's buffer itself (as NumPy's `out=` does: no result array, no copy). The key is
    the caller's, spelled out as for `register` (and made distinct the same way)."""
    return _registered(key, routine)


def register_along(key: str, routine: Callable[[np.ndarray, np.ndarray], None],
                   axis: int) -> str:
    """[PERF10] `routine(x, out)` writes into the node's buffer a result computed along `axis`
    alone (a sort, an argsort, a partition of each row): an array of PARALLEL_MIN_ELEMENTS or
    more is split along its longest other axis over the cores idle now, at most the kernels'
    thread count (`threads.team` of `plan.thread_count`: OMP_NUM_THREADS), the calling thread
    taking the first part (NumPy's sorts release the GIL, and each row's result is the same
    whichever thread computes it). NumPy's own routines run on one thread; sorting in place
    into the buffer also saves the result array NumPy allocates and the copy out of it."""

    def call(x: np.ndarray, *, out: np.ndarray) -> None:
        from stax.tiling.plan import thread_count
        from stax.tiling.threads import team

        other = [d for d in range(x.ndim) if d != axis and x.shape[d] > 1]
        threads = team(thread_count()) if other and x.size >= PARALLEL_MIN_ELEMENTS else 1
        if threads == 1:
            routine(x, out)
            return
        d = max(other, key=lambda k: x.shape[k])
        edges = np.linspace(0, x.shape[d], min(threads, x.shape[d]) + 1).astype(int)
        parts = [(slice(None),) * d + (slice(lo, hi),)
                 for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
        others = [_pool().submit(routine, x[p], out[p]) for p in parts[1:]]
        try:
            routine(x[parts[0]], out[parts[0]])
        finally:  # no thread still writing once the call is over
            wait(others)
        for f in others:
            f.result()

    return _registered(key, call)


# [PERF10] Below this many elements an axis routine runs on the calling thread: a sort costs
# 10-50 ns an element, a part handed to a pool thread ~20-50 us.
PARALLEL_MIN_ELEMENTS = 1 << 15


@functools.cache
def _pool() -> ThreadPoolExecutor:
    from stax.tiling.threads import CORES

    return ThreadPoolExecutor(CORES, thread_name_prefix="stax-along")


def register_sized(key: str, routine: Callable[..., Any], dtype: np.dtype) -> str:
    """[DYN16] `routine(*arrays)` returns the node's array itself, whose length the wrapper
    reads (`x[mask]`, `np.unique`): C-contiguous, of the traced dtype (spelled in `key`)."""
    def call(*arrays: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(routine(*arrays), dtype=dtype)

    key = _registered(key, call)
    SIZED.add(key)
    return key


def under_errstate(key: str, modes: dict[str, Any]) -> str:
    """[ERR] The key of routine `key` run under `np.errstate(**modes)`: the modes a traced
    function set around its call (`with np.errstate(over="ignore"): np.histogram(x)`)."""
    routine = EXTERNS[key]

    def call(*arrays: np.ndarray, **out: np.ndarray) -> Any:
        with np.errstate(**modes):
            return routine(*arrays, **out)

    spelled = ", ".join(f"{c}={m!r}" for c, m in modes.items() if c != "call")
    new = _registered(f"{key} under np.errstate({spelled})", call)
    if key in SIZED:
        SIZED.add(new)
    return new


def _registered(spelled: str, call: Callable[..., Any]) -> str:
    """The key of `call` under `spelled`: the key of an equal specification registered before
    (its routine serves), else a new one for `call`."""
    spec = specification(call)
    known = SPECIFICATIONS.setdefault(spelled, [])
    if spec not in known:
        known.append(spec)
    n = known.index(spec)
    key = spelled if n == 0 else f"{spelled} #{n + 1}"
    EXTERNS.setdefault(key, call)
    return key
