"""The engine's modules import one another without a cycle.

Every import counts, including those inside functions (a deferred import hides a cycle from the
interpreter, not from the reader). The graph is read from the sources with ``ast``, so the test
needs no import side effects and names the cycle it finds.
"""

from __future__ import annotations

import ast
from pathlib import Path

import arrayplan_engine

PACKAGE = "arrayplan_engine"
ROOT = Path(arrayplan_engine.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def import_graph() -> dict[str, set[str]]:
    """Engine module -> the engine modules it imports (anywhere in its source)."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, is_package, node)
                # ``from . import ssd`` imports the module ``arrayplan_engine.ssd``
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]  # ``from .x import Name`` -> module x
                if target and target != name and target != PACKAGE:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None (iterative DFS, three colours)."""
    colour = dict.fromkeys(graph, 0)  # 0 new, 1 on the stack, 2 done
    for start in sorted(graph):
        if colour[start]:
            continue
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        colour[start] = 1
        while stack:
            node, todo = stack[-1]
            if not todo:
                colour[node] = 2
                stack.pop()
                continue
            nxt = todo.pop()
            if colour[nxt] == 1:
                path = [n for n, _ in stack]
                return [*path[path.index(nxt):], nxt]
            if colour[nxt] == 0:
                colour[nxt] = 1
                stack.append((nxt, sorted(graph[nxt])))
    return None


def test_the_graph_is_read_from_every_engine_module() -> None:
    graph = import_graph()
    assert f"{PACKAGE}.array" in graph and f"{PACKAGE}.simulation" in graph
    # edges that exist today, at module level and inside a function: the walk must see both kinds
    assert f"{PACKAGE}.array" in graph[f"{PACKAGE}.simulation"]
    assert f"{PACKAGE}.array" in graph[f"{PACKAGE}.ssd"]  # ssd.consistency_run imports it in a function
    assert f"{PACKAGE}.errors" in graph[f"{PACKAGE}.catalog"]  # absolute ``from arrayplan_engine.errors import``


def test_find_cycle_names_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_engine_imports_are_acyclic() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle in the engine: " + " -> ".join(cycle or [])
