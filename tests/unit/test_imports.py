"""No import cycles among stax's modules, and every module imports in a fresh interpreter.

The module graph is read with `ast` from the module-level imports (imports inside functions
and under `if TYPE_CHECKING:` run later and cannot form an import-time cycle). `from P import
n` depends on the submodule `P.n` when there is one, else on the package `P` itself: a
submodule importing a name from its own package while the package imports that submodule is a
cycle. The graph must be acyclic (networkx).

Only `stax/backends/` imports the CPU backend (`stax.backends.cpu`), anywhere in a module
(imports inside functions too): everything else reaches it through the `Backend` object
(`stax.backends.get_backend`). No exception is needed today (the loop driver and the segmented
kernels moved behind the seam, issues 10 and 12); importing every other module in a fresh
interpreter leaves the CPU backend unloaded.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx

import stax

ROOT = Path(stax.__file__).parent


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(module: str, path: Path, known: dict[str, Path], *,
              everywhere: bool = False) -> set[str]:
    """The modules `module` imports at module level (`everywhere`: in functions too)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    for stmt in (ast.walk(tree) if everywhere else tree.body):
        if isinstance(stmt, ast.Import):
            found.update(a.name for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                anchor = package.split(".")[: len(package.split(".")) - stmt.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in stmt.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != module}


def import_graph() -> nx.DiGraph:
    known = modules()
    graph = nx.DiGraph()
    for module, path in known.items():
        graph.add_node(module)
        graph.add_edges_from((module, dep) for dep in _imported(module, path, known))
    return graph


def test_the_module_graph_is_read() -> None:
    graph = import_graph()
    assert {"stax", "stax.api", "stax.ir.expr", "stax.sched.fusion"} <= set(graph)
    assert graph.has_edge("stax.sched.fusion", "stax.ir.expr")
    assert graph.has_edge("stax.api", "stax.lower")


def test_no_import_cycles() -> None:
    cycles = list(nx.simple_cycles(import_graph()))
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles)


def test_a_cycle_is_detected(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import f\n")
    (pkg / "a.py").write_text("from pkg import g\n\ndef f(): ...\n")
    known = {"pkg": pkg / "__init__.py", "pkg.a": pkg / "a.py"}
    assert _imported("pkg", known["pkg"], known) == {"pkg.a"}
    assert _imported("pkg.a", known["pkg.a"], known) == {"pkg"}
    graph = nx.DiGraph([(m, d) for m, p in known.items() for d in _imported(m, p, known)])
    assert len(list(nx.simple_cycles(graph))) == 1


def test_every_module_imports_in_a_fresh_interpreter() -> None:
    """Every module imports; those outside `stax/backends/` first, leaving the CPU backend
    unloaded (it loads on first use, through `get_backend`)."""
    names = sorted((not _outside_backends(m), m) for m in modules()
                   if not m.endswith("__main__"))  # that one runs the CLI
    script = ("import importlib, sys\nfailed = []\n"
              f"for _, name in {names!r}:\n"
              "    try:\n        importlib.import_module(name)\n"
              "    except Exception as e:\n        failed.append(f'{name}: {e!r}')\n"
              f"    if {CPU!r} in sys.modules and not name.startswith('stax.backends'):\n"
              "        failed.append(f'importing {name} loaded the CPU backend')\n"
              "print('\\n'.join(failed)); sys.exit(1 if failed else 0)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]


CPU = "stax.backends.cpu"


def _outside_backends(module: str) -> bool:
    return module != "stax.backends" and not module.startswith("stax.backends.")


def _cpu_imports(module: str, path: Path, known: dict[str, Path]) -> list[str]:
    return sorted(m for m in _imported(module, path, known, everywhere=True)
                  if m == CPU or m.startswith(CPU + "."))


def test_only_the_backends_import_the_cpu_backend() -> None:
    known = modules()
    assert {CPU, f"{CPU}.cpp"} <= set(known)
    offenders = {m: _cpu_imports(m, p, known) for m, p in known.items() if _outside_backends(m)}
    assert {m: found for m, found in offenders.items() if found} == {}


def test_a_cpu_import_inside_a_function_is_found(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("def f():\n    from stax.backends.cpu.cpp import HEADER\n"
                                   "def g():\n    from ..backends import cpu\n")
    known = {"stax.loops.x": tmp_path / "x.py", CPU: tmp_path, f"{CPU}.cpp": tmp_path}
    assert _cpu_imports("stax.loops.x", known["stax.loops.x"], known) == [CPU, f"{CPU}.cpp"]
    assert _imported("stax.loops.x", known["stax.loops.x"], known) == set()  # not top level
