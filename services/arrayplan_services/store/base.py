"""What the planner, the server and the telemetry exporter use of a run store: ``PlanStore``.

Two backends implement it: ``sqlite.RunStore`` (one file under ``--data-dir``, the embedded
default, one server) and ``postgres.PostgresRunStore`` (``serve --store-url postgresql://...``,
shared by several planner replicas). ``open_store`` picks one.

Leases. A run that a server executes (or queues) carries a lease in the store: its owner (the
server's ``owner_id``) and an expiry on the store's clock. The owner renews it while it holds the
run; a run whose lease has expired (its server died) is claimed by another server and resumed from
its checkpoints. Taking a lease is one conditional UPDATE (PostgreSQL: on rows locked ``FOR UPDATE
SKIP LOCKED``), so at most one server holds a run at a time. A renew that finds the run terminal
(cancelled through another replica) or owned by someone else reports the lease lost, and the
owner stops the run without writing to it.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from .sql import MAX_CHECKPOINT_BYTES_PER_RUN, RunRow
from .sqlite import STORE_FILE, RunStore, check_store

#: The URL schemes ``--store-url`` accepts.
POSTGRES_SCHEMES = ("postgresql", "postgres")


class PlanStore(Protocol):
    """The run store as the planner, the servicer and the span exporter use it."""

    #: Whether several servers may share this store (then leases are renewed and orphans claimed).
    shared: bool
    healthy: bool
    condition: str

    @property
    def location(self) -> str:
        """Where the store is, for messages: a file path, or a URL without its password."""

    def add_listener(self, fn: Callable[[bool], None]) -> None: ...
    def probe(self) -> bool: ...
    def close(self) -> None: ...

    # runs
    def create(self, run_id: str, spec_json: str, trace_id: str, creator: str = "", *, lease_owner: str = "",
               lease_s: float = 0.0) -> RunRow: ...
    def exists(self, run_id: str) -> bool: ...
    def get(self, run_id: str) -> RunRow | None: ...
    def list(self, *, page_size: int, before_seq: int | None,
             creator: str | None = None) -> tuple[builtins.list[RunRow], int | None]: ...
    def set_state(self, run_id: str, state: str, *, trace_id: str | None = None, attempts_increment: bool = False) -> None: ...
    def forgive_attempt(self, run_id: str) -> None: ...
    def set_progress(self, run_id: str, progress: dict[str, Any]) -> None: ...
    def finish(self, run_id: str, state: str, *, result_json: str | None = None, error_message: str = "",
               error_reason: str = "", progress: dict[str, Any] | None = None) -> bool: ...
    def interrupted(self) -> builtins.list[RunRow]: ...

    # leases
    def take_lease(self, run_id: str, owner: str, lease_s: float) -> bool: ...
    def renew_leases(self, owner: str, run_ids: Iterable[str], lease_s: float) -> set[str]: ...
    def release_lease(self, run_id: str, owner: str) -> None: ...
    def claim_orphans(self, owner: str, lease_s: float, *, include_unexpired: bool = False,
                      limit: int = 64) -> builtins.list[RunRow]: ...

    # checkpoints
    def add_checkpoint(self, run_id: str, *, first_index: int, candidate_count: int, fingerprint: str, payload: bytes,
                       max_bytes: int = MAX_CHECKPOINT_BYTES_PER_RUN) -> bool: ...
    def checkpoints(self, run_id: str) -> builtins.list[tuple[int, int, str, bytes]]: ...
    def checkpoint_summary(self, run_id: str) -> tuple[int, int, int]: ...
    def drop_checkpoints(self, run_id: str) -> None: ...
    def drop_stale_checkpoints(self) -> int: ...

    # spans
    def insert_spans(self, records: Iterable[dict[str, Any]]) -> None: ...
    def spans(self, trace_id: str) -> builtins.list[dict[str, Any]]: ...


def is_postgres_url(url: str) -> bool:
    return url.split(":", 1)[0].lower() in POSTGRES_SCHEMES


def open_store(*, data_dir: Path, store_url: str | None = None) -> PlanStore:
    """The run store a server uses: PostgreSQL at ``store_url`` when given, else the SQLite file in
    ``data_dir`` (checked first: StoreDamagedError). Raises StoreUrlError / StoreConnectError
    (one line naming the URL without its password) when PostgreSQL cannot be used."""
    if store_url:
        from .postgres import PostgresRunStore  # psycopg is loaded only for a PostgreSQL store

        return PostgresRunStore(store_url)
    path = Path(data_dir) / STORE_FILE
    check_store(path)  # never serve over a damaged store
    return RunStore(path)
