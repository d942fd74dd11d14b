"""Command line: `stax demo`, `stax explain FILE.py:FUNC`, `stax poly ...`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="stax", description="Stax array compiler")
    sub = parser.add_subparsers(dest="command", required=True)
    from stax.poly.cli import register as register_poly

    register_poly(sub)
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
