"""Where a first call's time goes: each program's first `stax.jit` call (trace, compile, run)
in a fresh process with an empty kernel cache, under cProfile, split into stages.

    python benchmarks/first_call.py [--npbench PATH] [--timeout 300] [--json out.json]
                                    [--top N] [--rev REV] [--primed] [SPEC ...]

SPEC is `npbench:NAME` (preset S, inputs as `npbench_probe.py` makes them), `corpus:NAME`
(tests/corpus/programs.py) or `loops:NAME` (benchmarks/loops.py's `jacobi_1d`, `euler`,
`ema` at 100 steps); without one, a default mix of about a dozen. Per program: wall time of
the first call, CPU time of this process and of its children (the C++ compiler; compiles
the call started in the background and left running are waited for after it: their CPU time
is the "+" figure), the number of compiler runs, and the profile's time per stage (this
process's CPU time, so waiting for the compiler or for a core does not count). A stage is
where a function is defined:
trace (stax.frontend, stax.loops, stax.api, stax.graph, stax.nested, stax.torch), lower
(stax.lower, stax.cse), schedule (stax.sched), plan (stax.tiling), poly (stax.poly and islpy),
emit (stax.backends), build (stax.runtime.compiler: hashing, writing, dlopen), wrapper
(the rest of stax.runtime, the run included), import (module bodies run on first use); a
function defined elsewhere (NumPy, the standard library, stax.ir and stax.ops, used by every
stage) counts in the stage of its callers, in proportion to the time each caller spent in it.
The profiler slows Python code (not the compiler), so stage times add up to more than an
unprofiled call: the wall column is measured in a second, unprofiled process.

`--rev REV` measures that commit's `stax` (exported to a temporary directory) instead of the
work tree, for before/after tables. `--primed`: the kernel cache is not empty but holds what
one earlier Stax process on this machine leaves there (its probes and support modules, from a
first call of an unrelated function), not the measured program's kernels.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STAGES = ("trace", "lower", "schedule", "plan", "poly", "emit", "build", "wrapper", "import")
DEFAULT = ("npbench:adi", "npbench:azimint_naive", "npbench:mandelbrot2", "npbench:nussinov",
           "npbench:conv2d_bias", "npbench:gramschmidt", "npbench:correlation",
           "npbench:jacobi_2d", "npbench:scattering_self_energies", "npbench:lenet",
           "corpus:softmax", "corpus:kmeans_update", "loops:euler")
OWN = {"frontend": "trace", "loops": "trace", "api.py": "trace", "graph.py": "trace",
       "nested": "trace", "torch": "trace", "lower.py": "lower", "cse.py": "lower",
       "sched": "schedule", "tiling": "plan", "poly": "poly", "backends": "emit"}


def stage_of_file(path: str, name: str) -> str | None:
    """The stage a function defined in `path` belongs to; None: its callers' stage."""
    if name == "<module>":
        return "import"
    if "/islpy/" in path:
        return "poly"
    if "/stax/" not in path:
        return None
    rel = path.rsplit("/stax/", 1)[1]
    if rel.startswith("runtime/"):
        return "build" if rel == "runtime/compiler.py" else "wrapper"
    return OWN.get(rel.split("/", 1)[0])


def stages(stats: pstats.Stats) -> dict[str, float]:
    """Own time per stage; a function of no stage is split over its callers' stages."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    memo: dict[Any, dict[str, float]] = {}

    def share(func: Any, seen: frozenset[Any]) -> dict[str, float]:
        """Fractions of `func`'s time per stage."""
        if func in memo:
            return memo[func]
        own = stage_of_file(func[0], func[2])
        if own is not None:
            memo[func] = {own: 1.0}
            return memo[func]
        callers = {c: v[3] for c, v in table[func][4].items() if c not in seen and c in table}
        total = sum(callers.values())
        out: dict[str, float] = defaultdict(float)
        if total <= 0:
            out["other"] = 1.0
        else:
            for caller, t in callers.items():
                for stage, f in share(caller, seen | {func}).items():
                    out[stage] += f * t / total
        memo[func] = dict(out)
        return memo[func]

    totals: dict[str, float] = defaultdict(float)
    for func, (_, _, tt, _, _) in table.items():
        for stage, f in share(func, frozenset()).items():
            totals[stage] += f * tt
    return dict(totals)


PRIMER = "primer:"  # the earlier process of --primed


def make(spec: str, npbench: str | None) -> tuple[Any, tuple[Any, ...]]:
    kind, name = spec.split(":", 1)
    if kind == "primer":
        return None, ()
    if kind == "npbench":
        sys.path.insert(0, str(HERE))
        import npbench_probe

        root = npbench_probe.locate(npbench, Path(tempfile.mkdtemp(prefix="first_call_")))
        if root is None:
            raise SystemExit("npbench not found: pass --npbench PATH")
        loaded = npbench_probe.load(root, name, "S", {})
        if loaded is None:
            raise SystemExit(f"{name}: no preset S")
        kernel, data, names = loaded
        return kernel, tuple(data[a] for a in names)
    if kind == "corpus":
        import numpy as np

        sys.path.insert(0, str(HERE.parent / "tests"))
        from corpus.programs import CASES

        fn, make_args = CASES[name]
        return fn, make_args(np.random.default_rng(0))
    if kind == "loops":
        import numpy as np

        sys.path.insert(0, str(HERE))
        import loops

        x = np.random.default_rng(0).random(10_000)
        args = {"jacobi_1d": (x, 100), "euler": (x, 0.01, 100), "ema": (x, 0.1, 100)}[name]
        return getattr(loops, name), args
    raise SystemExit(f"unknown program kind {kind!r} (npbench:, corpus:, loops:)")


def worker(spec: str, npbench: str | None, profile: bool, top: int) -> dict[str, Any]:
    import warnings

    fn, args = make(spec, npbench)
    t0 = time.perf_counter()
    import stax

    import_s = time.perf_counter() - t0
    if spec == PRIMER:
        import numpy as np

        stax.jit(lambda x: (x * 2).sum())(np.ones(3))
        return {"spec": spec}
    jitted = stax.jit(fn)
    runs = [0]
    real_run = subprocess.run

    def counted(*a: Any, **k: Any) -> Any:
        runs[0] += 1
        return real_run(*a, **k)

    subprocess.run = counted  # type: ignore[assignment]
    # process CPU time, not wall: on a loaded machine waiting for a core would count, and the
    # compiler's time is its own column (children's CPU)
    prof = cProfile.Profile(time.process_time) if profile else None
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        if prof is not None:
            prof.enable()
        jitted(*args)
        if prof is not None:
            prof.disable()
        wall = time.perf_counter() - t0
    me2, kids2 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    import threading

    for t in threading.enumerate():  # what the call left compiling in the background
        if t.name == "stax-prepare":
            t.join()
    kids3 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out: dict[str, Any] = {
        "spec": spec, "stax": stax.__file__, "wall_s": wall, "import_s": import_s,
        "cpu_s": me2.ru_utime + me2.ru_stime - me.ru_utime - me.ru_stime,
        "child_cpu_s": kids2.ru_utime + kids2.ru_stime - kids.ru_utime - kids.ru_stime,
        "later_cpu_s": kids3.ru_utime + kids3.ru_stime - kids2.ru_utime - kids2.ru_stime,
        "compiler_runs": runs[0],
        "breaks": sum(len(b) for b in jitted.breaks.values())}
    if prof is not None:
        stats = pstats.Stats(prof)
        out["stages"] = stages(stats)
        table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
        hot = sorted(table.items(), key=lambda kv: -kv[1][2])[:top]
        out["hot"] = [f"{v[2]:7.3f}s own {v[3]:7.3f}s cum {v[1]:7d}x "
                      f"{k[0].rsplit('/stax/', 1)[-1]}:{k[1]} {k[2]}" for k, v in hot]
    return out


def run(spec: str, args: argparse.Namespace, profile: bool, src: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="first_call_cache_") as cache:
        env = dict(os.environ, STAX_CACHE_DIR=cache, STAX_QUIET="1",
                   PYTHONPATH=os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]))
        for which in [PRIMER, spec] if args.primed else [spec]:
            cmd = [sys.executable, __file__, "--worker", which, "--top", str(args.top)]
            cmd += ["--npbench", args.npbench] if args.npbench else []
            cmd += ["--profile"] if profile else []
            try:
                done = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      timeout=args.timeout)
            except subprocess.TimeoutExpired:
                return {"spec": spec, "error": f"timeout {args.timeout:g} s"}
    if done.returncode:
        return {"spec": spec, "error": done.stderr.strip().splitlines()[-1:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("specs", nargs="*")
    ap.add_argument("--npbench")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--top", type=int, default=0, help="also list the N hottest functions")
    ap.add_argument("--json")
    ap.add_argument("--no-profile", action="store_true", help="only the unprofiled run")
    ap.add_argument("--rev", help="measure this commit's stax, not the work tree's")
    ap.add_argument("--src", help="measure the stax package in this directory")
    ap.add_argument("--primed", action="store_true",
                    help="a cache with an earlier process's probes and support modules")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.npbench, args.profile, args.top)))
        return 0
    sys.path.insert(0, str(HERE))
    import npbench_probe

    tmp = Path(tempfile.mkdtemp(prefix="first_call_src_"))
    src, version = (Path(args.src), args.src) if args.src else \
        npbench_probe.stax_source(args.rev, tmp)
    print(f"Stax {version}; load average {os.getloadavg()[0]:.1f}", file=sys.stderr)
    head = ("| program | wall s | CPU s | g++ CPU s (+ after the call) | g++ runs | "
            + " | ".join(STAGES) + " | other |")
    rows = [head, "|---" + "|---:" * (len(STAGES) + 5) + "|"]
    results = []
    for spec in args.specs or DEFAULT:
        plain = run(spec, args, False, src)
        prof = run(spec, args, True, src) if not args.no_profile and "error" not in plain \
            else {}
        results.append({"plain": plain, "profiled": prof})
        if "error" in plain:
            rows.append(f"| {spec} | {plain['error']} |")
        else:
            st = prof.get("stages", {})
            rows.append(f"| {spec} | {plain['wall_s']:.2f} | {plain['cpu_s']:.2f} | "
                        f"{plain['child_cpu_s']:.2f} (+{plain.get('later_cpu_s', 0):.2f}) | "
                        f"{plain['compiler_runs']} | "
                        + " | ".join(f"{st.get(s, 0):.2f}" for s in STAGES)
                        + f" | {st.get('other', 0):.2f} |")
        print(rows[-1], file=sys.stderr, flush=True)
        for line in prof.get("hot", []):
            print("    " + line, file=sys.stderr)
    print("\n".join(rows))
    print(f"\nStax {version}; load average at the end {os.getloadavg()[0]:.1f}")
    shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
