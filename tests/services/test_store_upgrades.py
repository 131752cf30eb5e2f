"""Every store a release wrote opens: a fixture store per released SQLite schema
(tests/data/stores, written by make_stores.py with each release's own schema script) opens with its
plans, and a store of a newer or an unreadable schema version is one line and exit 2 from
``serve``, ``runs --local`` and ``store check`` alike; the same for PostgreSQL."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pgserver import PostgresServer, fresh_database, postgres  # noqa: F401 - fixtures

from arrayplan_services.store import STORE_FILE, RunStore, StoreConnectError, open_store
from conftest import ROOT

FIXTURES = ROOT / "tests" / "data" / "stores"
RELEASED = (1, 2, 3)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARRAYPLAN_STORE_URL": ""}
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)


def _copy(version: int, data_dir: Path) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    target = data_dir / STORE_FILE
    shutil.copy(FIXTURES / f"schema-{version}.sqlite3", target)
    return target


@pytest.mark.parametrize("version", RELEASED)
def test_each_released_schema_opens_with_its_plans(tmp_path: Path, version: int) -> None:
    path = _copy(version, tmp_path / "d")
    store = RunStore(path)
    try:
        rows, _ = store.list(page_size=10, before_seq=None)
        assert sorted(r.id for r in rows) == ["plans/old-failed", "plans/old-succeeded"]
        failed = store.get("plans/old-failed")
        assert failed is not None and failed.state == "FAILED" and failed.error_reason == "NO_CANDIDATES"
        # the migrations ran in order: creator (2), checkpoints (3), leases; the version is now this server's
        creators = {r.id: r.creator for r in rows}
        assert creators["plans/old-succeeded"] == ("alice" if version >= 2 else "")
    finally:
        store.close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == "3"
        columns = {r[1] for r in db.execute("PRAGMA table_info(runs)")}
        assert {"creator", "lease_owner", "lease_expiry"} <= columns
        assert db.execute("SELECT name FROM sqlite_master WHERE name='runs_by_creator'").fetchone() is not None
    finally:
        db.close()


def test_first_release_store_lists_through_the_cli(tmp_path: Path) -> None:
    _copy(1, tmp_path / "d")
    out = _cli("runs", "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"))
    assert out.returncode == 0, out.stderr
    assert "old-succeeded" in out.stdout and "old-failed" in out.stdout


@pytest.mark.parametrize("value", ["99", "two"])
def test_newer_or_unreadable_version_is_one_line_exit_2_everywhere(tmp_path: Path, value: str) -> None:
    path = _copy(3, tmp_path / "d")
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (value,))
    db.commit()
    db.close()
    before = path.read_bytes()
    d = str(tmp_path / "d")
    for args in (("serve", "--port", "0", "--executor", "local", "--data-dir", d),
                 ("runs", "--local", "--executor", "local", "--data-dir", d),
                 ("store", "check", "--data-dir", d)):
        out = _cli(*args)
        lines = [line for line in out.stderr.splitlines() if line.strip()]
        assert out.returncode == 2 and len(lines) == 1, (args, out.stderr)
        assert "schema version" in lines[0] and "Traceback" not in out.stderr, lines[0]
    assert path.read_bytes() == before  # nothing was written to a store this release does not know


def test_every_unknown_version_is_refused_before_a_write(tmp_path: Path) -> None:
    from arrayplan_services.store import StoreDamagedError

    for i, value in enumerate(("-1", "0", "3.5", "", "9" * 400)):
        path = _copy(3, tmp_path / f"d{i}")
        db = sqlite3.connect(path)
        db.execute("UPDATE meta SET value=? WHERE key='schema_version'", (value,))
        db.commit()
        db.close()
        with pytest.raises(StoreDamagedError, match="schema version") as info:
            RunStore(path)
        assert len(str(info.value)) < 600 and "\n" not in str(info.value)


@pytest.mark.parametrize("value", ["99", "two"])
def test_postgres_newer_or_unreadable_version_is_one_line(tmp_path: Path, fresh_database: str, value: str) -> None:  # noqa: F811
    open_store(data_dir=tmp_path, store_url=fresh_database).close()
    import psycopg

    with psycopg.connect(fresh_database, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value=%s WHERE key='schema_version'", (value,))
    with pytest.raises(StoreConnectError, match="schema") as info:
        open_store(data_dir=tmp_path, store_url=fresh_database)
    assert "\n" not in str(info.value)
    out = _cli("serve", "--port", "0", "--executor", "local", "--data-dir", str(tmp_path / "d"), "--store-url", fresh_database)
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2 and len(lines) == 1 and "schema" in lines[0], out.stderr
