"""Probe Stax on serge-sans-paille/numpy-benchmarks (the Pythran NumPy benchmark suite): every
kernel file, run with NumPy and with `stax.jit(kernel)` on copies of the same inputs, compared
and classified.

    python benchmarks/numpy_benchmarks.py PATH [--timeout 120] [--repeat 5] [--json out.json]
                                          [NAME ...]

PATH is the suite's benchmark folder (`numpy_benchmarks/benchmarks` of a checkout), a checkout,
or a bare git repository of it (exported to a temp dir); nothing of the suite is vendored here.
Each kernel file names its inputs in a `#setup:` comment (Python statements) and its call in a
`#run:` comment (`kernel(args)`); the setup runs, the call's arguments are evaluated in its
namespace, and the kernel is called with them. Comparison, timing and classes (`ok`, `breaks`,
`wrong`, `error`, `timeout`) are npbench_probe's (`measure`), one subprocess per kernel.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import npbench_probe as probe

SETUP = re.compile(r"^#\s*setup:(.*)$", re.M)
RUN = re.compile(r"^#\s*run:(.*)$", re.M)


def locate(path: str, tmp: Path) -> Path | None:
    """The folder of kernel files: PATH itself, its numpy_benchmarks/benchmarks, or that folder
    of a git repository exported into tmp."""
    p = Path(path).expanduser().resolve()
    for d in (p, p / "numpy_benchmarks" / "benchmarks"):
        if d.is_dir() and kernels(d):
            return d
    gitdir = p / ".git" if (p / ".git").exists() else p
    if (gitdir / "HEAD").is_file():
        archive = subprocess.run(["git", f"--git-dir={gitdir}", "archive", "HEAD"],
                                 capture_output=True, check=False)
        if archive.returncode == 0:
            out = tmp / "numpy-benchmarks"
            out.mkdir(parents=True, exist_ok=True)
            subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=False)
            return locate(str(out), tmp)
    return None


def kernels(folder: Path) -> list[str]:
    """Names of the kernel files (with both a #setup and a #run comment)."""
    return sorted(f.stem for f in folder.glob("*.py")
                  if SETUP.search(t := f.read_text()) and RUN.search(t))


def load(folder: Path, name: str) -> tuple[Any, dict[str, Any], list[str]]:
    """The kernel, its arguments (by label) and their labels: the names the #run call spells,
    `name[i]` for the items of a `*name`, `argN` for other expressions."""
    path = folder / f"{name}.py"
    text = path.read_text()
    setup_ns: dict[str, Any] = {}
    exec(compile(SETUP.search(text).group(1).strip(), f"{name} #setup", "exec"), setup_ns)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)
    call = ast.parse(RUN.search(text).group(1).strip(), mode="eval").body
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or call.keywords:
        raise ValueError(f"{name}: #run is not a call `kernel(args)`")
    data: dict[str, Any] = {}
    for k, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            values = list(eval(compile(ast.Expression(arg.value), name, "eval"), setup_ns))
            label = ast.unparse(arg.value)
            data.update({f"{label}[{i}]": v for i, v in enumerate(values)})
        else:
            label = arg.id if isinstance(arg, ast.Name) and arg.id not in data else f"arg{k}"
            data[label] = eval(compile(ast.Expression(arg), name, "eval"), setup_ns)
    return getattr(module, call.func.id), data, list(data)


def worker(folder: Path, name: str, repeat: int, out: Path) -> None:
    result: dict[str, Any] = {"name": name, "stage": "init"}

    def save() -> None:
        out.write_text(json.dumps(result))

    save()
    probe.measure(*load(folder, name), repeat, result, save, folder)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", help="the suite: its benchmarks folder, a checkout or a git dir")
    ap.add_argument("names", nargs="*", help="kernels to run (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per kernel")
    ap.add_argument("--repeat", type=int, default=5, help="warm runs per side (median)")
    ap.add_argument("--json", help="also write the results to this JSON file")
    ap.add_argument("--keep-cache", action="store_true",
                    help="use the usual Stax kernel cache (default: a fresh one)")
    ap.add_argument("--rev", help="probe this commit of the repository, not the work tree")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:
        worker(Path(args.path), args.worker, args.repeat, Path(args.out))
        return 0

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    tmp = Path(tempfile.mkdtemp(prefix="numpy_benchmarks_"))
    try:
        folder = locate(args.path, tmp)
        if folder is None:
            print(f"no numpy-benchmarks kernels at {args.path}: nothing to probe. Clone "
                  "https://github.com/serge-sans-paille/numpy-benchmarks and pass its path.")
            return 0
        todo = kernels(folder)
        if args.names:
            unknown = set(args.names) - set(todo)
            if unknown:
                ap.error(f"unknown kernel(s): {', '.join(sorted(unknown))}")
            todo = [t for t in todo if t in args.names]
        src, version = probe.stax_source(args.rev, tmp)
        env = probe.worker_env(src, tmp, args.keep_cache)
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        print(f"numpy-benchmarks probe: {len(todo)} kernels, Stax {version}, {stamp}",
              file=sys.stderr)

        def run(name: str) -> dict[str, Any]:
            out = tmp / f"{name}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), str(folder), "--worker",
                   name, "--repeat", str(args.repeat), "--out", str(out)]
            return probe.run_worker(cmd, name, out, args.timeout, env)

        probe.run_all(todo, run, f"numpy-benchmarks probe, Stax {version}, {stamp}", args.json)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
