"""The SQL both run-store backends share: one class, ``SqlRunStore``, holds every query whose
text is the same on SQLite and PostgreSQL, written once with ``?`` placeholders.

A backend (``sqlite.RunStore``, ``postgres.PostgresRunStore``) supplies:

* ``_PARAM``: its placeholder (``?`` or ``%s``); ``_q`` rewrites the shared text once per query.
* ``_NOW``: an SQL expression for "now" in seconds since the epoch on the store's clock (the
  database's, so replicas whose clocks differ agree on when a lease expires).
* ``_LOCK_ROW``: the clause that locks a row read in a transaction (``FOR UPDATE``; SQLite's
  ``BEGIN IMMEDIATE`` already holds the write lock, so nothing).
* ``_conn()``: a connection for one call, ``_tx()``: one in a transaction (SQLite's ``_conn`` is
  one), and ``_guarded``-style fault handling around each public method (``guarded`` below, with
  the backend's ``_fault`` deciding which driver errors mean the storage is unusable).

Rows are read by column name (``sqlite3.Row`` and psycopg's ``dict_row`` both allow it), so one
``row_of`` builds a ``RunRow`` from either. The tables are written once too (``schema``, with each
dialect's types). What stays backend-specific is what differs on purpose: extra indexes, schema
set-up and migration, connections and health probes, renewing many leases at once
(PostgreSQL's ``= ANY(array)``) and claiming orphans (``FOR UPDATE SKIP LOCKED``).
"""

from __future__ import annotations

import builtins
import functools
import json
import logging
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from arrayplan_engine.errors import InvalidInputError

log = logging.getLogger(__name__)

# Compressed checkpoint bytes one run may hold; past it the run goes on unsaved (resume re-evaluates
# the rest). 20,000 candidates (the default limit) take about 10 MB.
MAX_CHECKPOINT_BYTES_PER_RUN = 64 << 20
DAMAGED = "damaged"


def schema(*, serial_key: str, real: str, bigint: str, blob: str) -> tuple[str, ...]:
    """The tables both backends keep (meta, runs, spans, checkpoints) and the index on spans, as
    statements of one dialect: ``serial_key`` is the runs' auto-increment primary key, ``real`` a
    float, ``bigint`` a 64-bit integer, ``blob`` bytes. A backend adds its own indexes and runs
    them under its own migration."""
    return (
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"""CREATE TABLE IF NOT EXISTS runs (
    seq {serial_key},
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    progress_json TEXT NOT NULL DEFAULT '{{}}',
    result_json TEXT,
    trace_id TEXT NOT NULL DEFAULT '',
    error_message TEXT NOT NULL DEFAULT '',
    error_reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    create_time {real} NOT NULL,
    update_time {real} NOT NULL,
    end_time {real},
    creator TEXT NOT NULL DEFAULT '',
    lease_owner TEXT NOT NULL DEFAULT '',
    lease_expiry {real} NOT NULL DEFAULT 0
)""",
        f"""CREATE TABLE IF NOT EXISTS spans (
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    parent_span_id TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    start_ns {bigint} NOT NULL,
    end_ns {bigint} NOT NULL,
    status TEXT NOT NULL,
    attributes_json TEXT NOT NULL,
    process TEXT NOT NULL,
    PRIMARY KEY (trace_id, span_id)
)""",
        "CREATE INDEX IF NOT EXISTS spans_by_trace ON spans (trace_id, start_ns)",
        f"""CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT NOT NULL,
    first_index INTEGER NOT NULL,
    candidate_count INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    payload {blob} NOT NULL,
    PRIMARY KEY (run_id, first_index)
)""",
    )
TERMINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELLED"})
#: A run that may still change: queued or executing.
LIVE = "state IN ('PENDING', 'RUNNING')"


class StoreUrlError(ValueError):
    """``--store-url`` is not a PostgreSQL URL this server can use (one line, no password)."""

    reason_code = "STORE_URL"


class StoreConnectError(Exception):
    """The PostgreSQL store cannot be opened at start: unreachable, refused, bad credentials, a
    newer schema. ``str()`` is one line naming the URL without its password."""

    reason_code = "STORE_UNREACHABLE"


class StoreUnavailableError(Exception):
    """The run store cannot write (disk full, read-only, I/O error, database unreachable): retry
    later. A store found damaged while serving (condition ``damaged``) is unavailable until an
    operator restores it."""

    reason_code = "STORE_UNAVAILABLE"

    def __init__(self, condition: str) -> None:
        if condition == DAMAGED:
            super().__init__("the run store is damaged; the server is not accepting work until an operator restores it "
                             "from a backup (docs/service.md, 'Backup and restore')")
        else:
            super().__init__(f"the run store is {condition}; the server is not accepting work until it recovers (retry later)")
        self.condition = condition


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRow:
    id: str
    seq: int
    state: str
    spec_json: str
    progress_json: str
    result_json: str | None
    trace_id: str
    error_message: str
    error_reason: str
    attempts: int
    create_time: float
    update_time: float
    end_time: float | None
    creator: str = ""
    #: The server holding the run ('' when none) and until when, in seconds on the store's clock.
    lease_owner: str = ""
    lease_expiry: float = 0.0


def row_of(r: Any) -> RunRow:
    """A ``RunRow`` from a runs row read by column name (either backend)."""
    return RunRow(
        id=str(r["id"]), seq=int(r["seq"]), state=str(r["state"]), spec_json=r["spec_json"], progress_json=r["progress_json"],
        result_json=r["result_json"], trace_id=r["trace_id"], error_message=r["error_message"],
        error_reason=r["error_reason"], attempts=int(r["attempts"]), create_time=float(r["create_time"]),
        update_time=float(r["update_time"]), end_time=None if r["end_time"] is None else float(r["end_time"]),
        creator=r["creator"], lease_owner=r["lease_owner"], lease_expiry=float(r["lease_expiry"]),
    )


_F = TypeVar("_F", bound=Callable[..., Any])


@functools.lru_cache(maxsize=256)
def _dialect(sql: str, param: str, now: str, lock: str) -> str:
    text = sql.replace("{now}", now).replace("{lock}", lock).replace("{live}", LIVE)
    return text if param == "?" else text.replace("?", param)


def guarded(fn: _F) -> _F:
    """Storage faults become StoreUnavailableError and flip the store's health (the backend's
    ``_fault`` names the condition, or None for an error that is a bug and is raised as it is)."""

    @functools.wraps(fn)
    def wrapper(self: SqlRunStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except Exception as exc:
            condition = self._fault(exc)
            if condition is None:
                raise
            self._set_healthy(False, condition)
            raise StoreUnavailableError(condition) from None

    return cast(_F, wrapper)


class SqlRunStore:
    """The queries the SQLite and PostgreSQL run stores share (see the module docstring)."""

    _PARAM = "?"
    _NOW = ""
    _LOCK_ROW = ""
    #: The driver's error for a second run with the same id.
    _DUPLICATE: tuple[type[BaseException], ...] = ()
    healthy: bool
    condition: str
    _listeners: builtins.list[Callable[[bool], None]]

    @property
    def location(self) -> str:
        raise NotImplementedError

    # -- what a backend supplies ------------------------------------------------------------
    def _conn(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _tx(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    #: A health probe's small write (``?`` for the time), and the driver errors it may raise.
    _PROBE = ""
    _DRIVER_ERRORS: tuple[type[BaseException], ...] = ()

    def probe(self) -> bool:
        """Try one small write; marks the store healthy again when it works, unhealthy (with the
        condition) when the storage is unusable. Any other error is a bug and is raised."""
        try:
            with self._conn() as conn:
                conn.execute(self._q(self._PROBE), (repr(time.time()),))
        except self._DRIVER_ERRORS as exc:
            condition = self._condition(exc)
            if condition is None:
                raise
            self._set_healthy(False, condition)
            return False
        self._set_healthy(True)
        return True

    @staticmethod
    def _condition(exc: BaseException) -> str | None:
        """Why a driver error means the storage is unusable now, or None (the backend's)."""
        raise NotImplementedError

    def _fault(self, exc: BaseException) -> str | None:
        raise NotImplementedError

    # -- health (both backends) ----------------------------------------------------------------
    def add_listener(self, fn: Callable[[bool], None]) -> None:
        """``fn(healthy)`` is called whenever the store becomes unusable or usable again."""
        self._listeners.append(fn)

    def _set_healthy(self, healthy: bool, condition: str = "") -> None:
        if healthy == self.healthy:
            if condition == DAMAGED:  # damage outranks a full disk or a lost link: it does not clear by itself
                self.condition = condition
            return
        self.healthy = healthy
        self.condition = condition
        if healthy:
            log.warning("run store %s is usable again", self.location)
        else:
            log.error("run store %s is %s: answering UNAVAILABLE until it recovers", self.location, condition)
        for fn in self._listeners:
            fn(healthy)

    def _q(self, sql: str) -> str:
        """``sql`` (``?`` placeholders, ``{now}`` for the store's clock, ``{lock}`` for a row
        lock, ``{live}`` for a run that may still change) in this backend's dialect."""
        return _dialect(sql, self._PARAM, self._NOW, self._LOCK_ROW)

    def _all(self, sql: str, params: tuple[Any, ...] = ()) -> builtins.list[Any]:
        with self._conn() as conn:
            return cast(builtins.list[Any], conn.execute(self._q(sql), params).fetchall())

    def _one(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        rows = self._all(sql, params)  # every row read before the transaction ends (RETURNING)
        return rows[0] if rows else None

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> int:
        """Execute one statement; returns the rows it changed."""
        with self._conn() as conn:
            return int(conn.execute(self._q(sql), params).rowcount)

    # -- runs -------------------------------------------------------------------------------
    @guarded
    def create(self, run_id: str, spec_json: str, trace_id: str, creator: str = "", *, lease_owner: str = "",
               lease_s: float = 0.0) -> RunRow:
        now = time.time()
        try:
            row = self._one(
                "INSERT INTO runs (id, state, spec_json, trace_id, create_time, update_time, creator, lease_owner, lease_expiry) "
                "VALUES (?, 'PENDING', ?, ?, ?, ?, ?, ?, CASE WHEN ? = '' THEN 0 ELSE {now} + ? END) RETURNING *",
                (run_id, spec_json, trace_id, now, now, creator, lease_owner, lease_owner, lease_s))
        except self._DUPLICATE:
            # Two servers given the same plan_id at once: the second hears it exists, as it would after.
            raise InvalidInputError.one("plan_id", f"plans/{run_id} already exists") from None
        assert row is not None
        return row_of(row)

    @guarded
    def exists(self, run_id: str) -> bool:
        return self._one("SELECT 1 FROM runs WHERE id=?", (run_id,)) is not None

    @guarded
    def get(self, run_id: str) -> RunRow | None:
        row = self._one("SELECT * FROM runs WHERE id=?", (run_id,))
        return row_of(row) if row else None

    @guarded
    def list(self, *, page_size: int, before_seq: int | None, creator: str | None = None) -> tuple[builtins.list[RunRow], int | None]:
        """Newest first, only ``creator``'s runs unless None; returns the page and the seq to
        continue before (None at the end)."""
        where: builtins.list[str] = []
        params: builtins.list[object] = []
        if before_seq is not None:
            where.append("seq < ?")
            params.append(before_seq)
        if creator is not None:
            where.append("creator = ?")
            params.append(creator)
        sql = "SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY seq DESC LIMIT ?"
        rows = self._all(sql, (*params, page_size + 1))
        out = [row_of(r) for r in rows[:page_size]]
        return out, (out[-1].seq if len(rows) > page_size else None)

    @guarded
    def set_state(self, run_id: str, state: str, *, trace_id: str | None = None, attempts_increment: bool = False) -> None:
        self._run("UPDATE runs SET state=?, trace_id=COALESCE(?, trace_id), attempts=attempts+?, update_time=? WHERE id=?",
                  (state, trace_id, 1 if attempts_increment else 0, time.time(), run_id))

    @guarded
    def forgive_attempt(self, run_id: str) -> None:
        """A clean hand-over (SIGTERM: checkpointed, lease released) is not a crash: take back the
        attempt the run's start counted, so only crashes count towards MAX_RESUME_ATTEMPTS."""
        self._run("UPDATE runs SET attempts=CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END WHERE id=? AND {live}", (run_id,))

    @guarded
    def set_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        # Not once the run is terminal: a server that lost the run may still report a batch.
        self._run("UPDATE runs SET progress_json=?, update_time=? WHERE id=? AND {live}", (json.dumps(progress), time.time(), run_id))

    @guarded
    def finish(self, run_id: str, state: str, *, result_json: str | None = None, error_message: str = "",
               error_reason: str = "", progress: dict[str, Any] | None = None) -> bool:
        """Move a run to a terminal state unless it is already terminal, releasing its lease and
        dropping its checkpoints in the same transaction. Returns whether it moved."""
        assert state in TERMINAL_STATES
        now = time.time()
        with self._tx() as conn:
            if progress is not None:
                conn.execute(self._q("UPDATE runs SET progress_json=? WHERE id=? AND {live}"), (json.dumps(progress), run_id))
            cur = conn.execute(self._q(
                "UPDATE runs SET state=?, result_json=COALESCE(?, result_json), error_message=?, error_reason=?, update_time=?, "
                "end_time=?, lease_owner='', lease_expiry=0 WHERE id=? AND {live}"),
                (state, result_json, error_message, error_reason, now, now, run_id))
            conn.execute(self._q("DELETE FROM checkpoints WHERE run_id=?"), (run_id,))
            return int(cur.rowcount) == 1

    @guarded
    def interrupted(self) -> builtins.list[RunRow]:
        return [row_of(r) for r in self._all("SELECT * FROM runs WHERE {live} ORDER BY seq")]

    # -- leases -----------------------------------------------------------------------------
    @guarded
    def take_lease(self, run_id: str, owner: str, lease_s: float) -> bool:
        """Hold the run's lease for ``lease_s`` from now if it is free, expired or already
        ``owner``'s and the run is not terminal. Returns whether ``owner`` holds it."""
        return self._run("UPDATE runs SET lease_owner=?, lease_expiry={now} + ? WHERE id=? AND {live} "
                         "AND (lease_owner='' OR lease_owner=? OR lease_expiry < {now})", (owner, lease_s, run_id, owner)) == 1

    @guarded
    def release_lease(self, run_id: str, owner: str) -> None:
        self._run("UPDATE runs SET lease_owner='', lease_expiry=0 WHERE id=? AND lease_owner=?", (run_id, owner))

    def renew_leases(self, owner: str, run_ids: Iterable[str], lease_s: float) -> set[str]:
        raise NotImplementedError

    # -- checkpoints ------------------------------------------------------------------------
    @guarded
    def add_checkpoint(self, run_id: str, *, first_index: int, candidate_count: int, fingerprint: str, payload: bytes,
                       max_bytes: int = MAX_CHECKPOINT_BYTES_PER_RUN) -> bool:
        """Store one finished batch of a PENDING or RUNNING run. Returns False (nothing written)
        when the run is terminal or gone, or its checkpoints would pass ``max_bytes``."""
        with self._tx() as conn:
            state = conn.execute(self._q("SELECT state FROM runs WHERE id=? {lock}"), (run_id,)).fetchone()
            if state is None or state["state"] in TERMINAL_STATES:
                return False
            used = conn.execute(self._q("SELECT COALESCE(SUM(length(payload)), 0) AS used FROM checkpoints "
                                        "WHERE run_id=? AND first_index<>?"), (run_id, first_index)).fetchone()
            if int(used["used"]) + len(payload) > max_bytes:
                return False
            conn.execute(self._q("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, first_index) DO UPDATE SET "
                                 "candidate_count=EXCLUDED.candidate_count, fingerprint=EXCLUDED.fingerprint, payload=EXCLUDED.payload"),
                         (run_id, first_index, candidate_count, fingerprint, payload))
        return True

    @guarded
    def checkpoints(self, run_id: str) -> builtins.list[tuple[int, int, str, bytes]]:
        """A run's checkpoints as (first_index, candidate_count, fingerprint, payload), by index."""
        rows = self._all("SELECT first_index, candidate_count, fingerprint, payload FROM checkpoints WHERE run_id=? "
                         "ORDER BY first_index", (run_id,))
        return [(int(r["first_index"]), int(r["candidate_count"]), str(r["fingerprint"]), bytes(r["payload"])) for r in rows]

    @guarded
    def checkpoint_summary(self, run_id: str) -> tuple[int, int, int]:
        """(batches, candidates, payload bytes) checkpointed for a run."""
        row = self._one("SELECT count(*) AS n, COALESCE(SUM(candidate_count), 0) AS c, COALESCE(SUM(length(payload)), 0) AS b "
                        "FROM checkpoints WHERE run_id=?", (run_id,))
        return int(row["n"]), int(row["c"]), int(row["b"])

    @guarded
    def drop_checkpoints(self, run_id: str) -> None:
        self._run("DELETE FROM checkpoints WHERE run_id=?", (run_id,))

    @guarded
    def drop_stale_checkpoints(self) -> int:
        """Delete checkpoints whose run is terminal or gone (an older server finished it); returns
        the rows deleted."""
        return self._run("DELETE FROM checkpoints WHERE NOT EXISTS "
                         "(SELECT 1 FROM runs WHERE runs.id=checkpoints.run_id AND runs.{live})")

    # -- spans ------------------------------------------------------------------------------
    @guarded
    def insert_spans(self, records: Iterable[dict[str, Any]]) -> None:
        rows = [
            (r["trace_id"], r["span_id"], r["parent_span_id"], r["name"], r["kind"], r["start_ns"], r["end_ns"], r["status"],
             json.dumps(r["attributes"], sort_keys=True), r["process"])
            for r in records
        ]
        if not rows:
            return
        with self._conn() as conn:
            cur = conn.cursor()
            try:
                cur.executemany(self._q(
                    "INSERT INTO spans VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (trace_id, span_id) DO UPDATE SET "
                    "parent_span_id=EXCLUDED.parent_span_id, name=EXCLUDED.name, kind=EXCLUDED.kind, start_ns=EXCLUDED.start_ns, "
                    "end_ns=EXCLUDED.end_ns, status=EXCLUDED.status, attributes_json=EXCLUDED.attributes_json, "
                    "process=EXCLUDED.process"), rows)
            finally:
                cur.close()

    @guarded
    def spans(self, trace_id: str) -> builtins.list[dict[str, Any]]:
        rows = self._all("SELECT * FROM spans WHERE trace_id=? ORDER BY start_ns", (trace_id,))
        return [{**dict(r), "attributes": json.loads(r["attributes_json"])} for r in rows]
