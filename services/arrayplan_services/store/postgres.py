"""The run store on PostgreSQL (``serve --store-url postgresql://...``), shared by planner replicas.

The same tables as the SQLite store (runs, spans, checkpoints, meta), plus each run's lease
(base.py). The schema is created or migrated at start under a transaction-scoped advisory lock,
so two replicas starting together do not race. Lease times are on the database's clock
(``clock_timestamp()``), so replicas whose clocks differ still agree on when a lease expires.

Connections: a small pool (``POOL_IDLE`` kept open), one connection per call, autocommit with an
explicit transaction where a call writes more than one statement. A lost connection makes the
store unhealthy (UNAVAILABLE, health NOT_SERVING) until the server's probe reaches the database
again, as a full disk does for SQLite.
"""

from __future__ import annotations

import builtins
import functools
import json
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row

from arrayplan_engine.errors import InvalidInputError

from .base import StoreConnectError, StoreUrlError
from .sqlite import DAMAGED, MAX_CHECKPOINT_BYTES_PER_RUN, TERMINAL_STATES, RunRow, StoreUnavailableError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
POOL_IDLE = 8
DEFAULT_CONNECT_TIMEOUT_S = 10
# pg_advisory_xact_lock key for schema creation/migration ("arrplan" in ASCII).
_SCHEMA_LOCK = 0x61727270_6C616E
_NOW = "extract(epoch from clock_timestamp())::float8"
_LIVE = "state IN ('PENDING', 'RUNNING')"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS runs (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        state TEXT NOT NULL,
        spec_json TEXT NOT NULL,
        progress_json TEXT NOT NULL DEFAULT '{}',
        result_json TEXT,
        trace_id TEXT NOT NULL DEFAULT '',
        error_message TEXT NOT NULL DEFAULT '',
        error_reason TEXT NOT NULL DEFAULT '',
        attempts INTEGER NOT NULL DEFAULT 0,
        create_time DOUBLE PRECISION NOT NULL,
        update_time DOUBLE PRECISION NOT NULL,
        end_time DOUBLE PRECISION,
        creator TEXT NOT NULL DEFAULT '',
        lease_owner TEXT NOT NULL DEFAULT '',
        lease_expiry DOUBLE PRECISION NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS runs_by_creator ON runs (creator, seq)",
    f"CREATE INDEX IF NOT EXISTS runs_live ON runs (seq) WHERE {_LIVE}",
    """CREATE TABLE IF NOT EXISTS spans (
        trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL,
        parent_span_id TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        start_ns BIGINT NOT NULL,
        end_ns BIGINT NOT NULL,
        status TEXT NOT NULL,
        attributes_json TEXT NOT NULL,
        process TEXT NOT NULL,
        PRIMARY KEY (trace_id, span_id)
    )""",
    "CREATE INDEX IF NOT EXISTS spans_by_trace ON spans (trace_id, start_ns)",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        run_id TEXT NOT NULL,
        first_index INTEGER NOT NULL,
        candidate_count INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        payload BYTEA NOT NULL,
        PRIMARY KEY (run_id, first_index)
    )""",
)


def redact(url: str) -> str:
    """``url`` without its password (in the netloc or as a ``password=`` query parameter)."""
    try:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            netloc = f"{userinfo.split(':', 1)[0]}@{host}"
        query = urllib.parse.urlencode([(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
                                        if k.lower() != "password"])
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return "(an unparsable URL)"


def _password(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        pw = parts.password or ""
        for k, v in urllib.parse.parse_qsl(parts.query):
            if k.lower() == "password":
                pw = v
        return pw
    except ValueError:
        return ""


def _one_line(exc: BaseException, url: str) -> str:
    """The first meaningful line of a driver error, never holding the password."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:300] or type(exc).__name__
    pw = _password(url)
    return text.replace(pw, "***") if pw else text


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


_F = TypeVar("_F", bound=Callable[..., Any])


def _guarded(fn: _F) -> _F:
    """Connection faults become StoreUnavailableError and flip the store's health."""

    @functools.wraps(fn)
    def wrapper(self: PostgresRunStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except psycopg.Error as exc:
            condition = unavailable_condition(exc)
            if condition is None:
                raise
            log.error("run store %s: %s", self.location, _one_line(exc, self._url))
            self._set_healthy(False, condition)
            raise StoreUnavailableError(condition) from None

    return cast(_F, wrapper)


class PostgresRunStore:
    """The run store in a PostgreSQL database, safe to share between servers and threads."""

    shared = True

    def __init__(self, url: str) -> None:
        self._url = check_url(url)
        self._redacted = redact(url)
        self.healthy = True
        self.condition = ""
        self._listeners: list[Callable[[bool], None]] = []
        self._idle: list[psycopg.Connection[dict[str, Any]]] = []
        self._lock = threading.Lock()
        try:
            conn = self._connect()
        except psycopg.Error as exc:
            raise StoreConnectError(f"cannot open the run store {self._redacted}: {_one_line(exc, url)}") from None
        try:
            self._migrate(conn)
        except psycopg.Error as exc:
            conn.close()
            raise StoreConnectError(f"cannot set up the run store {self._redacted}: {_one_line(exc, url)}") from None
        except StoreConnectError:
            conn.close()
            raise
        self._release(conn)

    @property
    def location(self) -> str:
        return self._redacted

    def _migrate(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA:
                conn.execute(statement)
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta VALUES ('schema_version', %s)", (str(SCHEMA_VERSION),))
            elif int(row["value"]) > SCHEMA_VERSION:
                raise StoreConnectError(f"the run store {self._redacted} has schema {row['value']}, newer than this server's "
                                        f"{SCHEMA_VERSION}: run the newer server, or restore a backup (pg_restore)")

    # -- connections --------------------------------------------------------------------------
    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self._url, autocommit=True, row_factory=dict_row, application_name="arrayplan")

    def _release(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        if conn.closed or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.close()
            return
        with self._lock:
            if len(self._idle) < POOL_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            yield conn
        except BaseException:
            if conn.broken:
                conn.close()
            else:
                self._release(conn)
            raise
        self._release(conn)

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        with self._conn() as conn, conn.transaction():
            yield conn

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    # -- health -----------------------------------------------------------------------------
    def add_listener(self, fn: Callable[[bool], None]) -> None:
        self._listeners.append(fn)

    def _set_healthy(self, healthy: bool, condition: str = "") -> None:
        if healthy == self.healthy:
            return
        self.healthy = healthy
        self.condition = condition
        if healthy:
            log.warning("run store %s is usable again", self._redacted)
        else:
            log.error("run store %s is %s: answering UNAVAILABLE until it recovers", self._redacted, condition)
        for fn in self._listeners:
            fn(healthy)

    def probe(self) -> bool:
        try:
            with self._conn() as conn:
                conn.execute("INSERT INTO meta VALUES ('last_probe', %s) ON CONFLICT (key) DO UPDATE SET value=EXCLUDED.value",
                             (repr(time.time()),))
        except psycopg.Error as exc:
            condition = unavailable_condition(exc)
            if condition is None:
                raise
            self._set_healthy(False, condition)
            return False
        self._set_healthy(True)
        return True

    # -- runs -------------------------------------------------------------------------------
    @_guarded
    def create(self, run_id: str, spec_json: str, trace_id: str, creator: str = "", *, lease_owner: str = "",
               lease_s: float = 0.0) -> RunRow:
        now = time.time()
        try:
            with self._conn() as conn:
                row = conn.execute(
                    "INSERT INTO runs (id, state, spec_json, trace_id, create_time, update_time, creator, lease_owner, lease_expiry) "
                    f"VALUES (%s, 'PENDING', %s, %s, %s, %s, %s, %s, CASE WHEN %s = '' THEN 0 ELSE {_NOW} + %s END) RETURNING *",
                    (run_id, spec_json, trace_id, now, now, creator, lease_owner, lease_owner, lease_s)).fetchone()
        except pg_errors.UniqueViolation:
            # Two replicas given the same plan_id at once: the second hears it exists, as it would after.
            raise InvalidInputError.one("plan_id", f"plans/{run_id} already exists") from None
        assert row is not None
        return _row(row)

    @_guarded
    def exists(self, run_id: str) -> bool:
        with self._conn() as conn:
            return conn.execute("SELECT 1 FROM runs WHERE id=%s", (run_id,)).fetchone() is not None

    @_guarded
    def get(self, run_id: str) -> RunRow | None:
        with self._conn() as conn:
            row = conn.execute("SELECT * FROM runs WHERE id=%s", (run_id,)).fetchone()
        return _row(row) if row else None

    @_guarded
    def list(self, *, page_size: int, before_seq: int | None, creator: str | None = None) -> tuple[builtins.list[RunRow], int | None]:
        where: builtins.list[str] = []
        params: builtins.list[object] = []
        if before_seq is not None:
            where.append("seq < %s")
            params.append(before_seq)
        if creator is not None:
            where.append("creator = %s")
            params.append(creator)
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY seq DESC LIMIT %s"
        with self._conn() as conn:
            rows = conn.execute(sql, (*params, page_size + 1)).fetchall()
        out = [_row(r) for r in rows[:page_size]]
        return out, (out[-1].seq if len(rows) > page_size else None)

    @_guarded
    def set_state(self, run_id: str, state: str, *, trace_id: str | None = None, attempts_increment: bool = False) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE runs SET state=%s, trace_id=COALESCE(%s, trace_id), attempts=attempts+%s, update_time=%s WHERE id=%s",
                         (state, trace_id, 1 if attempts_increment else 0, time.time(), run_id))

    @_guarded
    def set_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        with self._conn() as conn:
            # Not once the run is terminal: a replica that lost the lease may still report a batch.
            conn.execute(f"UPDATE runs SET progress_json=%s, update_time=%s WHERE id=%s AND {_LIVE}",
                         (json.dumps(progress), time.time(), run_id))

    @_guarded
    def finish(self, run_id: str, state: str, *, result_json: str | None = None, error_message: str = "",
               error_reason: str = "", progress: dict[str, Any] | None = None) -> bool:
        assert state in TERMINAL_STATES
        now = time.time()
        with self._tx() as conn:
            if progress is not None:
                conn.execute(f"UPDATE runs SET progress_json=%s WHERE id=%s AND {_LIVE}", (json.dumps(progress), run_id))
            cur = conn.execute(
                "UPDATE runs SET state=%s, result_json=COALESCE(%s, result_json), error_message=%s, error_reason=%s, update_time=%s, "
                f"end_time=%s, lease_owner='', lease_expiry=0 WHERE id=%s AND {_LIVE}",
                (state, result_json, error_message, error_reason, now, now, run_id))
            conn.execute("DELETE FROM checkpoints WHERE run_id=%s", (run_id,))
            return cur.rowcount == 1

    @_guarded
    def interrupted(self) -> builtins.list[RunRow]:
        with self._conn() as conn:
            rows = conn.execute(f"SELECT * FROM runs WHERE {_LIVE} ORDER BY seq").fetchall()
        return [_row(r) for r in rows]

    # -- leases -----------------------------------------------------------------------------
    @_guarded
    def take_lease(self, run_id: str, owner: str, lease_s: float) -> bool:
        with self._conn() as conn:
            cur = conn.execute(f"UPDATE runs SET lease_owner=%s, lease_expiry={_NOW} + %s WHERE id=%s AND {_LIVE} "
                               f"AND (lease_owner='' OR lease_owner=%s OR lease_expiry < {_NOW})", (owner, lease_s, run_id, owner))
            return cur.rowcount == 1

    @_guarded
    def renew_leases(self, owner: str, run_ids: Iterable[str], lease_s: float) -> set[str]:
        ids = set(run_ids)
        if not ids:
            return set()
        with self._conn() as conn:
            rows = conn.execute(f"UPDATE runs SET lease_expiry={_NOW} + %s WHERE id = ANY(%s) AND lease_owner=%s AND {_LIVE} "
                                "RETURNING id", (lease_s, builtins.list(ids), owner)).fetchall()
        return ids - {str(r["id"]) for r in rows}

    @_guarded
    def release_lease(self, run_id: str, owner: str) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE runs SET lease_owner='', lease_expiry=0 WHERE id=%s AND lease_owner=%s", (run_id, owner))

    @_guarded
    def claim_orphans(self, owner: str, lease_s: float, *, include_unexpired: bool = False,
                      limit: int = 64) -> builtins.list[RunRow]:
        """Take the leases of PENDING/RUNNING runs nobody holds (free or expired), oldest first:
        the candidate rows are locked FOR UPDATE SKIP LOCKED, so two servers claiming at once
        never take the same run."""
        with self._tx() as conn:
            ids = [str(r["id"]) for r in conn.execute(
                f"SELECT id FROM runs WHERE {_LIVE} AND lease_owner<>%s AND (%s OR lease_owner='' OR lease_expiry < {_NOW}) "
                "ORDER BY seq LIMIT %s FOR UPDATE SKIP LOCKED", (owner, include_unexpired, limit)).fetchall()]
            if not ids:
                return []
            rows = conn.execute(f"UPDATE runs SET lease_owner=%s, lease_expiry={_NOW} + %s WHERE id = ANY(%s) RETURNING *",
                                (owner, lease_s, ids)).fetchall()
        return sorted((_row(r) for r in rows), key=lambda r: r.seq)

    # -- checkpoints ------------------------------------------------------------------------
    @_guarded
    def add_checkpoint(self, run_id: str, *, first_index: int, candidate_count: int, fingerprint: str, payload: bytes,
                       max_bytes: int = MAX_CHECKPOINT_BYTES_PER_RUN) -> bool:
        with self._tx() as conn:
            state = conn.execute("SELECT state FROM runs WHERE id=%s FOR UPDATE", (run_id,)).fetchone()
            if state is None or state["state"] in TERMINAL_STATES:
                return False
            used = conn.execute("SELECT COALESCE(SUM(length(payload)), 0) AS used FROM checkpoints WHERE run_id=%s AND first_index<>%s",
                                (run_id, first_index)).fetchone()
            if used is not None and int(used["used"]) + len(payload) > max_bytes:
                return False
            conn.execute("INSERT INTO checkpoints VALUES (%s, %s, %s, %s, %s) ON CONFLICT (run_id, first_index) DO UPDATE SET "
                         "candidate_count=EXCLUDED.candidate_count, fingerprint=EXCLUDED.fingerprint, payload=EXCLUDED.payload",
                         (run_id, first_index, candidate_count, fingerprint, payload))
        return True

    @_guarded
    def checkpoints(self, run_id: str) -> builtins.list[tuple[int, int, str, bytes]]:
        with self._conn() as conn:
            rows = conn.execute("SELECT first_index, candidate_count, fingerprint, payload FROM checkpoints WHERE run_id=%s "
                                "ORDER BY first_index", (run_id,)).fetchall()
        return [(int(r["first_index"]), int(r["candidate_count"]), str(r["fingerprint"]), bytes(r["payload"])) for r in rows]

    @_guarded
    def checkpoint_summary(self, run_id: str) -> tuple[int, int, int]:
        with self._conn() as conn:
            row = conn.execute("SELECT count(*) AS n, COALESCE(SUM(candidate_count), 0) AS c, COALESCE(SUM(length(payload)), 0) AS b "
                               "FROM checkpoints WHERE run_id=%s", (run_id,)).fetchone()
        assert row is not None
        return int(row["n"]), int(row["c"]), int(row["b"])

    @_guarded
    def drop_checkpoints(self, run_id: str) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM checkpoints WHERE run_id=%s", (run_id,))

    @_guarded
    def drop_stale_checkpoints(self) -> int:
        with self._conn() as conn:
            cur = conn.execute(f"DELETE FROM checkpoints c WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id=c.run_id AND r.{_LIVE})")
            return cur.rowcount

    # -- spans ------------------------------------------------------------------------------
    @_guarded
    def insert_spans(self, records: Iterable[dict[str, Any]]) -> None:
        rows = [
            (r["trace_id"], r["span_id"], r["parent_span_id"], r["name"], r["kind"], r["start_ns"], r["end_ns"], r["status"],
             json.dumps(r["attributes"], sort_keys=True), r["process"])
            for r in records
        ]
        if rows:
            with self._conn() as conn, conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO spans VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (trace_id, span_id) DO UPDATE SET "
                    "parent_span_id=EXCLUDED.parent_span_id, name=EXCLUDED.name, kind=EXCLUDED.kind, start_ns=EXCLUDED.start_ns, "
                    "end_ns=EXCLUDED.end_ns, status=EXCLUDED.status, attributes_json=EXCLUDED.attributes_json, process=EXCLUDED.process",
                    rows)

    @_guarded
    def spans(self, trace_id: str) -> builtins.list[dict[str, Any]]:
        with self._conn() as conn:
            rows = conn.execute("SELECT * FROM spans WHERE trace_id=%s ORDER BY start_ns", (trace_id,)).fetchall()
        return [{**r, "attributes": json.loads(r["attributes_json"])} for r in rows]


def _row(r: dict[str, Any]) -> RunRow:
    return RunRow(
        id=r["id"], seq=int(r["seq"]), state=r["state"], spec_json=r["spec_json"], progress_json=r["progress_json"],
        result_json=r["result_json"], trace_id=r["trace_id"], error_message=r["error_message"],
        error_reason=r["error_reason"], attempts=int(r["attempts"]), create_time=r["create_time"],
        update_time=r["update_time"], end_time=r["end_time"], creator=r["creator"], lease_owner=r["lease_owner"],
        lease_expiry=float(r["lease_expiry"]),
    )
