"""Workload presets: the IO mixes the seed reviews describe, each number with its provenance.

The presets are data files shipped with the engine, ``arrayplan_engine/data/presets/NNN-name.toml``
(one preset per file, read with ``tomllib`` through ``importlib.resources`` as the drive catalog's
files are; no other I/O). ``preset_from_toml`` reads one and names the file, line and field of
every problem. Every preset is a ``Workload`` plus a list of ``Provenance`` records (the type the
drive catalog uses too, ``provenance.py``). A record either quotes the
seed (``source`` relative to the shared project folder, ``quote`` a verbatim substring of that file;
tests/engine/test_presets.py checks every quote occurs in its file) or says ``assumed`` with the
reason, when the seed leaves the value open. The same facts are carried into the workload's
``source`` and ``notes`` so a plan report can show them.

Rules used throughout (docs/workloads.md):

* read_fraction = reads / (reads + writes) from the stated operation counts;
* an IO size breakdown that leaves part of the IOs undescribed is renormalised over the sizes it
  names (``assumed``: the undescribed IOs follow the same mix);
* "sequential share" -> random_fraction = 1 - sequential share;
* average queue depth (a real number) -> the nearest integer queue depth (the exact figure is in
  the notes); the traces are replayed closed loop, so ``target_iops`` stays 0.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from .catalog import CatalogFileError
from .errors import InvalidInputError, UnknownNameError
from .provenance import Provenance
from .workload import Workload

#: The package folder holding the built-in preset files.
BUILTIN_PRESET_PACKAGE: Final = "arrayplan_engine.data.presets"

# The Workload fields a preset file may set (name, source and notes come from the file's top level).
_VALUE_FIELDS: Final = ("read_fraction", "random_fraction", "io_size_mix", "queue_depth", "target_iops", "daily_write_bytes",
                        "hot_write_fraction", "hot_space_fraction", "working_set_fraction", "growth_per_year",
                        "working_set_bytes", "peak_to_mean_iops_ratio")
_TOP: Final = ("name", "description", "source", "aliases", "notes")
_RECORD_KEYS: Final = ("source", "quote", "assumed", "reason")


class PresetFileError(CatalogFileError):
    """A preset file that does not load: every problem with its file, line and field."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Preset:
    """A named workload with the provenance of each of its values."""

    name: str
    description: str
    workload: Workload
    provenance: tuple[Provenance, ...]
    aliases: tuple[str, ...] = field(default=())

    @property
    def assumed_fields(self) -> tuple[str, ...]:
        return tuple(p.field for p in self.provenance if p.assumed)


def _line(text: str, key: str) -> int | None:
    """The line a problem with ``key`` is on: ``FIELD.value`` -> its ``value =`` line,
    ``FIELD.provenance[i]`` -> the i-th ``[[FIELD.provenance]]`` header, ``FIELD`` -> the ``[FIELD]``
    header, a top-level key -> its ``key = ...`` line (None when not found)."""
    top, _, sub = key.partition(".")
    lines = text.splitlines()
    m = re.fullmatch(r"provenance\[(\d+)\]", sub)
    if m:
        header = re.compile(rf"^\s*\[\[\s*{re.escape(top)}\.provenance\s*\]\]")
        hits = [i for i, line in enumerate(lines, start=1) if header.match(line)]
        return hits[int(m.group(1))] if int(m.group(1)) < len(hits) else None
    header = re.compile(rf"^\s*\[\s*{re.escape(top)}\s*\]")
    for i, line in enumerate(lines, start=1):
        if header.match(line):
            if sub:
                for j in range(i, len(lines)):
                    if lines[j].lstrip().startswith("["):
                        break
                    if re.match(rf"^\s*{re.escape(sub)}\s*=", lines[j]):
                        return j + 1
            return i
        if re.match(rf"^\s*{re.escape(top)}\s*=", line):
            return i
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _io_size_mix(value: Any) -> tuple[tuple[int, float], ...] | str:
    """[[bytes, weight], ...] as the source gives the weights -> weights renormalised to sum 1."""
    if not isinstance(value, list) or not value or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], int) and not isinstance(p[0], bool) and p[0] > 0
            and isinstance(p[1], (int, float)) and not isinstance(p[1], bool) and p[1] > 0 for p in value):
        return "must be a non-empty list of [IO bytes (integer > 0), weight (> 0)] pairs"
    total = sum(w for _, w in value)
    return tuple((size, w / total) for size, w in value)


def preset_from_toml(text: str, path: str = "<preset file>") -> Preset:
    """Parse one preset file (TOML). Raises ``PresetFileError`` naming the file, the line and the
    field of every problem (the Workload's own range checks included)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"at line (\d+)", str(exc))
        raise PresetFileError(path, [(int(m.group(1)) if m else None, "", f"not valid TOML: {exc}")]) from None
    problems: list[tuple[int | None, str, str]] = []

    def bad(key: str, reason: str) -> None:
        problems.append((_line(text, key), key, reason))

    for key in ("name", "description", "source"):
        if not isinstance(data.get(key), str) or not data[key]:
            bad(key, "required: a non-empty string")
    for key in ("aliases", "notes"):
        if key in data and not _strings(data[key]):
            bad(key, "must be a list of strings")
    values: dict[str, Any] = {}
    provenance: list[Provenance] = []
    for key, table in data.items():
        if key in _TOP:
            continue
        if not isinstance(table, dict):
            bad(key, f"unknown key; a preset file has {', '.join(_TOP)} and one table per workload field "
                     f"({', '.join(_VALUE_FIELDS)})")
            continue
        for sub in table:
            if sub not in ("value", "provenance"):
                bad(f"{key}.{sub}", "unknown key; a field's table has value and [[provenance]] records")
        if "value" in table:
            if key not in _VALUE_FIELDS:
                bad(key, f"not a workload field; allowed: {', '.join(_VALUE_FIELDS)} "
                         "(a table without a value may carry provenance of another fact, e.g. a duration)")
            elif key == "io_size_mix":
                mix = _io_size_mix(table["value"])
                if isinstance(mix, str):
                    bad(f"{key}.value", mix)
                else:
                    values[key] = mix
            elif isinstance(table["value"], bool) or not isinstance(table["value"], (int, float)):
                bad(f"{key}.value", f"must be a number, got {table['value']!r}")
            else:
                values[key] = table["value"]
        records = table.get("provenance", [])
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            bad(f"{key}.provenance", "must be [[provenance]] tables")
            continue
        if "value" not in table and not records:
            bad(key, "a table needs a value, provenance records or both")
        for i, rec in enumerate(records):
            where = f"{key}.provenance[{i}]"
            unknown = sorted(set(rec) - set(_RECORD_KEYS))
            if unknown:
                bad(where, f"unknown key(s) {', '.join(unknown)}; a record has {', '.join(_RECORD_KEYS)}")
                continue
            if not isinstance(rec.get("assumed", False), bool):
                bad(where, f"assumed must be true or false, got {rec['assumed']!r}")
                continue
            try:
                provenance.append(Provenance(field=key, source=str(rec.get("source", "")), quote=str(rec.get("quote", "")),
                                             assumed=rec.get("assumed", False) is True, reason=str(rec.get("reason", ""))))
            except ValueError as exc:
                bad(where, str(exc))
    if "read_fraction" not in values and not any(f == "read_fraction.value" for _, f, _ in problems):
        bad("read_fraction", "required: a [read_fraction] table with a value")
    if problems:
        raise PresetFileError(path, problems)
    notes = tuple(str(p) for p in provenance) + tuple(data.get("notes", ()))
    try:
        workload = Workload(name=data["name"], source=data["source"], notes=notes, **values)
    except InvalidInputError as exc:
        raise PresetFileError(path, [(_line(text, v.field.split(".")[-1] + ".value"), v.field, v.reason)
                                     for v in exc.violations]) from None
    return Preset(name=data["name"], description=data["description"], workload=workload, provenance=tuple(provenance),
                  aliases=tuple(data.get("aliases", ())))


def load_preset_files(files: Iterable[tuple[str, str]]) -> tuple[Preset, ...]:
    """The presets of these (path, text) files, sorted by name. A name or alias used twice raises
    ``PresetFileError`` naming the second file."""
    presets: list[Preset] = []
    taken: dict[str, str] = {}
    for path, text in files:
        preset = preset_from_toml(text, path)
        for n in (preset.name, *preset.aliases):
            if n in taken:
                raise PresetFileError(path, [(_line(text, "name" if n == preset.name else "aliases"), "name",
                                              f"{n!r} is already taken by preset {taken[n]!r}")])
            taken[n] = preset.name
        presets.append(preset)
    return tuple(sorted(presets, key=lambda p: p.name))


def _builtin_files() -> list[tuple[str, str]]:
    root = resources.files(BUILTIN_PRESET_PACKAGE)
    return [(f"{BUILTIN_PRESET_PACKAGE.replace('.', '/')}/{f.name}", f.read_text(encoding="utf-8"))
            for f in sorted(root.iterdir(), key=lambda f: f.name) if f.name.endswith(".toml")]


_PRESETS: tuple[Preset, ...] = load_preset_files(_builtin_files())
_BY_NAME: Mapping[str, Preset] = {
    **{p.name: p for p in _PRESETS},
    **{alias: p for p in _PRESETS for alias in p.aliases},
}


def all_presets() -> tuple[Preset, ...]:
    """Every preset (sorted by name), each with its workload and provenance."""
    return _PRESETS


def preset_names() -> tuple[str, ...]:
    """The names ``get_preset`` accepts, aliases included, sorted."""
    return tuple(sorted(_BY_NAME))


def get_preset_info(name: str, field: str = "workload.preset") -> Preset:
    """The preset called ``name`` (or one of its aliases) with its provenance."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise UnknownNameError(field, str(name), _BY_NAME) from None


def get_preset(name: str, field: str = "workload.preset") -> Workload:
    """The workload of the preset called ``name``; ``UnknownNameError`` lists the known names."""
    return get_preset_info(name, field).workload
