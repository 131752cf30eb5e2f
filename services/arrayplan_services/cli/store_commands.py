"""``arrayplan store``: check, back up and restore the run store (``DATA_DIR/runs.sqlite3``).

* ``store check --data-dir D [--full]``: ``PRAGMA quick_check`` (``integrity_check`` with
  ``--full``), the check ``serve`` makes at start. Exit 0 sound, 2 damaged (one line: the file and
  what to do).
* ``store backup --data-dir D OUT``: a copy by SQLite's online backup API, safe while a server
  writes (the copy is the store as of one commit), checked and renamed into place whole. ``OUT``
  is a new file, or a directory for a time-stamped file in it.
* ``store restore --data-dir D BACKUP [--force]``: with the server stopped, the backup (which must
  pass ``integrity_check``) becomes the store; the files it replaces are kept beside it.

docs/service.md ("Backup and restore") is the procedure.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from .common import DEFAULT_DATA_DIR, EXIT_BAD_INPUT, EXIT_ERROR, EXIT_OK, add_verbs, err


def cmd_store_check(args: argparse.Namespace) -> int:
    from ..store import STORE_FILE, StoreDamagedError, check_store, count_plans

    path = Path(args.data_dir) / STORE_FILE
    if not path.exists():
        err(f"no run store at {path} (--data-dir names the directory that holds {STORE_FILE})")
        return EXIT_BAD_INPUT
    try:
        check_store(path, full=args.full)
        plans = count_plans(path)
    except StoreDamagedError as exc:
        err(str(exc))
        return EXIT_BAD_INPUT
    print(f"{path}: ok ({'integrity_check' if args.full else 'quick_check'}), {plans} plan(s)")
    return EXIT_OK


def cmd_store_backup(args: argparse.Namespace) -> int:
    from ..store import STORE_FILE, StoreDamagedError, backup_store

    path = Path(args.data_dir) / STORE_FILE
    out = Path(args.out)
    if args.out.endswith(("/", os.sep)):  # "backups/": a directory, made when missing
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            err(f"cannot make the backup directory {out}: {exc.strerror or exc}")
            return EXIT_ERROR
    if out.is_dir():
        out = out / f"runs-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.sqlite3"
    if out.exists() or out.is_symlink():
        err(f"{out} exists; a backup never overwrites a file (name a new file, or a directory for a time-stamped one)")
        return EXIT_BAD_INPUT
    if not out.parent.is_dir():
        err(f"{out.parent} is not a directory")
        return EXIT_BAD_INPUT
    if not path.is_file():
        err(f"no run store at {path} (--data-dir names the directory that holds {STORE_FILE})")
        return EXIT_BAD_INPUT
    try:
        plans = backup_store(path, out)
    except StoreDamagedError as exc:
        err(f"no backup written: {exc}")
        return EXIT_BAD_INPUT
    except OSError as exc:
        err(f"no backup written: {out}: {exc.strerror or exc}")
        return EXIT_ERROR
    print(f"backed up {path} to {out}: {plans} plan(s), quick_check ok")
    return EXIT_OK


def cmd_store_restore(args: argparse.Namespace) -> int:
    from ..store import STORE_FILE, StoreDamagedError, StoreLiveError, restore_store

    try:
        plans, moved = restore_store(Path(args.backup), Path(args.data_dir), force=args.force)
    except StoreLiveError as exc:
        err(f"not restored: {exc}")
        return EXIT_BAD_INPUT
    except StoreDamagedError as exc:
        if exc.path == Path(args.backup):
            err(f"not restored: the backup {exc.path} {exc.problem}; restore another backup (nothing was changed)")
        else:
            err(f"not restored: {exc}")
        return EXIT_BAD_INPUT
    except (FileNotFoundError, FileExistsError) as exc:
        err(f"not restored: {exc}")
        return EXIT_BAD_INPUT
    except OSError as exc:
        err(f"not restored: {exc.strerror or exc} ({exc.filename or args.data_dir})")
        return EXIT_ERROR
    target = Path(args.data_dir) / STORE_FILE
    print(f"restored {args.backup} to {target}: {plans} plan(s), integrity_check ok")
    for m in moved:
        print(f"  kept the replaced file as {m}")
    return EXIT_OK


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("store", help="check, back up and restore the run store (runs.sqlite3)",
                              description="Check, back up and restore the SQLite run store of a data dir "
                                          "(docs/service.md, 'Backup and restore').")
    verbs = add_verbs(p, "store_command")
    data_dir_help = "the directory that holds runs.sqlite3 (default $ARRAYPLAN_DATA_DIR or ./data, as serve)"

    c = verbs.add_parser("check", help="PRAGMA quick_check of the store, as serve does at start (exit 2 when damaged)")
    c.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=data_dir_help)
    c.add_argument("--full", action="store_true", help="PRAGMA integrity_check: also compare every index with its table (slower)")
    c.set_defaults(func=cmd_store_check)

    b = verbs.add_parser("backup", help="copy the store with SQLite's online backup API (safe while the server runs)")
    b.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=data_dir_help)
    b.add_argument("out", metavar="OUT",
                   help="a new file, or a directory (made when OUT ends with /) for runs-YYYYMMDDTHHMMSSZ.sqlite3 in it")
    b.set_defaults(func=cmd_store_backup)

    r = verbs.add_parser("restore", help="with the server stopped: make a backup the store (the replaced files are kept)")
    r.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help=data_dir_help)
    r.add_argument("backup", type=Path, metavar="BACKUP", help="a file `arrayplan store backup` wrote")
    r.add_argument("--force", action="store_true",
                   help="replace a store that passes quick_check too (it may hold plans newer than the backup); never a store "
                        "a running server holds open")
    r.set_defaults(func=cmd_store_restore)
