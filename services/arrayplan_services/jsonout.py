"""One JSON convention for every ``--format json`` (and the Python client's ``to_json``).

``json_format.MessageToDict`` follows the proto3 JSON mapping, which a script trips on: int64
values become strings, durations become ``"0.000628736s"``, and fields at their zero value are
left out. ``to_json`` walks the message descriptor instead:

* every field is present: an unset sub-message, optional scalar or oneof member is ``null``,
  a zero is ``0`` / ``false`` / ``""``, an empty repeated field is ``[]``;
* numbers are JSON numbers (int64 included); NaN and infinities become ``null``;
* a ``google.protobuf.Duration`` field ``latency_p50`` becomes ``latency_p50_s``: seconds as a
  number (SI units named in every key: ``_bytes``, ``_s``, ``_usd``, ``_w``, ``_fraction``, ...);
* a ``google.protobuf.Timestamp`` is an RFC 3339 string in UTC (``"2026-01-02T03:04:05.123Z"``);
* enums are their full proto names (``"STATE_SUCCEEDED"``); field names are the proto names.

Commands that print engine results rather than API messages (``forecast``, ``reliability``,
``telemetry``) go through the same module: ``to_plain`` turns frozen dataclasses, enums, tuples,
dicts and numpy scalars into the same shape (every dataclass field present, ``None`` as ``null``,
NaN and infinities as ``null``, a ``datetime.timedelta`` as seconds under an ``_s`` key, a message
inside through ``to_json``), and ``forecast_json`` builds the forecast's document.

``json_schema`` derives a JSON Schema (draft 2020-12) for the same shapes from the same
descriptors and dataclass annotations, so the schema in docs/json-schema.json cannot drift from
the output (tests/services/test_newcomer.py regenerates and compares it).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import math
import types
import typing
from collections.abc import Sequence
from typing import Any, Literal, Union

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

_DURATION = "google.protobuf.Duration"
_TIMESTAMP = "google.protobuf.Timestamp"
_INTS = {FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64,
         FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64,
         FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_SFIXED64}
_FLOATS = {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}


def json_key(field: FieldDescriptor) -> str:
    """The output key of a field: durations carry their unit, ``_s``."""
    if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name == _DURATION:
        return field.name + "_s"
    return field.name


def _has_presence(field: FieldDescriptor) -> bool:
    return bool(field.has_presence) and not field.is_repeated


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    if field.type in _FLOATS:
        return float(value) if math.isfinite(value) else None
    if field.type in _INTS:
        return int(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        v = field.enum_type.values_by_number.get(int(value))
        return v.name if v is not None else int(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        import base64

        return base64.b64encode(value).decode("ascii")
    return value


def _message_value(field: FieldDescriptor, value: Message) -> Any:
    name = field.message_type.full_name
    if name == _DURATION:
        return value.ToNanoseconds() / 1e9  # type: ignore[attr-defined]
    if name == _TIMESTAMP:
        return value.ToJsonString()  # type: ignore[attr-defined]
    return to_json(value)


def to_json(msg: Message) -> dict[str, Any]:
    """A message as a dict under the convention above (json.dumps-able)."""
    out: dict[str, Any] = {}
    for field in msg.DESCRIPTOR.fields:
        key = json_key(field)
        value = getattr(msg, field.name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            vf = field.message_type.fields_by_name["value"]
            out[key] = {str(k): (_message_value(vf, v) if vf.type == FieldDescriptor.TYPE_MESSAGE else _scalar(vf, v))
                        for k, v in value.items()}
        elif field.is_repeated:
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                out[key] = [_message_value(field, v) for v in value]
            else:
                out[key] = [_scalar(field, v) for v in value]
        elif _has_presence(field) and not msg.HasField(field.name):
            # Unset: null for optional scalars, durations, timestamps and oneof members; a
            # sub-message without presence semantics of its own is shown with its zero fields.
            if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name not in (_DURATION, _TIMESTAMP) \
                    and field.containing_oneof is None:
                out[key] = to_json(value)
            else:
                out[key] = None
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            out[key] = _message_value(field, value)
        else:
            out[key] = _scalar(field, value)
    return out


def dumps(obj: Any, **extra: Any) -> str:
    """JSON text of a message, an engine result (dataclass), or a list or dict holding them (see
    ``to_plain``), with ``extra`` top-level keys (a dict or dataclass input only)."""
    body = to_plain(obj)
    if extra:
        if not isinstance(body, dict):
            raise TypeError(f"extra keys need a dict or dataclass at the top level, got {type(obj).__name__}")
        body.update(to_plain(extra))
    return json.dumps(body, indent=2, allow_nan=False)


# -- engine results ------------------------------------------------------------------------------

def _key_and_value(key: str, value: Any) -> tuple[str, Any]:
    if isinstance(value, dt.timedelta):
        return (key if key.endswith("_s") else key + "_s"), value.total_seconds()
    return key, to_plain(value)


def to_plain(obj: Any) -> Any:
    """``obj`` as JSON-ready data under the one convention: a message through ``to_json``; a
    dataclass as a dict of every one of its fields; an enum as its value; a float that is NaN or
    infinite as ``None``; a tuple or list as a list; a dict with its keys as strings; a
    ``datetime.timedelta`` as seconds (its key gets ``_s``); numpy scalars as numbers. Anything
    else raises ``TypeError``: nothing reaches the output through ``str()`` by accident."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return to_plain(obj.value)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, Message):
        return to_json(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dict(_key_and_value(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj))
    if isinstance(obj, dict):
        return dict(_key_and_value(str(k), v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, dt.timedelta):
        return obj.total_seconds()
    item = getattr(obj, "item", None)  # numpy scalars
    if callable(item) and type(obj).__module__ == "numpy":
        return to_plain(item())
    raise TypeError(f"no JSON form for {type(obj).__name__} (arrayplan_services.jsonout.to_plain)")


def _iso_day(t: float | None) -> str | None:
    return None if not t else dt.datetime.fromtimestamp(t, tz=dt.UTC).strftime("%Y-%m-%d")


# DateInterval keys the forecast adds: the dates of its times, for people reading the JSON.
_INTERVAL_DATES = {"date": "time_s", "earliest_date": "earliest_s", "latest_date": "latest_s"}


def _with_dates(x: Any) -> Any:
    if isinstance(x, dict):
        out = {k: _with_dates(v) for k, v in x.items()}
        if set(_INTERVAL_DATES.values()) <= set(out) and len(out) == len(_INTERVAL_DATES):
            out.update({k: _iso_day(out[t]) for k, t in _INTERVAL_DATES.items()})
        return out
    if isinstance(x, list):
        return [_with_dates(v) for v in x]
    return x


def forecast_json(forecast: Any, *, options: Sequence[Any], file_problems: Sequence[str], replan: Message | None,
                  replan_notes: Sequence[str]) -> dict[str, Any]:
    """The document ``arrayplan forecast --format json`` prints: every field of the engine's
    ``ArrayForecast`` (times in Unix seconds under ``_s`` keys; each interval also with its
    ``date``, ``earliest_date``, ``latest_date`` as ISO days, ``null`` when open), then the files
    that could not be used, the options to keep the array serving, and the re-plan (the API's
    ``Plan`` under this convention; ``null`` without ``--replan``) with its notes."""
    out: dict[str, Any] = _with_dates(to_plain(forecast))
    out.update(file_problems=[str(p) for p in file_problems], options=to_plain(list(options)),
               replan=None if replan is None else to_json(replan), replan_notes=[str(n) for n in replan_notes])
    return out


# -- JSON Schema ---------------------------------------------------------------------------------

def _field_schema(field: FieldDescriptor, defs: dict[str, Any]) -> dict[str, Any]:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name == _DURATION:
            item: dict[str, Any] = {"type": "number", "description": "seconds"}
        elif name == _TIMESTAMP:
            item = {"type": "string", "format": "date-time"}
        else:
            _define(field.message_type, defs)
            item = {"$ref": f"#/$defs/{name}"}
    elif field.type in _FLOATS:
        item = {"type": "number"}
    elif field.type in _INTS:
        item = {"type": "integer"}
    elif field.type == FieldDescriptor.TYPE_BOOL:
        item = {"type": "boolean"}
    elif field.type == FieldDescriptor.TYPE_ENUM:
        item = {"type": "string", "enum": [v.name for v in field.enum_type.values]}
    else:
        item = {"type": "string"}
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        vf = field.message_type.fields_by_name["value"]
        return {"type": "object", "additionalProperties": _field_schema(vf, defs)}
    if field.is_repeated:
        return {"type": "array", "items": item}
    nullable = _has_presence(field) and (field.type != FieldDescriptor.TYPE_MESSAGE or field.containing_oneof is not None
                                         or field.message_type.full_name in (_DURATION, _TIMESTAMP))
    if field.type in _FLOATS:
        nullable = True  # NaN / infinity
    if nullable:
        return {"anyOf": [item, {"type": "null"}]}
    return item


def _define(desc: Descriptor, defs: dict[str, Any]) -> None:
    if desc.full_name in defs:
        return
    defs[desc.full_name] = {}  # reserved first: a message that refers to itself stops here
    props = {json_key(f): _field_schema(f, defs) for f in desc.fields}
    defs[desc.full_name] = {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}


def _type_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema of a value of annotation ``tp`` as ``to_plain`` prints it."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return {"type": "null"}
    if origin in (Union, types.UnionType):
        parts = [_type_schema(a, defs) for a in args]
        flat = [q for p in parts for q in (p["anyOf"] if set(p) == {"anyOf"} else [p])]
        unique = [q for i, q in enumerate(flat) if q not in flat[:i]]
        return {"anyOf": unique}
    if origin is Literal:
        return {"type": "string", "enum": list(args)}
    if origin in (tuple, list, Sequence) or tp in (tuple, list):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {"type": "array", "prefixItems": [_type_schema(a, defs) for a in args], "items": False}
        return {"type": "array", "items": _type_schema(args[0], defs) if args else {}}
    if origin is dict or tp is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1], defs) if args else {}}
    if tp is Any:
        return {}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"anyOf": [{"type": "number"}, {"type": "null"}]}  # NaN / infinity
    if tp is str:
        return {"type": "string"}
    if tp is dt.timedelta:
        return {"type": "number", "description": "seconds"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if isinstance(tp, type) and issubclass(tp, Message):
        _define(tp.DESCRIPTOR, defs)
        return {"$ref": f"#/$defs/{tp.DESCRIPTOR.full_name}"}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return {"$ref": f"#/$defs/{_define_dataclass(tp, defs)}"}
    raise TypeError(f"no JSON Schema for annotation {tp!r}")


def _dataclass_properties(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        key = f.name + "_s" if tp is dt.timedelta and not f.name.endswith("_s") else f.name
        props[key] = _type_schema(tp, defs)
    return props


def _define_dataclass(cls: type, defs: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name not in defs:
        defs[name] = {}  # reserved first, as _define does
        props = {**_dataclass_properties(cls, defs), **(extra or {})}
        defs[name] = {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}
    return name


def _forecast_root(defs: dict[str, Any]) -> str:
    """The forecast document's definition (``forecast_json``), under its own name."""
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan_engine.forecast import ArrayForecast, DateInterval

    from .api.arrayfile import ReplanOption

    day = {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]}
    _define_dataclass(DateInterval, defs, extra={k: day for k in _INTERVAL_DATES})
    name = "arrayplan_services.jsonout.forecast_json"
    props = {
        **_dataclass_properties(ArrayForecast, defs),
        "file_problems": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "array", "items": _type_schema(ReplanOption, defs)},
        "replan": {"anyOf": [_type_schema(pb.Plan, defs), {"type": "null"}]},
        "replan_notes": {"type": "array", "items": {"type": "string"}},
    }
    defs[name] = {"type": "object", "properties": props, "required": sorted(props), "additionalProperties": False}
    return name


def json_schema(roots: dict[str, Descriptor | type | str]) -> dict[str, Any]:
    """One JSON Schema document: ``roots`` (output name -> message descriptor, dataclass type, or
    ``"forecast"`` for ``forecast_json``'s document) under ``$defs``, each root also named in
    ``x-outputs`` with the command that prints it."""
    defs: dict[str, Any] = {}
    refs: dict[str, str] = {}
    for out, root in roots.items():
        if isinstance(root, Descriptor):
            _define(root, defs)
            refs[out] = root.full_name
        elif root == "forecast":
            refs[out] = _forecast_root(defs)
        elif isinstance(root, type) and dataclasses.is_dataclass(root):
            refs[out] = _define_dataclass(root, defs)
        else:
            raise TypeError(f"{out}: not a message descriptor or a dataclass: {root!r}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://arrayplan.invalid/schema/arrayplan-v1.json",
        "title": "arrayplan --format json output",
        "description": "Generated by arrayplan_services.jsonout.json_schema from proto/arrayplan/v1 and the engine's "
                       "result types; see docs/json.md.",
        "x-outputs": {k: f"#/$defs/{v}" for k, v in refs.items()},
        "$defs": dict(sorted(defs.items())),
    }


def output_roots() -> dict[str, Descriptor | type | str]:
    """What each ``--format json`` prints."""
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan_engine.reliability import ArrayReliability

    return {
        "arrayplan plan / arrayplan runs NAME": pb.Plan.DESCRIPTOR,
        "arrayplan runs": pb.ListPlansResponse.DESCRIPTOR,
        "arrayplan drives (a list of)": pb.Drive.DESCRIPTOR,
        "arrayplan simulate (a server or --local)": pb.SimulateArrayResponse.DESCRIPTOR,
        "arrayplan trace --format json": pb.GetPlanTraceResponse.DESCRIPTOR,
        "arrayplan forecast": "forecast",
        "arrayplan reliability": ArrayReliability,
    }


def main() -> None:
    """Print the schema (``python -m arrayplan_services.jsonout > docs/json-schema.json``)."""
    print(json.dumps(json_schema(output_roots()), indent=2))


if __name__ == "__main__":
    main()
