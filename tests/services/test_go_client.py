"""The Go client module (clients/go): its committed stubs are what `buf generate` makes from the
proto now, and its own tests (`go test`: a real server started by TestMain, a second one with
mutual TLS and a token; docs/go.md) pass. Here so that `make test` runs them."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, ROOT

GO_CLIENT = ROOT / "clients" / "go"


def _go() -> str:
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed (the Go client's tests need it)")
    return go


def test_committed_go_stubs_are_a_fresh_generation(tmp_path: Path) -> None:
    for plugin in ("protoc-gen-go", "protoc-gen-go-grpc"):
        if not (BIN / plugin).exists():
            pytest.skip(f"bin/{plugin} is missing: `make setup` builds it (needs Go)")
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "buf"), "generate", "-o", str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    fresh, committed = tmp_path / "clients" / "go" / "proto", GO_CLIENT / "proto"
    names = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*.go"))
    assert names == sorted(str(p.relative_to(committed)) for p in committed.rglob("*.go")), "stub files differ: run `make proto`"
    _, mismatch, errors = filecmp.cmpfiles(fresh, committed, names, shallow=False)
    assert not mismatch and not errors, f"{mismatch + errors} differ from a fresh `buf generate`: run `make proto` and commit"


def test_go_client_tests_pass_against_the_real_server() -> None:
    go = _go()
    env = {**os.environ, "ARRAYPLAN_REPO": str(ROOT)}
    out = subprocess.run([go, "test", "-count=1", "./..."], cwd=GO_CLIENT, capture_output=True, text=True, timeout=900, env=env)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-3000:]
    assert "ok  \tgithub.com/arrayplan/arrayplan/clients/go/arrayplan" in out.stdout, out.stdout
