"""Plan files (YAML) -> ``arrayplan.v1`` messages, with line-numbered errors.

The file mirrors ``PlanSpec`` field by field (see examples/). Conveniences a person expects:
sizes as strings with units (``usable_capacity_bytes: 20 TB``, ``io_bytes: 4 KiB``), durations
as strings (``latency_target: 2ms``), enums by their short name (``objective: purchase_cost``), a
workload given as ``workload: {fio: path}`` or ``{trace: path}`` (resolved relative to the file),
``custom_drives:`` items written like catalog files (a value, or ``{value, source, quote}``).
Every error names the YAML line and the field path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from google.protobuf import duration_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine.units import parse_duration_ns, parse_duration_s, parse_size_bytes

from ..redaction import cap_lines
from .safe_yaml import MAX_YAML_BYTES, YamlDocument, YamlError, _dotted, load_document  # one field-path spelling (<key>)


class PlanFileError(Exception):
    """A plan file problem: ``problems`` are (line or None, field path, reason)."""

    def __init__(self, path: str, problems: list[tuple[int | None, str, str]]) -> None:
        self.path = path
        self.problems = problems
        # at most MAX_ERROR_LINES lines, then "... and N more" (20,000 unknown keys are 21 lines)
        super().__init__("\n".join(cap_lines([f"{path}:{line or '?'}: {field}: {_bounded(reason)}" if field
                                              else f"{path}:{line or '?'}: {_bounded(reason)}"
                                              for line, field, reason in problems])))


_EXPONENT_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+", re.ASCII)
_LONG_QUOTED = re.compile(r"(?<=got )(?:'(?:[^'\\\n]|\\.){41,}'|\"(?:[^\"\\\n]|\\.){41,}\")")
MAX_REASON_CHARS = 300


def _bounded(reason: str) -> str:
    """A reason fit to print: a value quoted after "got" that is over 40 characters (a line of the
    file, most likely) withheld, and at most MAX_REASON_CHARS characters."""
    reason = _LONG_QUOTED.sub("<text not shown>", reason)
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS] + "..."


# Sizes and durations: the one grammar of plan files, array files, capacity CSVs and flags
# (arrayplan_engine.units; docs/units.md). 8k = 8 KiB = 8,192 B as in fio, 8 KB = 8,000 B; a
# duration needs its unit.


def size_arg(text: str) -> int:
    """argparse type for a size flag (``--io-bytes 8KiB``): the grammar of plan files."""
    import argparse

    try:
        return parse_size_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def int_arg(text: str) -> int:
    """argparse type for a count flag (``--servers 16``): an integer, or a one-line error."""
    import argparse

    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def seconds_arg(text: str) -> float:
    """argparse type for a flag documented in seconds (``--timeout``): a bare number is seconds, as
    its help says; a duration with a unit is read by the same grammar (``--timeout 30min``)."""
    import argparse

    try:
        value = parse_duration_s(text, bare_number_unit="s")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0 s, got {text!r}")
    return value


_Doc = YamlDocument  # the loaded document: data and the line of every key and item, by path


def load_yaml(text: str, path: str) -> _Doc:
    """YAML with the line of every key and item recorded by path, through the bounded loader
    (``safe_yaml``: document size, nesting, aliases, expanded nodes, number digits, no merge keys);
    every refusal is a ``PlanFileError`` naming the line."""
    try:
        doc = load_document(text, path)
    except YamlError as exc:
        raise PlanFileError(path, [(exc.line, exc.field, exc.reason)]) from None
    if doc is None:
        raise PlanFileError(path, [(1, "", "the file is empty; a plan needs at least workload and constraints")])
    return doc


_SHORT_ENUM_PREFIX = {"Objective": "OBJECTIVE_", "DriveKind": "DRIVE_KIND_"}
_WORKLOAD_FILE_KEYS = ("fio", "trace", "format", "env", "time_unit", "blkparse_action", "max_bad_lines", "seq_tolerance_bytes")


class _Builder:
    def __init__(self, doc: _Doc, path: str, base_dir: Path, allow_outside_paths: bool = False, workload_files: bool = True) -> None:
        self.doc = doc
        self.path = path
        self.base_dir = base_dir
        self.allow_outside_paths = allow_outside_paths
        self.workload_files = workload_files
        self.problems: list[tuple[int | None, str, str]] = []
        self.warnings: list[str] = []

    def fail(self, at: tuple[Any, ...], reason: str) -> None:
        line = self.doc.lines.get(at)
        self.problems.append((line, _dotted(at), reason))

    def fill(self, msg: Message, data: Any, at: tuple[Any, ...]) -> None:
        if not isinstance(data, Mapping):
            self.fail(at, f"must be a mapping of {msg.DESCRIPTOR.name} fields, got {type(data).__name__}")
            return
        fields = msg.DESCRIPTOR.fields_by_name
        for key, value in data.items():
            where = at + (key,)
            if msg.DESCRIPTOR.name == "Workload" and key in _WORKLOAD_FILE_KEYS:
                continue
            if key not in fields:
                from arrayplan_engine.errors import did_you_mean

                known = sorted(fields) + (list(_WORKLOAD_FILE_KEYS) if msg.DESCRIPTOR.name == "Workload" else [])
                hint = did_you_mean(str(key), known)
                self.fail(where, f"unknown field{hint}; allowed: {', '.join(sorted(fields))}")
                continue
            self.set_field(msg, fields[key], value, where)
        if msg.DESCRIPTOR.name == "Workload" and any(k in data for k in ("fio", "trace")):
            if not self.workload_files:
                key = "fio" if "fio" in data else "trace"
                self.fail(at + (key,), "a workload file names a path on the caller's machine, which the server does not read: "
                                       "give the workload's fields (read_fraction, io_size_mix, target_iops, ...) instead")
                return
            self.workload_file(msg, data, at)

    def workload_file(self, msg: Message, data: Mapping[str, Any], at: tuple[Any, ...]) -> None:
        """Reduce a fio job file or block trace to workload fields (explicit fields win)."""
        from arrayplan_engine.errors import InvalidInputError

        from .workloads import load_workload

        spec = {k: data[k] for k in _WORKLOAD_FILE_KEYS if k in data}
        if "seq_tolerance_bytes" in spec:  # a size like any other in the file (docs/units.md)
            try:
                spec["seq_tolerance_bytes"] = parse_size_bytes(spec["seq_tolerance_bytes"])
            except ValueError as exc:
                self.fail(at + ("seq_tolerance_bytes",), str(exc))
                return
        try:
            workload, warnings = load_workload(spec, self.base_dir, allow_outside_paths=self.allow_outside_paths)
        except InvalidInputError as exc:
            key = "fio" if "fio" in data else "trace"
            for v in exc.violations:  # the field is named once (workload.trace: FILE:LINE: reason)
                self.fail(at + (key,), v.reason if v.field == f"workload.{key}" else f"{v.field}: {v.reason}")
            return
        except OSError as exc:
            self.fail(at + ("fio" if "fio" in data else "trace",), f"cannot read: {exc.strerror or type(exc).__name__}")
            return
        self.warnings.extend(warnings)
        explicit = set(data)
        simple = {"read_fraction": "read_fraction", "random_fraction": "random_fraction", "queue_depth": "queue_depth",
                  "target_iops": "target_iops", "daily_write_bytes": "daily_write_bytes", "hot_write_fraction": "hot_write_fraction",
                  "hot_space_fraction": "hot_space_fraction", "working_set_fraction": "working_set_fraction",
                  "growth_fraction_per_year": "growth_per_year"}
        for api, eng in simple.items():
            if api not in explicit:
                setattr(msg, api, getattr(workload, eng))
        if "target_iops" in explicit and "daily_write_bytes" not in explicit:
            from .workloads import rescaled_daily_write_bytes

            msg.daily_write_bytes, note = rescaled_daily_write_bytes(workload, msg.target_iops)
            if note:
                self.warnings.append(note)
        if "io_size_mix" not in explicit:
            for size, weight in workload.io_size_mix:
                msg.io_size_mix.add(io_bytes=int(size), weight=float(weight))
        if "display_name" not in explicit:
            msg.display_name = workload.name

    def scalar(self, field: FieldDescriptor, value: Any, at: tuple[Any, ...]) -> Any:
        name = field.name
        try:
            if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name == "google.protobuf.Duration":
                d = duration_pb2.Duration()
                d.FromNanoseconds(parse_duration_ns(value))
                return d
            if field.type in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64):
                number = parse_size_bytes(value) if "_bytes" in name else value  # a size is whole bytes
                if isinstance(number, bool) or not isinstance(number, (int, float)) or (isinstance(number, float) and not number.is_integer()):
                    raise ValueError(f"expected an integer, got {value!r}")
                limit = 2**31 - 1 if field.type == FieldDescriptor.TYPE_INT32 else 2**63 - 1
                if abs(int(number)) > limit:
                    raise ValueError(f"out of range for {field.type == FieldDescriptor.TYPE_INT32 and 'int32' or 'int64'}: {value!r}")
                return int(number)
            if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
                if "_bytes" in name:
                    return float(parse_size_bytes(value))
                if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value.strip()):
                    value = float(value)  # YAML 1.1 reads 1e-17 (no '.') as text; a person means the number
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise ValueError(f"expected a number, got {value!r}")
                return float(value)
            if field.type == FieldDescriptor.TYPE_BOOL:
                if not isinstance(value, bool):
                    raise ValueError(f"expected true or false, got {value!r}")
                return value
            if field.type == FieldDescriptor.TYPE_STRING:
                if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                    raise ValueError(f"expected a string, got {value!r}")
                return str(value)
            if field.type == FieldDescriptor.TYPE_ENUM:
                enum = field.enum_type
                prefix = _SHORT_ENUM_PREFIX.get(enum.name, "")
                key = str(value).upper().replace("-", "_")
                for candidate in (key, prefix + key):
                    if candidate in enum.values_by_name and not candidate.endswith("UNSPECIFIED"):
                        return enum.values_by_name[candidate].number
                allowed = [v.name[len(prefix):].lower() for v in enum.values if not v.name.endswith("UNSPECIFIED")]
                raise ValueError(f"unknown value {value!r}; allowed: {', '.join(allowed)}")
        except (ValueError, OverflowError) as exc:  # OverflowError: int(inf) of a .inf or 1e400
            self.fail(at, str(exc))
            return None
        raise AssertionError(f"unhandled field type {field.type} for {name}")

    def custom_drive(self, msg: Message, data: Any, at: tuple[Any, ...]) -> None:
        """One ``custom_drives:`` item: the fields of a catalog file (docs/catalog.md). A field is a
        plain value (recorded as supplied by the user) or a table ``{value, source, quote}`` /
        ``{value, assumed: true, reason}``; sizes may carry units (``capacity_bytes: 3.84 TB``)."""
        if not isinstance(data, Mapping):
            self.fail(at, f"must be a mapping of drive fields, got {type(data).__name__}")
            return
        fields = msg.DESCRIPTOR.fields_by_name
        for key, value in data.items():
            where = at + (key,)
            if key == "provenance":  # the API's form: [{field, source, quote, assumed, reason}]
                self.set_field(msg, fields[key], value, where)
                continue
            if key not in fields:
                self.fail(where, f"unknown field; allowed: {', '.join(fields)}")
                continue
            field = fields[key]
            prov: dict[str, Any] | None = None
            if isinstance(value, Mapping):
                unknown = [k for k in value if k not in ("value", "source", "quote", "assumed", "reason")]
                for k in unknown:
                    self.fail(where + (k,), "unknown key; allowed: value, source, quote, assumed, reason")
                if "value" not in value:
                    self.fail(where, "a table needs value (and source + quote, or assumed: true and reason)")
                    continue
                prov, value = {k: v for k, v in value.items() if k != "value"}, value["value"]
                if unknown:
                    continue
            if isinstance(value, str) and field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT) \
                    and not key.endswith("_bytes"):
                try:
                    value = float(value.replace("_", ""))  # YAML 1.1 reads 1e-15 as a string
                except ValueError:
                    pass
            converted = self.scalar(field, value, where + (("value",) if prov is not None else ()))
            if converted is None:
                continue
            setattr(msg, key, converted)
            if prov is not None:
                entry = msg.provenance.add(field=key)
                for k in ("source", "quote", "reason"):
                    if k in prov:
                        if not isinstance(prov[k], str):
                            self.fail(where + (k,), f"must be a string, got {prov[k]!r}")
                        else:
                            setattr(entry, k, prov[k])
                if "assumed" in prov:
                    if not isinstance(prov["assumed"], bool):
                        self.fail(where + ("assumed",), f"must be true or false, got {prov['assumed']!r}")
                    else:
                        entry.assumed = prov["assumed"]

    def set_field(self, msg: Message, field: FieldDescriptor, value: Any, at: tuple[Any, ...]) -> None:
        is_repeated = field.is_repeated
        is_message = field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name != "google.protobuf.Duration"
        if is_repeated:
            if not isinstance(value, list):
                self.fail(at, f"must be a list, got {type(value).__name__}")
                return
            for i, item in enumerate(value):
                if is_message and field.message_type.name == "DriveSpec":
                    self.custom_drive(getattr(msg, field.name).add(), item, at + (i,))
                elif is_message:
                    sub = getattr(msg, field.name).add()
                    if field.message_type.name == "IoSizeShare" and isinstance(item, list) and len(item) == 2:
                        item = {"io_bytes": item[0], "weight": item[1]}
                    self.fill(sub, item, at + (i,))
                else:
                    converted = self.scalar(field, item, at + (i,))
                    if converted is not None:
                        getattr(msg, field.name).append(converted)
            return
        if is_message:
            self.fill(getattr(msg, field.name), value, at)
            return
        converted = self.scalar(field, value, at)
        if converted is None:
            return
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            getattr(msg, field.name).CopyFrom(converted)
        else:
            setattr(msg, field.name, converted)


def plan_spec_from_text(text: str, path: str = "<plan>", base_dir: Path | None = None, *,
                        allow_outside_paths: bool = False, workload_files: bool = True) -> tuple[pb.PlanSpec, list[str]]:
    """Parse a plan file; raises ``PlanFileError`` listing every problem with its line. Files it
    names (``fio:``, ``trace:``) must lie under ``base_dir`` unless ``allow_outside_paths``; with
    ``workload_files`` false they are refused (the server parsing a client's text)."""
    doc = load_yaml(text, path)
    builder = _Builder(doc, path, base_dir or Path.cwd(), allow_outside_paths, workload_files)
    spec = pb.PlanSpec()
    builder.fill(spec, doc.data, ())
    if isinstance(doc.data, Mapping):
        for required in ("workload", "constraints"):
            if required not in doc.data:
                builder.problems.append((1, required, "is required"))
    if not builder.problems and spec.custom_drives:
        # A drive the models cannot use is refused here with its line (the server refuses it too).
        from .convert import custom_drive_model_violations

        for v in custom_drive_model_violations(spec.custom_drives, "plan.spec"):
            field = v.field.removeprefix("plan.spec.")
            builder.problems.append((_line_in(doc, field), field, v.reason))
    if not builder.problems and spec.constraints.HasField("max_fill_fraction"):
        # The fill target's range, with its line (the server refuses it too).
        from .convert import fill_target_violations

        for v in fill_target_violations(spec.constraints, "constraints"):
            builder.problems.append((_line_in(doc, v.field), v.field, v.reason))
    if not builder.problems:
        # The drive bay's cost and power ranges, with their lines (the server refuses them too).
        from .convert import bay_violations

        for v in bay_violations(spec.candidate_space, "candidate_space"):
            builder.problems.append((_line_in(doc, v.field), v.field, v.reason))
    if not builder.problems and spec.candidate_space.HasField("servers"):
        # The cluster fields' ranges, with their lines (the server refuses them too).
        from arrayplan_engine.errors import InvalidInputError

        from .cluster_convert import cluster_space_from_proto

        try:
            cluster_space_from_proto(spec.candidate_space, "plan.spec")
        except InvalidInputError as exc:
            for v in exc.violations:
                field = v.field.removeprefix("plan.spec.")
                builder.problems.append((_line_in(doc, field), field, v.reason))
    if builder.problems:
        raise PlanFileError(path, builder.problems)
    return spec, builder.warnings


def _line_in(doc: _Doc, field: str) -> int | None:
    """The line of a dotted field path (``custom_drives[0].capacity_bytes``), or of its nearest
    parent the document has."""
    parts: list[Any] = [int(t[1:-1]) if t.startswith("[") else t for t in re.findall(r"[^.\[\]]+|\[\d+\]", field)]
    while parts:
        if tuple(parts) in doc.lines:
            return doc.lines[tuple(parts)]
        parts.pop()
    return None


MAX_PLAN_FILE_BYTES = MAX_YAML_BYTES  # a plan file is one YAML document: the loader's bound


def read_yaml_file(path: Path, what: str = "plan file") -> str:
    """The text of a YAML file the CLI reads (plan file, array file): a regular file (a FIFO or a
    device is refused before it is read) of at most MAX_YAML_BYTES, in UTF-8; never more than
    that is read. Problems are a ``PlanFileError`` naming the file (and, for the size, the line
    where the limit falls)."""
    from arrayplan_engine.errors import InvalidInputError

    from .workloads import open_regular

    try:
        with open_regular(Path(path), what.replace(" ", "_"), str(path)) as f:
            raw = f.read(MAX_PLAN_FILE_BYTES + 1)
        if len(raw) > MAX_PLAN_FILE_BYTES:
            line = raw.count(b"\n", 0, MAX_PLAN_FILE_BYTES) + 1
            raise PlanFileError(str(path), [(line, "", f"the {what} is over {MAX_PLAN_FILE_BYTES} bytes "
                                                       f"(limit MAX_YAML_BYTES = {MAX_YAML_BYTES:,})")])
        return raw.decode("utf-8")
    except InvalidInputError as exc:
        raise PlanFileError(str(path), [(None, "", f"cannot read the {what}: {exc.violations[0].reason}")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise PlanFileError(str(path), [(None, "", f"cannot read the {what}: {why}")]) from None


def confine_to_named_folder(path: Path, what: str, allow_outside: bool) -> None:
    """Refuse a file that resolves outside the folder it is named in (a symlink a pull request
    commits, ``plan.yaml -> /etc/shadow``) unless ``allow_outside`` (``--allow-outside-paths``:
    the file is trusted)."""
    import os

    if allow_outside:
        return
    try:
        folder = path.parent.resolve()
        real = path.resolve()
        # A relative name that stays under the working directory as written must stay under it
        # resolved too: a committed directory link (cfg -> /etc, then cfg/shadow) escapes as well.
        cwd = Path.cwd()
        lexical = Path(os.path.normpath(cwd / path))
        if not path.is_absolute() and lexical.is_relative_to(cwd):
            folder = cwd.resolve() if not folder.is_relative_to(cwd.resolve()) else folder
    except (OSError, RuntimeError):  # a symlink loop: open() says why
        return
    if real != folder and not real.is_relative_to(folder):
        raise PlanFileError(str(path), [(None, "", f"the {what} is a link to a file outside its folder {folder}; refused, as a "
                                                   "file from a pull request could name any file (--allow-outside-paths reads it)")])


def load_plan_file(path: Path, *, allow_outside_paths: bool = False) -> tuple[pb.PlanSpec, list[str]]:
    """Read a plan file (a regular file of at most MAX_PLAN_FILE_BYTES); the files it names
    resolve relative to its directory and must stay under it unless ``allow_outside_paths``."""
    confine_to_named_folder(Path(path), "plan file", allow_outside_paths)
    text = read_yaml_file(path, "plan file")
    return plan_spec_from_text(text, str(path), Path(path).resolve().parent, allow_outside_paths=allow_outside_paths)


def line_of(path_text: str, field: str) -> int | None:
    """The line of an API field path (``plan.spec.workload.read_fraction``) in a plan file, for
    server-side errors about a file's content."""
    try:
        doc = load_yaml(path_text, "<plan>")
    except PlanFileError:
        return None
    return _line_in(doc, field.removeprefix("plan.spec."))


def parse_plan_file_request(request: pb.ParsePlanFileRequest) -> pb.ParsePlanFileResponse:
    """ParsePlanFile: a client's plan-file text -> the PlanSpec, through the CLI's own parser (one
    grammar: units, durations, enums, did-you-mean). Every problem is a violation of the request's
    ``text`` whose description is the CLI's line without the file name: ``line N: FIELD: reason``
    (FIELD the file's path, e.g. ``workload.read_fraction``; ``line N: reason`` for the document
    as a whole). Workload files are refused (their paths are on the caller's machine)."""
    from arrayplan_engine.errors import InvalidInputError, Violation

    try:
        spec, warnings = plan_spec_from_text(request.text, "<plan>", workload_files=False)
    except PlanFileError as exc:
        raise InvalidInputError([Violation(field="text", reason=f"line {line or '?'}: " + (f"{field}: {reason}" if field else reason))
                                 for line, field, reason in exc.problems]) from None
    return pb.ParsePlanFileResponse(spec=spec, warnings=warnings)
