"""requirements.lock is requirements.txt resolved: every direct pin is in the lock at its version,
every tool is pinned, and every locked package carries hashes (scripts/setup.sh installs the lock
with --require-hashes). Regenerate with `make lock` after changing a pin."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([^\s;\\]+)")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _direct() -> dict[str, str]:
    pins: dict[str, str] = {}
    for n, line in enumerate((ROOT / "requirements.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = _PIN.match(line)
        assert m, f"requirements.txt:{n}: {line!r} is not pinned with =="
        pins[_norm(m.group(1))] = m.group(3)
    return pins


def _locked() -> dict[str, set[str]]:
    text = (ROOT / "requirements.lock").read_text()
    locked: dict[str, set[str]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = _PIN.match(block)
        if m:
            assert "--hash=sha256:" in block, f"requirements.lock: {m.group(1)} has no hash"
            locked.setdefault(_norm(m.group(1)), set()).add(m.group(3))
    return locked


def test_every_direct_pin_is_locked_at_its_version() -> None:
    locked = _locked()
    missing = {name: v for name, v in _direct().items() if v not in locked.get(name, set())}
    assert not missing, f"requirements.lock disagrees with requirements.txt for {missing}: run `make lock`"


def test_lock_holds_the_transitive_closure() -> None:
    # numpy, protobuf and grpcio come in through several direct dependencies; setuptools builds the
    # editable packages without build isolation (scripts/setup.sh), so it must be locked too.
    locked = _locked()
    for name in ("setuptools", "numpy", "llvmlite", "protobuf", "aiohttp"):
        assert name in locked, f"{name} is not in requirements.lock"
