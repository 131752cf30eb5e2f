"""The house style is checked, not hoped for: ruff over both packages and the tests (ruff.toml), the
layers by import-linter (.importlinter) and the types by mypy (mypy.ini). The same commands run in
``make lint``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in {BIN} (requirements.txt pins it; `make setup` installs it)")
    return path


def test_ruff_passes() -> None:
    out = subprocess.run([str(BIN / "ruff"), "check", "engine", "services", "tests"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


def test_layers_hold() -> None:
    """engine < api < planner/fanout/store/telemetry < server/controller/report < cli; the engine
    imports no Ray, gRPC, OpenTelemetry or Kubernetes (.importlinter names every contract)."""
    out = subprocess.run([str(_tool("lint-imports")), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout, out.stdout


@pytest.mark.slow
def test_types_check() -> None:
    """mypy (mypy.ini): strict for the engine; for the services as strict as the library stubs allow
    (the exceptions in mypy.ini each say why). Incremental: the cache in .mypy_cache makes a rerun
    take seconds; a cold run about a minute."""
    out = subprocess.run([str(_tool("mypy"))], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-2000:]
    assert "Success: no issues found" in out.stdout, out.stdout[-2000:]
