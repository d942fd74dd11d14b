"""Graph breaks: what Stax cannot compile runs in NumPy between compiled segments.

Tracing a function meets things it cannot compile: a NumPy function or argument Stax does not
implement, Python control flow on array values (`if x.sum() > 0`, `float(x.max())`, `.item()`,
printing), data-dependent shapes (`x[mask]`). In a plain trace these raise `GraphBreak`; the
jitted function then runs that signature in *segmented* mode: each call executes the Python
function again with a `SegmentBuilder`, which at every break

1. compiles the part of the graph the break needs (pruned to those values; compiled programs
   are cached by a structural key, so later calls do not compile again) and runs it on the
   call's arrays,
2. gives the concrete arrays to NumPy's own function (a copy, so lazily computed values stay
   right; an argument NumPy mutated in place is rebound, through views, as in NumPy; a result
   NumPy returns as a view of an argument, `np.trim_zeros(x)`, is that view of the traced
   argument, so writes through either reach the other — a view Stax cannot express, or a
   write into an array `__array__` handed out, runs the function in NumPy),
3. continues tracing with NumPy's results as new graph inputs.

Values already computed by a segment are inputs of later segments (never recomputed).
If a function cannot be traced even so (say, a dtype Stax does not support flows through it),
or one call would compile more than MAX_CALL_SEGMENTS new segments, or one break needs a new
segment more than MAX_SITE_SEGMENTS times (a break inside a Python loop whose segments differ
per iteration: hundreds of g++ runs), or the trace grows by `trace.MAX_TRACE_OPS` ops without a
break (a Python loop unrolled per iteration, `for pos in np.ndindex(...)`), the whole function
runs in NumPy; that too is recorded as a break naming the user's line.

Each segmented call records what it ran as a tape (`stax.frontend.replay`); later calls of the
signature replay it, without running the Python function, while its guards hold.
"""

from __future__ import annotations

import hashlib
import math
import operator
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from stax.frontend import replay
from stax.frontend import trace as tracing
from stax.frontend.functions import suspended
from stax.frontend.trace import Builder, GraphBreak, Tracer
from stax.graph import SUPPORTED_DTYPES, Graph, Op, Value


class GraphBreakWarning(UserWarning):
    """A jitted function runs part of its work in NumPy (see `stax.explain`)."""


@dataclass(frozen=True)
class Break:
    """One graph break: what Stax could not compile, where in the user's code, and what
    happens there instead."""

    what: str
    where: str
    action: str

    def __str__(self) -> str:
        return f"{self.what} ({self.where}): {self.action}"


# What each Tracer conversion is, for the break's description.
CONVERSIONS = {
    "__bool__": "the truth value of a traced array (Python if/while/and/or)",
    "__float__": "float() of a traced array", "__int__": "int() of a traced array",
    "__index__": "a traced array used as a Python integer (index, size, range)",
    "__array__": "a traced array converted to a NumPy array (np.asarray, or an operand of "
                 "an ndarray or unsupported function)",
}


def _location() -> tuple[str, str]:
    """The innermost frame outside Stax and NumPy (the user's line), and the Tracer
    conversion the break came through, if any."""
    frame = sys._getframe(1)
    conversion = ""
    while frame is not None:
        name = frame.f_code.co_name
        module = frame.f_globals.get("__name__", "")
        if name in CONVERSIONS and not conversion and module.startswith("stax."):
            conversion = name
        if not module.startswith(("stax.", "numpy")):
            where = f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} in {name}"
            return where, conversion
        frame = frame.f_back  # type: ignore[assignment]
    return "?", conversion


@dataclass(frozen=True)
class Segment:
    """A compiled part of a segmented function: `compilation` computes `outputs`."""

    graph: Graph
    compilation: Any  # stax.api.Compilation


# Compiled segments by structural key (graph structure, input layouts, options); the oldest
# are dropped beyond MAX_SEGMENTS.
SEGMENTS: dict[tuple[Any, ...], Any] = {}
MAX_SEGMENTS = 1024
# A signature whose later calls compile more segments than this (data-dependent shapes after
# a break: each new shape is a new program) runs in NumPy from then on.
MAX_RECOMPILES = 8
# [HUNT11] Calls of a signature that ran whole in NumPy on a path that depended on values (most
# of its calls, and at least this many) before the later ones run in NumPy without trying
MAX_FALLBACKS = 4
# One call compiling more new segments than this runs in NumPy instead (from then on).
MAX_CALL_SEGMENTS = 16
# [LOOPFALL] A break whose segment is new each time it is reached (inside a Python loop whose
# body differs per iteration: `assert dist != 0` on `x[i]`) compiles at most this many; then the
# call runs in NumPy (from then on), without the g++ runs up to MAX_CALL_SEGMENTS.
MAX_SITE_SEGMENTS = 4
# [NPB2] One call running more compiled segments than this that compute only 0-d values (a
# Python loop doing scalar work between breaks, `if crc & 1: crc = (crc >> 1) ^ poly` per bit:
# each a call into a kernel doing nanoseconds of work, where NumPy's scalar operations are
# cheaper) runs in NumPy instead (from then on).
MAX_SCALAR_RUNS = 64
# [NPB3] Arrays this small cost about what a call into a compiled segment costs: a break in a
# loop whose segment computes only such arrays keeps its constants (`for i in range(n)` over
# the rows of an (n, 2) array: NumPy's loop is faster; past MAX_SITE_SEGMENTS it runs), and a
# store at a run-time position (`_positioned`: a where rewriting the whole array each time) is
# only made into such an array (filling a larger matrix row by row would be quadratic).
SMALL_ARRAY = 4096
# [NPB2] A value Python needs (an `if`, float()) whose uncomputed ops are at most this many,
# all 0-d (`abs(z) < 1` of an element of an argument, `x.sum() > 0` of one), is computed
# alone: the traced program goes on uncut, its later work fused as in one trace, while it
# grew by fewer than MAX_UNCUT_OPS ops since the last cut (else the arrays it holds are
# computed there too, so that a loop's later segments start from them).
MAX_SCALAR_CONE = 64
MAX_UNCUT_OPS = 2000
# [NPB5] Tracing costs ~60 us per op, NumPy's own op on an array of at most CHEAP_ARRAY elements
# about as much or less: one call that traced more than MAX_CALL_OPS ops (across its breaks) on
# such arrays runs in NumPy instead (from then on). A Python loop with a break per iteration
# traces every iteration again (npbench's channel_flow: `while udiff > .001`, 982 iterations of
# ~1,480 ops on 61 x 61 arrays, its first call 70-95 s of CPU where NumPy takes 0.7 s); a loop
# over larger arrays keeps its compiled segments and its replayed warm calls.
MAX_CALL_OPS = 50_000
CHEAP_ARRAY = 65_536


class InNumPy(BaseException):  # noqa: N818 - a control-flow signal, like GraphBreak
    """A call that cannot run segmented: nothing was written back yet, so it starts over in
    NumPy, and so do the signature's later calls (`what` is the break). A BaseException:
    neither the user's `except Exception:` nor a loop's fallback may catch it and go on."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class SegmentBudget(InNumPy):
    """One call needs more than MAX_CALL_SEGMENTS new segments."""

    def __init__(self) -> None:
        super().__init__(f"the whole function (one call needed more than {MAX_CALL_SEGMENTS} "
                         "compiled segments: breaks whose segments differ, e.g. in a loop)")


@dataclass
class SegmentBuilder(Builder):
    """A builder that knows the call's arrays and runs what it cannot compile in NumPy."""

    arrays: dict[int, np.ndarray] = field(default_factory=dict)
    args: tuple[np.ndarray, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    breaks: list[Break] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    # The user's arrays still referenced (its local variables): computed at each break, so
    # the next segment starts from them (a loop with a break compiles its body once).
    live: list[weakref.ref[Tracer]] = field(default_factory=list)
    compiles: int = 0  # segments compiled during this call
    scalar_runs: int = 0  # segments run during this call that compute only 0-d values
    fallback: bool = False  # the call ran whole in NumPy
    exhausted: bool = False  # and so will later calls of its signature (see `run_segmented`)
    # What the call ran, for replay (stax.frontend.replay); why it cannot be replayed, if so.
    steps: list[replay.Step] = field(default_factory=list)
    no_replay: str = ""
    tape: replay.Tape | None = None  # set when the call finished and can be replayed
    # Arrays `__array__` gave to Python, and their contents then (see `check_handed`).
    handouts: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    in_numpy: bool = False  # a NumPy call of a break is running
    site_compiles: dict[str, int] = field(default_factory=dict)  # new segments by break line
    # [NPB3] the keys, with constants and positions as inputs, of the segments this call compiled
    varying: set[tuple[Any, ...]] = field(default_factory=set)
    largest: int = 0  # [NPB5] the most elements of a value a segment of this call computed

    def created(self, tracer: Tracer) -> None:
        self.live.append(weakref.ref(tracer))

    def too_large(self) -> None:
        raise InNumPy(f"the whole function (its trace grew by {tracing.MAX_TRACE_OPS} ops "
                      f"without a break, at {_location()[0]}: a Python loop unrolled per "
                      "iteration)")

    def note_errstate(self, kind: str, inputs: tuple[Value, ...], dtype: np.dtype,
                      attrs: dict[str, Any]) -> None:
        """[ERR] As a plain trace's, a mode the program cannot apply making the whole function
        NumPy's; segments run under the modes the function sets (`evaluate`: maybe after it
        left the block), which a replay would not apply."""
        try:
            super().note_errstate(kind, inputs, dtype, attrs)
        except GraphBreak as e:
            raise InNumPy(f"the whole function ({e})") from None
        # [NPB4] per op: `errstate_modes` is not empty exactly when a mode is set (a "call"
        # or "log" mode sets `errcall`), checked without building it
        if not self.no_replay and any(m is not None for m in self.errstate.values()):
            self.no_replay = "the function sets np.errstate inside"

    def input(self, shape: tuple[int, ...], dtype: np.dtype) -> Value:
        value = super().input(shape, dtype)
        if len(self.inputs) <= len(self.args):  # an argument of the call
            self.arrays[value.id] = self.args[len(self.inputs) - 1]
        return value

    # ---- hooks called by Tracer and the dispatch ------------------------------------------
    def concretize(self, tracer: Tracer, error: Exception) -> np.ndarray:
        where, conversion = _location()
        what = CONVERSIONS.get(conversion, "a concrete value of a traced array")
        self.breaks.append(Break(what, where, "computed by a compiled segment"))
        value = _fresh(tracer)
        cone = self._scalar_cone(value)  # computed once: later segments read these values
        array = self.evaluate(cone or [value], site=where, cut=cone is None)[0]
        self.steps.append(replay.Guard(tracer.value.id, np.array(array, copy=True)))
        self._nested("a traced array converted inside a NumPy call")
        return array

    def position(self, k: int) -> Tracer:
        """[NPB2] The `k`-th position of a Python loop over a 1-d traced array, as a traced
        index: a break in the loop's body (`if abs(z) < 1`) then needs the same compiled
        segment at every iteration, where a constant index made a new one each time (and
        after MAX_SITE_SEGMENTS the whole function ran in NumPy)."""
        value = Builder.input(self, (), np.dtype(np.intp))
        self.arrays[value.id] = np.array(k, np.intp)
        self.steps.append(replay.Known(value.id, self.arrays[value.id]))
        return Tracer(self, value)

    def _scalar_cone(self, value: Value) -> list[Value] | None:
        """The uncomputed values `value` needs (itself first) when they are at most
        MAX_SCALAR_CONE, all 0-d, and the trace grew by fewer than MAX_UNCUT_OPS ops since
        the last cut (see there); else None."""
        if len(self.ops) - (self.op_limit - tracing.MAX_TRACE_OPS) >= MAX_UNCUT_OPS:
            return None
        cone: dict[int, Value] = {}
        stack = [value]
        while stack:
            v = stack.pop()
            if v.id in self.arrays or v.id in cone:
                continue
            hit = self.producer(v.id)
            if v.ndim or len(cone) == MAX_SCALAR_CONE or hit is None:
                return None
            cone[v.id] = v
            stack.extend(hit[1].inputs)
        return list(cone.values())

    def handed(self, array: np.ndarray) -> None:
        self.handouts.append((array, np.array(array, copy=True)))

    def check_handed(self) -> None:
        """NumPy's `np.array(x, copy=None)` of an array is the array itself (as_strided's
        window, written to, writes `x`); a traced array's is a copy: a call that wrote into
        one runs in NumPy (nothing was written back yet), never silently without the write."""
        if any(a.tobytes() != before.tobytes() for a, before in self.handouts):
            raise InNumPy("the whole function (it wrote into a traced array converted to a "
                          "NumPy array, e.g. through np.lib.stride_tricks.as_strided)")

    def _nested(self, what: str) -> None:
        if self.in_numpy:  # NumPy met a traced value the tape cannot name
            self.no_replay = self.no_replay or what

    def whole_function(self, what: str) -> NoReturn:
        raise InNumPy(f"the whole function ({what})")

    def eager(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
              error: Exception, where: str | None = None) -> Any:
        where = where or _location()[0]  # [H16] given: a lazy x[mask] materialized later
        self.breaks.append(Break(_what(error), where, "runs in NumPy"))
        self._nested("a graph break inside a NumPy call")
        if replay.is_random(func):
            self.no_replay = self.no_replay or "draws random numbers (new ones on each call)"
        tracers: list[Tracer] = []
        _collect((args, kwargs), tracers)
        unique = list({id(t): t for t in tracers}.values())
        values = self.evaluate([_fresh(t) for t in unique], site=where)
        originals = dict(zip((id(t) for t in unique), values, strict=True))
        # [HUNT3] a traced Python scalar (a weak 0-d value: `n`, `seed`, `n * 2`) reaches NumPy
        # as the Python scalar, as in the user's code (np.random.default_rng(seed) refuses 0-d)
        weak = {id(t) for t in unique if t.weak and t.ndim == 0}
        copies = {k: v.item() if k in weak else np.array(v, copy=True)
                  for k, v in originals.items()}
        c_args, c_kwargs = _substitute((args, kwargs), copies)
        refs = {id(t): replay.Ref(t.value.id, id(t) in weak) for t in unique}  # (before rebinds)
        self.in_numpy = True
        try:
            with suspended():  # NumPy's own creation functions inside NumPy's code
                result = func(*c_args, **c_kwargs)
        except BaseException as e:
            self.no_replay = self.no_replay or f"a NumPy call raised {type(e).__name__}"
            raise
        finally:
            self.in_numpy = False
        rebound: list[int | None] = []
        for t in unique:  # NumPy mutated an argument in place: so does the traced program
            if np.array_equal(copies[id(t)], originals[id(t)], equal_nan=True):
                rebound.append(None)
                continue
            from stax.frontend.numpy_api import _rebind

            t.check_fresh()
            new = self.constant(copies[id(t)]).value
            _rebind(t, new)
            rebound.append(new.id)
        viewed: dict[int, replay.Viewed] = {}
        arguments = [None if id(t) in weak else (t, copies[id(t)]) for t in unique]
        wrapped = self._wrap(result, arguments, viewed, func)
        t_args, t_kwargs = _substitute((args, kwargs), refs)
        try:
            shape = replay.template(result, wrapped, viewed)
        except replay.NoReplay as e:
            self.no_replay = self.no_replay or str(e)
        else:
            self.steps.append(replay.Call(func, t_args, t_kwargs, tuple(refs.values()),
                                          tuple(rebound), shape))
        return wrapped

    # ---- running compiled segments --------------------------------------------------------
    def constant(self, array: np.ndarray) -> Tracer:
        """A NumPy result as a new input of the traced program."""
        value = Builder.input(self, array.shape, array.dtype)
        self.arrays[value.id] = array
        # its value, once Python uses it, adds the marker to `static`: a guard on replay
        scalar = (frozenset({-1 - value.id}), array[()]) if array.ndim == 0 else None
        return Tracer(self, value, concrete=scalar)

    def _wrap(self, result: Any, arguments: list[tuple[Tracer, np.ndarray] | None],
              viewed: dict[int, replay.Viewed], func: Any) -> Any:
        """`result` of NumPy's `func` on the `arguments`' arrays (Tracer, the array NumPy got;
        None: a Python scalar) as traced values: an array that views an argument is that view
        of the argument's Tracer (recorded in `viewed`), so writes through either reach the
        other, as in NumPy; any other array is a new input."""
        if type(result) is np.ndarray and result.size:
            for k, pair in enumerate(arguments):
                if pair is not None and replay.views(pair[1], result):
                    return self._viewing(k, *pair, result, viewed, func)
        # NumPy scalars become 0-d inputs too (NEP 50 treats them like 0-d arrays): a new
        # value on each call then does not compile a new segment with it as a constant.
        if (type(result) is np.ndarray or isinstance(result, np.generic)) and \
                result.dtype in SUPPORTED_DTYPES:
            return self.constant(np.asarray(result))
        if isinstance(result, tuple):
            items = [self._wrap(r, arguments, viewed, func) for r in result]
            return type(result)(*items) if hasattr(result, "_fields") else tuple(items)
        if isinstance(result, list):
            return [self._wrap(r, arguments, viewed, func) for r in result]
        return result

    def _viewing(self, k: int, t: Tracer, base: np.ndarray, result: np.ndarray,
                 viewed: dict[int, replay.Viewed], func: Any) -> Tracer:
        """`result`, a view of `base` (the `k`-th argument's array, `t`'s values), as the
        same view of `t`; a view Stax's views cannot express (a dtype view, diagonal
        strides) makes the function run in NumPy (a copy would silently stop aliasing)."""
        from stax.frontend.numpy_api import _view

        recipe = view_recipe(base, result)
        if recipe is None:
            name = getattr(func, "__qualname__", None) or getattr(func, "__name__", "?")
            raise InNumPy(f"the whole function ({name} returns a view of its argument that "
                          "Stax cannot trace as a view)")
        view = t
        for kind, shape, attrs in recipe:
            view = _view(view, kind, shape, **attrs)
        viewed[id(view)] = replay.Viewed(k, (base.shape, base.strides),
                                         replay.layout(base, result))
        return view

    def evaluate(self, values: list[Value], site: str = "", cut: bool = True) -> list[np.ndarray]:
        """Compute `values` with the compiled segment that produces them (and, at a break at
        the user's line `site` that `cut`s the program, the live arrays: later segments then
        start from them)."""
        wanted = list(values)
        if site and cut:
            self.op_limit = len(self.ops) + tracing.MAX_TRACE_OPS  # the ops before: computed
            alive = [t for t in (r() for r in self.live) if t is not None]
            self.live = [weakref.ref(t) for t in alive]
            wanted += [t.value for t in alive
                       if t.base is None or t.base.version == t.base_version]
        needed = [v for v in dict.fromkeys(wanted) if v.id not in self.arrays]
        if needed:
            self.largest = max(self.largest, *(math.prod(v.shape) for v in needed))
            if site and len(self.ops) > MAX_CALL_OPS and self.largest <= CHEAP_ARRAY:
                raise InNumPy(f"the whole function (one call traced more than {MAX_CALL_OPS} "
                              f"ops across its breaks, at {site}, on arrays "
                              f"of at most {CHEAP_ARRAY} elements: a Python loop traced "
                              "iteration by iteration, slower than NumPy runs it)")
            if all(v.ndim == 0 for v in needed):
                self.scalar_runs += 1
                if self.scalar_runs > MAX_SCALAR_RUNS:
                    raise InNumPy(f"the whole function (one call ran more than "
                                  f"{MAX_SCALAR_RUNS} compiled segments of scalar work, at "
                                  f"{site or _location()[0]}: a Python loop stepping through "
                                  "values, faster in NumPy)")
            program, leaves, inputs = self.program(needed, site)
            with np.errstate(**dict(self.errstate_modes())):  # [ERR]
                flat = program.program.call(list(inputs))
            for v, array in zip(needed, flat, strict=True):
                self.arrays[v.id] = array
            self.steps.append(replay.Run(program.program, tuple(v.id for v in leaves),
                                         tuple(v.id for v in needed),
                                         tuple(a.shape for a in flat)))
        return [self.arrays[v.id] for v in values]

    def program(self, needed: list[Value], site: str
                ) -> tuple[Any, list[Value], list[np.ndarray]]:
        """The compiled segment computing `needed`, the values it reads and their arrays.
        [NPB3] A new segment that differs from one this call compiled only in its Python
        scalar constants (`x * (i / n)` in a loop over i) and the positions of its `x[i]` and
        `x[i] = v` takes those as inputs (`subgraph`), so one compiled segment serves every
        later iteration, where each new constant made a new segment (and after
        MAX_SITE_SEGMENTS the whole function ran in NumPy), when it computes an array larger
        than SMALL_ARRAY. Other segments keep their constants in their code (folded, `x ** 2`
        as x * x: a loop whose segments repeat, channel_flow's, ran 18x slower lifted)."""
        graph, leaves, _ = self.subgraph(needed)
        inputs = [self.arrays[v.id] for v in leaves]
        key = self.segment_key(graph, inputs)
        if key not in SEGMENTS and max(math.prod(v.shape) for v in needed) > SMALL_ARRAY:
            lifted, lifted_leaves, known = self.subgraph(needed, lift=True)
            if known:
                lifted_inputs = [known[v.id] if v.id in known else self.arrays[v.id]
                                 for v in lifted_leaves]
                lifted_key = self.segment_key(lifted, lifted_inputs)
                if lifted_key in SEGMENTS or lifted_key in self.varying:
                    self.steps += [replay.Known(v, a) for v, a in known.items()]
                    return (self.compiled(lifted, lifted_inputs, site, lifted_key),
                            lifted_leaves, lifted_inputs)
                self.varying.add(lifted_key)
        return self.compiled(graph, inputs, site, key), leaves, inputs

    def subgraph(self, outputs: list[Value], lift: bool = False
                 ) -> tuple[Graph, list[Value], dict[int, np.ndarray]]:
        """The ops `outputs` need; values already known become the graph's inputs. With `lift`
        [NPB3], so do Python scalar constants and the positions of `x[i]` and `x[i] = v` (see
        `_positioned`), their arrays in the dict returned."""
        needed: dict[int, tuple[int, Op]] = {}
        stack = list(outputs)
        while stack:
            v = stack.pop()
            if v.id in needed:
                continue
            hit = self.producer(v.id)
            assert hit is not None, f"no traced op computes value {v.id}"
            needed[v.id] = hit
            if v.id not in self.arrays:
                stack.extend(needed[v.id][1].inputs)
        leaves: list[Value] = []
        ops: list[Op] = []
        known: dict[int, np.ndarray] = {}

        def leaf(v: Value) -> None:
            leaves.append(v)
            ops.append(Op("input", (), v, (("index", len(leaves) - 1),)))

        for _, op in sorted(needed.values(), key=lambda hit: hit[0]):
            if op.out.id in self.arrays:
                leaf(op.out)
            elif lift and _liftable(op):
                leaf(op.out)
                known[op.out.id] = np.array(op.attr("value"), op.out.dtype)
            elif lift and (positioned := _positioned(op, self.new_value)) is not None:
                body, positions = positioned
                for v, array in positions:
                    leaf(v)
                    known[v.id] = array
                ops += body
            else:
                ops.append(op)
        return Graph(tuple(leaves), tuple(ops), tuple(outputs)), leaves, known

    def record(self, traced: Any) -> replay.Tape | None:
        """The tape of this call (None, with `no_replay` saying why, if it cannot be replayed).
        Values Python used through their known value (a scalar argument as a shape, a NumPy
        scalar result in an `if`: positions and markers in `static`) are guarded where they
        are defined."""
        if self.no_replay:
            return None
        arguments = tuple(v.id for v in self.inputs[: len(self.args)])
        read = {self.inputs[p].id if p >= 0 else -1 - p for p in self.static}
        guards = {v: replay.Guard(v, np.array(self.arrays[v], copy=True)) for v in read}
        defined: set[int] = set()
        steps: list[replay.Step] = []
        for step in (None, *self.steps):
            new = arguments if step is None else _defines(step)
            if step is not None:
                if not defined.issuperset(_uses(step)):  # never expected: no tape then
                    self.no_replay = "a value the tape does not compute"
                    return None
                steps.append(step)
            defined.update(new)
            steps += [guards.pop(v) for v in new if v in guards]
        if guards or not defined.issuperset(v.id for v in traced.graph.outputs):
            self.no_replay = "a value the tape does not compute"
            return None
        return replay.Tape(arguments, tuple(steps), traced)

    def segment_key(self, graph: Graph, inputs: list[np.ndarray]) -> tuple[Any, ...]:
        """The compiled-segment cache key of `graph` on `inputs` (see SEGMENTS)."""
        return (structural_key(graph), tuple((a.strides, a.dtype.str) for a in inputs),
                tuple(sorted((k, str(v)) for k, v in self.options.items())))

    def compiled(self, graph: Graph, inputs: list[np.ndarray], site: str,
                 key: tuple[Any, ...]) -> Any:
        from stax.api import Traced, compile_traced

        hit = SEGMENTS.get(key)
        if hit is None:
            if self.compiles >= MAX_CALL_SEGMENTS:
                raise SegmentBudget
            count = self.site_compiles[site] = self.site_compiles.get(site, 0) + 1
            if site and count > MAX_SITE_SEGMENTS:
                raise InNumPy(f"the whole function (the break at {site} needed a new "
                              f"compiled segment each time, {MAX_SITE_SEGMENTS} times: a "
                              "Python loop whose body differs per iteration)")
            hit = compile_traced(Traced(graph, None, len(graph.outputs), ()), inputs,
                                 self.options)
            SEGMENTS[key] = hit
            self.compiles += 1
            while len(SEGMENTS) > MAX_SEGMENTS:
                del SEGMENTS[next(iter(SEGMENTS))]
        self.segments.append(Segment(graph, hit))
        return hit


View = tuple[str, tuple[int, ...], dict[str, Any]]  # a view op: kind, shape, attributes


def view_recipe(base: np.ndarray, a: np.ndarray) -> list[View] | None:
    """How `a` views `base`, as Stax's view ops (transpose, reshape, slice) of `base`'s
    logical array: `base`'s dimensions in memory order without unit ones, one slice, a
    transpose and a reshape to `a`'s shape (x[::2], x.T, squeeze, trim_zeros); or a contiguous
    run of its elements reshaped (x.reshape). Each candidate is checked on `base` itself:
    None when neither lays `a`'s elements where NumPy does."""
    if a.dtype != base.dtype:
        return None
    want = replay.layout(base, a)
    for make in (_sliced, _run):
        recipe = make(base, a, want[0] // base.itemsize)
        if recipe is not None and replay.layout(base, _apply(base, recipe)) == want:
            return recipe
    return None


def _sliced(base: np.ndarray, a: np.ndarray, offset: int) -> list[View] | None:
    item, recipe = base.itemsize, []
    order = sorted((d for d in range(base.ndim) if base.shape[d] != 1),
                   key=lambda d: -base.strides[d])
    dims = sorted((d for d in range(a.ndim) if a.shape[d] != 1), key=lambda d: -abs(a.strides[d]))
    if len(dims) != len(order):
        return None
    if order != sorted(order):  # (an argument laid out in another order: Fortran, x.T)
        perm = (*order, *(d for d in range(base.ndim) if base.shape[d] == 1))
        recipe.append(("transpose", tuple(base.shape[d] for d in perm), {"perm": perm}))
    shape = tuple(base.shape[d] for d in order)
    if shape != (recipe[-1][1] if recipe else base.shape):
        recipe.append(("reshape", shape, {"shape": shape}))
    strides = [math.prod(shape[j + 1:]) for j in range(len(shape))]  # elements, dense
    starts, steps = [], []
    for j, d in enumerate(dims):
        start, offset = divmod(offset, strides[j])
        step, rest = divmod(a.strides[d], item * strides[j])
        if rest or not step or not 0 <= start + step * (a.shape[d] - 1) < shape[j]:
            return None
        starts.append(start)
        steps.append(step)
    sizes = tuple(a.shape[d] for d in dims)
    if sizes != shape or any(starts) or any(s != 1 for s in steps):
        recipe.append(("slice", sizes, {"starts": tuple(starts), "steps": tuple(steps)}))
    perm = tuple(dims.index(d) for d in sorted(dims))
    if perm != tuple(sorted(perm)):
        recipe.append(("transpose", tuple(sizes[p] for p in perm), {"perm": perm}))
    if a.shape != (recipe[-1][1] if recipe else base.shape):
        recipe.append(("reshape", a.shape, {"shape": a.shape}))
    return recipe


def _run(base: np.ndarray, a: np.ndarray, offset: int) -> list[View] | None:
    if not a.flags.c_contiguous:
        return None
    recipe: list[View] = [("reshape", (base.size,), {"shape": (base.size,)})] \
        if base.ndim != 1 else []
    if a.size != base.size:
        recipe.append(("slice", (a.size,), {"starts": (offset,), "steps": (1,)}))
    if a.shape != (base.size,):
        recipe.append(("reshape", a.shape, {"shape": a.shape}))
    return recipe


def _apply(base: np.ndarray, recipe: list[View]) -> np.ndarray:
    """`recipe` on NumPy's `base` (a reshape NumPy would copy fails the layout check)."""
    x = base
    for kind, shape, attrs in recipe:
        if kind == "transpose":
            x = x.transpose(attrs["perm"])
        elif kind == "reshape":
            x = x.reshape(shape)
        else:
            x = x[tuple(slice(st, st + sp * (n - 1) + (1 if sp > 0 else -1), sp)
                        if st + sp * (n - 1) + (1 if sp > 0 else -1) >= 0 else
                        slice(st, None, sp)
                        for st, sp, n in zip(attrs["starts"], attrs["steps"], shape,
                                             strict=True))]
    return x


def _uses(step: replay.Step) -> list[int]:
    """The values `step` reads."""
    if isinstance(step, replay.Run):
        return list(step.inputs)
    if isinstance(step, replay.Call):
        return [r.value for r in step.refs]
    return [] if isinstance(step, replay.Known) else [step.value]


def _defines(step: replay.Step) -> list[int]:
    """The values `step` computes."""
    if isinstance(step, replay.Run):
        return list(step.outputs)
    if isinstance(step, replay.Guard):
        return []
    if isinstance(step, replay.Known):
        return [step.value]
    out = [v for v in step.rebound if v is not None]
    stack = [step.result]
    while stack:
        t = stack.pop()
        if isinstance(t, replay.Out):
            out.append(t.value)
        elif isinstance(t, replay.Items):
            stack.extend(t.items)
    return out


def _liftable(op: Op) -> bool:
    """[NPB3] A Python scalar constant (a 0-d `const`), which a segment may take as an input."""
    return op.kind == "const" and not op.out.shape and \
        type(op.attr("value")) in (bool, int, float, complex)


def _positioned(op: Op, fresh: Callable[[tuple[int, ...], np.dtype], Value]
                ) -> tuple[list[Op], list[tuple[Value, np.ndarray]]] | None:
    """[NPB3] A slice or setitem at one position of some axes of its array and whole along the
    others (`x[i]`, `x[i, :] = v`), with those positions as new inputs: a take along those
    axes, or a `where` over the array choosing `v` where an iota equals the position. Its ops
    (the last computes `op.out`) and its inputs with their values; None for any other op, and
    for a store into an array of more than SMALL_ARRAY elements."""
    if op.kind not in ("slice", "setitem"):
        return None
    base = op.inputs[0]
    region = op.out.shape if op.kind == "slice" else op.inputs[1].shape
    starts, steps = op.attr("starts"), op.attr("steps")
    if not all(isinstance(n, int) for n in base.shape):
        return None
    single = [d for d, n in enumerate(base.shape) if region[d] == 1 and n != 1]
    whole = all(d in single or (starts[d], steps[d], region[d]) == (0, 1, n)
                for d, n in enumerate(base.shape))
    if not single or not whole or \
            op.kind == "setitem" and math.prod(base.shape) > SMALL_ARRAY:
        return None
    ops: list[Op] = []
    positions: list[tuple[Value, np.ndarray]] = []

    def add(kind: str, inputs: tuple[Value, ...], size: tuple[int, ...] | None, dtype: Any,
            /, **attrs: Any) -> Value:  # (size None: op.out)
        out = op.out if size is None else fresh(size, np.dtype(dtype))
        ops.append(Op(kind, inputs, out, tuple(sorted(attrs.items()))))
        return out

    shape = tuple(base.shape)
    if op.kind == "slice":
        value = base
        for d in single:
            index = fresh((1,), np.dtype(np.int64))
            positions.append((index, np.array([starts[d]], np.int64)))
            value = add("take", (value, index), None if d == single[-1] else
                        value.shape[:d] + (1,) + value.shape[d + 1:], base.dtype,
                        axes=(d,), position=d)
        return ops, positions
    from stax.frontend.numpy_api import _Frozen

    mask: Value | None = None
    for d in single:
        position = fresh((), np.dtype(np.int64))
        positions.append((position, np.array(starts[d], np.int64)))
        line = tuple(n if k == d else 1 for k, n in enumerate(shape))
        iota = add("constant_array", (), line, np.int64,
                   data=_Frozen(np.arange(shape[d], dtype=np.int64).reshape(line)))
        here = add("elementwise", (add("broadcast", (iota,), shape, np.int64, shape=shape),
                                   add("broadcast", (position,), shape, np.int64, shape=shape)),
                   shape, np.bool_, fn="equal")
        mask = here if mask is None else \
            add("elementwise", (mask, here), shape, np.bool_, fn="logical_and")
    value = add("broadcast", (op.inputs[1],), shape, base.dtype, shape=shape)
    add("where", (mask, value, base), None, base.dtype)
    return ops, positions


def structural_key(graph: Graph) -> tuple[Any, ...]:
    """The graph with value ids renumbered in order and constants by content."""
    number: dict[int, int] = {}
    key: list[Any] = []
    for op in graph.ops:
        number[op.out.id] = len(number)
        attrs = tuple([(k, _attr_key(v)) for k, v in op.attrs])
        key.append((op.kind, tuple(number[v.id] for v in op.inputs), op.out.shape,
                    op.out.dtype.str, attrs))
    key.append(tuple(number[v.id] for v in graph.outputs))
    return tuple(key)


# [NPB4] attribute types keyed by their repr directly (most attributes: a key is made per op
# of every segment run, a break per loop iteration; getattr's miss raised inside)
_REPR_KEYED = frozenset({int, str, bool, tuple, type(None)})


def _attr_key(v: Any) -> Any:
    if type(v) in _REPR_KEYED:
        return (type(v).__name__, repr(v))
    array = getattr(v, "array", None)
    if isinstance(array, np.ndarray):
        digest = hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16)
        return ("array", array.shape, array.dtype.str, digest.hexdigest())
    if isinstance(v, float):
        return ("float", v.hex())  # -0.0 and 0.0 differ; nan is one key
    return (type(v).__name__, repr(v))


def _fresh(t: Tracer) -> Value:
    t.check_fresh()
    return t.value


def _what(error: Exception) -> str:
    return str(error).removeprefix("stax.jit: ").removesuffix(" is not supported")


def _collect(obj: Any, out: list[Tracer]) -> None:
    if isinstance(obj, Tracer):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _collect(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _collect(o, out)


def _substitute(obj: Any, arrays: dict[int, Any], leaf: type = Tracer) -> Any:
    """`obj` with each `leaf` (a Tracer, or a replay.Ref) replaced by `arrays[id(leaf)]`."""
    if isinstance(obj, leaf):
        return arrays[id(obj)]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_substitute(o, arrays, leaf) for o in obj)
    if isinstance(obj, list):
        return [_substitute(o, arrays, leaf) for o in obj]
    if isinstance(obj, dict):
        return {k: _substitute(o, arrays, leaf) for k, o in obj.items()}
    return obj


# ---- the hooks on Tracer ---------------------------------------------------------------------

def breakable(impl: Callable[..., Any], fallback: Callable[..., Any]) -> Callable[..., Any]:
    """`impl`, or (on NotImplementedError) a graph break that runs `fallback` in NumPy."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return impl(*args, **kwargs)
        except NotImplementedError as e:
            return _builder((args, kwargs)).eager(fallback, args, kwargs, e)

    call.__name__ = getattr(impl, "__name__", "call")
    call.__doc__ = impl.__doc__
    return call


def _builder(obj: Any) -> Builder:
    found: list[Tracer] = []
    _collect(obj, found)
    return found[0].builder


def install(tracer: type[Tracer]) -> None:
    """Route what the installed Tracer methods cannot trace to a graph break."""
    from stax.frontend import numpy_api as api

    functions, ufuncs = tracer.__array_function__, tracer.__array_ufunc__  # type: ignore

    def array_function(self: Tracer, func: Callable[..., Any], types: Any, args: Any,
                       kwargs: Any) -> Any:
        try:
            return functions(self, func, types, args, kwargs)
        except NotImplementedError as e:
            return _builder((args, kwargs)).eager(func, args, kwargs, e)

    def array_ufunc(self: Tracer, ufunc: np.ufunc, method: str, *inputs: Any,
                    **kwargs: Any) -> Any:
        try:
            return ufuncs(self, ufunc, method, *inputs, **kwargs)
        except NotImplementedError as e:
            return _builder((inputs, kwargs)).eager(getattr(ufunc, method), inputs, kwargs, e)

    tracer.__array_function__ = array_function  # type: ignore[attr-defined]
    tracer.__array_ufunc__ = array_ufunc  # type: ignore[attr-defined]
    tracer.__getitem__ = breakable(tracer.__getitem__, operator.getitem)  # type: ignore
    tracer.__setitem__ = breakable(tracer.__setitem__, operator.setitem)  # type: ignore
    from stax.frontend.functions import METHODS

    for name in (*api.METHODS, *METHODS):
        setattr(tracer, name, breakable(getattr(tracer, name), getattr(np.ndarray, name)))
    tracer.__getattr__ = _ndarray_attribute  # type: ignore[attr-defined]
    tracer.__str__ = lambda self: str(_printed(  # type: ignore[method-assign]
        self, "printing"))
    tracer.__format__ = lambda self, spec: format(  # type: ignore[method-assign]
        _printed(self, "formatting")[()], spec)


def _printed(tracer: Tracer, how: str) -> np.ndarray:
    """A traced array's value for text: the function prints on each call, never replayed."""
    builder = tracer.builder
    if isinstance(builder, SegmentBuilder):
        builder.no_replay = builder.no_replay or f"{how} a traced array"
    return builder.concretize(tracer, NotImplementedError(
        f"stax.jit: {how} a traced array is not supported"))


# [HUNT7] ndarray attributes of the memory layout: a break's copy would answer for itself (C
# order, its own buffer): `np.broadcast_to(x, s).strides[0]` was 8, not 0
_LAYOUT = frozenset({"strides", "flags", "base", "ctypes", "data"})


def _ndarray_attribute(self: Tracer, name: str) -> Any:
    """An ndarray method or attribute Stax does not trace (`x.item()`, `x.sort()`,
    `x.tolist()`, `x.nonzero()`): a graph break running NumPy's."""
    if name.startswith("_") or not hasattr(np.ndarray, name):
        raise AttributeError(f"'Tracer' object has no attribute {name!r}")
    if name in _LAYOUT and isinstance(self.builder, SegmentBuilder):  # [HUNT7] (`_LAYOUT`)
        raise InNumPy(f"the whole function (ndarray.{name}: the layout of a traced array)")
    error = NotImplementedError(f"stax.jit: ndarray.{name} is not supported")
    member = getattr(np.ndarray, name)
    if callable(member):
        def method(*args: Any, **kwargs: Any) -> Any:
            return self.builder.eager(member, (self, *args), kwargs, error)
        return method
    return self.builder.eager(lambda a: getattr(a, name), (self,), {}, error)


# ---- running a function with breaks ------------------------------------------------------------

def _states(jitted: Any) -> list[Any]:
    """The states of the call's random generator arguments (`RandomArgument`)."""
    return [g.bit_generator.state if isinstance(g, np.random.Generator) else g.get_state()
            for g in getattr(jitted, "generators", ())]


def _restore(jitted: Any, states: list[Any]) -> None:
    """The generators as they were (`_states`): a call that starts over draws again."""
    for g, state in zip(getattr(jitted, "generators", ()), states, strict=False):
        if isinstance(g, np.random.Generator):
            g.bit_generator.state = state
        else:
            g.set_state(state)


def run_segmented(jitted: Any, args: tuple[Any, ...]) -> tuple[Any, SegmentBuilder]:
    """Call `jitted.fn` on `args` with graph breaks; its result, and the builder (its breaks,
    segments and the number of segments compiled)."""
    from stax.api import AliasedArguments, _as_array, _unflatten, trace, write_back

    builder = SegmentBuilder(options=jitted.options)
    states = _states(jitted)
    try:
        builder.args = tuple(_as_array(a) for a in args)
        traced = trace(jitted.fn, args, builder)
        traced.check_args(args)
        flat = builder.evaluate(list(traced.graph.outputs))
        builder.check_handed()
    except (InNumPy, Exception) as e:
        signal = _swallowed(e)  # e itself, or [HUNT9] one NumPy turned into its own error
        if signal is None and (not isinstance(e, (NotImplementedError, TypeError)) or
                               not str(e).startswith("stax.jit")
                               and not isinstance(e, NotImplementedError)):
            raise
        # Nothing was written back yet: the call starts over in NumPy (and draws the same
        # numbers again), and so do later calls at once: a signal's limits are the code's
        # (segments per call, scalar runs, ...). [HUNT10] So too for a stax.jit error (each
        # call was traced in segments again to it: 30x NumPy), but not for arguments that
        # alias (a property of this call, not of the code), nor [HUNT11] where Python saw a
        # computed value or a scalar argument's on the way (`if x.sum() > 0:`, `if n > 2:`):
        # a call with other values may take a path that compiles, so later calls try again
        # (`call_segmented` bounds how often).
        _restore(jitted, states)
        what = signal.what if signal is not None else f"the whole function ({e})"
        builder.fallback = True
        seen = builder.static or any(isinstance(step, replay.Guard) for step in builder.steps)
        builder.exhausted = signal is not None or not isinstance(e, AliasedArguments) and not seen
        builder.breaks.append(Break(what, jitted.fn.__name__, "runs in NumPy" + (
            " from now on" if builder.exhausted else " (this call: its path depends on values)")))
        return jitted.fn(*args), builder
    builder.tape = builder.record(traced)
    return _unflatten(traced.structure, tuple(write_back(traced, args, flat))), builder


def _swallowed(error: BaseException) -> InNumPy | None:
    """[HUNT9] The InNumPy signal an error was raised while handling, if any: NumPy's C code
    turns any exception of a conversion into its own (`x[i] = t` into a NumPy array converts
    the Tracer `t` by float(); a break there that needed the whole function in NumPy became
    ValueError "setting an array element with a sequence", a crash)."""
    seen: set[int] = set()
    context: BaseException | None = error
    while context is not None and id(context) not in seen:
        if isinstance(context, InNumPy):
            return context
        seen.add(id(context))
        context = context.__cause__ or context.__context__
    return None


def call_segmented(jitted: Any, args: tuple[Any, ...], key: tuple[Any, ...]) -> Any:
    """A call of a function with breaks: a replay of a recorded tape whose guards hold, else
    the function run segmented (recording a tape); each break is warned about once."""
    # calls run segmented, segments they compiled after the first, replays, missed replays,
    # calls run whole in NumPy
    calls = jitted.segment_counts.setdefault(key, [0, 0, 0, 0, 0])
    if calls[1] > MAX_RECOMPILES:
        return jitted.fn(*args)
    tapes = jitted.tapes.get(key, [])
    states = _states(jitted) if tapes else []
    for tape in reversed(tapes):  # the newest first
        result = tape.replay(args)
        if result is not replay.MISS:
            calls[2] += 1
            return result
        _restore(jitted, states)  # a missed replay's draws are drawn again
    if tapes:
        calls[3] += 1
        if calls[3] >= replay.MAX_MISSES and calls[3] > calls[2]:
            jitted.tapes[key] = []
            jitted.no_replay[key] = (f"{calls[3]} calls missed every tape (Python uses values "
                                     "that differ from call to call)")
    result, builder = run_segmented(jitted, args)
    if not jitted.options["replay"]:
        jitted.no_replay[key] = "stax.jit(..., replay=False)"
    elif key not in jitted.no_replay:
        if builder.tape is not None:
            tapes = jitted.tapes.setdefault(key, [])
            tapes.append(builder.tape)
            del tapes[: -replay.MAX_TAPES]
        elif builder.exhausted or not builder.fallback:  # [HUNT11] else a later call may
            jitted.no_replay[key] = builder.no_replay or "the whole function runs in NumPy"
    calls[1] += builder.compiles if calls[0] else 0
    calls[0] += 1
    calls[4] += builder.fallback
    found = list(builder.breaks)
    if builder.exhausted:  # its break says why
        calls[1] = MAX_RECOMPILES + 1
    elif calls[4] >= MAX_FALLBACKS and 2 * calls[4] > calls[0]:  # [HUNT11] (`run_segmented`)
        calls[1] = MAX_RECOMPILES + 1
        found.append(Break(f"the whole function ({calls[4]} of its {calls[0]} calls ran in "
                           "NumPy)", jitted.fn.__name__, "runs in NumPy from now on"))
    elif calls[1] > MAX_RECOMPILES:
        found.append(Break(f"the whole function (its later calls compiled more than "
                           f"{MAX_RECOMPILES} segments: shapes that depend on the data)",
                           jitted.fn.__name__, "runs in NumPy from now on"))
    known = jitted.breaks.setdefault(key, [])
    for brk in found:
        if brk not in known:
            known.append(brk)
            warn_once(jitted, brk)
    return result


def warn_once(jitted: Any, brk: Break, stacklevel: int = 4) -> None:
    """A GraphBreakWarning naming `brk`, once per jitted function (`stacklevel`: the caller
    of the jitted function, seen from here)."""
    if brk not in jitted.warned:
        jitted.warned.add(brk)
        warnings.warn(f"stax.jit: graph break in {jitted.fn.__name__}: {brk}",
                      GraphBreakWarning, stacklevel=stacklevel)


__all__ = ["Break", "GraphBreak", "GraphBreakWarning", "SegmentBuilder", "call_segmented",
           "install", "run_segmented", "warn_once"]


# ---- arguments that are not arrays or scalars ----

class _Opaque(Exception):  # noqa: N818 - internal signal
    """An argument whose value Stax cannot key a compiled program by."""


STATIC_TYPES = (str, bytes, type(None), slice, type(Ellipsis), np.dtype, type, range, bool, int,
                float, complex, np.generic)


GENERATORS = (np.random.Generator, np.random.RandomState)


def _split(obj: Any, arrays: list[Any], top: bool, generators: list[Any]) -> Any:
    """Arrays (and top-level scalars) become arguments of the compiled program; random
    generators are the call's own (`RandomArgument`); other values (strings, None, shapes,
    lists of numbers) are static: part of the cache key."""
    dynamic = (np.ndarray,) if not top else (np.ndarray, np.generic, bool, int, float)
    if isinstance(obj, np.ndarray) and not compiles_dtype(obj):
        raise _Opaque(f"ndarray with dtype {obj.dtype}")
    if isinstance(obj, dynamic) and not isinstance(obj, complex) and compiles_dtype(obj):
        arrays.append(obj)
        return ("arg", len(arrays) - 1)
    if isinstance(obj, GENERATORS) and not isinstance(obj, RandomArgument):  # (its class)
        generators.append(obj)
        return ("random", type(obj).__name__, len(generators) - 1)
    if isinstance(obj, (list, tuple)):
        return (type(obj), tuple(_split(o, arrays, False, generators) for o in obj))
    if isinstance(obj, dict):
        return (dict, tuple((_static_key(k), k, _split(v, arrays, False, generators))
                            for k, v in obj.items()))
    if isinstance(obj, STATIC_TYPES):
        return ("static", _static_key(obj), obj)
    raise _Opaque(type(obj).__name__)


def _static_key(obj: Any) -> tuple[str, str]:
    if not isinstance(obj, STATIC_TYPES):
        raise _Opaque(type(obj).__name__)
    return (type(obj).__name__, repr(obj))


def _key(structure: Any) -> Any:
    if structure[0] in ("arg", "random"):
        return structure
    if structure[0] == "static":
        return structure[:2]
    if structure[0] is dict:
        return ("dict", tuple((k, _key(s)) for k, _, s in structure[1]))
    return (structure[0].__name__, tuple(_key(s) for s in structure[1]))


def _rebuild(structure: Any, arrays: tuple[Any, ...], generators: list[Any]) -> Any:
    if structure[0] == "arg":
        return arrays[structure[1]]
    if structure[0] == "random":
        return generators[structure[2]]
    if structure[0] == "static":
        return structure[2]
    if structure[0] is dict:
        return {k: _rebuild(s, arrays, generators) for _, k, s in structure[1]}
    return structure[0](_rebuild(s, arrays, generators) for s in structure[1])


class _GeneratorView:
    """A random generator as the traced function sees it: `isinstance(rng, np.random.Generator)`
    holds as in NumPy ([REVIEW] it was False while tracing: the function took its other
    branch); attributes and methods come from `generator()`, through `attribute`/`method`."""

    def generator(self) -> Any:
        raise NotImplementedError

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: PLE0307 - isinstance reads it
        try:
            return type(self.generator())
        except IndexError:  # no call's generator yet
            return type(self)

    def __getattr__(self, name: str) -> Any:
        member = getattr(self.generator(), name)
        if not callable(member) or name.startswith("_"):
            return self.attribute(name, member)
        return self.method(name, member)

    def attribute(self, name: str, member: Any) -> Any:
        return member

    def method(self, name: str, member: Any) -> Any:
        raise NotImplementedError


class RandomArgument(_GeneratorView):
    """A random generator argument (`def f(x, rng)`) as the traced function sees it: each draw
    (`rng.normal(...)`) is a graph break that draws from the generator of the current call
    (`current[index]`, set by `call_general` before each call), also when a tape replays it;
    outside a trace it is the generator itself. Each call draws as NumPy would: the compiled
    parts never hold numbers drawn once."""

    def __init__(self, current: list[Any], index: int) -> None:
        self._current, self._index = current, index

    def generator(self) -> Any:
        return self._current[self._index]

    def attribute(self, name: str, member: Any) -> Any:
        from stax.frontend.functions import _ACTIVE

        builder = getattr(_ACTIVE, "builder", None)
        if builder is None:
            return member
        # [REVIEW] an attribute (`rng.bit_generator`) read while tracing is a break too:
        # as a constant, replays would use the first call's generator's
        current, index = self._current, self._index
        return builder.eager(lambda: getattr(current[index], name), (), {},
                             NotImplementedError(f"stax.jit: rng.{name} of a random "
                                                 "generator argument"))

    def method(self, name: str, member: Any) -> Any:
        current, index = self._current, self._index

        def draw(*args: Any, **kwargs: Any) -> Any:  # late bound: the call's generator
            return getattr(current[index], name)(*args, **kwargs)

        def method(*args: Any, **kwargs: Any) -> Any:
            from stax.frontend.functions import _ACTIVE

            builder = getattr(_ACTIVE, "builder", None)
            if builder is None:
                return draw(*args, **kwargs)
            return builder.eager(draw, args, kwargs, NotImplementedError(
                f"stax.jit: drawing from a random generator argument ({name}) is not "
                "supported"))

        draw.__qualname__ = method.__qualname__ = f"{type(member.__self__).__name__}.{name}"
        return method


class MadeGenerator(_GeneratorView):
    """[HUNT9] A generator made inside the traced function (`rng = np.random.default_rng(1)`)
    as the function sees it: a draw given traced arrays (`rng.shuffle(x)`, `rng.choice(x)`,
    `rng.permutation(x)`) is a graph break running NumPy's on their values (`eager`: an array
    shuffled in place is written back). Given the Tracer itself, NumPy's shuffle took it for a
    Python sequence and swapped rows through views: rows repeated, a wrong result."""

    def __init__(self, generator: Any, builder: SegmentBuilder) -> None:
        self._generator, self._builder = generator, builder

    def generator(self) -> Any:
        return self._generator

    def method(self, name: str, member: Any) -> Any:
        def method(*args: Any, **kwargs: Any) -> Any:
            if not _has_tracer((args, kwargs)):
                return member(*args, **kwargs)
            return self._builder.eager(member, args, kwargs, NotImplementedError(
                f"stax.jit: rng.{name} given traced values"))
        return method


def compiles_dtype(a: Any) -> bool:
    """[HUNT10] Whether a NumPy array or scalar has a dtype kernels compute in (not strings,
    dates, records, objects: a function given such an array runs in NumPy, a scalar of such a
    dtype is specialized on)."""
    return not isinstance(a, (np.ndarray, np.generic)) or a.dtype in SUPPORTED_DTYPES


def is_plain(a: Any) -> bool:
    """An argument `stax.jit` compiles for directly: an array or a scalar (complex too) of a
    dtype kernels compute in."""
    return isinstance(a, (np.ndarray, np.generic, bool, int, float, complex)) and compiles_dtype(a)


def call_general(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A call with keyword arguments or arguments that are not arrays or scalars: the arrays
    inside them are the compiled program's arguments, everything else is specialized on (a
    compiled variant per distinct value). An argument of another type (an object whose
    contents Stax cannot key by) runs the whole function in NumPy."""
    if _has_tracer((args, kwargs)):  # a jitted function called while tracing: inlined
        return jitted.fn(*args, **kwargs)
    arrays: list[Any] = []
    generators: list[Any] = []
    try:
        structure = ((tuple, tuple(_split(a, arrays, True, generators) for a in args)),
                     (dict, tuple((k, k, _split(v, arrays, True, generators))
                                  for k, v in kwargs.items())))
    except _Opaque as e:
        warn_once(jitted, Break(f"an argument of type {e}", jitted.fn.__name__,
                                "the whole function runs in NumPy"))
        return jitted.fn(*args, **kwargs)
    key = (_key(structure[0]), _key(structure[1]))
    variant = jitted.variants.get(key)
    if variant is None:
        fn = jitted.fn
        current = _CallGenerators()
        stand_ins = [RandomArgument(current, i) for i in range(len(generators))]

        def inner(*flat: Any) -> Any:
            a = _rebuild(structure[0], flat, stand_ins)
            k = _rebuild(structure[1], flat, stand_ins)
            return fn(*a, **k)

        inner.__name__ = getattr(fn, "__name__", "fn")
        variant = type(jitted)(inner, jitted.options)
        variant.warned = jitted.warned  # warned once per function
        variant.generators = current  # type: ignore[attr-defined]
        jitted.variants[key] = variant
        match = None if generators else _matcher(structure, len(args), tuple(kwargs))
        if match is not None and len(jitted.matchers) < MAX_MATCHERS:
            jitted.matchers.append((match, variant))
    variant.generators.now = generators
    result = variant(*arrays)
    return _generators_in(result, generators) if generators else result


MAX_MATCHERS = 8  # [SLOW2] argument structures per function with a warm matcher
_COMPILED_DTYPES = frozenset(SUPPORTED_DTYPES)
_LEAF_SCALARS = frozenset({bool, int, float})  # Python scalars `_split` takes as arguments


def _matcher(structure: Any, n_args: int, names: tuple[str, ...]
             ) -> Callable[[tuple[Any, ...], dict[str, Any]], tuple[Any, ...] | None] | None:
    """[SLOW2] A function of a call's (args, kwargs) that returns the arrays `call_general`
    would split from them when its walk would give `structure` (the same key, so the same
    variant), else None: one Python expression compiled once per structure, so a warm call
    with tuples, lists, None or dtype arguments costs a few checks instead of the walk
    (`_has_tracer`, `_split`, `_key`: ~14 us). Each argument leaf must be of a kind `_split`
    makes an argument (an exact ndarray of a dtype kernels compute in; at the top also an exact
    Python bool, int or float, or a NumPy scalar of such a dtype, not complex), each static
    value of the recorded type and repr (`_static_key`), each list or tuple of the recorded
    type and length; a Tracer never matches (the walk then inlines the call). None for dicts
    (key order and key types) and random generators: those calls take the walk."""
    names_space: dict[str, Any] = {"np": np, "S": _COMPILED_DTYPES}
    checks: list[str] = []
    leaves: list[str] = []

    def const(value: Any) -> str:
        names_space[name := f"c{len(names_space)}"] = value
        return name

    def visit(s: Any, at: str, top: bool) -> bool:
        kind = s[0]
        if kind == "arg":  # `_split`'s dynamic kinds (a Tracer is none of them): arrays of a
            # compiled dtype, and at the top Python bools, ints, floats, NumPy scalars (not complex)
            checks.append(f"(type({at}) is np.ndarray and {at}.dtype in S" + (
                f" or type({at}) in {const(_LEAF_SCALARS)} or type({at}) is not np.ndarray "
                f"and isinstance({at}, np.generic) and not isinstance({at}, complex) and "
                f"{at}.dtype in S)" if top else ")"))
            leaves.append(at)
            return True
        if kind == "static":
            value = s[2]
            checks.append(f"{at} is None" if value is None else
                          f"type({at}) is {const(type(value))} and ({at} is {const(value)} "
                          f"or repr({at}) == {const(repr(value))})")
            return True
        if kind in (list, tuple):
            checks.append(f"type({at}) is {const(kind)} and len({at}) == {len(s[1])}")
            return all(visit(item, f"{at}[{k}]", False) for k, item in enumerate(s[1]))
        return False  # dict, random

    positional, keywords = structure
    if not all(visit(s, f"args[{k}]", True) for k, s in enumerate(positional[1])) or \
            not all(visit(s, f"kwargs[{k!r}]", True) for k, _, s in keywords[1]):
        return None
    keywords_match = f"tuple(kwargs) == {const(names)}" if names else "not kwargs"
    condition = " and ".join([f"len(args) == {n_args}", keywords_match, *checks])
    flat = "".join(f"{at}, " for at in leaves)
    return eval(f"lambda args, kwargs: ({flat}) if {condition} else None",  # noqa: S307
                names_space)


class _CallGenerators(threading.local):
    """The generators of the call in progress on each thread (`RandomArgument`): concurrent
    calls draw from their own. [REVIEW] one list for all threads drew from another thread's."""

    def __init__(self) -> None:
        self.now: list[Any] = []

    def __getitem__(self, index: int) -> Any:
        return self.now[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.now)


def _generators_in(result: Any, generators: list[Any]) -> Any:
    """`result` with each RandomArgument the function returned replaced by the call's own
    generator (NumPy's function returns the argument itself). [REVIEW]"""
    if isinstance(result, RandomArgument):
        return generators[result._index]  # noqa: SLF001 - this module's class
    if isinstance(result, (tuple, list)):
        return type(result)(_generators_in(r, generators) for r in result)
    if isinstance(result, dict):
        return {k: _generators_in(v, generators) for k, v in result.items()}
    return result


def _has_tracer(obj: Any) -> bool:
    found: list[Tracer] = []
    _collect(obj, found)
    return bool(found)
