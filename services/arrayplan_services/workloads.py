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

Trace options: ``format`` (msr, systor, tencent, disksim, cloudphysics, blkparse, spc; omitted =
detected from the first lines), ``time_unit`` (disksim: ms or ns), ``blkparse_action`` (D, Q or
C), ``max_bad_lines`` (malformed lines tolerated, counted and reported). fio options: ``env``
(values for ``${VAR}``).

Errors are the engine's ``InvalidInputError``; file problems name ``workload.fio`` or
``workload.trace`` with ``FILE:LINE:`` at the start of the reason.
"""

from __future__ import annotations

import bz2
import gzip
import io
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import fields as dc_fields
from pathlib import Path
from typing import IO, Any

from arrayplan_engine.errors import InvalidInputError, Violation
from arrayplan_engine.fio import parse_fio
from arrayplan_engine.presets import get_preset
from arrayplan_engine.trace import FORMATS, Characteriser, characterise
from arrayplan_engine.workload import Workload, workload_from_mapping

_SOURCES = ("preset", "fio", "trace")
_SOURCE_OPTIONS = {
    "preset": set(),
    "fio": {"env"},
    "trace": {"format", "time_unit", "blkparse_action", "max_bad_lines", "seq_tolerance_bytes"},
}
_WORKLOAD_FIELDS = {f.name for f in dc_fields(Workload)}
MAX_FIO_BYTES = 1 << 20


@contextmanager
def open_text(path: Path) -> Iterator[IO[str]]:
    """Open a text file, decompressing ``.gz``/``.bz2`` on the fly (streamed, not read whole).
    Undecodable bytes become U+FFFD, so a binary file gives a line-numbered parse error."""
    opener: Callable[..., IO[bytes]] = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix.lower(), open)
    with opener(path, "rb") as raw:
        yield io.TextIOWrapper(raw, encoding="utf-8", errors="replace")


def _resolve(value: Any, base_dir: Path, field: str) -> Path:
    if not isinstance(value, (str, Path)) or not str(value).strip():
        raise InvalidInputError.one(field, f"must be a file path, got {value!r}")
    p = Path(value)
    return p if p.is_absolute() else Path(base_dir) / p


def _rewrap(exc: InvalidInputError, field: str, shown: str) -> InvalidInputError:
    """Engine errors (``fio:12:bs``, ``trace:40``) -> ``workload.fio`` / ``workload.trace`` with
    ``FILE:LINE:`` in the reason."""
    out = []
    for v in exc.violations:
        head, _, rest = v.field.partition(":")
        if head in ("fio", "trace") and rest:
            line, _, option = rest.partition(":")
            where = f"{shown}:{line}:" + (f" {option}:" if option else "")
            out.append(Violation(field=field, reason=f"{where} {v.reason}"))
        elif v.field.startswith(("fio", "trace")):
            out.append(Violation(field=field + v.field[len(head):], reason=f"{shown}: {v.reason}"))
        else:
            out.append(v)
    return InvalidInputError(out)


def _load_fio(spec: Mapping[str, Any], base_dir: Path) -> tuple[Workload, list[str]]:
    path = _resolve(spec["fio"], base_dir, "workload.fio")
    shown = str(spec["fio"])
    env = spec.get("env") or {}
    if not isinstance(env, Mapping):
        raise InvalidInputError.one("workload.env", f"must be a mapping of variable names to values, got {env!r}")
    try:
        with open_text(path) as f:
            text = f.read(MAX_FIO_BYTES + 1)
    except OSError as exc:
        raise InvalidInputError.one("workload.fio", f"cannot read {shown}: {exc.strerror or exc}") from None
    if len(text) > MAX_FIO_BYTES:
        raise InvalidInputError.one("workload.fio", f"{shown}: over {MAX_FIO_BYTES} characters; not a fio job file?")
    try:
        workload, warnings = parse_fio(text, name=path.stem, source=f"fio job file {shown}",
                                       env={str(k): str(v) for k, v in env.items()})
    except InvalidInputError as exc:
        raise _rewrap(exc, "workload.fio", shown) from None
    return workload, [f"{shown}: {w}" for w in warnings]


def _load_trace(spec: Mapping[str, Any], base_dir: Path) -> tuple[Workload, list[str]]:
    path = _resolve(spec["trace"], base_dir, "workload.trace")
    shown = str(spec["trace"])
    fmt = spec.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise InvalidInputError.one("workload.format", f"unknown trace format {fmt!r}; known: {', '.join(FORMATS)} (or omit it to detect)")
    max_bad = spec.get("max_bad_lines", 0)
    if isinstance(max_bad, bool) or not isinstance(max_bad, int) or max_bad < 0:
        raise InvalidInputError.one("workload.max_bad_lines", f"must be an integer >= 0, got {max_bad!r}")
    tol = spec.get("seq_tolerance_bytes", 0)
    if isinstance(tol, bool) or not isinstance(tol, int) or tol < 0:
        raise InvalidInputError.one("workload.seq_tolerance_bytes", f"must be an integer >= 0, got {tol!r}")
    try:
        with open_text(path) as f:
            result, reader = characterise(
                f, fmt, max_bad_lines=max_bad, time_unit=spec.get("time_unit"),
                blkparse_action=spec.get("blkparse_action", "D"),
                characteriser=Characteriser(seq_tolerance_bytes=tol),
            )
    except OSError as exc:
        raise InvalidInputError.one("workload.trace", f"cannot read {shown}: {exc.strerror or exc}") from None
    except EOFError as exc:
        raise InvalidInputError.one("workload.trace", f"{shown}: truncated compressed file ({exc})") from None
    except InvalidInputError as exc:
        raise _rewrap(exc, "workload.trace", shown) from None
    workload = result.to_workload(name=path.name.split(".")[0], source=f"{reader.format} trace {shown}")
    warnings = [f"{shown}: {n}" for n in reader.summary()]
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


def load_workload(spec: Mapping[str, Any], base_dir: Path) -> tuple[Workload, list[str]]:
    """The workload a spec describes, and warnings (options not modelled, lines skipped).

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
        base, warnings = get_preset(name, "workload.preset"), []
    elif source == "fio":
        base, warnings = _load_fio(spec, base_dir)
    else:
        base, warnings = _load_trace(spec, base_dir)

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
