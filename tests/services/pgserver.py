"""A real PostgreSQL server for the tests, from the Debian package (scripts/setup.sh --test-tools
installs it): initdb into a fresh directory, ``postgres`` on 127.0.0.1 on a free port (as the
``postgres`` user when the tests run as root: postgres refuses to run as root), stopped by the
postmaster's PID. Each test that needs an empty store gets its own database (``fresh_database``).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import free_port

PASSWORD = "pg-test-secret-7f3a"  # noqa: S105 - a throwaway server's password, checked never to be printed
USER = "arrayplan"
START_TIMEOUT_S = 120.0


def postgres_bindir() -> Path | None:
    """The newest /usr/lib/postgresql/*/bin holding initdb and postgres."""
    found = sorted((Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/postgres")),
                   key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0)
    found = [d for d in found if (d / "initdb").exists()]
    return found[-1] if found else None


@dataclass
class PostgresServer:
    proc: subprocess.Popen[bytes]
    port: int
    datadir: Path
    log_path: Path

    def url(self, database: str = "postgres", *, password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new, empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.datadir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        """Fast shutdown (SIGINT to the postmaster by PID), then wait for the launcher."""
        pid = self.postmaster_pid()
        if pid is not None:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.kill()
            self.proc.wait(timeout=30)


def _run_as() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []


def _launch(bindir: Path, datadir: Path, port: int, log_path: Path) -> PostgresServer:
    """``postgres`` on ``datadir`` at 127.0.0.1:``port``: running and accepting connections, or
    stopped (the caller looks at ``proc.poll()`` and the log)."""
    import psycopg

    with open(log_path, "ab") as log:
        proc = subprocess.Popen([*_run_as(), str(bindir / "postgres"), "-D", str(datadir), "-h", "127.0.0.1", "-p", str(port),
                                 "-k", str(datadir.parent), "-c", "fsync=off", "-c", "max_connections=200"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = PostgresServer(proc=proc, port=port, datadir=datadir, log_path=log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with psycopg.connect(server.url(), connect_timeout=2):
                return server
        except psycopg.OperationalError:
            time.sleep(0.2)
    server.stop()
    return server


def restart_postgres(server: PostgresServer) -> PostgresServer:
    """The same data directory served again on the same port, after ``server.stop()``."""
    bindir = postgres_bindir()
    assert bindir is not None
    again = _launch(bindir, server.datadir, server.port, server.log_path)
    if again.proc.poll() is not None:
        raise RuntimeError(f"postgres did not start again:\n{server.log_path.read_text(errors='replace')}")
    return again


def start_postgres() -> PostgresServer:
    bindir = postgres_bindir()
    if bindir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not installed (scripts/setup.sh --test-tools installs the Debian package)")
        pytest.skip("PostgreSQL is not installed: run `make test-setup` (apt-get install postgresql)")

    # Not under pytest's tmp dirs: those are root's, mode 700, and the server runs as `postgres`.
    base = Path(tempfile.mkdtemp(prefix="arrayplan-pg-"))
    datadir = base / "data"
    run_as = _run_as()
    if run_as:
        import pwd

        pw = pwd.getpwnam("postgres")
        os.chown(base, pw.pw_uid, pw.pw_gid)
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if run_as:
        os.chown(pwfile, pw.pw_uid, pw.pw_gid)
    subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(datadir), "-U", USER, "--pwfile", str(pwfile),
                    "--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--no-sync"],
                   check=True, capture_output=True, timeout=300)
    log_path = base / "postgres.log"
    for _ in range(3):  # a free port taken by someone else before postgres binds it: pick again
        server = _launch(bindir, datadir, free_port(), log_path)
        if server.proc.poll() is None:
            return server
        if "could not bind" not in log_path.read_text(errors="replace"):
            break
    raise RuntimeError(f"postgres did not start:\n{log_path.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    yield server
    server.stop()
    shutil.rmtree(server.datadir.parent, ignore_errors=True)


@pytest.fixture()
def fresh_database(postgres: PostgresServer) -> str:
    """The URL of a new, empty database on the session's server."""
    return postgres.create_database()
