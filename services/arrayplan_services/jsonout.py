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

``json_schema`` derives a JSON Schema (draft 2020-12) for the same shape from the same
descriptors, so the schema in docs/json-schema.json cannot drift from the output
(tests/services/test_newcomer.py regenerates and compares it).
"""

from __future__ import annotations

import json
import math
from typing import Any

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


def dumps(obj: Message | list[Message] | dict[str, Any], **extra: Any) -> str:
    """JSON text of a message, a list of messages or a dict holding messages, with ``extra``
    top-level keys (a dict input only)."""
    def conv(o: Any) -> Any:
        if isinstance(o, Message):
            return to_json(o)
        if isinstance(o, list):
            return [conv(x) for x in o]
        if isinstance(o, dict):
            return {k: conv(v) for k, v in o.items()}
        return o
    body = conv(obj)
    if extra:
        assert isinstance(body, dict)
        body.update(extra)
    return json.dumps(body, indent=2, allow_nan=False)


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


def json_schema(roots: dict[str, Descriptor]) -> dict[str, Any]:
    """One JSON Schema document: ``roots`` (output name -> message) under ``$defs``, each root
    also named in ``x-outputs`` with the command that prints it."""
    defs: dict[str, Any] = {}
    for desc in roots.values():
        _define(desc, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://arrayplan.invalid/schema/arrayplan-v1.json",
        "title": "arrayplan --format json output",
        "description": "Generated by arrayplan_services.jsonout.json_schema from proto/arrayplan/v1; see docs/json.md.",
        "x-outputs": {k: f"#/$defs/{d.full_name}" for k, d in roots.items()},
        "$defs": dict(sorted(defs.items())),
    }


def output_roots() -> dict[str, Descriptor]:
    """The messages each ``--format json`` prints."""
    from arrayplan.v1 import planner_pb2 as pb

    return {
        "arrayplan plan / arrayplan runs NAME": pb.Plan.DESCRIPTOR,
        "arrayplan runs": pb.ListPlansResponse.DESCRIPTOR,
        "arrayplan drives (a list of)": pb.Drive.DESCRIPTOR,
        "arrayplan simulate (server)": pb.SimulateArrayResponse.DESCRIPTOR,
        "arrayplan trace --format json": pb.GetPlanTraceResponse.DESCRIPTOR,
    }


def main() -> None:
    """Print the schema (``python -m arrayplan_services.jsonout > docs/json-schema.json``)."""
    print(json.dumps(json_schema(output_roots()), indent=2))


if __name__ == "__main__":
    main()
