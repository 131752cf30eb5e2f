"""A stored plan trace (``GetPlanTraceResponse``) as OTLP/JSON, the OpenTelemetry protocol's JSON
encoding of an ``ExportTraceServiceRequest``.

``to_otlp_request`` builds the request from the opentelemetry-proto messages
(``opentelemetry.proto.*``, installed with the OTLP exporter); ``to_otlp_json`` prints it with
``google.protobuf.json_format``. OTLP/JSON is the proto3 JSON mapping with two differences
(the opentelemetry-proto specification, "JSON Protobuf Encoding"), both handled here:

* trace and span ids (``traceId``, ``spanId``, ``parentSpanId``, also in a link) are hex strings,
  where the proto3 mapping writes ``bytes`` as base64: those keys, and only those, are rewritten
  (any other ``bytes`` value stays base64, as the specification says);
* enums (``kind``, ``status.code``) are integers: ``use_integers_for_enums=True``.

Keys are lowerCamelCase and 64-bit integers (times in Unix nanoseconds, ``intValue``) decimal
strings, as the proto3 mapping writes them. Fields at their zero value are left out (a span without
attributes has no ``attributes`` key, an UNSET status no ``code``), which receivers read as zero.

The file ``arrayplan trace NAME --otlp-json FILE`` writes can be POSTed to any OTLP/HTTP receiver
(``curl -H 'Content-Type: application/json' --data-binary @FILE http://127.0.0.1:4318/v1/traces``,
the bundled collector or Jaeger) or read by the collector's ``otlpjsonfile`` receiver;
docs/tracing.md shows the pipeline. One resource per recording process (the server, each Ray
worker), as the live export groups them.
"""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, InstrumentationScope, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from arrayplan.v1 import planner_pb2 as pb

SCOPE_NAME = "arrayplan"
# The keys OTLP/JSON writes in hex: the ids of Span and Span.Link.
HEX_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
# The stored kind and status names (telemetry.span_record: the SDK's SpanKind / StatusCode names).
_KINDS = {name.removeprefix("SPAN_KIND_"): number for name, number in Span.SpanKind.items() if number}
_STATUSES = {name.removeprefix("STATUS_CODE_"): number for name, number in Status.StatusCode.items()}


def _any_value(v: Any) -> AnyValue:
    """An attribute value read back from the store's ``Struct``, whose numbers are all doubles: a
    whole number within 2^53 is an ``intValue`` again, as the SDK recorded it."""
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(int_value=int(v)) if v.is_integer() and abs(v) < 2**53 else AnyValue(double_value=v)
    if isinstance(v, list):
        return AnyValue(array_value=ArrayValue(values=[_any_value(x) for x in v]))
    if v is None:
        return AnyValue()
    return AnyValue(string_value=str(v))


def _attributes(d: dict[str, Any]) -> list[KeyValue]:
    return [KeyValue(key=k, value=_any_value(v)) for k, v in sorted(d.items())]


def _id(text: str, field: str, digits: int) -> bytes:
    """A stored hex id as the bytes the message holds; a malformed one is a ValueError naming the field."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if len(raw) * 2 != digits:
        raise ValueError(f"{field}: {text!r} is not an id of {digits} hex digits")
    return raw


def to_otlp_request(trace: pb.GetPlanTraceResponse, service_name: str = "arrayplan") -> ExportTraceServiceRequest:
    """The trace as an ``ExportTraceServiceRequest``: one ``ResourceSpans`` per recording process in
    the order the processes first appear; a kind or status name OpenTelemetry does not define is
    left at its zero value (unspecified, unset)."""
    trace_id = _id(trace.trace_id, "trace_id", 32)
    by_process: dict[str, list[Span]] = {}
    for i, s in enumerate(trace.spans):
        attrs = json_format.MessageToDict(s.attributes) if s.HasField("attributes") else {}
        span = Span(trace_id=trace_id, span_id=_id(s.span_id, f"spans[{i}].span_id", 16), name=s.name,
                    kind=_KINDS.get(s.kind.upper(), Span.SPAN_KIND_UNSPECIFIED),
                    start_time_unix_nano=s.start_time.ToNanoseconds(), end_time_unix_nano=s.end_time.ToNanoseconds(),
                    attributes=_attributes(attrs),
                    status=Status(code=_STATUSES.get(s.status.upper(), Status.STATUS_CODE_UNSET)))
        if s.parent_span_id:
            span.parent_span_id = _id(s.parent_span_id, f"spans[{i}].parent_span_id", 16)
        by_process.setdefault(s.process or "server", []).append(span)
    return ExportTraceServiceRequest(resource_spans=[
        ResourceSpans(resource=Resource(attributes=_attributes({"service.name": service_name, "arrayplan.process": process})),
                      scope_spans=[ScopeSpans(scope=InstrumentationScope(name=SCOPE_NAME), spans=spans)])
        for process, spans in by_process.items()
    ])


def _hex_ids(node: Any) -> Any:
    """``json_format``'s base64 ids rewritten as OTLP/JSON's hex, wherever a span or link holds one."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v, validate=True).hex() if k in HEX_ID_KEYS and isinstance(v, str) else _hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def to_otlp_json(trace: pb.GetPlanTraceResponse, service_name: str = "arrayplan") -> dict[str, Any]:
    """The trace as an OTLP/JSON ``ExportTraceServiceRequest`` (a dict; ``json.dumps`` writes the file)."""
    body: dict[str, Any] = _hex_ids(json_format.MessageToDict(to_otlp_request(trace, service_name), use_integers_for_enums=True))
    return body
