"""Workload specs -> ``Workload``: the edge that opens fio job files and block traces.

A spec (from a plan file or an API call) is one of::

    {"preset": "oracle-swingbench"}
    {"fio": "jobs/jesd219.fio", "env": {"FIO_BS": "4096"}}
    {"trace": "traces/msr.csv.gz", "format": "msr", "max_bad_lines": 10}
    {"read_fraction": 0.7, "io_size_mix": [[8192, 1.0]], ...}      # inline Workload fields

and any Workload field next to ``preset``/``fio``/``trace`` overrides the derived value
(``{"preset": "oltp-8k-70-30", "target_iops": 5000}``). Paths are relative to ``base_dir``;
``.gz`` and ``.bz2`` files are decompressed on the fly and traces are streamed line by line, so a
multi-GB trace needs constant memory (the characterisation itself is bounded, see
``arrayplan_engine.trace``).

Trace options: ``format`` (msr, systor, tencent, disksim, cloudphysics, blkparse, spc, linnos; omitted =
detected from the first lines), ``time_unit`` (disksim: ms or ns), ``blkparse_action`` (D, Q or
C), ``max_bad_lines`` (malformed lines tolerated, counted and reported). fio options: ``env``
(values for ``${VAR}``).

Errors are the engine's ``InvalidInputError``; file problems name ``workload.fio`` or
``workload.trace`` with ``FILE:LINE:`` at the start of the reason.

Plan files are untrusted input (a CI job runs whatever a pull request says): a path resolves
relative to ``base_dir`` (the plan file's directory) and must stay under it, symlinks included,
unless ``allow_outside_paths`` (which says the plan file is trusted); only regular files are opened
(a FIFO, a device, /proc files are refused before they are read); a trace is read up to
``MAX_TRACE_BYTES`` (after decompression), one line of at most ``MAX_LINE_CHARS`` characters at a
time (a longer line is refused naming its number, after reading only that much of it: a 10 GB
file without a line break costs 64 KiB), and a fio file up to ``MAX_FIO_BYTES``; and for an
untrusted plan file no error repeats the file's content (quoted text from a line is replaced by
``<file content>``), only its name, line and option.
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import stat
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import IO, Any

from arrayplan_engine.errors import COUNT, InvalidInputError, Violation
from arrayplan_engine.fio import parse_fio
from arrayplan_engine.presets import get_preset
from arrayplan_engine.trace import FORMATS, MAX_LINE_CHARS, Characteriser, characterise
from arrayplan_engine.workload import Workload, workload_from_mapping

_SOURCES = ("preset", "fio", "trace")
_SOURCE_OPTIONS = {
    "preset": set(),
    "fio": {"env"},
    "trace": {"format", "time_unit", "blkparse_action", "max_bad_lines", "seq_tolerance_bytes"},
}
_WORKLOAD_FIELDS = {f.name for f in dc_fields(Workload)}
MAX_FIO_BYTES = 1 << 20
MAX_TRACE_BYTES = 64 << 30
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"')


def withhold_content(reason: str) -> str:
    """An error reason without any quoted text (which may be a line of the file)."""
    return _QUOTED.sub("<file content>", reason)


class _Capped(io.RawIOBase):
    """A read-only stream that fails once more than ``limit`` bytes have been read."""

    def __init__(self, raw: IO[bytes], limit: int, shown: str) -> None:
        self._raw = raw
        self._left = limit
        self._shown = shown

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        data = self._raw.read(min(len(b), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise InvalidInputError.one("workload.trace", f"{self._shown}: over {MAX_TRACE_BYTES} bytes; split the trace")
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


def open_regular(path: Path, field: str, shown: str) -> IO[bytes]:
    """Open ``path`` for reading only if it is a regular file (without blocking on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise InvalidInputError.one(field, f"cannot read {shown}: {exc.strerror or type(exc).__name__}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InvalidInputError.one(field, f"{shown} is not a regular file")
    return os.fdopen(fd, "rb")


@contextmanager
def open_text(path: Path, field: str = "workload.trace", shown: str | None = None,
              limit_bytes: int = MAX_TRACE_BYTES) -> Iterator[IO[str]]:
    """Open a regular text file, decompressing ``.gz``/``.bz2`` on the fly (streamed, not read
    whole, at most ``limit_bytes`` after decompression). Undecodable bytes become U+FFFD, so a
    binary file gives a line-numbered parse error."""
    shown = shown or str(path)
    openers: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open}
    decompress = openers.get(path.suffix.lower())
    with open_regular(path, field, shown) as raw:
        inner = decompress(raw, "rb") if decompress is not None else raw
        capped = io.BufferedReader(_Capped(inner, limit_bytes, shown))
        yield io.TextIOWrapper(capped, encoding="utf-8", errors="replace")


def bounded_lines(f: IO[str], max_chars: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of ``f``, each read with at most ``max_chars + 1`` characters: a longer line
    comes out cut there (the trace reader refuses it, ``trace.check_line_length``) and the rest
    of it is never read, so memory stays bounded whatever the file holds."""
    while line := f.readline(max_chars + 1):
        yield line


def _resolve(value: Any, base_dir: Path, field: str, allow_outside: bool = False) -> Path:
    if not isinstance(value, (str, Path)) or not str(value).strip() or "\0" in str(value):
        raise InvalidInputError.one(field, f"must be a file path, got {str(value)[:200]!r}")
    p = Path(value)
    p = p if p.is_absolute() else Path(base_dir) / p
    if not allow_outside:
        base = Path(base_dir).resolve()
        try:
            real = p.resolve()
        except (OSError, RuntimeError):
            raise InvalidInputError.one(field, f"cannot resolve {str(value)[:200]}") from None
        if not real.is_relative_to(base):
            raise InvalidInputError.one(field, f"{str(value)[:200]} is outside the plan file's directory; paths must stay under it "
                                               "(pass --allow-outside-paths to allow it)")
    return p


def _rewrap(exc: InvalidInputError, field: str, shown: str, withhold: bool = False) -> InvalidInputError:
    """Engine errors (``fio:12:bs``, ``trace:40``) -> ``workload.fio`` / ``workload.trace`` with
    ``FILE:LINE:`` in the reason (and, for an untrusted plan file, without the line's content)."""
    out = []
    clean = withhold_content if withhold else (lambda r: r)
    for v in exc.violations:
        head, _, rest = v.field.partition(":")
        if head in ("fio", "trace") and rest:
            line, _, option = rest.partition(":")
            if withhold and option and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", option):
                option = "<option>"  # not an option name: text of the line
            where = f"{shown}:{line}:" + (f" {option}:" if option else "")
            out.append(Violation(field=field, reason=f"{where} {clean(v.reason)}", code=v.code, allowed=v.allowed))
        elif v.field.startswith(("fio", "trace")):
            out.append(Violation(field=field + v.field[len(head):], reason=f"{shown}: {clean(v.reason)}", code=v.code,
                                 allowed=v.allowed))
        else:
            out.append(v)
    return InvalidInputError(out)


def _load_fio(spec: Mapping[str, Any], base_dir: Path, allow_outside: bool) -> tuple[Workload, list[str]]:
    path = _resolve(spec["fio"], base_dir, "workload.fio", allow_outside)
    shown = str(spec["fio"])[:200]
    env = spec.get("env") or {}
    if not isinstance(env, Mapping):
        raise InvalidInputError.one("workload.env", f"must be a mapping of variable names to values, got {env!r}")
    try:
        with open_text(path, "workload.fio", shown, limit_bytes=4 * MAX_FIO_BYTES + 4) as f:
            text = f.read(MAX_FIO_BYTES + 1)
    except OSError as exc:
        raise InvalidInputError.one("workload.fio", f"cannot read {shown}: {exc.strerror or exc}") from None
    if len(text) > MAX_FIO_BYTES:
        raise InvalidInputError.one("workload.fio", f"{shown}: over {MAX_FIO_BYTES} characters; not a fio job file?")
    try:
        workload, warnings = parse_fio(text, name=path.stem, source=f"fio job file {shown}",
                                       env={str(k): str(v) for k, v in env.items()})
    except InvalidInputError as exc:
        raise _rewrap(exc, "workload.fio", shown, withhold=not allow_outside) from None
    return workload, [f"{shown}: {w}" for w in warnings]


def _load_trace(spec: Mapping[str, Any], base_dir: Path, allow_outside: bool) -> tuple[Workload, list[str]]:
    path = _resolve(spec["trace"], base_dir, "workload.trace", allow_outside)
    shown = str(spec["trace"])[:200]
    fmt = spec.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInputError.one("workload.format", f"unknown trace format {fmt!r}; known: {', '.join(FORMATS)} (or omit it to detect)")
    max_bad = spec.get("max_bad_lines", 0)
    COUNT.require("workload.max_bad_lines", max_bad)
    tol = spec.get("seq_tolerance_bytes", 0)
    COUNT.require("workload.seq_tolerance_bytes", tol)
    try:
        with open_text(path, "workload.trace", shown) as f:
            result, reader = characterise(
                bounded_lines(f), fmt, max_bad_lines=max_bad, time_unit=spec.get("time_unit"),
                blkparse_action=spec.get("blkparse_action", "D"),
                characteriser=Characteriser(seq_tolerance_bytes=tol),
            )
    except OSError as exc:
        raise InvalidInputError.one("workload.trace", f"cannot read {shown}: {exc.strerror or exc}") from None
    except EOFError as exc:
        raise InvalidInputError.one("workload.trace", f"{shown}: truncated compressed file ({exc})") from None
    except InvalidInputError as exc:
        raise _rewrap(exc, "workload.trace", shown, withhold=not allow_outside) from None
    workload = result.to_workload(name=path.name.split(".")[0], source=f"{reader.format} trace {shown}")
    # the first warning says which format was read and how its columns were taken (docs/workloads.md)
    warnings = [f"{shown}: {n}" for n in result.notes if n.startswith("trace read as ")]
    warnings += [f"{shown}: {n}" for n in reader.summary()]
    if result.late_arrivals:
        warnings.append(f"{shown}: {result.late_arrivals} IOs out of time order beyond the window (in the rate only)")
    return workload, warnings


def rescaled_daily_write_bytes(base: Workload, target_iops: float) -> tuple[float, str | None]:
    """The daily write volume of ``base`` when its IO rate is overridden to ``target_iops``.

    A trace or fio file measures both an IO rate and a write volume; asking for another rate with
    the same mix writes proportionally more (or less): the volume scales by the same factor. A
    workload whose volume is derived from its rate (``daily_write_bytes`` 0) needs no change.
    Returns the new volume and a warning saying what was scaled (None when nothing was)."""
    old = float(base.daily_write_bytes)
    if old <= 0 or base.target_iops <= 0 or target_iops <= 0 or target_iops == base.target_iops:
        return old, None
    factor = target_iops / base.target_iops
    new = old * factor
    return new, (f"target_iops {target_iops:,.6g} overrides the source's {base.target_iops:,.6g} IOPS: daily_write_bytes "
                 f"scaled by the same factor ({factor:,.4g}x), {old / 1e9:,.4g} GB/day -> {new / 1e9:,.4g} GB/day "
                 "(give daily_write_bytes to set it yourself)")


def load_workload(spec: Mapping[str, Any], base_dir: Path, *, allow_outside_paths: bool = True) -> tuple[Workload, list[str]]:
    """The workload a spec describes, and warnings (options not modelled, lines skipped). With
    ``allow_outside_paths=False`` (plan files) file paths must resolve under ``base_dir``.

    Raises ``InvalidInputError`` naming the field (``workload.fio``, ``workload.preset``, ...)."""
    if not isinstance(spec, Mapping):
        raise InvalidInputError.one("workload", f"must be a mapping, got {type(spec).__name__}")
    given = [k for k in _SOURCES if k in spec]
    if len(given) > 1:
        raise InvalidInputError.one("workload", f"give one of preset, fio or trace, not {' and '.join(given)}")
    if not given:
        return workload_from_mapping(spec), []
    source = given[0]
    options = _SOURCE_OPTIONS[source]
    stray = [k for k in spec if k != source and k not in options and k not in _WORKLOAD_FIELDS]
    if stray:
        allowed = ", ".join(sorted(options | _WORKLOAD_FIELDS))
        problems = []
        for k in stray:
            owner = next((s for s, o in _SOURCE_OPTIONS.items() if k in o), None)
            reason = (f"only applies with {owner}, not {source}" if owner else f"unknown field with {source}; allowed: {allowed}")
            problems.append(Violation(field=f"workload.{k}", reason=reason))
        raise InvalidInputError(problems)

    if source == "preset":
        name = spec["preset"]
        if not isinstance(name, str):
            raise InvalidInputError.one("workload.preset", f"must be a preset name, got {name!r}")
        base, warnings = get_preset(name, "workload.preset"), list[str]()
    elif source == "fio":
        base, warnings = _load_fio(spec, base_dir, allow_outside_paths)
    else:
        base, warnings = _load_trace(spec, base_dir, allow_outside_paths)

    overrides = {k: v for k, v in spec.items() if k in _WORKLOAD_FIELDS}
    if not overrides:
        return base, warnings
    merged = {f.name: getattr(base, f.name) for f in dc_fields(Workload)}
    merged.update(overrides)
    if "target_iops" in overrides and "daily_write_bytes" not in overrides:
        try:
            merged["daily_write_bytes"], note = rescaled_daily_write_bytes(base, float(overrides["target_iops"]))
        except (TypeError, ValueError):  # not a number: workload_from_mapping names the field
            note = None
        if note:
            warnings = [*warnings, note]
    workload = workload_from_mapping(merged)
    return workload, warnings + [f"overridden: {', '.join(sorted(overrides))}"]
