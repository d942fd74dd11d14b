"""[SPARSE] Masked updates of an argument computed in the caller's array itself (the memory
plan's in-place write of a mutated argument, `stax.api._donated`) on and off, against NumPy:
interleaved in one process, process CPU clock, on masked_updates.py's --sweep workloads that
assign into an argument, at several sizes.

    python benchmarks/masked_inplace_ab.py [--n 10000 100000 1000000] [--repeat 21] [NAME ...]

Prints Stax/NumPy with the new value in a fresh buffer copied back into the argument (before)
and computed in the argument itself (after), and NumPy's median time. With --few, both in place:
without and with the one-by-one costly side in blocks of few selected elements
(`stax.backends.cpu.cpp.MASK_FEW_LANES`). Run with OMP_NUM_THREADS=1 for a per-core comparison.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

import masked_updates  # benchmarks/ is the script's directory: on sys.path

ASSIGNED = ("x[m] = x[m]**1.5", "y[m] = exp(x[m])", "x[m] = log(x[m])")


def main() -> None:
    import stax
    from stax.backends.cpu import cpp

    api = importlib.import_module("stax.api")  # the module (stax.api is also a name in stax)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--few", action="store_true", help="A/B of MASK_FEW_LANES instead")
    parser.add_argument("names", nargs="*", help="substrings of workload names to run")
    opts = parser.parse_args()
    donated, few = api._donated, cpp.MASK_FEW_LANES

    def never(*args: Any) -> dict[str, str]:
        return {}

    print(f"| workload | n | NumPy ms | Stax/NumPy {'in place' if opts.few else 'copied back'}"
          f" | {'few lanes one by one' if opts.few else 'in place'} |\n|---|---:|---:|---:|---:|")
    for n in opts.n:
        for name, (fn, args) in masked_updates.sweep(n).items():
            if not name.startswith(ASSIGNED) or name.endswith("100.0%") or (
                    opts.names and not any(s in name for s in opts.names)):
                continue
            sides = [fn]
            for after in (False, True):  # read when the program is compiled (the first call)
                api._donated = donated if after or opts.few else never
                cpp.MASK_FEW_LANES = few if after or not opts.few else 0
                sides.append(stax.jit(fn))
                if not masked_updates.same(sides[-1](*masked_updates.fresh(args)),
                                           fn(*masked_updates.fresh(args))):
                    raise AssertionError(f"{name}: a result differs from NumPy's")
            api._donated, cpp.MASK_FEW_LANES = donated, few
            m, off, on = masked_updates.medians(tuple(sides), args, opts.repeat)
            print(f"| {name} | {n:,} | {m * 1e3:.3f} | {off / m:.2f}x | {on / m:.2f}x |",
                  flush=True)


if __name__ == "__main__":
    main()
