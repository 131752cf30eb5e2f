"""ForecastArray over gRPC against the real server (session fixture in tests/conftest.py)."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import grpc
import pytest
from google.protobuf import timestamp_pb2

from arrayplan.v1 import planner_pb2 as pb

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "array-in-service"


def _ts(text: str) -> timestamp_pb2.Timestamp:
    t = timestamp_pb2.Timestamp()
    t.FromDatetime(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC))
    return t


def _request(create_replan: bool = False) -> pb.ForecastArrayRequest:
    serials = sorted(p.stem for p in (EXAMPLE / "telemetry").glob("*.json"))
    arr = pb.ArrayInService(display_name="oltp-array-1", layout="raid5", start_time=_ts("2024-01-01"), full_fraction=0.9,
                            worn_threshold_fraction=0.25,
                            workload=pb.Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)],
                                                 daily_write_bytes=1.2e12, hot_write_fraction=0.8, hot_space_fraction=0.2,
                                                 growth_fraction_per_year=0.2))
    for name, members in (("g1", serials[:6]), ("g2", serials[6:] + ["NOSUCHSERIAL"])):
        arr.groups.add(name=name, members=[pb.GroupMember(serial=s) for s in members])
    req = pb.ForecastArrayRequest(array=arr, create_replan=create_replan)
    for p in sorted((EXAMPLE / "telemetry").glob("*.json")):
        req.telemetry.add(source=p.name, json_text=p.read_text())
    req.telemetry.add(source="broken.json", json_text='{"smartctl": {"exit_status": 0')
    with (EXAMPLE / "capacity.csv").open() as f:
        for row in csv.DictReader(f):
            req.capacity_samples.add(time=_ts(row["time"]), used_bytes=float(row["used_bytes"]))
    return req


def test_forecast_array_rpc(stub) -> None:  # type: ignore[no-untyped-def]
    resp = stub.ForecastArray(_request(), timeout=120)
    assert resp.trace_id and len(resp.drives) == 12 and len(resp.groups) == 2
    assert any(p.startswith("broken.json: not valid JSON") for p in resp.problems)
    assert any("NOSUCHSERIAL" in p for p in resp.problems)
    g = {x.name: x for x in resp.groups}
    assert g["g2"].wear_out.time.ToSeconds() < g["g1"].wear_out.time.ToSeconds()
    assert g["g1"].lockstep and g["g1"].lockstep_member_count == 6
    for d in resp.drives:
        w = d.wear_out
        assert w.earliest_time.ToSeconds() < w.time.ToSeconds() < w.latest_time.ToSeconds()
        assert d.basis == "catalog rating" and d.catalog_drive == "intel-dc-s3500-480gb"
    assert resp.fill.HasField("used_bytes") and resp.fill.full.HasField("time")
    assert resp.options and resp.options[0].action == "replace"


def test_forecast_array_creates_a_replan(stub) -> None:  # type: ignore[no-untyped-def]
    req = _request(create_replan=True)
    req.replan.CopyFrom(pb.PlanSpec(service_life_years=3, candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb"],
                                                                                            layouts=["raid5"], group_widths=[6],
                                                                                            max_drive_count=12)))
    resp = stub.ForecastArray(req, timeout=120)
    assert resp.replan_plan_name.startswith("plans/")
    assert any("TB/day observed" in n for n in resp.replan_notes)
    plan = stub.GetPlan(pb.GetPlanRequest(name=resp.replan_plan_name), timeout=30)
    assert plan.spec.workload.daily_write_bytes > 0 and plan.spec.constraints.usable_capacity_bytes > 0
    stub.CancelPlan(pb.CancelPlanRequest(name=resp.replan_plan_name), timeout=60)


@pytest.mark.parametrize("mutate, field", [
    (lambda r: r.array.ClearField("layout"), "array.layout"),
    (lambda r: setattr(r.array, "layout", "raid7"), "array.layout"),
    (lambda r: r.array.ClearField("start_time"), "array.start_time"),
    (lambda r: setattr(r.array, "full_fraction", 1.5), "array.full_fraction"),
])
def test_forecast_array_bad_input(stub, mutate, field: str) -> None:  # type: ignore[no-untyped-def]
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    req = _request()
    mutate(req)
    with pytest.raises(grpc.RpcError) as e:
        stub.ForecastArray(req, timeout=60)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(e.value)
    fields = []
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            d.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    assert field in fields
