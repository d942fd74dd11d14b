"""The mask-skip form (SPMASK, `stax.tiling.plan.mask_skip`) on and off, against NumPy:
interleaved in one process, process CPU clock, on masked_updates.py's --sweep workloads.

    python benchmarks/mask_skip_ab.py [--n 100000] [--repeat 15] [NAME ...]

Prints Stax/NumPy without the form (the whole-array `where` computes the costly side for
every element) and with it, and NumPy's median time. Run with OMP_NUM_THREADS=1 for a
per-core comparison.
"""

from __future__ import annotations

import argparse
from typing import Any

import masked_updates  # benchmarks/ is the script's directory: on sys.path


def main() -> None:
    import stax
    from stax.tiling import plan

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("names", nargs="*", help="substrings of workload names to run")
    opts = parser.parse_args()
    skip = plan.mask_skip

    def without(*args: Any) -> tuple[None, str]:
        return None, ""

    print("| workload | NumPy ms | Stax/NumPy without | with mask_skip |\n|---|---:|---:|---:|")
    for name, (fn, args) in masked_updates.sweep(opts.n).items():
        if opts.names and not any(s in name for s in opts.names):
            continue
        sides = [fn]
        for form in (without, skip):
            plan.mask_skip = form  # read when the kernel is planned (the first call)
            sides.append(stax.jit(fn))
            if not masked_updates.same(sides[-1](*masked_updates.fresh(args)),
                                       fn(*masked_updates.fresh(args))):
                raise AssertionError(f"{name}: a result differs from NumPy's")
        plan.mask_skip = skip
        m, off, on = masked_updates.medians(tuple(sides), args, opts.repeat)
        print(f"| {name} | {m * 1e3:.3f} | {off / m:.2f}x | {on / m:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
