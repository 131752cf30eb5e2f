"""The house style is checked, not hoped for: ruff over both packages and the tests (ruff.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_passes() -> None:
    ruff = Path(sys.executable).parent / "ruff"
    out = subprocess.run([str(ruff), "check", "engine", "services", "tests"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
