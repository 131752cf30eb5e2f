"""The fill target (constraints.max_fill_fraction) through every door: the proto and its
conversion, plan files (a bad value named with its line), the CapacityPlan CRD's schema, and a
real server that states the value it applied in the stored spec and the answer."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import plan_request
from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.api.convert import check_plan_request_bounds, plan_request_from_proto
from arrayplan_services.api.planfile import PlanFileError, plan_spec_from_text
from conftest import tiny_spec

ROOT = Path(__file__).resolve().parents[2]
PLAN = "workload:\n  read_fraction: 0.7\n  target_iops: 1000\nconstraints:\n  usable_capacity_bytes: 1 TB\n  max_fill_fraction: {}\n"


def test_unset_is_the_engines_default_and_a_set_value_passes_through() -> None:
    assert plan_request_from_proto(tiny_spec()).constraints.max_fill_fraction == plan_request.DEFAULT_MAX_FILL_FRACTION == 0.8
    spec, _ = plan_spec_from_text(PLAN.format("0.85"), "plan.yaml")
    assert spec.constraints.HasField("max_fill_fraction")
    assert plan_request_from_proto(spec).constraints.max_fill_fraction == 0.85
    full, _ = plan_spec_from_text(PLAN.format("1"), "plan.yaml")
    assert plan_request_from_proto(full).constraints.max_fill_fraction == 1.0


@pytest.mark.parametrize("bad", ["0", "1.2", "-0.5", ".nan"])
def test_a_bad_fill_target_in_a_plan_file_is_named_with_its_line(bad: str) -> None:
    with pytest.raises(PlanFileError) as err:
        plan_spec_from_text(PLAN.format(bad), "plan.yaml")
    assert any(p[0] == 6 and p[1] == "constraints.max_fill_fraction" and "(0, 1]" in p[2] for p in err.value.problems), err.value.problems
    assert "plan.yaml:6: constraints.max_fill_fraction: must be in (0, 1]" in str(err.value)


def test_the_proto_bounds_refuse_an_explicit_zero() -> None:
    spec = tiny_spec()
    spec.constraints.max_fill_fraction = 0.0  # set explicitly: not "unset"
    with pytest.raises(InvalidInputError) as err:
        check_plan_request_bounds(spec)
    assert [v.field for v in err.value.violations] == ["plan.spec.constraints.max_fill_fraction"]


def test_the_crd_schema_keeps_the_field_with_its_range() -> None:
    """A structural schema prunes unknown fields: the CapacityPlan CRD must declare it."""
    import yaml

    crd = yaml.safe_load((ROOT / "helm/arrayplan/crds/capacityplans.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    field = spec["properties"]["constraints"]["properties"]["max_fill_fraction"]
    assert field["type"] == "number" and field["minimum"] == 0 and field["exclusiveMinimum"] is True and field["maximum"] == 1
    assert "exclusiveMaximum" not in field


def test_the_server_states_the_fill_target_it_applied(stub) -> None:  # type: ignore[no-untyped-def]
    created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=tiny_spec())), timeout=30)
    assert created.spec.constraints.HasField("max_fill_fraction") and created.spec.constraints.max_fill_fraction == 0.8
    final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=300))[-1].plan
    assert final.spec.constraints.max_fill_fraction == 0.8
    assert any(a.startswith("Fill target: the array holds the") and "at most 80% full" in a
               for a in final.result.assumptions), list(final.result.assumptions)
    bad = tiny_spec()
    bad.constraints.max_fill_fraction = 1.5
    with pytest.raises(grpc.RpcError) as err:
        stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=bad)), timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(err.value)
    assert status is not None
    br = error_details_pb2.BadRequest()
    [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)][0].Unpack(br)
    assert [(v.field, "(0, 1]" in v.description) for v in br.field_violations] == [("plan.spec.constraints.max_fill_fraction", True)]
    # the engine's violation code travels as the FieldViolation's reason (api/errors.field_violation)
    assert [v.reason for v in br.field_violations] == ["OUT_OF_RANGE"]


def test_discards_pass_through_and_a_bad_value_is_named() -> None:
    """PlanSpec.discards (plan file ``discards:``) reaches the request; unset is auto; a value
    outside auto / none / passed is refused naming plan.spec.discards."""
    assert plan_request_from_proto(tiny_spec()).discards == "auto"
    spec, _ = plan_spec_from_text(PLAN.format("0.8") + "discards: none\n", "plan.yaml")
    assert spec.discards == "none" and plan_request_from_proto(spec).discards == "none"
    bad, _ = plan_spec_from_text(PLAN.format("0.8") + "discards: trim\n", "plan.yaml")
    with pytest.raises(InvalidInputError) as err:
        plan_request_from_proto(bad)
    assert err.value.violations[0].field == "plan.spec.discards"


def test_the_crd_schema_keeps_discards_with_its_values() -> None:
    import yaml

    crd = yaml.safe_load((ROOT / "helm/arrayplan/crds/capacityplans.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert spec["discards"]["type"] == "string"
    assert set(spec["discards"]["enum"]) == {"", "auto", "none", "passed"}
