"""Probe Stax on the npbench suite (https://github.com/spcl/npbench): every NumPy kernel, run
with NumPy and with `stax.jit(kernel)` on copies of the same inputs, compared and classified.

    python benchmarks/npbench_probe.py [--npbench PATH] [--preset S] [--timeout 120]
                                       [--repeat 5] [--json out.json] [NAME ...]

PATH is an npbench checkout (or a bare git repository of it, exported to a temp dir); no
npbench code is vendored here. Without --npbench the script tries $NPBENCH, ../npbench next
to this repository and /work/.mirror/spcl+npbench/repo, and exits cleanly if none exists.

Each kernel runs in its own subprocess (a hang or a crash is recorded, not fatal): inputs
are made by the benchmark's `initialize` with the preset's parameters (as npbench's
`Benchmark.get_data` does), every array argument is copied before each call (as npbench's
runner does), and every returned value and every array argument after the call (mutated
arguments included) is compared with NumPy's: exact for integers and booleans, otherwise
`np.allclose` (rtol 1e-5/atol 1e-8 for float64, 1e-4/1e-6 for float32, NaNs equal) or
npbench's own fallback, a relative Frobenius-norm error under rtol; dtypes and shapes must
match NumPy's.

Classes: `ok` (compiled, no graph break), `breaks` (correct, ran with graph breaks: listed),
`wrong` (ran, a result differs), `error` (exception type and message, or a crash),
`timeout`. Times: first Stax call (trace + compile + run; a fresh kernel cache unless
--keep-cache), and the median of warm runs of each side (array copies not timed).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = [os.environ.get("NPBENCH", ""), str(REPO.parent / "npbench"),
                 "/work/.mirror/spcl+npbench/repo"]
STATUSES = ("ok", "breaks", "wrong", "error", "timeout")


# ---------------------------------------------------------------- locating npbench

def _is_checkout(p: Path) -> bool:
    return (p / "bench_info").is_dir() and (p / "npbench" / "benchmarks").is_dir()


def locate(path: str | None, tmp: Path) -> Path | None:
    """An npbench work tree: the given path, or a git repository exported into tmp."""
    candidates = [path] if path else [p for p in DEFAULT_PATHS if p]
    for c in candidates:
        p = Path(c).expanduser().resolve()
        if _is_checkout(p):
            return p
        gitdir = p / ".git" if (p / ".git").exists() else p
        if (gitdir / "HEAD").is_file() and (gitdir / "objects").is_dir():
            out = tmp / "npbench"
            out.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", f"--git-dir={gitdir}", "archive", "HEAD"],
                                     capture_output=True, check=False)
            if archive.returncode == 0:
                subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=False)
                if _is_checkout(out):
                    return out
    return None


def benchmarks(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """(bench_info name, info) for every benchmark with a NumPy implementation."""
    found = []
    for f in sorted((root / "bench_info").glob("*.json")):
        info = json.loads(f.read_text())["benchmark"]
        impl = root / "npbench" / "benchmarks" / info["relative_path"] / \
            f"{info['module_name']}_numpy.py"
        if impl.is_file():
            found.append((f.stem, info))
    return found


# ---------------------------------------------------------------- the worker (one kernel)

def _flatten(obj: Any) -> list[Any]:
    if obj is None:
        return []
    if isinstance(obj, (tuple, list)):
        return [x for o in obj for x in _flatten(o)]
    if isinstance(obj, dict):
        return [x for k in sorted(obj, key=str) for x in _flatten(obj[k])]
    return [obj]


def _compare(ref: Any, val: Any) -> str | None:
    """None if val matches NumPy's ref, else what differs."""
    import numpy as np

    r, v = np.asarray(ref), np.asarray(val)
    if r.shape != v.shape:
        return f"shape {v.shape} != NumPy's {r.shape}"
    if r.dtype != v.dtype:
        return f"dtype {v.dtype} != NumPy's {r.dtype}"
    if r.dtype.kind in "biuSUO" or r.dtype.kind == "M":
        if np.array_equal(r, v):
            return None
        bad = int(np.count_nonzero(r != v))
        return f"{bad}/{r.size} elements differ (exact compare)"
    single = r.dtype in (np.float32, np.complex64, np.float16)
    rtol, atol = (1e-4, 1e-6) if single else (1e-5, 1e-8)
    if np.allclose(r, v, rtol=rtol, atol=atol, equal_nan=True):
        return None
    with np.errstate(all="ignore"):
        nref = np.linalg.norm(r.astype(np.complex128 if r.dtype.kind == "c" else np.float64))
        diff = np.linalg.norm((r - v).astype(np.complex128 if r.dtype.kind == "c"
                                             else np.float64))
        rel = diff / nref if nref else math.inf
        if rel < rtol and np.array_equal(np.isnan(r), np.isnan(v)):
            return None  # npbench's own criterion: relative norm error
        bad = ~np.isclose(r, v, rtol=rtol, atol=atol, equal_nan=True)
        idx = tuple(int(i) for i in np.argwhere(bad)[0]) if r.ndim else ()
        return (f"{int(bad.sum())}/{r.size} elements differ, rel. norm error {rel:.3g}; "
                f"first at {idx}: {v[idx]!r} vs NumPy {r[idx]!r}")


def _breaks_of(jitted: Any, caught: list[Any]) -> list[str]:
    seen: list[str] = []

    def add(s: str) -> None:
        if s not in seen:
            seen.append(s)

    def walk(j: Any) -> None:
        for lst in getattr(j, "breaks", {}).values():
            for b in lst:
                add(str(b))
        for v in getattr(j, "variants", {}).values():
            walk(v)

    walk(jitted)
    for w in caught:
        if type(w.message).__name__ == "GraphBreakWarning" or \
                "graph break" in str(w.message):
            msg = str(w.message)
            if ": graph break in " in msg:
                msg = msg.split(": ", 2)[-1]
            add(msg)
    return seen


def _scipy_stand_in() -> bool:
    """Without SciPy, a stand-in `scipy.sparse.random` (CSR only; the structure npbench's
    spmv initialize uses, not SciPy's random stream). True if installed."""
    try:
        import scipy.sparse  # noqa: F401
        return False
    except ImportError:
        pass
    import types

    import numpy as np

    def random(m: int, n: int, density: float = 0.01, format: str = "csr",  # noqa: A002
               dtype: Any = np.float64, random_state: Any = None) -> Any:
        rng = random_state if isinstance(random_state, np.random.Generator) else \
            np.random.default_rng(random_state)
        nnz = int(round(density * m * n))
        flat = np.sort(rng.choice(m * n, size=nnz, replace=False))
        rows, cols = np.divmod(flat, n)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=m))])
        return types.SimpleNamespace(indptr=indptr, indices=cols,
                                     data=rng.random(nnz).astype(dtype), format=format)

    scipy = types.ModuleType("scipy")
    sparse = types.ModuleType("scipy.sparse")
    sparse.random = random  # type: ignore[attr-defined]
    scipy.sparse = sparse  # type: ignore[attr-defined]
    sys.modules.update({"scipy": scipy, "scipy.sparse": sparse})
    return True


def load(root: Path, name: str, preset: str, result: dict[str, Any]
         ) -> tuple[Any, dict[str, Any], list[str]] | None:
    """npbench's NumPy kernel `name`, its inputs made as npbench's `Benchmark.get_data` makes
    them at `preset`, and the names of its arguments; None (and `result` says why) when the
    benchmark has no such preset."""
    info = json.loads((root / "bench_info" / f"{name}.json").read_text())["benchmark"]
    result["short"] = info["short_name"]
    sys.path.insert(0, str(root))
    pkg = "npbench.benchmarks." + info["relative_path"].replace("/", ".")
    if preset not in info["parameters"]:
        result.update(stage="done", status="skip", detail=f"no preset {preset}")
        return None
    data: dict[str, Any] = dict(info["parameters"][preset])
    if info.get("init"):
        init = getattr(importlib.import_module(f"{pkg}.{info['module_name']}"),
                       info["init"]["func_name"])
        try:
            made = init(*[data[a] for a in info["init"]["input_args"]])
        except ImportError as e:
            if "scipy" not in str(e) or not _scipy_stand_in():
                raise
            result["note"] = "inputs from a stand-in of scipy.sparse.random (no SciPy)"
            made = init(*[data[a] for a in info["init"]["input_args"]])
        outs = info["init"]["output_args"]
        made = made if len(outs) > 1 else (made,)
        data.update(zip(outs, made, strict=True))
    kernel = getattr(importlib.import_module(f"{pkg}.{info['module_name']}_numpy"),
                     info["func_name"])
    return kernel, data, info["input_args"]


def worker(root: Path, name: str, preset: str, repeat: int, out: Path) -> None:
    result: dict[str, Any] = {"name": name, "stage": "init"}

    def save() -> None:
        out.write_text(json.dumps(result))

    save()
    loaded = load(root, name, preset, result)
    if loaded is None:
        save()
        return
    measure(*loaded, repeat, result, save, root)


def measure(kernel: Any, data: dict[str, Any], names: list[str], repeat: int,
            result: dict[str, Any], save: Any, root: Path) -> None:
    """Run `kernel(*[data[a] for a in names])` with NumPy, then under `stax.jit`, each call on
    fresh copies of the array arguments; compare, time and classify into `result` (`save()`
    writes it after each stage)."""
    import numpy as np

    def fresh() -> list[Any]:
        return [np.copy(data[a]) if isinstance(data[a], np.ndarray) else data[a] for a in names]

    arrays = [i for i, a in enumerate(names) if isinstance(data[a], np.ndarray)]

    def outputs(ret: Any, args: list[Any]) -> list[Any]:
        return _flatten(ret) + [args[i] for i in arrays]

    def warm(fn: Any) -> float:
        times: list[float] = []
        budget = time.perf_counter() + 10.0
        while len(times) < repeat and (not times or time.perf_counter() < budget):
            args = fresh()
            t0 = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    result["stage"] = "numpy"
    save()
    args = fresh()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = outputs(kernel(*args), args)
        result["np_ms"] = warm(kernel) * 1e3
    result["stage"] = "stax"
    save()

    import stax

    result["stax_file"] = stax.__file__
    jitted = stax.jit(kernel)
    caught: list[Any] = []
    args = fresh()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            got = jitted(*args)
            result["first_s"] = time.perf_counter() - t0
    except BaseException as e:  # noqa: BLE001 - recorded, not fatal
        result.update(stage="done", status="error", breaks=_breaks_of(jitted, caught),
                      error=f"{type(e).__name__}: {str(e).strip()}"[:600],
                      where=_frames(e, root))
        save()
        return
    val = outputs(got, args)
    problems = []
    if len(val) != len(ref):
        problems.append(f"{len(val)} outputs != NumPy's {len(ref)}")
    else:
        labels = [f"return[{k}]" for k in range(len(ref) - len(arrays))] + \
            [f"arg {names[i]}" for i in arrays]
        for label, r, v in zip(labels, ref, val, strict=True):
            d = _compare(r, v)
            if d:
                problems.append(f"{label}: {d}")
    result["stage"] = "warm"
    save()
    try:
        with warnings.catch_warnings(record=True) as more:
            warnings.simplefilter("always")
            result["stax_ms"] = warm(jitted) * 1e3
        caught += more
    except BaseException as e:  # noqa: BLE001
        problems.append(f"warm run raised {type(e).__name__}: {e}"[:300])
    brks = _breaks_of(jitted, caught)
    status = "wrong" if problems else "breaks" if brks else "ok"
    result.update(stage="done", status=status, breaks=brks, mismatch=problems)
    save()


def _frames(e: BaseException, root: Path) -> str:
    """Where the error came from: the innermost frame in the benchmark's code and the
    innermost frame inside Stax."""
    user = inner = ""
    for fs in traceback.extract_tb(e.__traceback__):
        if fs.filename.startswith(str(root) + os.sep):
            user = f"{Path(fs.filename).name}:{fs.lineno} `{(fs.line or '').strip()}`"
        elif f"{os.sep}stax{os.sep}" in fs.filename:
            rel = fs.filename.split(f"{os.sep}stax{os.sep}", 1)[1]
            inner = f"stax/{rel}:{fs.lineno} in {fs.name}"
    return ", ".join(x for x in (user, inner) if x)


# ---------------------------------------------------------------- the driver

def run_one(root: Path, name: str, args: argparse.Namespace, tmp: Path,
            env: dict[str, str]) -> dict[str, Any]:
    out = tmp / f"{name}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name,
           "--npbench", str(root), "--preset", args.preset, "--repeat", str(args.repeat),
           "--out", str(out)]
    return run_worker(cmd, name, out, args.timeout, env)


def run_worker(cmd: list[str], name: str, out: Path, timeout: float,
               env: dict[str, str]) -> dict[str, Any]:
    """Run one worker command in its own process group (killed after `timeout` s); its
    result from the JSON file `out`, or a timeout / crash record."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True, text=True, errors="replace")
    try:
        log, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the worker and the compilers it started
        log, _ = proc.communicate()
        timed_out = True
    except BaseException:  # interrupted: do not leave the worker running
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    res: dict[str, Any] = {"name": name}
    if out.exists():
        try:
            res = json.loads(out.read_text())
        except json.JSONDecodeError:
            pass
    res["wall_s"] = time.perf_counter() - start
    if res.get("stage") == "done":
        return res
    tail = "\n".join((log or "").strip().splitlines()[-6:])
    stage = res.get("stage", "start")
    if timed_out:
        res.update(status="timeout", error=f"no result after {timeout:g} s "
                                           f"(in the {stage} stage)")
    elif stage in ("init", "numpy", "start"):
        res.update(status="skip", error=f"NumPy side failed (rc {proc.returncode}): {tail}")
    else:
        rc = proc.returncode
        sig = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit code {rc}"
        res.update(status="error", error=f"crash in the {stage} stage ({sig}): {tail}"[:600])
    return res


def worker_env(src: Path, tmp: Path, keep_cache: bool) -> dict[str, str]:
    """The environment of a worker process: `src`'s Stax first on the path, quiet, and a
    cache of its own unless the caller keeps the user's."""
    env = dict(os.environ, STAX_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join([str(src)] + [p for p in [env.get("PYTHONPATH")] if p])
    if not keep_cache:
        env["STAX_CACHE_DIR"] = str(tmp / "stax-cache")
    return env


def run_all(names: list[str], run: Callable[[str], dict[str, Any]], title: str,
            json_path: str | None) -> None:
    """Run each kernel (its progress on stderr), then print the table and summary."""
    results = []
    for k, name in enumerate(names, 1):
        res = run(name)
        results.append(res)
        print(f"[{k}/{len(names)}] {name}: {res.get('status')} ({res['wall_s']:.0f} s)",
              file=sys.stderr, flush=True)
    print(f"{title}\n")
    print(table(results))
    print()
    print(summary(results))
    if json_path:
        Path(json_path).write_text(json.dumps(results, indent=1))


def stax_source(rev: str | None, tmp: Path) -> tuple[Path, str]:
    """The directory whose `stax` package the workers import, and its version."""
    def git(*a: str) -> str:
        r = subprocess.run(["git", "-C", str(REPO), *a], capture_output=True, text=True,
                           check=False)
        return r.stdout.strip() if r.returncode == 0 else ""

    commit = git("rev-parse", "--short", rev or "HEAD") or "?"
    if not rev:
        dirty = git("status", "--porcelain", "--", "stax")
        return REPO, commit + (" + uncommitted changes in stax/" if dirty else "")
    out = tmp / "stax-head"
    out.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "stax"],
                             capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out, f"{commit} ({rev}, committed)"


def _fmt(x: float | None, spec: str) -> str:
    return "" if x is None else format(x, spec)


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| kernel | status | first call (s) | NumPy warm (ms) | Stax warm (ms) | "
            "Stax/NumPy | details |", "|---|---|---:|---:|---:|---:|---|"]
    for r in results:
        ratio = (r["stax_ms"] / r["np_ms"]) if r.get("stax_ms") and r.get("np_ms") else None
        detail: list[str] = [r["note"]] if r.get("note") else []
        if r.get("error"):
            detail.append(r["error"] + (f" [at {r['where']}]" if r.get("where") else ""))
        detail += r.get("mismatch") or []
        if r.get("breaks"):
            detail.append(f"{len(r['breaks'])} break(s): " + "; ".join(r["breaks"]))
        text = " / ".join(detail).replace("|", "\\|").replace("\n", " ")
        if len(text) > 700:
            text = text[:700] + " ..."
        rows.append(f"| {r['name']} | {r.get('status', '?')} | {_fmt(r.get('first_s'), '.2f')} "
                    f"| {_fmt(r.get('np_ms'), '.2f')} | {_fmt(r.get('stax_ms'), '.2f')} | "
                    f"{_fmt(ratio, '.2f')} | {text} |")
    return "\n".join(rows)


def summary(results: list[dict[str, Any]]) -> str:
    counts = {s: sum(r.get("status") == s for r in results) for s in STATUSES + ("skip",)}
    ratios = [r["stax_ms"] / r["np_ms"] for r in results
              if r.get("status") in ("ok", "breaks") and r.get("stax_ms") and r.get("np_ms")]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    n = len(results)
    parts = [f"{counts[s]} {s}" for s in STATUSES] + \
        ([f"{counts['skip']} skip"] if counts["skip"] else [])
    correct = counts["ok"] + counts["breaks"]
    return (f"**{n} kernels: " + ", ".join(parts) + f"** — {correct}/{n} "
            f"({100 * correct / max(n, 1):.0f} %) correct, {counts['ok']}/{n} without a break; "
            f"geometric mean of warm Stax/NumPy time over the {len(ratios)} correct kernels: "
            f"{geo:.2f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="bench_info names to run (default: all)")
    ap.add_argument("--npbench", help="npbench checkout or git repository")
    ap.add_argument("--preset", default="S")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per kernel")
    ap.add_argument("--repeat", type=int, default=5, help="warm runs per side (median)")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use the usual Stax kernel cache (default: a fresh one, so the "
                         "first call includes compilation)")
    ap.add_argument("--rev", help="probe this commit of the repository (e.g. HEAD; exported "
                                   "to a temp dir), not the work tree with its uncommitted "
                                   "changes")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        worker(Path(args.npbench), args.worker, args.preset, args.repeat, Path(args.out))
        return 0

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # clean up on kill, too
    tmp = Path(tempfile.mkdtemp(prefix="npbench_probe_"))
    try:
        root = locate(args.npbench, tmp)
        if root is None:
            where = args.npbench or ", ".join(p for p in DEFAULT_PATHS if p)
            print(f"npbench not found ({where}): nothing to probe. Clone "
                  "https://github.com/spcl/npbench and pass --npbench PATH.")
            return 0
        todo = benchmarks(root)
        if args.names:
            unknown = set(args.names) - {n for n, _ in todo}
            if unknown:
                ap.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
            todo = [t for t in todo if t[0] in args.names]
        src, version = stax_source(args.rev, tmp)
        env = worker_env(src, tmp, args.keep_cache)
        check = subprocess.run([sys.executable, "-c", "import stax"], env=env,
                               capture_output=True, text=True, check=False)
        if check.returncode:
            print(f"Stax {version} does not import; nothing probed:\n{check.stderr[-2000:]}",
                  file=sys.stderr)
            return 1
        print(f"npbench probe: preset {args.preset}, {len(todo)} kernels, Stax {version}, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", file=sys.stderr)
        run_all([name for name, _ in todo], lambda name: run_one(root, name, args, tmp, env),
                f"npbench probe, preset {args.preset}, Stax {version}, "
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", args.json)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
