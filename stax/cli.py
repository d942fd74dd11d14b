"""Command line: `stax demo`, `stax explain FILE.py:FUNC`, `stax poly ...`."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any


def _demo(args: argparse.Namespace) -> int:
    from stax.demo import run_demo

    return run_demo()


def _load_function(spec: str) -> Any:
    if ":" not in spec:
        raise SystemExit(f"stax explain: expected FILE.py:FUNC, got {spec!r}")
    path, name = spec.rsplit(":", 1)
    if not Path(path).is_file():
        raise SystemExit(f"stax explain: no such file {path!r}")
    module_spec = importlib.util.spec_from_file_location("stax_user_module", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"stax explain: {path} has no function {name!r}")
    return module, fn


def _inputs(module: Any, args: argparse.Namespace) -> tuple[Any, ...]:
    import numpy as np

    make = getattr(module, f"{args.target.rsplit(':', 1)[1]}_args", None)
    if make is not None:
        return tuple(make())
    shapes = [tuple(int(s) for s in part.split("x")) for part in args.shapes.split(",")]
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s).astype(args.dtype) for s in shapes)


def _explain(args: argparse.Namespace) -> int:
    import stax

    module, fn = _load_function(args.target)
    inputs = _inputs(module, args)
    if args.html:
        return _explain_html(fn, inputs, args)
    print(stax.explain(fn, *inputs, exact=args.exact, verify=args.verify))
    return 0


def _explain_html(fn: Any, inputs: tuple[Any, ...], args: argparse.Namespace) -> int:
    """Write the HTML report; if compiling fails, a page showing where (exit status 1)."""
    from stax.report.page import explain_to_html

    _, ok = explain_to_html(args.html, fn, *inputs, exact=args.exact, verify=args.verify)
    print(f"stax explain: wrote {args.html}" + ("" if ok else " (compilation failed; the "
                                                 "page shows where)"), file=sys.stderr)
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stax", description="Stax array compiler")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the example programs, check them against NumPy")
    demo.set_defaults(func=_demo)
    explain = sub.add_parser(
        "explain", help="show every compilation decision for FILE.py:FUNC",
        description="Inputs come from FUNC_args() in the file if it exists, else random arrays "
                    "of --shapes and --dtype.")
    explain.add_argument("target", help="FILE.py:FUNC")
    explain.add_argument("--shapes", default="64x128", help="e.g. 64x128,128 (default 64x128)")
    explain.add_argument("--dtype", default="float32")
    explain.add_argument("--exact", action="store_true",
                         help="also solve the fusion problem exactly and report greedy's gap")
    explain.add_argument("--verify", action="store_true",
                         help="prove the fused order with the polyhedral layer")
    explain.add_argument("--html", metavar="OUT.html",
                         help="write a self-contained HTML report (graph, memory timeline, "
                              "loops and code per kernel) instead of printing the text")
    explain.set_defaults(func=_explain)
    from stax.poly.cli import register as register_poly

    register_poly(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
