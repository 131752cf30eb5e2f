"""Accepted means it runs: property-based tests (hypothesis) over the plan file and the RPCs that
take numbers from a caller (CreatePlan, SimulateArray, RunConsistencyTest, ForecastArray).

The property: whatever the input, the answer is either a result or a field error naming a field
of the input; never INTERNAL or UNKNOWN, never a traceback, and never an input that validation
accepts and the engine then refuses (a plan FAILED, or an INVALID_ARGUMENT naming a field the
caller never sent, as ``hot_space_fraction: 1e-17`` once gave: ``1 - f`` rounded to 1 and the
engine raised ``static_space_fraction must be in [0, 1)``).

Floats are drawn at the edges: subnormals (5e-324), 1e-17 and 1 - 1e-17 (which is 1.0), values
one ulp inside and outside (0, 1], huge exponents, NaN and the infinities, besides hypothesis's own
float strategy. Example counts are fixed (``derandomize``: the same examples every run, so a
failure reproduces) and small enough for the suite: see EXAMPLES.
"""

from __future__ import annotations

import math
import time

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arrayplan.v1 import planner_pb2 as pb

EDGES = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-17, 1e-9, 0.25, 0.5, 1 - 1e-9, 0.9999999999999999, 1 - 1e-17,
         1.0, 1.0000000000000002, 2.0, 1e12, 1e300, 1.7976931348623157e308, -1e-17, -1.0, math.nan, math.inf, -math.inf]
FLOATS = st.one_of(st.sampled_from(EDGES), st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
                   st.floats(min_value=0.0, max_value=1.0, allow_subnormal=True))
SHARES = ("read_fraction", "random_fraction", "hot_write_fraction", "hot_space_fraction", "working_set_fraction")
RATES = ("target_iops", "daily_write_bytes", "growth_fraction_per_year")
# Most draws are inside the ranges (accepted, so the engine must run them), at their edges.
IN_SHARE = st.one_of(st.sampled_from([5e-324, 2.2250738585072014e-308, 1e-300, 1e-17, 1e-9, 0.5, 1 - 1e-9, 0.9999999999999999,
                                      1 - 1e-17, 1.0]), st.floats(min_value=0.0, max_value=1.0, exclude_min=True, allow_subnormal=True))
IN_RATE = st.one_of(st.sampled_from([0.0, 5e-324, 1e-17, 1.0, 1e6, 1e9, 1e15]), st.floats(min_value=0.0, max_value=1e7))


def _field_value(name: str) -> st.SearchStrategy[tuple[str, float]]:
    inside = IN_SHARE if name in SHARES else (st.floats(0.0, 10.0) if name == "growth_fraction_per_year" else IN_RATE)
    return st.tuples(st.just(name), st.one_of(inside, inside, FLOATS))


WORKLOAD_FIELDS = st.lists(st.sampled_from(SHARES + RATES), min_size=1, max_size=6, unique=True).flatmap(
    lambda names: st.tuples(*(_field_value(n) for n in names)).map(dict))
EXAMPLES = {"planfile": 200, "CreatePlan": 30, "SimulateArray": 30, "RunConsistencyTest": 15, "ForecastArray": 30}
SETTINGS = dict(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


def _yaml_number(x: float) -> str:
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    return repr(x)


def _workload(fields: dict[str, float]) -> pb.Workload:
    w = pb.Workload(read_fraction=0.7, target_iops=2_000, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)])
    for k, v in fields.items():
        setattr(w, k, v)
    return w


_SPEC_TAIL = """constraints:
  usable_capacity_bytes: 1 TB
candidate_space:
  drive_models: [intel-dc-s3700-400gb]
  layouts: [raid10]
  max_drive_count: 8
"""


@settings(max_examples=EXAMPLES["planfile"], **SETTINGS)
@given(fields=WORKLOAD_FIELDS)
def test_plan_file_accepted_means_planned(fields: dict[str, float]) -> None:
    """A plan file is either refused with FILE:LINE: field errors, or planned: the engine never
    refuses what the plan file's validation accepted."""
    from arrayplan_engine import recommend
    from arrayplan_engine.errors import InvalidInputError
    from arrayplan_services.api.convert import plan_request_from_proto
    from arrayplan_services.api.planfile import PlanFileError, plan_spec_from_text

    body = "".join(f"  {k}: {_yaml_number(v)}\n" for k, v in {"read_fraction": 0.7, "target_iops": 2000.0, **fields}.items())
    text = f"workload:\n{body}{_SPEC_TAIL}"
    try:
        spec, _ = plan_spec_from_text(text, "plan.yaml")
        req = plan_request_from_proto(spec)
    except PlanFileError as exc:
        event("refused by the plan file's validation")
        assert all(field or line for line, field, _ in exc.problems), str(exc)
        return
    except InvalidInputError as exc:
        event("refused by the request's validation")
        assert all(v.field.startswith(("plan.spec.workload", "workload")) for v in exc.violations), str(exc)
        return
    event("accepted and planned")
    outcome = recommend.plan(req)  # accepted: it must run (any exception fails the test with its traceback)
    assert outcome.recommendations is not None


def _violations(err: grpc.RpcError) -> list[error_details_pb2.BadRequest.FieldViolation]:
    raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    assert raw is not None, f"INVALID_ARGUMENT without details: {err.details()}"
    status = status_pb2.Status.FromString(raw)
    out: list[error_details_pb2.BadRequest.FieldViolation] = []
    for d in status.details:
        if d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            br = error_details_pb2.BadRequest()
            d.Unpack(br)
            out.extend(br.field_violations)
    return out


def _answered_or_field_error(call, request, sent: set[str], timeout: float):  # type: ignore[no-untyped-def]
    """The answer, or None after checking the refusal is a field error on a field the request
    set (or one of its parents): never INTERNAL/UNKNOWN, never a traceback."""
    try:
        return call(request, timeout=timeout)
    except grpc.RpcError as err:
        code = err.code()
        assert code not in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN), f"{code}: {err.details()} (request set {sorted(sent)})"
        assert "Traceback" not in (err.details() or "")
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            violations = _violations(err)
            assert violations, err.details()
            for v in violations:
                # the field a violation names is one the caller sent, or holds one (workload.io_size_mix[0])
                # (or a sibling it is checked against: hot_write_fraction >= hot_space_fraction)
                assert any(v.field == s or v.field.startswith(s + ".") or v.field.startswith(s + "[") or s.startswith(v.field + ".")
                           or v.field.rsplit(".", 1)[0] == s.rsplit(".", 1)[0] for s in sent), \
                    f"violation on {v.field!r} ({v.description}); the request set {sorted(sent)}"
        else:
            assert code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED), f"{code}: {err.details()}"
        return None


@settings(max_examples=EXAMPLES["CreatePlan"], **SETTINGS)
@given(fields=WORKLOAD_FIELDS)
def test_create_plan_accepted_means_it_succeeds(stub, fields: dict[str, float]) -> None:  # type: ignore[no-untyped-def]
    spec = pb.PlanSpec(workload=_workload(fields), constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000_000),
                       candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb"], layouts=["raid10"], max_drive_count=8))
    sent = {f"plan.spec.workload.{k}" for k in fields} | {"plan.spec.workload.read_fraction", "plan.spec.workload.target_iops",
                                                          "plan.spec.workload.io_size_mix"}
    plan = _answered_or_field_error(stub.CreatePlan, pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), sent, 30)
    event("refused" if plan is None else "accepted")
    if plan is None:
        return
    deadline = time.monotonic() + 120
    final = None
    for update in stub.WatchPlan(pb.WatchPlanRequest(name=plan.name), timeout=120):
        if update.HasField("plan"):
            final = update.plan
        assert time.monotonic() < deadline
    assert final is not None
    assert final.state == pb.Plan.STATE_SUCCEEDED, f"accepted, then {pb.Plan.State.Name(final.state)} " \
                                                   f"{final.error_reason}: {final.error_message} for {dict(fields)}"


@settings(max_examples=EXAMPLES["SimulateArray"], **SETTINGS)
@given(fields=WORKLOAD_FIELDS, drive_count=st.sampled_from([4, 8, 12]), layout=st.sampled_from(["raid10", "raid6", "raid5"]))
def test_simulate_array_accepted_means_answered(stub, fields: dict[str, float], drive_count: int, layout: str) -> None:  # type: ignore[no-untyped-def]
    req = pb.SimulateArrayRequest(drive_model="intel-dc-s3700-400gb", drive_count=drive_count, layout=layout, workload=_workload(fields),
                                  duration=duration_pb2.Duration(nanos=200_000_000))
    sent = {f"workload.{k}" for k in fields} | {"workload.read_fraction", "workload.target_iops", "workload.io_size_mix"}
    event("refused" if _answered_or_field_error(stub.SimulateArray, req, sent, 120) is None else "answered")


_CONSISTENCY_FIELDS = [f.name for f in pb.RunConsistencyTestRequest.DESCRIPTOR.fields if f.type == f.TYPE_DOUBLE]


@settings(max_examples=EXAMPLES["RunConsistencyTest"], **SETTINGS)
@given(values=st.dictionaries(st.sampled_from(_CONSISTENCY_FIELDS or ["__none__"]), FLOATS, max_size=3))
def test_consistency_test_accepted_means_answered(stub, values: dict[str, float]) -> None:  # type: ignore[no-untyped-def]
    req = pb.RunConsistencyTestRequest(drive_model="intel-dc-s3700-400gb", duration=duration_pb2.Duration(seconds=5))
    for k, v in values.items():
        if k != "__none__":
            setattr(req, k, v)
    _answered_or_field_error(stub.RunConsistencyTest, req, set(values) | {"duration", "drive_model"}, 120)


def _double_paths(desc, prefix: str = "", depth: int = 0) -> list[str]:  # type: ignore[no-untyped-def]
    out = []
    for f in desc.fields:
        if f.is_repeated:
            continue
        if f.type == f.TYPE_DOUBLE:
            out.append(prefix + f.name)
        elif f.message_type is not None and depth < 2 and f.message_type.full_name != "google.protobuf.Duration":
            out.extend(_double_paths(f.message_type, prefix + f.name + ".", depth + 1))
    return out


_FORECAST = pb.DESCRIPTOR.services_by_name["PlannerService"].methods_by_name.get("ForecastArray")


@pytest.mark.skipif(_FORECAST is None, reason="no ForecastArray RPC")
@settings(max_examples=EXAMPLES["ForecastArray"], **SETTINGS)
@given(data=st.data())
def test_forecast_accepted_means_answered(stub, data) -> None:  # type: ignore[no-untyped-def]
    from test_forecast_api import _request  # the array in examples/array-in-service, with its telemetry

    paths = _double_paths(_FORECAST.input_type)
    chosen = data.draw(st.dictionaries(st.sampled_from(paths), st.one_of(IN_SHARE, FLOATS), min_size=1, max_size=4))
    req = _request()
    for path, v in chosen.items():
        *parents, leaf = path.split(".")
        msg = req
        for p in parents:
            msg = getattr(msg, p)
        setattr(msg, leaf, v)
    answer = _answered_or_field_error(stub.ForecastArray, req, set(chosen), 120)
    event("refused" if answer is None else "answered")
