"""The private isl context of the polyhedral layer, its operation budget and small isl helpers.

Every isl object of `stax.poly` lives in `CTX`, so options and budgets set here never leak into
`isl.DEFAULT_CONTEXT` (notes/islpy.md, trap 8).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import islpy as isl

CTX = isl.Context()
CTX.set_tile_scale_tile_loops(0)  # tile loops as floor(i/32), not i - i mod 32 (trap 6)

DEFAULT_MAX_OPERATIONS = 200_000_000  # seconds of isl work, not hours


class PolyError(Exception):
    """A problem with the user's input (program, schedule, parameters), stated for people."""


class BudgetExceeded(PolyError):
    """isl gave up after its operation budget instead of running for hours."""


@contextmanager
def budget(max_operations: int = DEFAULT_MAX_OPERATIONS, what: str = "isl") -> Iterator[None]:
    """Run the body with at most `max_operations` isl operations; raise BudgetExceeded after."""
    CTX.set_max_operations(max_operations)
    CTX.reset_operations()
    try:
        yield
    except isl.Error as err:
        if "maximal number of operations" in str(err) or "operations exceeded" in str(err):
            raise BudgetExceeded(
                f"isl budget exceeded: {what} needed more than {max_operations} operations"
            ) from err
        raise
    finally:
        CTX.set_max_operations(0)


def with_params(names: Iterable[str], body: str) -> str:
    """isl text `[N, M] -> body` (no prefix without parameters: isl reads `[] -> [..]` wrongly)."""
    names = list(names)
    return f"[{', '.join(names)}] -> {body}" if names else body


def union_set(text: str) -> isl.UnionSet:
    return _read(isl.UnionSet, text)


def union_map(text: str) -> isl.UnionMap:
    return _read(isl.UnionMap, text)


def set_(text: str) -> isl.Set:
    return _read(isl.Set, text)


def multi_union_pw_aff(text: str) -> isl.MultiUnionPwAff:
    return _read(isl.MultiUnionPwAff, text)


def _read(kind: type, text: str):  # noqa: ANN202 - returns an instance of `kind`
    try:
        return kind.read_from_str(CTX, text)
    except isl.Error as err:
        raise PolyError(f"isl cannot read {kind.__name__} {text!r}") from err


def maps_of(umap: isl.UnionMap) -> list[isl.Map]:
    """The maps of a union map (MapList is not iterable, trap 3)."""
    out: list[isl.Map] = []
    umap.foreach_map(out.append)
    return out


def sets_of(uset: isl.UnionSet) -> list[isl.Set]:
    out: list[isl.Set] = []
    uset.foreach_set(out.append)
    return out


def point_coordinates(point: isl.Point, n: int) -> tuple[int, ...]:
    return tuple(point.get_coordinate_val(isl.dim_type.set, k).to_python() for k in range(n))
