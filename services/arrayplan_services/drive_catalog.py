"""A site's drive catalog: the engine's built-in drives plus every catalog file in a folder
(``arrayplan serve --catalog DIR``; the Helm chart mounts a ConfigMap there), and the JSON form
``arrayplan drives --format json`` prints.

The files are the engine's catalog format (``docs/catalog.md``, "Catalog files"): one drive per
``*.toml``, every value with its source and quote or ``assumed`` with the reason. A bad file
raises ``CatalogFileError`` naming the file, line and field; a drive may not take a name the
catalog already has.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from arrayplan_engine.catalog import PROVENANCED_FIELDS, Catalog, CatalogFileError, Drive, builtin_catalog, load_catalog_files

MAX_CATALOG_FILE_BYTES = 1 << 20  # a catalog file is one drive: a few KB


def load_catalog_dir(folder: Path | str | None, base: Catalog | None = None) -> Catalog:
    """``base`` (default the built-in catalog) plus every ``*.toml`` in ``folder``, by file name.
    Files whose name starts with ``.`` are skipped (a ConfigMap mount's ``..data`` links)."""
    base = builtin_catalog() if base is None else base
    if folder is None:
        return base
    root = Path(folder)
    if not root.is_dir():
        raise CatalogFileError(str(root), [(None, "", "is not a folder of catalog files (*.toml)")])
    from arrayplan_engine.errors import InvalidInputError

    from .api.workloads import open_regular

    files = []
    for path in sorted(p for p in root.glob("*.toml") if not p.name.startswith(".")):
        try:  # a regular file (a FIFO or a device is refused before it is read), read with a limit
            with open_regular(path, "catalog", str(path)) as f:
                raw = f.read(MAX_CATALOG_FILE_BYTES + 1)
            if len(raw) > MAX_CATALOG_FILE_BYTES:
                raise CatalogFileError(str(path), [(None, "", f"is over {MAX_CATALOG_FILE_BYTES:,} bytes (one drive per file)")])
            files.append((str(path), raw.decode("utf-8")))
        except InvalidInputError as exc:
            raise CatalogFileError(str(path), [(None, "", exc.violations[0].reason)]) from None
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise CatalogFileError(str(path), [(None, "", f"cannot read: {why}")]) from None
    catalog = load_catalog_files(files, base=base)
    # What the drive models will demand of each drive when a plan runs, checked now (the engine's
    # drive_checks): a drive the planner cannot model stops the server at start, naming file, line and field.
    from arrayplan_engine.drive_checks import drive_model_violations

    for (path_text, text), drive in zip(files, list(catalog)[len(base):], strict=True):
        problems = drive_model_violations(drive, "")
        if problems:
            raise CatalogFileError(path_text, [(_line_of(text, v.field), v.field, v.reason) for v in problems])
    return catalog


def _line_of(text: str, field: str) -> int | None:
    """The line of ``FIELD = ...`` or the ``[FIELD]`` table in a catalog file (None when absent)."""
    pattern = re.compile(rf"^\s*(\[\s*{re.escape(field)}\s*\]|{re.escape(field)}\s*[=.])")
    return next((i for i, line in enumerate(text.splitlines(), start=1) if pattern.match(line)), None)


def drive_json(d: Drive) -> dict[str, Any]:
    """One drive as JSON: identity, every value (capacities in bytes), its sources and the
    provenance of each value."""
    out: dict[str, Any] = {k: getattr(d, k) for k in ("name", "display_name", "vendor", "family", "kind")}
    for key in PROVENANCED_FIELDS:
        value = getattr(d, key)
        if value is not None:
            out[key] = value
    out["spare_bytes_per_user_byte"] = d.spare_bytes_per_user_byte
    out["sources"] = sorted({p.source for p in d.provenance.values() if p.source})
    out["provenance"] = {k: {"source": p.source, "quote": p.quote, "assumed": p.assumed, "reason": p.reason}
                         for k, p in d.provenance.items()}
    return out
