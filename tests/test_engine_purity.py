"""The engine stays pure: no Ray, gRPC, OpenTelemetry, Kubernetes or the services package.

Checked two ways: statically (every import statement in engine/, via the AST) and at run time
(importing every engine module in a fresh interpreter loads none of the forbidden packages).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[1] / "engine" / "arrayplan_engine"
FORBIDDEN = ("ray", "grpc", "grpc_status", "grpc_health", "grpc_reflection", "opentelemetry", "kubernetes",
             "arrayplan_services", "arrayplan", "google", "sqlite3", "yaml", "requests", "socket", "subprocess")
# At run time numpy/numba themselves pull in socket and yaml; the edge libraries must stay out.
EDGE = ("ray", "grpc", "opentelemetry", "kubernetes", "arrayplan_services", "arrayplan", "google")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def test_engine_modules_import_nothing_forbidden() -> None:
    offenders = []
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) >= 10, "the engine package should have its model modules"
    for f in files:
        for line, name in _imports(f):
            top = name.split(".")[0]
            if top in FORBIDDEN:
                offenders.append(f"{f.relative_to(ENGINE.parent)}:{line} imports {name}")
    assert offenders == []


def test_importing_every_engine_module_loads_no_edge_library() -> None:
    modules = [f"arrayplan_engine.{p.stem}" for p in sorted(ENGINE.glob("*.py")) if p.stem != "__init__"]
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted({{k.split('.')[0] for k in sys.modules}} & set({list(EDGE)!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
