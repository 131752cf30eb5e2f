"""Reading drive telemetry and capacity samples from disk: the I/O around the engine's pure
``arrayplan_engine.smart`` (parsing) and ``arrayplan_engine.forecast`` (math).

* ``read_telemetry(paths)``: smartctl ``--json`` / ``nvme smart-log -o json`` files, or directories
  of them (``*.json`` walked recursively, sorted). A bad file (truncated JSON, smartctl's own
  error output, not telemetry at all) becomes a ``Problem`` naming the file; the rest are read.
* ``read_capacity_csv(path)``: ``time,used_bytes`` rows (time as ISO date/datetime or Unix seconds;
  sizes as numbers or with units, "12.5 TB", in the grammar of plan files: docs/units.md).
* ``read_prometheus_samples(path, metric, labels)``: samples of one metric from Prometheus text
  exposition format (``name{label="v"} value timestamp_ms``), one file or several scrapes.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from arrayplan_engine.smart import DriveSnapshot, TelemetryError, parse_document, parse_nvme_smart_log
from arrayplan_engine.units import parse_size_bytes

#: A smartctl --json or nvme smart-log file is a few KiB; a larger one is refused, not read whole.
MAX_TELEMETRY_FILE_BYTES = 16 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """A file (or drive) that could not be used, and why."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


def telemetry_files(paths: Iterable[Path]) -> tuple[list[Path], list[Problem]]:
    files: list[Path] = []
    problems: list[Problem] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.is_file())
            if not found:
                problems.append(Problem(source=str(p), message="directory holds no *.json telemetry files"))
            files += found
        elif p.is_file():
            files.append(p)
        else:
            problems.append(Problem(source=str(p), message="no such file or directory"))
    return files, problems


def read_telemetry(paths: Iterable[Path], *, model: str | None = None, serial: str | None = None) -> tuple[list[DriveSnapshot], list[Problem]]:
    """Every snapshot the files hold, and a problem for each file that holds none.

    A snapshot without a capture time (nvme-cli's smart log has none; old smartctl neither) takes
    its file's modification time, and says so. ``model``/``serial`` name the drive of nvme-cli
    smart logs, which carry no identity."""
    files, problems = telemetry_files(paths)
    snapshots: list[DriveSnapshot] = []
    for f in files:
        source = str(f)
        try:
            with open(f, "rb") as fh:
                raw = fh.read(MAX_TELEMETRY_FILE_BYTES + 1)
            if len(raw) > MAX_TELEMETRY_FILE_BYTES:
                problems.append(Problem(source=source, message=f"over {MAX_TELEMETRY_FILE_BYTES} bytes (MAX_TELEMETRY_FILE_BYTES); "
                                                               "not one drive's telemetry"))
                continue
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(source=source, message=f"cannot read: {exc}"))
            continue
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            what = "truncated JSON (the file ends early)" if exc.pos >= len(text.rstrip()) else "not valid JSON"
            problems.append(Problem(source=source, message=f"{what}: {exc.msg} at line {exc.lineno} column {exc.colno}"))
            continue
        except (ValueError, RecursionError) as exc:  # an integer of over 4,300 digits; nesting past the decoder's depth
            problems.append(Problem(source=source, message=f"not usable JSON: {str(exc).splitlines()[0][:200]}"))
            continue
        docs = doc if isinstance(doc, list) else [doc]
        for i, d in enumerate(docs):
            src = source if len(docs) == 1 else f"{source}[{i}]"
            try:
                if (model or serial) and isinstance(d, dict) and "smartctl" not in d:
                    snap = parse_nvme_smart_log(d, src, model=model, serial=serial)
                else:
                    snap = parse_document(d, src)
            except TelemetryError as exc:
                problems.append(Problem(source=src, message=exc.reason))
                continue
            if snap.time_s is None:
                mtime = f.stat().st_mtime
                snap = replace(snap, time_s=mtime, notes=(*snap.notes, "no capture time in the file: its modification time is used"))
            snapshots.append(snap)
    return snapshots, problems


# -- capacity used over time ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class CapacitySample:
    time_s: float
    used_bytes: float


class CapacityFileError(ValueError):
    def __init__(self, source: str, line: int | None, reason: str) -> None:
        super().__init__(f"{source}:{line or '?'}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason


def parse_timestamp_s(value: object) -> float:
    """A point in time as Unix seconds, from a number (Unix seconds), an ISO date (2025-01-31) or
    datetime (UTC unless it says). Not a duration: durations are ``units.parse_duration_s``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp()
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        pass
    try:
        d = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"expected a time (2025-01-31, 2025-01-31T12:00:00Z or Unix seconds), got {value!r}") from None
    return (d if d.tzinfo else d.replace(tzinfo=dt.UTC)).timestamp()


def read_capacity_csv(path: Path) -> list[CapacitySample]:
    """``time,used_bytes`` (a header row naming them; extra columns ignored)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CapacityFileError(source, None, f"cannot read: {exc}") from None
    rows = list(csv.reader(text.splitlines()))
    if not rows:
        raise CapacityFileError(source, 1, "empty; expected a header 'time,used_bytes' and rows")
    header = [h.strip().lower() for h in rows[0]]
    if "time" not in header or "used_bytes" not in header:
        raise CapacityFileError(source, 1, f"the header must name columns 'time' and 'used_bytes', got {rows[0]}")
    ti, ui = header.index("time"), header.index("used_bytes")
    out: list[CapacitySample] = []
    for n, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) <= max(ti, ui):
            raise CapacityFileError(source, n, f"expected at least {max(ti, ui) + 1} columns, got {len(row)}")
        try:
            t = parse_timestamp_s(row[ti])
        except ValueError as exc:
            raise CapacityFileError(source, n, f"time: {exc}") from None
        try:
            u = parse_size_bytes(row[ui])
        except ValueError as exc:
            raise CapacityFileError(source, n, f"used_bytes: {exc}") from None
        out.append(CapacitySample(time_s=t, used_bytes=float(u)))
    out.sort(key=lambda s: s.time_s)
    return out


_PROM_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+(-?\d+))?\s*$")
_PROM_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def parse_prometheus_text(text: str, metric: str, labels: Mapping[str, str] | None = None, *, source: str = "<prometheus>",
                          default_time_s: float | None = None) -> list[CapacitySample]:
    """Samples of ``metric`` whose labels include ``labels``. Each sample needs a timestamp (the
    exposition format's optional third field, in milliseconds) unless ``default_time_s`` (the
    scrape time) is given. Values summed over series that match at the same time (several
    filesystems of one array)."""
    want = dict(labels or {})
    by_time: dict[float, float] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _PROM_LINE.match(line)
        if not m:
            raise CapacityFileError(source, n, f"not a Prometheus text-format sample: {line[:80]!r}")
        if m.group(1) != metric:
            continue
        got = {k: v for k, v in _PROM_LABEL.findall(m.group(2) or "")}
        if any(got.get(k) != v for k, v in want.items()):
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            raise CapacityFileError(source, n, f"sample value {m.group(3)!r} is not a number") from None
        if m.group(4) is not None:
            t = int(m.group(4)) / 1000.0
        elif default_time_s is not None:
            t = default_time_s
        else:
            raise CapacityFileError(source, n, "sample has no timestamp; scrape files need 'value timestamp_ms' or one file per scrape")
        by_time[t] = by_time.get(t, 0.0) + value
    if not by_time:
        raise CapacityFileError(source, None, f"no samples of metric {metric!r} with labels {want}")
    return [CapacitySample(time_s=t, used_bytes=v) for t, v in sorted(by_time.items())]


def read_prometheus_samples(paths: Sequence[Path], metric: str, labels: Mapping[str, str] | None = None) -> list[CapacitySample]:
    """Samples from one or more scrape files; a file without sample timestamps counts as one
    scrape at its modification time."""
    out: dict[float, float] = {}
    for p in paths:
        try:
            text = Path(p).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CapacityFileError(str(p), None, f"cannot read: {exc}") from None
        for s in parse_prometheus_text(text, metric, labels, source=str(p), default_time_s=Path(p).stat().st_mtime):
            out[s.time_s] = s.used_bytes
    return [CapacitySample(time_s=t, used_bytes=v) for t, v in sorted(out.items())]
