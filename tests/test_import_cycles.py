"""services/ has no import cycles: not through ``import`` / ``from ... import`` at module level, not
through an import inside a function (the usual way a cycle is hidden), and not through
``importlib.import_module("...")`` or a string naming a module (a plugin list handed to
``import_module``), which import-linter does not see.

The scan reads the source with ``ast`` (nothing is imported); an edge is A -> B when module A
names module B. Imports under ``if TYPE_CHECKING:`` are left out (they never run). A package's
``__init__`` is not counted as imported by its own submodules (Python runs it first, and a
submodule importing a sibling is not a cycle), only where a module names the package itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ROOT / "services"


def module_files(base: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every .py under ``base / package``."""
    out = {}
    for path in sorted((base / package).rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def _resolve(name: str, level: int, module: str, is_package: bool) -> str:
    """``from <level dots><name>`` inside ``module`` as an absolute dotted name."""
    if not level:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports_of(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` (source at ``path``) imports at run time."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()

    def add(name: str) -> None:
        while name and name not in known:  # a.b.func -> a.b; outside the package -> ""
            name = name.rpartition(".")[0]
        if name:
            found.add(name)

    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node.module or "", node.level, module, is_package)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                add(sub if sub in known else target)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "import_module" and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                text = node.args[0].value
                level = len(text) - len(text.lstrip("."))
                add(_resolve(text[level:], level, module, is_package))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            found.add(node.value)  # a module named in a string (a plugin list fed to import_module)
    found.discard(module)
    # a submodule does not "import" the package it lives in: Python has run that __init__ already
    return {m for m in found if not module.startswith(m + ".")}


def import_graph(base: Path, package: str) -> dict[str, set[str]]:
    files = module_files(base, package)
    known = set(files)
    return {m: imports_of(m, p, known) for m, p in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # recursion depth is bounded by the module count (a few hundred)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_scan_sees_cycles_through_functions_and_importlib(tmp_path: Path) -> None:
    """The check below can fail: a cycle closed by an import inside a function, one closed by an
    ``importlib.import_module`` string, and a TYPE_CHECKING import that is not a cycle."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "a.py").write_text("import importlib\n\ndef load():\n    return importlib.import_module('pkg.sub.b')\n")
    (pkg / "g.py").write_text("import importlib\nPLUGINS = ('pkg.h',)\nmods = [importlib.import_module(m) for m in PLUGINS]\n")
    (pkg / "h.py").write_text("def register():\n    from .g import mods\n    return mods\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from .. import a\n    return a\n")
    (pkg / "c.py").write_text("def g():\n    from .d import x\n    return x\n")
    (pkg / "d.py").write_text("from .c import g\nx = 1\n")
    (pkg / "e.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .f import y\n")
    (pkg / "f.py").write_text("from .e import TYPE_CHECKING as y\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.sub"] == {"pkg.sub.b"} and graph["pkg.e"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.sub.b"], ["pkg.c", "pkg.d"], ["pkg.g", "pkg.h"]]


def test_services_has_no_import_cycles() -> None:
    graph = import_graph(SERVICES, "arrayplan_services")
    assert len(graph) > 50 and "arrayplan_services.cli.common" in graph["arrayplan_services.cli.main"]  # the scan reads
    found = cycles(graph)
    assert not found, ("import cycles in services/ (counting imports inside functions and importlib strings); "
                       f"move what both sides need into a module below them: {found}")
