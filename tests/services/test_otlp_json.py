"""telemetry.otlp_json: a stored trace as OTLP/JSON, built from the opentelemetry-proto messages and
printed by json_format with OTLP/JSON's two differences from the proto3 mapping (ids in hex,
enums as integers). The real collector accepting the file is tests/cluster/test_otlp_json.py."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.telemetry.otlp_json import HEX_ID_KEYS, to_otlp_json, to_otlp_request

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
ROOT_ID = "b7ad6b7169203331"
CHILD_ID = "00f067aa0ba902b7"


def _trace() -> pb.GetPlanTraceResponse:
    t = pb.GetPlanTraceResponse(trace_id=TRACE_ID)
    root = t.spans.add(span_id=ROOT_ID, name="arrayplan.plan", kind="SERVER", status="OK", process="server")
    root.start_time.FromNanoseconds(1_700_000_000_123_456_789)
    root.end_time.FromNanoseconds(1_700_000_001_000_000_000)
    root.attributes.update({"arrayplan.candidate_count": 12, "arrayplan.share_fraction": 0.5, "ok": True,
                            "arrayplan.layouts": ["raid10", 6], "arrayplan.note": "a < b"})
    child = t.spans.add(span_id=CHILD_ID, parent_span_id=ROOT_ID, name="arrayplan.evaluate_batch", kind="CONSUMER", status="ERROR",
                        process="worker:12")
    child.start_time.FromNanoseconds(1_700_000_000_200_000_000)
    child.end_time.FromNanoseconds(1_700_000_000_900_000_000)
    return t


def _spans(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for rs in body["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def test_ids_are_hex_and_enums_integers() -> None:
    body = to_otlp_json(_trace())
    root, child = _spans(body)
    assert root["traceId"] == child["traceId"] == TRACE_ID
    assert (root["spanId"], child["spanId"], child["parentSpanId"]) == (ROOT_ID, CHILD_ID, ROOT_ID)
    assert "parentSpanId" not in root
    assert (root["kind"], root["status"]["code"], child["kind"], child["status"]["code"]) == (2, 1, 5, 2)
    assert (root["startTimeUnixNano"], root["endTimeUnixNano"]) == ("1700000000123456789", "1700000001000000000")
    attrs = {a["key"]: a["value"] for a in root["attributes"]}
    assert attrs == {"arrayplan.candidate_count": {"intValue": "12"}, "arrayplan.share_fraction": {"doubleValue": 0.5},
                     "ok": {"boolValue": True}, "arrayplan.note": {"stringValue": "a < b"},
                     "arrayplan.layouts": {"arrayValue": {"values": [{"stringValue": "raid10"}, {"intValue": "6"}]}}}
    resources = [{a["key"]: a["value"]["stringValue"] for a in rs["resource"]["attributes"]} for rs in body["resourceSpans"]]
    assert resources == [{"service.name": "arrayplan", "arrayplan.process": "server"},
                         {"service.name": "arrayplan", "arrayplan.process": "worker:12"}]
    assert {ss["scope"]["name"] for rs in body["resourceSpans"] for ss in rs["scopeSpans"]} == {"arrayplan"}


def test_the_ids_are_the_only_difference_from_the_proto3_mapping() -> None:
    """The hex ids put back as base64, json_format parses the document into the very message it was
    printed from: nothing else was written by hand."""
    body = to_otlp_json(_trace())
    as_proto3 = copy.deepcopy(body)
    for s in _spans(as_proto3):
        for k in HEX_ID_KEYS & set(s):
            s[k] = base64.b64encode(bytes.fromhex(s[k])).decode("ascii")
    parsed = json_format.ParseDict(as_proto3, ExportTraceServiceRequest())
    assert parsed == to_otlp_request(_trace())
    assert parsed.resource_spans[0].scope_spans[0].spans[0].trace_id == bytes.fromhex(TRACE_ID)


def test_unknown_names_stay_at_zero_and_bad_ids_name_the_field() -> None:
    t = _trace()
    t.spans[1].kind, t.spans[1].status = "SIDEWAYS", "MAYBE"
    _, child = _spans(to_otlp_json(t))
    assert "kind" not in child and "code" not in child["status"]  # zero: unspecified, unset
    t.spans[1].span_id = "xyz"
    with pytest.raises(ValueError, match=r"spans\[1\]\.span_id: 'xyz' is not an id of 16 hex digits"):
        to_otlp_json(t)
    with pytest.raises(ValueError, match="trace_id"):
        to_otlp_json(pb.GetPlanTraceResponse(trace_id="abc"))
