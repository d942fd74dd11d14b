"""`stax poly deps|check|schedule|codegen|validate FILE.c`: the polyhedral layer for people."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from stax.poly._isl import PolyError, maps_of
from stax.poly.autosched import auto_schedule
from stax.poly.check import check
from stax.poly.codegen import codegen, validate
from stax.poly.deps import KINDS, dependences
from stax.poly.model import Scop
from stax.poly.parse import parse_c


def register(subparsers: argparse._SubParsersAction) -> None:
    poly = subparsers.add_parser("poly", help="polyhedral analysis of an affine C loop nest")
    sub = poly.add_subparsers(dest="poly_command", required=True)

    def command(
        name: str, func: Callable[[argparse.Namespace], int], help: str
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        p.add_argument("file", help="C file with an affine loop nest or kernel function")
        p.set_defaults(func=_guarded(func))
        return p

    command("deps", _deps, "dependences (RAW, WAR, WAW) with distance vectors")
    p = command("check", _check, "legality of a schedule, with a counterexample")
    p.add_argument("--schedule", required=True, help="isl union map, e.g. '{ S0[i,j] -> [j,i] }'")
    command("schedule", _schedule, "a Pluto-style automatic schedule")
    p = command("codegen", _codegen, "C code under a schedule (default: the original)")
    p.add_argument("--schedule", help="isl union map (default: the original order)")
    p.add_argument("--tile", help="tile sizes of the outermost band, e.g. 32,32")
    p = command("validate", _validate, "run original and transformed code, compare arrays")
    p.add_argument("--schedule", required=True, help="isl union map")
    p.add_argument("--param", action="append", default=[], help="parameter value, e.g. N=100")
    p.add_argument("--tile", help="tile sizes of the outermost band, e.g. 32,32")


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (PolyError, OSError) as err:
            print(f"stax poly {args.poly_command}: {err}", file=sys.stderr)
            return 2

    return run


def _scop(args: argparse.Namespace) -> Scop:
    return parse_c(Path(args.file).read_text())


def _sizes(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        return [int(s) for s in text.split(",")]
    except ValueError:
        raise PolyError(f"--tile wants comma-separated integers, got '{text}'") from None


def _deps(args: argparse.Namespace) -> int:
    deps = dependences(_scop(args))
    for kind in KINDS:
        print(f"{kind.upper()}:")
        for m in maps_of(deps.of(kind)):
            print(f"  {m}")
        try:
            print(f"  distances: {deps.distance_vectors(kind)}")
        except PolyError as err:
            print(f"  distances: {err}")
    return 0


def _check(args: argparse.Namespace) -> int:
    verdict = check(_scop(args), args.schedule)
    print(verdict)
    return 0 if verdict.legal else 1


def _schedule(args: argparse.Namespace) -> int:
    tree = auto_schedule(_scop(args))
    print(tree)
    print(f"schedule map: {tree.to_map()}")
    return 0


def _codegen(args: argparse.Namespace) -> int:
    print(codegen(_scop(args), args.schedule, tile=_sizes(args.tile)), end="")
    return 0


def _validate(args: argparse.Namespace) -> int:
    params = {}
    for item in args.param:
        name, _, value = item.partition("=")
        if not value.lstrip("-").isdigit():
            raise PolyError(f"--param wants NAME=INTEGER, got '{item}'")
        params[name.strip()] = int(value)
    result = validate(_scop(args), args.schedule, params, tile=_sizes(args.tile))
    print(("OK: " if result.ok else "MISMATCH: ") + result.message)
    return 0 if result.ok else 1
