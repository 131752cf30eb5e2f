"""The run store: SQLite in WAL mode, one row per plan run, plus the spans of every trace.

Plans are stored as protobuf JSON (spec, progress, result), so a stored run reads back exactly as
the API returned it. A run that was PENDING or RUNNING when the server died is found by
``interrupted()`` at start-up; the server resumes it once and marks it FAILED with reason
SERVER_RESTARTED if it is interrupted again, so no run is ever lost silently.

While a run is RUNNING its finished candidate batches are kept in ``checkpoints`` (one row per
batch: the evaluations, compressed, see ``checkpoints.py``), so a resumed run evaluates only the
candidates no batch finished. A run's checkpoints are deleted in the transaction that makes it
terminal, are written only while it is PENDING or RUNNING, and are bounded per run by
``MAX_CHECKPOINT_BYTES_PER_RUN``.

Each run also has a lease (``lease_owner``, ``lease_expiry``; base.py): one server uses a SQLite
store, so at start it claims every interrupted run whatever its lease says; the columns and
methods are there so both backends keep one contract (tests/services/test_store_backends.py).
They were added without a schema bump: an older server reads the runs table by column name and
ignores them.
"""

from __future__ import annotations

import builtins
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from .sql import DAMAGED, RunRow, SqlRunStore, guarded, row_of, schema

log = logging.getLogger(__name__)

SCHEMA_VERSION = 3
STORE_FILE = "runs.sqlite3"
# SQLite result codes that mean "the storage under the store is not usable right now" (a full or
# read-only file system, an I/O error), as opposed to a bug: the server answers UNAVAILABLE.
_UNAVAILABLE_CODES = {13: "full", 8: "read-only", 10: "failing (I/O error)", 14: "not openable"}
# SQLite result codes that mean the file itself is damaged (SQLITE_CORRUPT, SQLITE_NOTADB): no
# retry mends it; only a backup does (docs/service.md, "Backup and restore").
_DAMAGED_CODES = (11, 26)
# Problems listed from PRAGMA quick_check / integrity_check (SQLite lists up to this many).
_CHECK_ROWS = 10

_SCHEMA = ";\n".join(schema(serial_key="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL", bigint="INTEGER", blob="BLOB")) + ";\n"


class StoreDamagedError(Exception):
    """The run store file cannot be served as it is: damaged, not a SQLite database, not a regular
    file, or not readable and writable. ``str()`` is one line naming the file and what to do."""

    reason_code = "STORE_DAMAGED"

    def __init__(self, path: Path, problem: str, remedy: str) -> None:
        super().__init__(f"the run store {path} {problem}; {remedy}")
        self.path = Path(path)
        self.problem = problem
        self.remedy = remedy


def restore_remedy(path: Path) -> str:
    """What to do about a damaged store file: the restore command, with this store's data dir."""
    return (f"the server does not serve over it. Restore the last good backup with "
            f"`arrayplan store restore --data-dir {Path(path).parent} BACKUP_FILE` (it keeps the damaged file beside it; "
            f"backups come from `arrayplan store backup`: docs/service.md, 'Backup and restore')")


LOCK_FILE = "runs.lock"


def hold_live_lock(data_dir: Path) -> int | None:
    """A shared ``flock`` on ``DATA_DIR/runs.lock``, held while a store is open (by a server,
    ``--local`` or any process serving from it): ``store restore`` takes it exclusively and so
    refuses a live store. None where the lock file cannot be made (a read-only dir: the store
    itself then says why)."""
    import fcntl
    import os

    try:
        fd = os.open(Path(data_dir) / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # a restore holds it exclusively right now
        os.close(fd)
        raise StoreDamagedError(Path(data_dir) / STORE_FILE, "is being restored (arrayplan store restore holds its lock)",
                                "start the server when the restore has finished") from None
    return fd


def release_live_lock(fd: int | None) -> None:
    import os

    if fd is not None:
        try:
            os.close(fd)  # closing the descriptor releases the flock
        except OSError:
            pass


def live_store_holder(data_dir: Path) -> int | None:
    """Take ``DATA_DIR/runs.lock`` exclusively (for ``store restore``) and return its descriptor;
    raise StoreLiveError when a process holds the store open."""
    import fcntl
    import os

    data_dir = Path(data_dir)
    try:
        fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StoreLiveError(data_dir / STORE_FILE) from None
    return fd


class StoreLiveError(Exception):
    """``store restore`` onto a store a running server (or ``--local`` command) holds open."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"the run store {path} is open in a running server (it holds {Path(path).parent / LOCK_FILE}); "
                         "stop the server first: a restore under it is lost at its next restart (--force does not override this)")
        self.path = Path(path)


def schema_version_of(path: Path, conn: sqlite3.Connection) -> int | None:
    """The store's schema version (None for a new, empty store); StoreDamagedError, one line,
    for a version that is not a number or is newer than this server's."""
    try:
        has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'").fetchone()
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() if has_meta else None
    except sqlite3.DatabaseError as exc:
        if unavailable_condition(exc) == DAMAGED:
            raise StoreDamagedError(path, "is damaged", restore_remedy(path)) from None
        raise
    if row is None:
        return None
    text = str(row[0])[:40]
    try:
        version = int(text)
    except ValueError:
        raise StoreDamagedError(path, f"has a schema version that is not a number ({text!r})", restore_remedy(path)) from None
    if version > SCHEMA_VERSION or version < 1:
        raise StoreDamagedError(path, f"has schema version {version}, which this server (schema {SCHEMA_VERSION}) does not know",
                                "run the arrayplan release that wrote it, or restore a backup this release wrote "
                                f"(arrayplan store restore --data-dir {Path(path).parent} BACKUP_FILE)")
    return version


def check_store(path: Path, *, full: bool = False) -> None:
    """Raise StoreDamagedError unless ``path`` is absent, empty, or a SQLite database that passes
    ``PRAGMA quick_check`` (``full``: ``integrity_check``, which also compares every index with its
    table). quick_check walks every page of every b-tree once (0.1 s of CPU for a 205 MB store)."""
    import os

    path = Path(path)
    if not path.exists():
        return
    if not path.is_file():
        raise StoreDamagedError(path, "is not a regular file",
                                "move it aside (the server then starts a new, empty store there) or restore a backup into its place: "
                                f"arrayplan store restore --data-dir {path.parent} BACKUP_FILE")
    if not os.access(path, os.R_OK | os.W_OK):
        raise StoreDamagedError(path, f"is not readable and writable by this user (uid {os.getuid()})",
                                "give the server's user read and write access to it (chown or chmod u+rw) and start again")
    try:
        with open(path, "rb") as f:
            header = f.read(16)
    except OSError as exc:
        raise StoreDamagedError(path, f"cannot be read ({exc.strerror or type(exc).__name__})",
                                "check the disk and the file's permissions and start again") from None
    if header and header != b"SQLite format 3\x00":
        raise StoreDamagedError(path, "is not a SQLite database (its header is not 'SQLite format 3')", restore_remedy(path))
    pragma = "integrity_check" if full else "quick_check"
    try:
        # Read only: the check never writes to the file it judges (not even a WAL checkpoint).
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0, isolation_level=None)
        try:
            rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}({_CHECK_ROWS})").fetchall()]
            if rows == ["ok"]:
                schema_version_of(path, conn)  # a newer or non-numeric version: the same one line as serve's
        finally:
            conn.close()
    except sqlite3.Error as exc:
        condition = unavailable_condition(exc)
        if condition is not None and condition != DAMAGED:
            raise StoreDamagedError(path, f"cannot be checked: the storage is {condition} ({exc})",
                                    "check the disk and the file's permissions and start again") from None
        raise StoreDamagedError(path, f"is damaged ({exc})", restore_remedy(path)) from None
    problems = [r for r in rows if r != "ok"]
    if problems:
        shown = "; ".join(p[:200] for p in problems[:3]) + (f"; and {len(problems) - 3} more" if len(problems) > 3 else "")
        raise StoreDamagedError(path, f"is damaged (PRAGMA {pragma}: {shown})", restore_remedy(path))


def count_plans(path: Path) -> int:
    """How many plans the store file holds (read only)."""
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    try:
        return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    finally:
        conn.close()


def _copy_store(src_path: Path, dst_path: Path, *, check_as: Path | None = None) -> int:
    """Copy the store ``src_path`` (read only) into the new file ``dst_path`` with SQLite's backup
    API in one step (one read transaction), as a self-contained rollback-journal file, synced;
    with ``check_as``, quick_check the copy first (a failure names ``check_as``). Returns the plans
    copied."""
    import os

    src = sqlite3.connect(f"{Path(src_path).resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
    dst = sqlite3.connect(dst_path, isolation_level=None)
    try:
        src.backup(dst)  # pages=-1: every page in one step, from one read transaction
        dst.execute("PRAGMA journal_mode=DELETE")
        if check_as is not None:
            rows = [str(r[0]) for r in dst.execute(f"PRAGMA quick_check({_CHECK_ROWS})").fetchall()]
            if rows != ["ok"]:
                raise StoreDamagedError(check_as, f"(the new backup) failed PRAGMA quick_check: {'; '.join(rows[:3])}",
                                        "nothing was written; check the disk it is written to")
        plans = int(dst.execute("SELECT count(*) FROM runs").fetchone()[0])
    finally:
        dst.close()
        src.close()
    with open(dst_path, "rb") as f:
        os.fsync(f.fileno())
    return plans


def _fsync_dir(path: Path) -> None:
    """Make a rename in the directory ``path`` durable."""
    import os

    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def backup_store(path: Path, out: Path) -> int:
    """Copy the store at ``path`` to the new file ``out`` with SQLite's online backup API and
    return the plans copied. Safe while a server writes: the copy is one read transaction, so it
    is the store as of one commit (in WAL mode the server keeps writing meanwhile). The copy is
    checked (quick_check), made a self-contained rollback-journal file, synced, then renamed into
    place, so ``out`` is either absent or a whole backup."""
    import os

    path, out = Path(path), Path(out)
    check_store(path)
    if not path.is_file():
        raise FileNotFoundError(f"no run store at {path}")
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    partial.unlink(missing_ok=True)
    try:
        plans = _copy_store(path, partial, check_as=out)
        os.replace(partial, out)
        _fsync_dir(out.parent)
    finally:
        partial.unlink(missing_ok=True)
    return plans


def restore_store(backup: Path, data_dir: Path, *, force: bool = False) -> tuple[int, list[Path]]:
    """Put the backup file ``backup`` in place as ``data_dir``'s run store; return the plans it
    holds and where the files it replaced were moved (nothing is deleted). The server must be
    stopped. The backup must pass ``integrity_check``; a store in place that passes quick_check is
    replaced only with ``force`` (it may hold plans newer than the backup)."""

    backup, data_dir = Path(backup), Path(data_dir)
    if not backup.is_file():
        raise FileNotFoundError(f"no backup file at {backup}")
    check_store(backup, full=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = live_store_holder(data_dir)  # StoreLiveError while a server holds the store: --force does not override it
    try:
        return _restore_unlocked(backup, data_dir, force=force)
    finally:
        release_live_lock(lock)


def _restore_unlocked(backup: Path, data_dir: Path, *, force: bool) -> tuple[int, list[Path]]:
    import os

    target = data_dir / STORE_FILE
    if target.exists() and not force:
        try:
            check_store(target)
        except StoreDamagedError:
            pass
        else:
            raise FileExistsError(f"the run store {target} passes quick_check: restoring would set aside the plans stored since the "
                                  "backup was taken; pass --force to restore anyway (the current files are kept beside it)")
    data_dir.mkdir(parents=True, exist_ok=True)
    # The copy is made first, beside the store: if it fails, nothing in the data dir has moved.
    partial = data_dir / f".{STORE_FILE}.restoring-{os.getpid()}"
    moved: list[Path] = []
    try:
        plans = _copy_store(backup, partial)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        if any((data_dir / f"{STORE_FILE}.replaced-{stamp}{s}").exists() for s in ("", "-wal", "-shm")):
            stamp += f"-{os.getpid()}"
        # The WAL and shared-memory files move with the store under the same new name (so the
        # set-aside store still opens with its WAL); a stale WAL must never meet the restored file.
        for suffix in ("", "-wal", "-shm"):
            old = data_dir / f"{STORE_FILE}{suffix}"
            if old.exists() or old.is_symlink():
                aside = data_dir / f"{STORE_FILE}.replaced-{stamp}{suffix}"
                os.replace(old, aside)
                moved.append(aside)
        os.replace(partial, target)
        _fsync_dir(data_dir)
    finally:
        partial.unlink(missing_ok=True)
    return plans, moved


def unavailable_condition(exc: BaseException) -> str | None:
    """Why ``exc`` means the storage is unusable, or None when it is some other error."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None and (code & 0xFF) in _UNAVAILABLE_CODES:
            return _UNAVAILABLE_CODES[code & 0xFF]
        if code is not None and (code & 0xFF) in _DAMAGED_CODES:
            return DAMAGED
        text = str(exc).lower()
        for needle, condition in (("disk is full", "full"), ("readonly", "read-only"), ("read-only", "read-only"),
                                  ("disk i/o error", "failing (I/O error)"), ("unable to open", "not openable"),
                                  ("malformed", DAMAGED), ("not a database", DAMAGED)):
            if needle in text:
                return condition
    if isinstance(exc, OSError) and exc.errno is not None:
        import errno

        if exc.errno == errno.ENOSPC:
            return "full"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "read-only"
        if exc.errno == errno.EIO:
            return "failing (I/O error)"
    return None


def check_data_dir(data_dir: Path) -> str | None:
    """One line saying why ``data_dir`` cannot hold the run store, or None when it can."""
    import errno
    import os

    data_dir = Path(data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        return f"{data_dir} is not a directory"
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / f".write-probe-{os.getpid()}"
        with open(probe, "wb") as f:
            f.write(b"\0" * 4096)
            f.flush()
            os.fsync(f.fileno())
        probe.unlink()
    except OSError as exc:
        why = {errno.ENOSPC: "the file system is full", errno.EROFS: "the file system is read-only",
               errno.EACCES: "permission denied", errno.EPERM: "permission denied", errno.EDQUOT: "the disk quota is used up"}
        return f"{data_dir}: {why.get(exc.errno or 0, exc.strerror or type(exc).__name__)}"
    db = data_dir / STORE_FILE
    if db.exists() and not os.access(db, os.R_OK | os.W_OK):
        return (f"{db} is not readable and writable by this user (uid {os.getuid()}); give the server's user read and write "
                "access to it (chown or chmod u+rw) and start again")
    return None


class RunStore(SqlRunStore):
    """Thread-safe access to the SQLite file (one connection per thread)."""

    #: One server per SQLite file: leases are not renewed and every interrupted run is its own.
    shared = False
    _PARAM = "?"
    # the machine's clock in seconds since the epoch (julianday is fixed within one statement)
    _NOW = "((julianday('now') - 2440587.5) * 86400.0)"
    _LOCK_ROW = ""  # BEGIN IMMEDIATE (``_Tx``) already holds the write lock
    _DUPLICATE = (sqlite3.IntegrityError,)
    _PROBE = "INSERT OR REPLACE INTO meta VALUES ('last_probe', ?)"
    _DRIVER_ERRORS = (sqlite3.Error, OSError)
    _condition = staticmethod(unavailable_condition)

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self.healthy = True
        self.condition = ""
        self._listeners: list[Callable[[bool], None]] = []
        self._lock_fd = hold_live_lock(self.path.parent)
        try:
            schema_version_of(self.path, self._raw())  # a newer or unreadable version: one line, before anything is written
            self._raw().executescript(_SCHEMA)
            with self._conn() as conn:
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                if row is None:
                    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                # Migrations, in order, from every released schema (a fixture store per schema in
                # tests/data/stores is opened by the suite). Each step tests what it adds, so a store
                # stopped half-way through an older upgrade continues.
                columns = {r[1] for r in conn.execute("PRAGMA table_info(runs)").fetchall()}
                if "creator" not in columns:  # schema 1 -> 2: plans record who created them
                    conn.execute("ALTER TABLE runs ADD COLUMN creator TEXT NOT NULL DEFAULT ''")
                # schema 2 -> 3: the checkpoints table, created above by _SCHEMA (CREATE TABLE IF NOT EXISTS).
                if "lease_owner" not in columns:  # leases (additive: older servers ignore the columns)
                    conn.execute("ALTER TABLE runs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT ''")
                    conn.execute("ALTER TABLE runs ADD COLUMN lease_expiry REAL NOT NULL DEFAULT 0")
                # indexes on migrated columns come after the columns (schema 1 has no creator)
                conn.execute("CREATE INDEX IF NOT EXISTS runs_by_creator ON runs (creator, seq)")
                conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION),))
        except BaseException:
            release_live_lock(self._lock_fd)
            self._lock_fd = None
            raise

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        """Close this thread's connection (the others close with their threads) and release the
        live-store lock (the server is stopping)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        release_live_lock(getattr(self, "_lock_fd", None))
        self._lock_fd = None

    # -- health -----------------------------------------------------------------------------
    def probe(self) -> bool:
        """Try one small write; marks the store healthy again when it works. A store found damaged
        stays unhealthy: a write to an undamaged page proves nothing, and only a restore mends it."""
        if self.condition == DAMAGED:
            return False
        return super().probe()

    def _conn(self) -> sqlite3.Connection:
        return _Tx(self._raw())  # type: ignore[return-value]

    def _raw(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn

    def _tx(self) -> sqlite3.Connection:
        return self._conn()  # every call is a transaction already

    def _fault(self, exc: BaseException) -> str | None:
        return unavailable_condition(exc) if isinstance(exc, sqlite3.Error | OSError) else None

    # -- leases (one UPDATE a run: SQLite binds no arrays) -----------------------------------
    @guarded
    def renew_leases(self, owner: str, run_ids: Iterable[str], lease_s: float) -> set[str]:
        """Extend ``owner``'s leases on ``run_ids``; returns the ids whose lease is lost (the run is
        terminal or gone, or another server holds it)."""
        ids = set(run_ids)
        if not ids:
            return set()
        kept: set[str] = set()
        with self._conn() as conn:
            for run_id in ids:
                cur = conn.execute(self._q("UPDATE runs SET lease_expiry={now} + ? WHERE id=? AND lease_owner=? AND {live}"),
                                   (lease_s, run_id, owner))
                if cur.rowcount == 1:
                    kept.add(run_id)
        return ids - kept

    @guarded
    def claim_orphans(self, owner: str, lease_s: float, *, include_unexpired: bool = False,
                      limit: int = 64) -> builtins.list[RunRow]:
        """Take the leases of PENDING/RUNNING runs nobody holds (free or expired; with
        ``include_unexpired``, every one not already ``owner``'s), oldest first; returns them.
        One transaction (BEGIN IMMEDIATE): no other writer sees the rows in between."""
        with self._conn() as conn:
            rows = conn.execute(self._q("SELECT id FROM runs WHERE {live} AND lease_owner<>? "
                                        "AND (? OR lease_owner='' OR lease_expiry < {now}) ORDER BY seq LIMIT ?"),
                                (owner, 1 if include_unexpired else 0, limit)).fetchall()
            claimed = [conn.execute(self._q("UPDATE runs SET lease_owner=?, lease_expiry={now} + ? WHERE id=? RETURNING *"),
                                    (owner, lease_s, str(r["id"]))).fetchall()[0] for r in rows]
        return [row_of(r) for r in claimed]


class _Tx:
    """``with`` wrapper: BEGIN IMMEDIATE / COMMIT on a connection in autocommit mode."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
