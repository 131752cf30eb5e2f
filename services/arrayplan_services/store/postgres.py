"""The run store on PostgreSQL (``serve --store-url postgresql://...``), shared by planner replicas.

The same tables as the SQLite store (runs, spans, checkpoints, meta), plus each run's lease
(base.py). The schema is created or migrated at start under a transaction-scoped advisory lock,
so two replicas starting together do not race. Lease times are on the database's clock
(``clock_timestamp()``), so replicas whose clocks differ still agree on when a lease expires.

Connections: a ``psycopg_pool.ConnectionPool`` (``POOL_MIN`` kept open, up to ``POOL_MAX``), one
connection per call, autocommit with an explicit transaction where a call writes more than one
statement. Each connection is checked as it leaves the pool (an empty query), so a database that
restarted costs no call. A down database fails the call that finds it within ``POOL_WAIT_S`` (the
pool's ``timeout``: never psycopg_pool's 30 s default) and makes the store unhealthy (UNAVAILABLE,
health NOT_SERVING) until the server's probe reaches the database again, as a full disk does for
SQLite; while unhealthy, calls wait at most ``POOL_WAIT_DOWN_S``. Opening the store connects directly, outside the pool, so a refused connection or a
wrong password is named at start (exit 2) instead of becoming a pool timeout.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from ..redaction import redact_text, redact_url, url_secrets
from .sql import DAMAGED, LIVE, RunRow, SqlRunStore, StoreConnectError, StoreUrlError, guarded, row_of, schema

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
#: Connections kept open, and at most open at once (above the server's threads that use the store
#: together: its plan runners, heavy calls and RPC workers).
POOL_MIN, POOL_MAX = 1, 32
#: How long a call waits for a connection while the store is healthy. Taking one from the pool, or
#: opening one on 127.0.0.1, takes milliseconds (a refused connect fails at once, but psycopg_pool
#: connects in its own threads and a waiting call only sees its timeout); so the call that finds
#: the database down fails after this, not after psycopg_pool's default of 30 s, and the pool
#: gives up reconnecting in the background after the same time (the next call tries again).
POOL_WAIT_S = 2.0
#: ... and once the store is unhealthy: calls fail nearly at once, as a refused connection did
#: before the pool, until the server's probe (or a call) finds a connection again.
POOL_WAIT_DOWN_S = 0.2
#: An idle connection above POOL_MIN closes after this.
POOL_IDLE_S = 300.0
DEFAULT_CONNECT_TIMEOUT_S = 10
# pg_advisory_xact_lock key for schema creation/migration ("arrplan" in ASCII).
_SCHEMA_LOCK = 0x61727270_6C616E

_SCHEMA = (*schema(serial_key="BIGSERIAL PRIMARY KEY", real="DOUBLE PRECISION", bigint="BIGINT", blob="BYTEA"),
           "CREATE INDEX IF NOT EXISTS runs_by_creator ON runs (creator, seq)",
           f"CREATE INDEX IF NOT EXISTS runs_live ON runs (seq) WHERE {LIVE}")


def redact(url: str) -> str:
    """``url`` without its password (userinfo or ``password=``), found by pattern, not by parsing,
    so an unparsable URL is masked too (``redaction``, the one redaction path)."""
    return redact_url(url)


def _one_line(exc: BaseException, url: str) -> str:
    """The first meaningful line of a driver error, never holding the password."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
    return redact_text(text, url_secrets(url))[:300]  # redacted before it is cut: a cut password is not found


def check_url(url: str) -> str:
    """Validate ``url`` (scheme, parses as libpq conninfo); returns it with a connect timeout
    added when it has none. Raises StoreUrlError."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("postgresql", "postgres") or not url.lower().startswith(f"{scheme}://"):
        raise StoreUrlError(f"--store-url must be a postgresql://USER:PASSWORD@HOST:PORT/DATABASE URL, got {redact(url)!r}")
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error as exc:
        raise StoreUrlError(f"--store-url {redact(url)} is not a valid PostgreSQL URL: {_one_line(exc, url)}") from None
    if "connect_timeout" not in params:
        url += ("&" if "?" in url else "?") + f"connect_timeout={DEFAULT_CONNECT_TIMEOUT_S}"
    return url


def unavailable_condition(exc: BaseException) -> str | None:
    """Why a driver error means the database is not usable now, or None for other errors."""
    if isinstance(exc, pg_errors.DiskFull):
        return "full"
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return "read-only"
    if isinstance(exc, pg_errors.DataCorrupted | pg_errors.IndexCorrupted):
        return DAMAGED
    if isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError):
        return "unreachable"
    return None


_CONNECTION_KWARGS: dict[str, Any] = {"autocommit": True, "row_factory": dict_row, "application_name": "arrayplan"}


class PostgresRunStore(SqlRunStore):
    """The run store in a PostgreSQL database, safe to share between servers and threads."""

    shared = True
    _PARAM = "%s"
    _NOW = "extract(epoch from clock_timestamp())::float8"  # the database's clock, shared by every replica
    _LOCK_ROW = "FOR UPDATE"
    _DUPLICATE = (pg_errors.UniqueViolation,)
    _PROBE = "INSERT INTO meta VALUES ('last_probe', ?) ON CONFLICT (key) DO UPDATE SET value=EXCLUDED.value"
    _DRIVER_ERRORS = (psycopg.Error,)
    _condition = staticmethod(unavailable_condition)

    def __init__(self, url: str) -> None:
        self._url = check_url(url)
        self._redacted = redact(url)
        self.healthy = True
        self.condition = ""
        self._listeners: list[Callable[[bool], None]] = []
        try:  # directly, not through the pool: the driver's own reason (refused, password) goes into the message
            conn = psycopg.connect(self._url, **_CONNECTION_KWARGS)
        except psycopg.Error as exc:
            raise StoreConnectError(f"cannot open the run store {self._redacted}: {_one_line(exc, url)}") from None
        try:
            with conn:
                self._migrate(conn)
        except psycopg.Error as exc:
            raise StoreConnectError(f"cannot set up the run store {self._redacted}: {_one_line(exc, url)}") from None
        self._pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            self._url, kwargs=dict(_CONNECTION_KWARGS), min_size=POOL_MIN, max_size=POOL_MAX, timeout=POOL_WAIT_S,
            reconnect_timeout=POOL_WAIT_S, max_idle=POOL_IDLE_S, check=ConnectionPool.check_connection,
            name="arrayplan-run-store", open=True)

    @property
    def location(self) -> str:
        return self._redacted

    def _migrate(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            # The version is judged before any statement runs: a newer or unreadable one is one line, exit 2.
            has_meta = conn.execute("SELECT to_regclass('meta') IS NOT NULL AS present").fetchone()
            present = bool(has_meta and has_meta["present"])
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() if present else None
            if row is not None:
                text = str(row["value"])[:40]
                try:
                    version = int(text)
                except ValueError:
                    raise StoreConnectError(f"the run store {self._redacted} has a schema version that is not a number ({text!r}): "
                                            "restore a backup (pg_restore)") from None
                if not 1 <= version <= SCHEMA_VERSION:
                    raise StoreConnectError(f"the run store {self._redacted} has schema {version}, which this server (schema "
                                            f"{SCHEMA_VERSION}) does not know: run the release that wrote it, or restore a backup "
                                            "(pg_restore)")
            for statement in _SCHEMA:
                conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO meta VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),))

    # -- connections --------------------------------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self._pool.connection(timeout=POOL_WAIT_S if self.healthy else POOL_WAIT_DOWN_S) as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self._conn() as conn, conn.transaction():
            yield conn

    def close(self) -> None:
        self._pool.close()

    # -- health -----------------------------------------------------------------------------
    def _fault(self, exc: BaseException) -> str | None:
        if not isinstance(exc, psycopg.Error):
            return None
        condition = unavailable_condition(exc)
        if condition is not None:
            log.error("run store %s: %s", self.location, _one_line(exc, self._url))
        return condition

    # -- leases -----------------------------------------------------------------------------
    @guarded
    def renew_leases(self, owner: str, run_ids: Iterable[str], lease_s: float) -> set[str]:
        """Extend ``owner``'s leases on ``run_ids`` (one UPDATE); returns the ids whose lease is
        lost (the run is terminal or gone, or another server holds it)."""
        ids = set(run_ids)
        if not ids:
            return set()
        rows = self._all("UPDATE runs SET lease_expiry={now} + ? WHERE id = ANY(?) AND lease_owner=? AND {live} RETURNING id",
                         (lease_s, builtins.list(ids), owner))
        return ids - {str(r["id"]) for r in rows}

    @guarded
    def claim_orphans(self, owner: str, lease_s: float, *, include_unexpired: bool = False,
                      limit: int = 64) -> builtins.list[RunRow]:
        """Take the leases of PENDING/RUNNING runs nobody holds (free or expired), oldest first:
        the candidate rows are locked FOR UPDATE SKIP LOCKED, so two servers claiming at once
        never take the same run."""
        with self._tx() as conn:
            ids = [str(r["id"]) for r in conn.execute(self._q(
                "SELECT id FROM runs WHERE {live} AND lease_owner<>? AND (? OR lease_owner='' OR lease_expiry < {now}) "
                "ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED"), (owner, include_unexpired, limit)).fetchall()]
            if not ids:
                return []
            rows = conn.execute(self._q("UPDATE runs SET lease_owner=?, lease_expiry={now} + ? WHERE id = ANY(?) RETURNING *"),
                                (owner, lease_s, ids)).fetchall()
        return sorted((row_of(r) for r in rows), key=lambda r: r.seq)
