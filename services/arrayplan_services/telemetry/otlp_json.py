"""A stored plan trace (``GetPlanTraceResponse``) as OTLP/JSON, the OpenTelemetry protocol's JSON
encoding of an ``ExportTraceServiceRequest`` (opentelemetry-proto ``trace/v1``; ids in hex, times
as decimal strings of Unix nanoseconds, attribute values typed).

The file ``arrayplan trace NAME --otlp-json FILE`` writes can be POSTed to any OTLP/HTTP receiver
(``curl -H 'Content-Type: application/json' --data-binary @FILE http://127.0.0.1:4318/v1/traces``,
the bundled collector or Jaeger) or read by the collector's ``otlpjsonfile`` receiver;
docs/tracing.md shows the pipeline. One resource per recording process (the server, each Ray
worker), as the live export groups them.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from arrayplan.v1 import planner_pb2 as pb

# opentelemetry-proto trace/v1 Span.SpanKind and Status.StatusCode numbers.
_KIND = {"INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def _any_value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"intValue": str(int(v))} if v.is_integer() and abs(v) < 2**53 else {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_any_value(x) for x in v]}}
    if v is None:
        return {}
    return {"stringValue": str(v)}


def _attributes(d: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in sorted(d.items())]


def _nanos(ts: Any) -> str:
    return str(ts.ToNanoseconds())


def to_otlp_json(trace: pb.GetPlanTraceResponse, service_name: str = "arrayplan") -> dict[str, Any]:
    """The trace as an OTLP/JSON ``ExportTraceServiceRequest`` dict."""
    by_process: dict[str, list[dict[str, Any]]] = {}
    for s in trace.spans:
        attrs = json_format.MessageToDict(s.attributes) if s.HasField("attributes") else {}
        span: dict[str, Any] = {
            "traceId": trace.trace_id, "spanId": s.span_id, "name": s.name,
            "kind": _KIND.get(s.kind.upper(), 0), "startTimeUnixNano": _nanos(s.start_time), "endTimeUnixNano": _nanos(s.end_time),
            "attributes": _attributes(attrs), "status": {"code": _STATUS.get(s.status.upper(), 0)},
        }
        if s.parent_span_id:
            span["parentSpanId"] = s.parent_span_id
        by_process.setdefault(s.process or "server", []).append(span)
    return {"resourceSpans": [
        {"resource": {"attributes": _attributes({"service.name": service_name, "arrayplan.process": process})},
         "scopeSpans": [{"scope": {"name": "arrayplan"}, "spans": spans}]}
        for process, spans in by_process.items()
    ]}
