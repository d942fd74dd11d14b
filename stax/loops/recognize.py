"""Recognition: a `for` over `range` in a traced function becomes one loop op.

`trace_with_loops` traces the user's function with `range` replaced, in a copy of its globals,
by `LoopRange`. Called as the iterable of a `for` statement (checked on the caller's bytecode:
GET_ITER then FOR_ITER follow the call) over two or more iterations, it yields one symbolic
index twice: pass 1 traces the body to find the loop-carried values, pass 2 traces it again
with each carried value replaced by a fresh parameter, and the ops of pass 2 become the body
Graph. The outer Graph gets one extern call per carried value (`stax.loops.runner`); the
carried tracers and local names are rebound to those calls' results.

Carried values are (a) tracers that existed before the loop and whose value the body replaced
(`x[...] = ...`, `x += ...`: every assignment of `Tracer.value` is watched during the body) and
(b) local names the body bound to another tracer (`u = u + 1`, `a, b = b, a`). Anything else
the body changes (a Python number, a list's length, a list element) makes the body differ per
iteration: the loop falls back to unrolling (builtin `range`) — as does a Python `if` on the
index, an index used as a shape, `break` and `return`. A `range` whose bounds are affine in an
enclosing index is a loop with a run-time trip count (`_dynamic_range`); `enumerate`, `zip`
and `reversed` of ranges and arrays are loops (`loop_iterable`).
"""

from __future__ import annotations

import contextlib
import ctypes
import dis
import functools
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stax.frontend import functions
from stax.frontend.numpy_api import broadcast_value
from stax.frontend.trace import Builder, GraphBreak, Tracer, TraceTooLarge
from stax.graph import Graph, Op, Value
from stax.loops.affine import (
    Affine,
    StoreForm,
    affine_form,
    known_index,
    masked_assignment,
    rewrite_index,
    slice_form,
)
from stax.loops.masked import IndexCopy, MaskedTracer, MaskFallback, Ranges, form_bounds
from stax.loops.masked import _product as product_terms
from stax.loops.runner import LoopBody, add_loop_ops, compile_soon
from stax.masked_reductions import fuse_masked_reductions
from stax.runtime.wrapper import MAX_KERNELS

UNROLL_LIMIT = 256  # a loop that must be unrolled may have at most this many iterations
MIN_TRIP = 2  # loops with fewer iterations are unrolled (nothing to gain)
_BUILTIN_RANGE = range
_COMPREHENSIONS = {"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"}

Site = tuple[str, int, str]  # file, line, function


class LoopError(RuntimeError):
    """A loop that can be neither compiled once nor unrolled (too many iterations)."""


class LoopFallback(BaseException):  # noqa: N818 - a control-flow signal, like GraphBreak
    def __init__(self, site: Site, reason: str) -> None:
        super().__init__(reason)
        self.site = site
        self.reason = reason


@dataclass(frozen=True)
class LoopRecord:
    """What became of one loop: compiled once (with its carried values), or unrolled (why)."""

    site: Site
    trip: range
    compiled: bool
    reason: str  # why it was unrolled, or the runner's decision
    carried: tuple[str, ...] = ()
    body: LoopBody | None = None

    @property
    def decision(self) -> str:
        return self.reason if self.body is None else self.body.decision

    def __str__(self) -> str:
        file, line, fn = self.site
        over = self.trip if self.body is None else self.body.label.split(" over ", 1)[1]
        head = f"loop at {file}:{line} in {fn}() over {over}"
        if not self.compiled:
            return f"{head}: unrolled ({self.reason})"
        return f"{head}: compiled once; carried {', '.join(self.carried)}; {self.decision}"


def site_text(site: Site) -> str:
    return f"{site[0]}:{site[1]}"


@dataclass
class OpenLoop:
    site: Site
    trip: range  # for a loop over a range computed at run time: the hull of its trips
    gen: Iterator[Tracer] | None = None
    bounds: tuple[Any, ...] = ()  # start, stop, step: ints or tracers (a run-time range)
    link: tuple[Affine, Affine, int] | None = None  # their forms in the enclosing indices
    ndindex: bool = False  # one axis of `np.ndindex`: unrolled (as Python runs it) on fallback
    log: list[Logged] = field(default_factory=list)  # the body's reads and writes of arrays


@dataclass(frozen=True)
class Logged:
    """A read (`a[index]`) or write (`a[index] = v`) of an array in a loop body: the array's
    value before and after, the region (None: all of it; see `stax.poly.loop_legality`), the
    ids of the values the access created (its ops), and for a masked assignment into the
    array itself what it stored (the runner may store it in place)."""

    write: bool
    before: int
    after: int
    region: tuple[Any, ...] | None
    ids: range
    store: StoreForm | None = None


@dataclass
class LoopState:
    """One `stax.jit` trace: the loops met, those to unroll, the records."""

    unroll: dict[Site, str] = field(default_factory=dict)
    open: list[OpenLoop] = field(default_factory=list)
    records: list[LoopRecord] = field(default_factory=list)
    # the loop index tracers by id (kept alive: a dead one's id may be reused by a new tracer)
    indices: dict[int, Tracer] = field(default_factory=dict)
    ranges: Ranges = field(default_factory=Ranges)  # index value id -> its range
    scalars: dict[int, int] = field(default_factory=dict)  # Python int arguments by position
    # Copies standing for NumPy views (`x[i]`, `x[i:i+k]`, `for row in x` at a symbolic
    # index): assigning into one would not reach the array, so a body doing so is unrolled.
    copies: dict[int, Tracer] = field(default_factory=dict)
    writing: int = 0  # inside an assignment: its reads copy the region through
    glob: dict[str, Any] = field(default_factory=dict)  # the traced function's globals
    # [VADV] per array version made by a store at the loop index (by value id): the loop
    # whose body stored, the version it was applied to and made, the positions it wrote
    # (`_positions`) and the value it stored
    stored: dict[int, tuple[OpenLoop, Value, Value, tuple[Any, ...], Value]] = field(
        default_factory=dict)

    def fallback(self, loop: OpenLoop, reason: str) -> None:
        if len(loop.trip) > UNROLL_LIMIT and not loop.ndindex:
            raise LoopError(
                f"stax.jit: the loop at {site_text(loop.site)} ({len(loop.trip)} iterations) "
                f"cannot be compiled once for all iterations: {reason}; unrolling is limited "
                f"to {UNROLL_LIMIT} iterations (stax.loops.UNROLL_LIMIT)") from None
        self.unroll[loop.site] = reason

    def close(self) -> None:
        for loop in self.open:
            if loop.gen is not None:
                loop.gen.close()  # type: ignore[attr-defined]
        self.open.clear()


_RECORDS: dict[int, tuple[LoopRecord, ...]] = {}


def records(fn: Any) -> tuple[LoopRecord, ...]:
    """The loop decisions of the latest trace of `fn` (a jitted function or its Python
    function)."""
    fn = getattr(fn, "fn", fn)
    return _RECORDS.get(id(getattr(fn, "__code__", fn)), ())


def trace_with_loops(trace: Callable[[Any, tuple[Any, ...]], Any], fn: Any,
                     args: tuple[Any, ...]) -> Any:
    """`trace(fn, args)` with loops compiled once per body; retraces with a loop unrolled
    when its body turns out to differ per iteration."""
    if not isinstance(fn, types.FunctionType) or _writes_globals(fn.__code__):
        def plain(*a: Any) -> Any:  # its loops are unrolled, as before
            return fn(*a)

        plain._stax_loops = True  # type: ignore[attr-defined]
        return trace(plain, args)
    with _TRACING:  # the hooks below patch the Tracer class: one trace at a time
        return _trace_loops(trace, fn, args)


_TRACING = threading.RLock()


@functools.lru_cache(maxsize=256)
def _writes_globals(code: types.CodeType) -> bool:
    """The function assigns to a global: it must run with its own globals, not a copy."""
    return any(i.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") for i in dis.get_instructions(code))


def _trace_loops(trace: Callable[[Any, tuple[Any, ...]], Any], fn: types.FunctionType,
                 args: tuple[Any, ...]) -> Any:
    state = LoopState(scalars={k: int(a) for k, a in enumerate(args) if isinstance(
        a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))})
    with _affine_slices(state):
        return _retrace(trace, fn, args, state)


@contextlib.contextmanager
def _affine_slices(state: LoopState) -> Iterator[None]:
    """While tracing, `a[i:i+k]` with `i` a loop index is a gather, and `a[i, 1:] = v` a
    masked assignment (`stax.loops.affine`)."""
    original = Tracer.__getitem__

    def getitem(self: Tracer, index: Any) -> Any:
        if not state.open:
            return original(self, index)
        version, first = self.value.id, self.builder.next_id
        result = _forwarded(self, index) if self.base is None and not state.writing else None
        result = _getitem(self, index) if result is None else result
        if not state.writing and self.base is None:  # a read of an array (not a view)
            state.open[-1].log.append(Logged(False, version, version, _region(
                state, self, index), range(first, self.builder.next_id)))
        return result

    def _forwarded(self: Tracer, index: Any) -> Any:
        """[VADV] A read of a slice at the positions the array's last store wrote: the
        stored value (not the whole array with the store applied, materialized to be read
        back); of positions it cannot have written (another constant offset at the same index,
        `x[:, k - 1]` after `x[:, k] = v`): a read of the version before the store."""
        entry = state.stored.get(self.value.id)
        if entry is None or entry[0] is not state.open[-1] or entry[2] is not self.value:
            return None  # (a nested loop reads the array: its stores may go there early)
        _, before, _, wrote, value = entry
        read = _positions(state, self, known_index(index))
        if read is None or all(at for at, _, _, _ in read):
            return None  # an element: a statement of a SCoP (stax.poly.loop_nest) reads it
        if read == wrote:
            if value.shape != tuple(c for at, _, _, c in read if not at):
                return None  # broadcast when stored
            result = IndexCopy(self.builder, value)
            state.copies[id(result)] = result
            return result
        if any(r[0] and w[0] and r[1][1] == w[1][1] and (r[1][0] - w[1][0]) % n
               for r, w, n in zip(read, wrote, self.shape, strict=True)):
            older = Tracer(self.builder, before)
            return _forwarded(older, index) or _getitem(older, index)
        return None

    def _getitem(self: Tracer, index: Any) -> Any:
        plan = rewrite_index(self, index, state.ranges, state.scalars)
        if plan is None:
            result = original(self, index)
        else:
            static, gathers, masks = plan
            result = original(self, static)
            for axis, positions in gathers:
                result = original(result, (slice(None),) * axis + (positions,))
            if masks:
                result = MaskedTracer(result.builder, result.value, masks)
        items = index if isinstance(index, tuple) else (index,)
        if isinstance(result, functions.Masked):  # [HUNT4] `x[m]`: a copy in NumPy, lazy
            return result
        if result.ndim and (plan is not None or any(isinstance(it, Tracer) and
                                                    it.concrete is None for it in items)):
            if not isinstance(result, MaskedTracer):
                result = IndexCopy(result.builder, result.value)
            state.copies[id(result)] = result  # a view in NumPy (a 0-d result is a scalar)
        return result

    original_set = Tracer.__setitem__

    def setitem(self: Tracer, index: Any, value: Any) -> None:
        if not state.open:
            original_set(self, index, value)
            return
        root = self if self.base is None else self.base
        old = root.value
        before, first = old.id, self.builder.next_id
        index = known_index(index)
        state.writing += 1
        try:
            stored = masked_assignment(self, index, value, state.ranges, state.scalars)
            if stored is None:
                original_set(self, index, value)
        finally:
            state.writing -= 1
        mine = root is self
        wrote = _positions(state, root, index) if mine and stored is not None else None
        if wrote is not None and not isinstance(value, MaskedTracer):
            state.stored[root.value.id] = (state.open[-1], old, root.value, wrote,
                                           stored.value)
        state.open[-1].log.append(Logged(
            True, before, root.value.id, _region(state, self, index) if mine else None,
            range(first, self.builder.next_id), stored if mine else None))

    original_iter = Tracer.__iter__
    saved = {name: Tracer.__dict__[name] for name in _PRODUCT_METHODS}

    def array_function(self: Tracer, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if state.open and func in _PRODUCTS and not kwargs and len(args) == 2:
            result = _vector_product(*args, inner=func is np.inner)
            if result is not None:
                return result
        return saved["__array_function__"](self, func, types, args, kwargs)

    def product(name: str, reflected: bool) -> Callable[[Tracer, Any], Any]:
        def run(a: Tracer, b: Any) -> Any:
            if state.open:
                result = _vector_product(b, a) if reflected else _vector_product(a, b)
                if result is not None:
                    return result
            return saved[name](a, b)
        return run

    Tracer.__getitem__ = getitem  # type: ignore[method-assign]
    Tracer.__setitem__ = setitem  # type: ignore[method-assign]
    np.ndindex = functools.partial(loop_ndindex, state)  # type: ignore[misc]
    np.ndenumerate = functools.partial(loop_ndenumerate, state)  # type: ignore[misc]
    Tracer.__iter__ = _rows(state, original_iter)  # type: ignore[method-assign]
    Tracer.__array_function__ = array_function  # type: ignore[attr-defined]
    Tracer.__matmul__ = product("__matmul__", False)  # type: ignore[method-assign]
    Tracer.__rmatmul__ = product("__rmatmul__", True)  # type: ignore[attr-defined]
    Tracer.dot = product("dot", False)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        Tracer.__getitem__ = original  # type: ignore[method-assign]
        Tracer.__setitem__ = original_set  # type: ignore[method-assign]
        np.ndindex, np.ndenumerate = _NDINDEX, _NDENUMERATE  # type: ignore[misc]
        Tracer.__iter__ = original_iter  # type: ignore[method-assign]
        for name, method in saved.items():
            setattr(Tracer, name, method)


_PRODUCTS = (np.dot, np.matmul, np.inner)
_PRODUCT_METHODS = ("__array_function__", "__matmul__", "__rmatmul__", "dot")


def _vector_product(a: Any, b: Any, inner: bool = False) -> Any:
    """Inside a loop body, a dot product of vectors or a matrix-vector product of real or
    integer arrays is a multiply and a sum over the contracted axis (kernels the C driver
    runs; the frontend's BLAS call is an extern call, stepped from Python per iteration).
    None: another product (the frontend's)."""
    if isinstance(a, MaskedTracer) or isinstance(b, MaskedTracer) or not all(
            isinstance(x, (Tracer, np.ndarray)) for x in (a, b)):
        return None
    if b.ndim != 1 or a.ndim not in (1, 2) or a.shape[-1] != b.shape[0] or any(
            x.dtype.kind not in "iuf" for x in (a, b)):
        return None
    return product_terms(a, b, inner)


def _retrace(trace: Callable[[Any, tuple[Any, ...]], Any], fn: types.FunctionType,
             args: tuple[Any, ...], state: LoopState) -> Any:
    while True:
        instrumented = _instrument(fn, state)
        state.records.clear()
        try:
            traced = trace(instrumented, args)
            unfinished = [lp for lp in state.open if lp.gen is not None]
            if not unfinished:
                _RECORDS[id(fn.__code__)] = tuple(state.records)
                bodies = [r.body for r in state.records if r.body is not None]
                for body in bodies:  # compiled together, in one C++ module
                    body.siblings = bodies
                if bodies:  # while the enclosing program is compiled
                    compile_soon(bodies)
                return traced
            state.fallback(unfinished[-1], "the body left the loop (break or return)")
        except LoopFallback as e:
            loop = next(lp for lp in reversed(state.open) if lp.site == e.site)
            state.fallback(loop, e.reason)
        except MaskFallback as e:  # a masked slice used in a way that cannot stay exact
            if not state.open:
                raise AssertionError("a masked slice outside a loop body") from e
            state.fallback(state.open[-1], str(e))
        except TraceTooLarge:  # unrolling would only make it larger
            raise
        except GraphBreak as e:  # a traced value used as a Python value inside a body
            if not state.open or (len(state.open[-1].trip) > UNROLL_LIMIT and
                                  not state.open[-1].ndindex):
                raise  # graph breaks (A2) run it, unrolled, or strict mode reports it
            state.fallback(state.open[-1], f"{e.error}")
        finally:
            state.close()


def _instrument(fn: types.FunctionType, state: LoopState) -> types.FunctionType:
    """`fn` with the loop builtins below (and NumPy's creation functions under the names it
    imported them as) in its globals; so are the functions of its module
    that it may call (`conv2d_bias` calling `conv2d`: their loops are compiled once too),
    except those that assign to a global (they must run with the module's globals)."""
    glob = dict(fn.__globals__)
    glob["range"] = functools.partial(loop_range, state)
    glob["enumerate"] = functools.partial(loop_iterable, state, enumerate)
    glob["zip"] = functools.partial(loop_iterable, state, zip)
    glob["reversed"] = functools.partial(loop_iterable, state, reversed)
    state.glob = glob
    glob["max"] = functools.partial(extremum, max, ">")
    glob["min"] = functools.partial(extremum, min, "<")
    glob.update(functions.creation_names(fn.__globals__))
    for name, helper in fn.__globals__.items():
        if isinstance(helper, types.FunctionType) and helper is not fn and \
                helper.__globals__ is fn.__globals__ and not _writes_globals(helper.__code__):
            glob[name] = _with_globals(helper, glob)
    new = _with_globals(fn, glob)
    new._stax_loops = True  # type: ignore[attr-defined]
    return new


def _with_globals(fn: types.FunctionType, glob: dict[str, Any]) -> types.FunctionType:
    new = types.FunctionType(fn.__code__, glob, fn.__name__, fn.__defaults__, fn.__closure__)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__dict__.update(fn.__dict__)
    return new


def extremum(builtin: Callable[..., Any], compare: str, *args: Any, **kwargs: Any) -> Any:
    """Builtin `max`/`min` of traced scalars (`t[i] = max(t[i], t[i-1])`), compiled with the
    builtin's own rule: the first of the winners, compared with `>` (`<`), so NaN placement
    matches. Only when every operand is a traced scalar of one dtype (the builtin returns one
    of its operands, so a Python number among them could change the result's type); any
    other call is the builtin's (a traced operand then breaks, as a Python `if` would)."""
    if kwargs or len(args) < 2 or not all(isinstance(a, Tracer) and a.ndim == 0
                                          for a in args) or len({a.dtype for a in args}) > 1:
        return builtin(*args, **kwargs)
    best = args[0]
    for a in args[1:]:
        best = np.where((a > best) if compare == ">" else (a < best), a, best)
    return best


@functools.lru_cache(maxsize=256)
def _for_loop_calls(code: types.CodeType) -> frozenset[int]:
    """Offsets of the calls whose result a `for` statement iterates (GET_ITER, FOR_ITER)."""
    instrs = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    return frozenset(
        a.offset for a, b, c in zip(instrs, instrs[1:], instrs[2:], strict=False)
        if a.opname in ("CALL", "CALL_FUNCTION", "PRECALL", "CALL_FUNCTION_EX")
        and b.opname == "GET_ITER" and c.opname == "FOR_ITER")


def _called_by_for(frame: types.FrameType) -> bool:
    calls = _for_loop_calls(frame.f_code)
    return frame.f_lasti in calls


def loop_range(state: LoopState, *args: Any) -> Any:
    """`range` inside a traced function."""
    frame = sys._getframe(1)  # the user's frame (functools.partial adds no frame)
    builder = getattr(functions._ACTIVE, "builder", None)
    if state.open and any(isinstance(a, Tracer) and a.concrete is None for a in args):
        return _dynamic_range(state, args, builder, frame)
    bounds = [a.python_value() if isinstance(a, Tracer) else a for a in args]
    trip = _BUILTIN_RANGE(*bounds)
    if builder is None or not _called_by_for(frame):
        return trip
    loop = _open_loop(state, trip, builder, frame)
    return trip if loop is None else loop


def _dynamic_range(state: LoopState, args: tuple[Any, ...], builder: Builder | None,
                   frame: types.FrameType) -> Iterator[Tracer]:
    """`for j in range(i)` with `i` an enclosing loop's index: one loop whose trip count is
    computed at run time from its bounds (affine in the enclosing indices); its index ranges
    over the hull of all its trips. Such a loop cannot be unrolled: where its body cannot be
    compiled once, the enclosing loop falls back."""
    site: Site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    enclosing = state.open[-1]

    def fail(reason: str) -> LoopFallback:
        return LoopFallback(enclosing.site, f"the loop at {site_text(site)} runs over a range "
                                            f"that depends on the enclosing index: {reason}")

    if builder is None or not _called_by_for(frame) or \
            frame.f_code.co_name in _COMPREHENSIONS:
        raise fail("it is not the range of a `for` statement")
    if site in state.unroll:
        raise fail(state.unroll[site])
    if len(args) not in (1, 2, 3):
        raise fail("range() takes 1 to 3 arguments")
    full = (0, *args, 1) if len(args) == 1 else (*args, 1) if len(args) == 2 else args
    step = full[2]
    if isinstance(step, Tracer):
        if step.concrete is None:
            raise fail("its step is traced")
        step = step.python_value()
    if not isinstance(step, (int, np.integer)) or step == 0:
        raise fail("its step is not a nonzero int")
    forms = [affine_form(builder, x, state.ranges, state.scalars) for x in full[:2]]
    if forms[0] is None or forms[1] is None:
        raise fail("its bounds are not affine in the enclosing indices")
    (lo0, hi0), (lo1, hi1) = (form_bounds(f, state.ranges) for f in forms)
    hull = _BUILTIN_RANGE(lo0, hi1) if step > 0 else _BUILTIN_RANGE(hi0, lo1, -1)
    if not hull:
        return iter(())  # empty in every iteration of the enclosing loops
    loop = OpenLoop(site, hull, bounds=(*full[:2], int(step)),
                    link=(forms[0], forms[1], int(step)))
    state.open.append(loop)
    loop.gen = _loop(state, loop, builder, frame)
    return loop.gen


def loop_iterable(state: LoopState, builtin: Callable[..., Any], *args: Any,
                  **kwargs: Any) -> Any:
    """`enumerate`, `zip` and `reversed` inside a traced function: as the iterable of a `for`
    statement over ranges and arrays (`enumerate(range(n))`, `zip(range(a, b), x)`,
    `reversed(range(n))`, `enumerate(x)`), one symbolic loop whose items are computed from
    its index; anything else is the builtin's."""
    frame = sys._getframe(1)
    builder = getattr(functions._ACTIVE, "builder", None)
    if builder is None or not _called_by_for(frame) or \
            not all(isinstance(a, _BUILTIN_RANGE) or (isinstance(a, Tracer) and a.ndim > 0)
                    for a in args) or not args:
        return builtin(*args, **kwargs)
    if builtin is reversed:
        if len(args) != 1 or not isinstance(args[0], _BUILTIN_RANGE):
            return builtin(*args, **kwargs)
        trip = args[0][::-1]
        loop = _open_loop(state, trip, builder, frame)
        return builtin(*args) if loop is None else loop
    if builtin is enumerate and (len(args) != 1 or set(kwargs) - {"start"}):
        return builtin(*args, **kwargs)
    if builtin is zip and (set(kwargs) - {"strict"} or (
            kwargs.get("strict") and len({len(a) for a in args}) > 1)):
        return builtin(*args, **kwargs)  # zip(strict=True) of unequal lengths raises
    count = min(len(a) for a in args)
    loop = _open_loop(state, _BUILTIN_RANGE(count), builder, frame)
    if loop is None:
        return builtin(*args, **kwargs)

    def item(a: Any, i: Tracer) -> Any:
        if not isinstance(a, _BUILTIN_RANGE):
            return a[i]
        return i if (a.start, a.step) == (0, 1) else a.start + a.step * i

    if builtin is enumerate:
        first = kwargs.get("start", 0)
        return ((i if first == 0 else first + i, item(args[0], i)) for i in loop)
    return (tuple(item(a, i) for a in args) for i in loop)


def loop_ndindex(state: LoopState, *shape: Any) -> Any:
    """[HUNT4] `np.ndindex(*shape)` as the iterable of a `for` statement of the traced
    function: one loop per axis, nested (the loops of `for i in range(n0): for j in
    range(n1)`), yielding index tuples; unrolled as before where a body cannot be compiled
    once. Elsewhere (library code, other threads) NumPy's."""
    dims = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape
    loops = _index_loops(state, dims, sys._getframe(1))
    return _NDINDEX(*shape) if loops is None else loops


def loop_ndenumerate(state: LoopState, arr: Any) -> Any:
    """[HUNT4] `np.ndenumerate(a)` of a traced array: `np.ndindex`'s loops, with `a[pos]`
    (NumPy's would convert the array: a graph break)."""
    loops = _index_loops(state, arr.shape, sys._getframe(1)) if isinstance(arr, Tracer) \
        else None
    return _NDENUMERATE(arr) if loops is None else ((pos, arr[pos]) for pos in loops)


def _index_loops(state: LoopState, dims: Any, frame: types.FrameType
                 ) -> Iterator[tuple[Any, ...]] | None:
    builder = getattr(functions._ACTIVE, "builder", None)
    if builder is None or frame.f_globals is not state.glob or not _called_by_for(frame) or \
            frame.f_code.co_name in _COMPREHENSIONS or not all(
                type(n) is int or isinstance(n, np.integer) for n in dims):
        return None
    return _nested_loops(state, [_BUILTIN_RANGE(n) for n in dims], builder, frame)


_NDINDEX, _NDENUMERATE = np.ndindex, np.ndenumerate


def _nested_loops(state: LoopState, trips: list[range], builder: Builder,
                  frame: types.FrameType, prefix: tuple[Any, ...] = ()
                  ) -> Iterator[tuple[Any, ...]]:
    if not trips:
        yield prefix
        return
    loop = _open_loop(state, trips[0], builder, frame, ndindex=True)
    for i in trips[0] if loop is None else loop:
        yield from _nested_loops(state, trips[1:], builder, frame, (*prefix, i))


def _open_loop(state: LoopState, trip: range, builder: Builder, frame: types.FrameType,
               ndindex: bool = False) -> Iterator[Tracer] | None:
    """The symbolic loop over `trip` for the `for` statement running in `frame`; None: let
    Python iterate (a comprehension, fewer than MIN_TRIP iterations, a loop to unroll)."""
    site: Site = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    if frame.f_code.co_name in _COMPREHENSIONS or len(trip) < MIN_TRIP:
        return None
    if site in state.unroll:
        state.records.append(LoopRecord(site, trip, False, state.unroll[site]))
        return None
    loop = OpenLoop(site, trip, ndindex=ndindex)
    state.open.append(loop)
    loop.gen = _loop(state, loop, builder, frame)
    return loop.gen


@functools.lru_cache(maxsize=256)
def _for_loop_iters(code: types.CodeType) -> frozenset[int]:
    """Offsets of the GET_ITERs a `for` statement runs (`for row in a`)."""
    instrs = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    return frozenset(a.offset for a, b in zip(instrs, instrs[1:], strict=False)
                     if a.opname == "GET_ITER" and b.opname == "FOR_ITER")


def _rows(state: LoopState, original: Callable[[Tracer], Iterator[Tracer]]
          ) -> Callable[[Tracer], Iterator[Tracer]]:
    """`Tracer.__iter__` while tracing: `for row in a` is a loop over `a[i]`."""

    def iterate(self: Tracer) -> Iterator[Tracer]:
        frame = sys._getframe(1)
        if self.ndim == 0 or frame.f_lasti not in _for_loop_iters(frame.f_code):
            return original(self)
        loop = _open_loop(state, _BUILTIN_RANGE(len(self)), self.builder, frame)
        return original(self) if loop is None else (self[i] for i in loop)

    return iterate


class _Watch:
    """Every tracer whose value is replaced while a body is traced: id -> (tracer, old)."""

    active: list[dict[int, tuple[Tracer, Value]]] = []
    saved: Any = None  # the class's own __setattr__, if it has one

    @staticmethod
    def setattr(self: Tracer, name: str, value: Any) -> None:
        if name == "value" and _Watch.active:
            old = self.__dict__.get("value")
            if old is not None:
                for seen in _Watch.active:
                    seen.setdefault(id(self), (self, old))
        (_Watch.saved or object.__setattr__)(self, name, value)

    def __enter__(self) -> dict[int, tuple[Tracer, Value]]:
        if not _Watch.active:
            _Watch.saved = Tracer.__dict__.get("__setattr__")
            Tracer.__setattr__ = _Watch.setattr  # type: ignore[assignment]
        seen: dict[int, tuple[Tracer, Value]] = {}
        _Watch.active.append(seen)
        self.seen = seen
        return seen

    def __exit__(self, *exc: Any) -> None:
        # by identity: two watches may hold equal dicts (list.remove compares with ==)
        del _Watch.active[next(k for k, d in enumerate(_Watch.active) if d is self.seen)]
        if not _Watch.active:
            if _Watch.saved is None:
                del Tracer.__setattr__
            else:
                Tracer.__setattr__ = _Watch.saved  # type: ignore[method-assign]


def _locals(frame: types.FrameType) -> dict[str, Any]:
    return dict(frame.f_locals)


def _set_locals(frame: types.FrameType, updates: dict[str, Any]) -> None:
    if updates:
        frame.f_locals.update(updates)
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))


def _container_shape(obj: Any) -> Any:
    """What a body may not change in a container: its length and its elements' identity."""
    if isinstance(obj, (list, tuple)):
        return tuple(map(id, obj))
    if isinstance(obj, dict):
        return tuple((k, id(v)) for k, v in obj.items())
    return None


MAX_WATCHED_OBJECTS = 64  # [HUNT9] objects whose attributes a loop body must leave alone
_NOT_WATCHED = (Tracer, type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                types.MethodType, functools.partial)


def _object_state(values: Iterable[Any]) -> tuple[dict[tuple[int, str], Any], list[Any]]:
    """[HUNT9] What the objects `values` reach (through attributes and list, tuple and dict
    elements; at most MAX_WATCHED_OBJECTS objects) hold: (object id, attribute) -> the
    value's id, (container id, "") -> its `_container_shape`; and the values (kept alive, so
    that an id is not reused). A body that changes one (`self.n += 1`, `self.total = self.total
    + row`, `self.history.append(s)`) differs per iteration, as a changed Python number does:
    compiled once from two traces, `s.n` was 2 after a loop over 6 rows and the means wrong."""
    state: dict[tuple[int, str], Any] = {}
    alive: list[Any] = []
    stack, seen, objects = [(v, True) for v in values], set(), 0
    while stack and objects < MAX_WATCHED_OBJECTS:
        obj, local = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        alive.append(obj)
        if isinstance(obj, (list, tuple, dict)):
            if not local:  # (a local one: `_loop` checks it)
                state[id(obj), ""] = _container_shape(obj)
            stack.extend((v, False) for v in (obj.values() if isinstance(obj, dict) else obj))
        elif not isinstance(obj, _NOT_WATCHED) and isinstance(getattr(obj, "__dict__", None),
                                                              dict):
            objects += 1
            for name, value in vars(obj).items():
                state[id(obj), name] = id(value)
                stack.append((value, False))
    return state, alive


@dataclass
class Carried:
    name: str  # a local name, or a description of a mutated tracer
    initial: Any  # a Value, a Python scalar, or None (bound only by the body)
    obj: Tracer | None = None  # a tracer mutated in place
    param: Value | None = None
    final: Value | None = None
    weak: bool = False  # [HUNT] a Python scalar (`s = s * 0.5`): NEP 50 weak in the body too


def _loop(state: LoopState, loop: OpenLoop, b: Builder, frame: types.FrameType
          ) -> Iterator[Tracer]:
    start, first_id = len(b.ops), b.next_id
    before = _locals(frame)
    before_values = {k: v.value for k, v in before.items() if isinstance(v, Tracer)}
    containers = {k: _container_shape(v) for k, v in before.items()}
    index = Tracer(b, b.new_value((), np.dtype(np.int64)), weak=True)
    state.indices[id(index)] = index
    state.ranges[index.value.id] = loop.trip
    if loop.link is not None:
        state.ranges.links[index.value.id] = loop.link
    n_records = len(state.records)
    objects, alive = _object_state(before.values())
    with _Watch() as seen:
        yield index  # pass 1
    after = _locals(frame)
    fail = functools.partial(LoopFallback, loop.site)
    owners = {owner for owner, _ in objects}
    changed = [name or "a list or dict" for (owner, name), token
               in _object_state(after.values())[0].items()
               if owner in owners and objects.get((owner, name)) != token]
    if changed:
        raise fail(f"the body changes {changed[0]!r} of an object it reaches (only arrays may "
                   "change from one iteration to the next)")
    del alive  # (held through pass 1)
    _check_copies(state, seen, fail)
    carried: list[Carried] = []
    mutated = {k: v for k, v in seen.items() if v[1].id < first_id and v[0] is not index}
    # names the body binds to a Python scalar, unbound before the loop: the same in every
    # iteration (the index of a one-iteration inner loop), checked again in pass 2
    scalars = {name: obj for name, obj in after.items() if name not in before and
               type(obj) in (int, float, bool) and loop.link is None}
    for name, obj in after.items():
        if _is_index(state, obj):
            continue
        if (name in before and before[name] is obj) or name in scalars or \
                (obj is None and name not in before):  # [VADV] a fresh name of a nested loop
            if name in containers and containers[name] != _container_shape(obj):
                raise fail(f"the body changes the list or dict {name!r}")
            continue
        old = before.get(name)
        if id(old) in mutated or id(obj) in mutated:
            raise fail(f"the body assigns into an array and rebinds {name!r} to or from it "
                       "(arrays swapped after being assigned into)")
        if isinstance(obj, MaskedTracer):
            raise fail(f"{name!r} is bound to a slice whose length depends on the index "
                       "and would leave the body")
        if isinstance(obj, Tracer):
            initial = before_values[name] if isinstance(old, Tracer) else old
            if not (old is None or isinstance(old, (Tracer, bool, int, float, np.generic))):
                raise fail(f"{name!r} is rebound from a {type(old).__name__} to an array")
            carried.append(Carried(name, initial, weak=obj.weak))
        else:
            raise fail(f"the body rebinds {name!r} to a {type(obj).__name__} "
                       "(only arrays may change from one iteration to the next)")
    for tracer, old in mutated.values():
        names = [n for n, o in after.items() if o is tracer]
        carried.append(Carried(f"{names[0] if names else 'an array'} (assigned to)", old,
                               obj=tracer))
    finals1 = [c.obj.value if c.obj is not None else after[c.name].value for c in carried]
    # pass 2: the same body over parameters standing for the carried values
    del b.ops[start:]
    del state.records[n_records:]  # the loops nested in pass 1
    updates = {}
    for c, final in zip(carried, finals1, strict=True):
        init = c.initial
        if isinstance(init, Value) and (init.shape, init.dtype) != (final.shape, final.dtype):
            raise fail(f"{c.name} changes from {init.typestr()} to {final.typestr()} in the body")
        if not isinstance(init, Value) and init is not None and final.shape != ():
            raise fail(f"{c.name} changes from a Python scalar to an array")
        c.param = b.new_value(final.shape, final.dtype)
        if c.obj is not None:
            object.__setattr__(c.obj, "value", c.param)
        else:
            updates[c.name] = Tracer(b, c.param, weak=c.weak)
    _set_locals(frame, updates)
    start2 = len(b.ops)
    before2 = _locals(frame)
    loop.log.clear()  # pass 1's accesses
    with _Watch() as seen2:
        yield index  # pass 2
    after2 = _locals(frame)
    _check_copies(state, seen2, fail)
    names = {c.name for c in carried if c.obj is None}
    objects = {id(c.obj) for c in carried if c.obj is not None}
    for name, obj in after2.items():
        if not _is_index(state, obj) and not (name in before2 and before2[name] is obj) \
                and name not in names and not _same_scalar(obj, scalars.get(name)):
            raise fail(f"the body rebinds {name!r} differently from one trace to the next")
    for k, (tracer, old) in seen2.items():
        if k not in objects and old.id < first_id and tracer is not index:
            raise fail("the body assigns to different arrays from one trace to the next")
    for c in carried:
        c.final = c.obj.value if c.obj is not None else after2[c.name].value
        assert c.final is not None and c.param is not None
    body_ops = b.ops[start2:]
    if len(body_ops) > MAX_KERNELS:
        raise fail(f"the body traces to {len(body_ops)} ops (more than {MAX_KERNELS}): as many "
                   "kernels could take minutes to compile")
    fresh = _fresh(carried, body_ops, frame)
    if carried and len(fresh) == len(carried):  # keep one result: the loop runs (raises)
        fresh.discard(carried[0].name)
    for c in carried:  # [LEAD18] not a temporary's: comparing `x[m]`'s data-dependent sizes of
        # two iterations recorded a guard `d1 == d0` that kept the body's selections compacted
        assert c.final is not None and c.param is not None
        if c.name not in fresh and \
                (c.final.shape, c.final.dtype) != (c.param.shape, c.param.dtype):
            raise fail(f"{c.name} changes from {c.param.typestr()} to {c.final.typestr()} "
                       "in the body")
    carried = [c for c in carried if c.name not in fresh]
    del b.ops[start:]
    loop.gen = None
    state.open.remove(loop)
    outs = _finish(state, b, loop, index.value, carried, body_ops, tuple(sorted(fresh)))
    # rebind: mutated tracers in place, rebound names to new tracers, the index to its last value
    updates = {}
    for c, out in zip(carried, outs, strict=True):
        if c.obj is not None:
            object.__setattr__(c.obj, "value", out)
        else:
            updates[c.name] = Tracer(b, out, weak=c.weak)
    # never read again: bound back to what they were before the loop (None: unbound)
    updates.update({name: before.get(name) for name in fresh})
    last = loop.trip[-1]
    object.__setattr__(index, "value", b.add("const", (), (), np.dtype(np.int64), value=last))
    object.__setattr__(index, "concrete", (frozenset(), last))
    _set_locals(frame, updates)


_READS = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_NAME",
                    "LOAD_CLOSURE", "LOAD_DEREF", "LOAD_CLASSDEREF"})
_KILLS = frozenset({"STORE_FAST", "DELETE_FAST"})
_NO_FALLTHROUGH = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                             "JUMP_ABSOLUTE", "JUMP", "JUMP_NO_INTERRUPT", "RETURN_VALUE",
                             "RETURN_CONST", "RAISE_VARARGS", "RERAISE"})


@functools.lru_cache(maxsize=256)
def _read_after_loop(code: types.CodeType, for_iter: int, name: str) -> bool:
    """Whether Python may read local `name` after the `for` loop whose FOR_ITER is at offset
    `for_iter` ends, before binding it again: a path in the bytecode from the loop's exit to
    a load of the name that stores no new value on the way (exception handlers are paths
    too; a name a closure sees, or any doubt, counts as read)."""
    if name in code.co_cellvars or name in code.co_freevars:
        return True
    instrs = [i for i in dis.get_instructions(code) if i.opname not in ("CACHE", "EXTENDED_ARG")]
    at = {i.offset: k for k, i in enumerate(instrs)}
    head = at.get(for_iter)
    if head is None or instrs[head].opname != "FOR_ITER" or instrs[head].argval not in at:
        return True
    handlers = [(e.start, e.end, e.target) for e in dis.Bytecode(code).exception_entries]
    todo, seen = [at[instrs[head].argval]], set()
    while todo:
        k = todo.pop()
        if k in seen or k >= len(instrs):
            continue
        seen.add(k)
        ins = instrs[k]
        if ins.argval == name and ins.opname in _READS:
            return True
        if ins.argval == name and ins.opname in _KILLS:
            continue
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            if ins.argval not in at:
                return True
            todo.append(at[ins.argval])
        if ins.opname not in _NO_FALLTHROUGH:
            todo.append(k + 1)
        todo.extend(at[t] for s_, e, t in handlers if s_ <= ins.offset < e and t in at)
    return False


def _fresh(carried: list[Carried], body_ops: list[Op], frame: types.FrameType) -> set[str]:
    """[VADV] The rebound names whose values do not cross iterations: the body binds them
    before reading them (their parameters are read by nothing) and Python reads none of them
    after the loop. They are not carried (no parameter, no double buffer, no result): their
    values are ordinary temporaries of the body, fused into their consumers."""
    read = {v.id for op in body_ops for v in op.inputs} | \
        {c.final.id for c in carried if c.final is not None}
    return {c.name for c in carried if c.obj is None and c.param is not None
            and c.param.id not in read
            and not _read_after_loop(frame.f_code, frame.f_lasti, c.name)}


def _is_index(state: LoopState, obj: Any) -> bool:
    """A loop index, or a tuple of them and ints (`pos` of `for pos in np.ndindex(...)`)."""
    if isinstance(obj, tuple):
        return bool(obj) and all(type(o) is int or id(o) in state.indices for o in obj) and \
            any(id(o) in state.indices for o in obj)
    return id(obj) in state.indices


def _same_scalar(a: Any, b: Any) -> bool:
    return b is not None and type(a) is type(b) and a == b


def _check_copies(state: LoopState, seen: dict[int, tuple[Tracer, Value]],
                  fail: Callable[[str], LoopFallback]) -> None:
    if any(state.copies.get(k) is tracer for k, (tracer, _) in seen.items()):
        raise fail("the body assigns into a view taken at the loop index (`x[i]`, "
                   "`x[i:i+k]`, a row of `for row in x`), which is traced as a copy")


def _finish(state: LoopState, b: Builder, loop: OpenLoop, index: Value, carried: list[Carried],
            body_ops: list[Op], fresh: tuple[str, ...] = ()) -> list[Value]:
    """The body Graph and the outer ops running it: one result per carried value."""
    params = [c.param for c in carried]
    produced = {op.out.id for op in body_ops}
    bound = produced | {index.id} | {p.id for p in params if p is not None}
    free: dict[int, Value] = {}
    for op in body_ops:
        for v in op.inputs:
            if v.id not in bound:
                free.setdefault(v.id, v)
    for c in carried:
        assert c.final is not None
        if c.final.id not in bound:
            free.setdefault(c.final.id, c.final)
    inputs = [index, *params, *free.values()]
    input_ops = [Op("input", (), v, (("index", k),)) for k, v in enumerate(inputs)]
    body = Graph(tuple(inputs), tuple(input_ops) + tuple(body_ops),  # type: ignore[arg-type]
                 tuple(c.final for c in carried))  # type: ignore[misc]
    body = fuse_masked_reductions(body, len(body.outputs))  # [LEAD18] as a program's (no
    # compaction per iteration for `x[m].mean()`: npbench's azimint_naive)
    initials = []
    for c, p in zip(carried, params, strict=True):
        assert p is not None
        if isinstance(c.initial, Value):
            initials.append(c.initial)
        else:  # a Python scalar, or a name bound only by the body (never read before written)
            zero = b.add("const", (), (), p.dtype, value=p.dtype.type(c.initial or 0).item())
            initials.append(broadcast_value(b, zero, p.shape))
    dynamic = [x for x in loop.bounds if isinstance(x, Tracer)]
    template = tuple(None if isinstance(x, Tracer) else int(x) for x in loop.bounds)
    over = f"range{tuple(x if x is not None else '?' for x in template)} (computed at run " \
        f"time; hull {loop.trip})" if dynamic else f"{loop.trip}"
    label = f"loop at {site_text(loop.site)} over {over}"
    legality, independent = _legality(state, loop, index, carried, body_ops)
    loop_body = LoopBody(label, loop.trip, body, tuple(c.name for c in carried), template,
                         legality=legality, independent=independent,
                         stores=tuple(_last_stores(loop, c) for c in carried),
                         leading=tuple(_first_stores(loop, c) for c in carried), fresh=fresh)
    bound_values = [x.value if x.dtype == np.int64 else x.astype(np.int64).value
                    for x in dynamic]
    outs = add_loop_ops(b, loop_body, initials, list(free.values()), bound_values)
    state.records.append(LoopRecord(loop.site, loop.trip, True, "", loop_body.carried,
                                    loop_body))
    return outs


def _last_stores(loop: OpenLoop, c: Carried) -> tuple[int, tuple[StoreForm, ...]]:
    """The masked assignments that made the carried value's final version, in order, and the
    id of the version they were applied to (the parameter itself: the whole change is these
    stores, which the runner may then do in place)."""
    assert c.final is not None
    return _store_chain(loop, c.final.id, forward=False)


def _first_stores(loop: OpenLoop, c: Carried) -> tuple[int, tuple[StoreForm, ...]]:
    """The masked assignments applied to the carried value's parameter itself, in order, and
    the id of the version they made (`stax.loops.stores` may write them into the array's
    buffer before a nested loop that carries that version)."""
    assert c.param is not None
    return _store_chain(loop, c.param.id, forward=True)


def _store_chain(loop: OpenLoop, start: int, forward: bool
                 ) -> tuple[int, tuple[StoreForm, ...]]:
    """The masked assignments linked from version `start`, forward (the versions they made)
    or back (the versions they were applied to), in the body's order, and the version at the
    chain's other end."""
    links = {w.before if forward else w.after: w for w in loop.log
             if w.write and w.store is not None and w.before != w.after}
    current, stores = start, []
    while current in links:
        w = links[current]
        assert w.store is not None
        stores.append(w.store)
        current = w.after if forward else w.before
    return current, tuple(stores if forward else reversed(stores))


def _positions(state: LoopState, a: Tracer, index: Any) -> tuple[Any, ...] | None:
    """[VADV] The positions `a[index]` selects, per axis: (True, affine form, 1, 1) for an
    index (a constant one in [0, n)), (False, (start, {}), step, count) for a constant slice;
    None for any other index. Equal tuples are the same positions."""
    items = list(index) if isinstance(index, tuple) else [index]
    if len(items) > a.ndim:
        return None
    out: list[Any] = []
    for k, n in enumerate(a.shape):
        it = items[k] if k < len(items) else slice(None)
        if isinstance(it, slice) and not any(isinstance(e, Tracer) for e in
                                             (it.start, it.stop, it.step)):
            r = range(*it.indices(n))
            out.append((False, (r.start, {}), r.step, len(r)))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            out.append((True, (int(it) % max(n, 1), {}), 1, 1))
        elif isinstance(it, Tracer) and it.ndim == 0 and it.dtype.kind in "iu":
            form = affine_form(a.builder, it, state.ranges, state.scalars)
            if form is None:
                return None
            out.append((True, form, 1, 1))
        else:
            return None
    return tuple(out)


def _region(state: LoopState, a: Tracer, index: Any) -> tuple[Any, ...] | None:
    """The elements `a[index]` selects, per axis (`stax.poly.loop_legality`): an index or a
    slice with bounds affine in the loop indices, else the whole axis; None: all of `a`."""
    items = list(index) if isinstance(index, tuple) else [index]
    if len(items) > a.ndim or any(
            it is None or it is Ellipsis or isinstance(it, (bool, np.bool_, list, np.ndarray))
            or (isinstance(it, Tracer) and (it.ndim > 0 or it.dtype.kind not in "iu"))
            for it in items):
        return None
    b = a.builder
    scalars = {k: v for k, v in state.scalars.items() if k in b.static}  # no new specializing
    region: list[Any] = []
    for it, n in zip(items, a.shape, strict=False):
        if isinstance(it, slice):
            sf = slice_form(b, it, n, state.ranges, scalars)
            if sf is None or min(form_bounds(sf.start, state.ranges)[0],
                                 form_bounds(sf.stop, state.ranges)[0]) < 0:
                region.append(("all",))
            else:
                region.append(("slice", sf.start, sf.stop, sf.step))
            continue
        form = (int(it) % max(int(n), 1), {}) if isinstance(it, (int, np.integer)) else \
            affine_form(b, it, state.ranges, scalars)
        if form is None or form_bounds(form, state.ranges)[0] < 0:
            region.append(("all",))
        else:
            region.append(("int", form))
    return tuple(region)


def _legality(state: LoopState, loop: OpenLoop, index: Value, carried: list[Carried],
              body_ops: list[Op]) -> tuple[str, bool]:
    """The body's accesses of its carried arrays and the loop's dependences, checked with isl
    (`stax.poly.loop_legality`). A carried value changed other than by a logged assignment is
    written in full; one used other than by a logged read is read in full. Returns the verdict
    and whether the iterations are independent."""
    from stax.poly.loop_legality import Access, check_loop

    def named(form: Affine) -> tuple[int, tuple[tuple[str, int], ...]]:
        return form[0], tuple(("i" if k == index.id else f"p{k}", a)
                              for k, a in sorted(form[1].items()))

    def axis(spec: tuple[Any, ...]) -> tuple[Any, ...]:
        if spec[0] == "int":
            return "int", named(spec[1])
        if spec[0] == "slice":
            return "slice", named(spec[1]), named(spec[2]), spec[3]
        return spec

    accesses: list[Access] = []
    for c in carried:
        assert c.param is not None and c.final is not None
        shape = tuple(int(n) for n in c.param.shape)
        versions, current = [c.param.id], c.param.id
        writes = {w.before: w for w in loop.log if w.write}
        while current in writes and writes[current].after != current:
            w = writes[current]
            accesses.append(Access(c.name, True, shape, None if w.region is None else
                                   tuple(axis(s) for s in w.region)))
            current = w.after
            versions.append(current)
        if current != c.final.id:  # rebound, or changed by an operation not logged
            accesses.append(Access(c.name, True, shape, None))
        covered: dict[int, list[Logged]] = {}
        for entry in loop.log:
            if entry.before in versions:
                covered.setdefault(entry.before, []).append(entry)
        for op in body_ops:
            for v in op.inputs:
                if v.id not in versions:
                    continue
                entry = next((e for e in covered.get(v.id, ()) if op.out.id in e.ids), None)
                if entry is None:
                    accesses.append(Access(c.name, False, shape, None))
                elif not entry.write:
                    accesses.append(Access(c.name, False, shape, None if entry.region is None
                                           else tuple(axis(s) for s in entry.region)))
    if not accesses:
        return "no carried array: nothing to check", False
    outer = {f"p{k}": state.ranges[k] for acc in accesses for spec in acc.region or ()
             for form in spec[1:3] if isinstance(form, tuple)
             for k in (int(name[1:]) for name, _ in form[1] if name != "i")}
    try:
        verdict = check_loop("i", loop.trip, outer, list(dict.fromkeys(accesses)))
    except Exception as e:  # isl's budget, or an access it cannot parse: say so
        return f"not checked ({type(e).__name__}: {e})", False
    return str(verdict), verdict.parallel
