"""The intervals of a plan's simulated figures on every output: the proto (api/convert), the JSON
(jsonout), the CLI table and the report's columns (report/columns), and the checkpoints a resumed
plan reads (store/checkpoints); the request's worst-second horizon and its bad values."""

from __future__ import annotations

import pytest
from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import plan_request, recommend, simulation
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.interval import Interval
from arrayplan_engine.units import TB, KiB
from arrayplan_engine.workload import Workload
from arrayplan_services import jsonout
from arrayplan_services.api import convert
from arrayplan_services.cli import render
from arrayplan_services.report import columns
from arrayplan_services.store import checkpoints

REQ = plan_request.PlanRequest(
    workload=Workload(read_fraction=0.7, target_iops=20_000, io_size_mix=((8 * KiB, 1.0),)), service_life_years=1,
    constraints=plan_request.Constraints(usable_capacity_bytes=2 * TB, latency_percentile=99.0, latency_target_s=0.005,
                                         worst_second_latency_target_s=0.05, worst_second_horizon_s=600.0),
    candidate_space=plan_request.CandidateSpace(drive_models=("intel-dc-s3700-800gb",), layouts=("raid6",), group_widths=(8,),
                                                max_drive_count=16))


@pytest.fixture(scope="module")
def outcome():  # type: ignore[no-untyped-def]
    return recommend.plan(REQ)


def test_intervals_reach_the_proto_json_table_and_report(outcome) -> None:  # type: ignore[no-untyped-def]
    e = outcome.recommendations[0].evaluation
    assert e.simulation_precision == "full" and e.worst_second_horizon_s == 600.0
    result = convert.outcome_to_proto(outcome)
    r = result.recommendations[0]
    assert r.predicted_iops_low == e.predicted_iops.low < r.predicted_iops < r.predicted_iops_high == e.predicted_iops.high
    assert r.latency_at_percentile_low.ToNanoseconds() <= r.latency_at_percentile.ToNanoseconds() \
        <= r.latency_at_percentile_high.ToNanoseconds()
    assert r.worst_second_horizon.ToSeconds() == 600
    assert r.simulation_replications >= simulation.FULL.initial_replications
    iops = next(k for k in r.checks if k.constraint == "iops")
    assert iops.confidence_level == pytest.approx(0.95) and iops.predicted_low == pytest.approx(e.predicted_iops.low)
    capacity = next(k for k in r.checks if k.constraint == "usable_capacity")
    assert capacity.confidence_level == 1.0
    assert r.years[0].replications >= 3 and r.years[0].simulation_stop_reason in ("converged", "replication cap", "host-IO cap")
    assert "meets at 95 % confidence (at " in r.explanation or "meets exactly (analytic)" in r.explanation
    # JSON: seconds under _s keys, every interval present
    doc = jsonout.to_json(r)
    for key in ("predicted_iops_low", "predicted_iops_high", "latency_at_percentile_low_s", "latency_at_percentile_high_s",
                "latency_p50_low_s", "worst_second_latency_high_s", "worst_second_horizon_s", "simulation_converged"):
        assert key in doc, key
    assert doc["worst_second_horizon_s"] == 600.0
    assert doc["checks"][0]["confidence_level"] in (0.95, 1.0)
    # the table (CLI) and the report share the columns: IOPS and the percentile with "±"
    cells = dict(zip([c.key for c in columns.columns()], columns.row(r, columns.columns()), strict=True))
    assert "±" in cells["predicted_iops"] and "±" in cells["latency_at_percentile"]
    assert "–" in cells["worst_second_latency"] and cells["simulation_converged"] in ("yes", "cap")
    plan = pb.Plan(name="plans/c", result=result, spec=pb.PlanSpec(constraints=pb.Constraints(latency_percentile=99.0)))
    md = render.plan_markdown(plan)
    assert "±" in md and "95 % intervals" in md


def test_checkpoints_keep_the_intervals(outcome) -> None:  # type: ignore[no-untyped-def]
    evals = [r.evaluation for r in outcome.recommendations]
    back = checkpoints.decode(checkpoints.encode(evals))
    assert repr(back) == repr(evals)  # exact, NaN fields (not estimated) included
    assert back[0].predicted_iops == evals[0].predicted_iops and back[0].checks == evals[0].checks


def test_the_horizon_from_the_request_and_its_bounds() -> None:
    spec = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)],
                                            target_iops=1000),
                       constraints=pb.Constraints(usable_capacity_bytes=10**12, worst_second_horizon=duration_pb2.Duration(seconds=7200)))
    assert convert.plan_request_from_proto(spec).constraints.worst_second_horizon_s == 7200.0
    from arrayplan_services.api.planfile import plan_spec_from_text
    from_file, _ = plan_spec_from_text("workload:\n  read_fraction: 0.7\n  target_iops: 1000\nconstraints:\n"
                                       "  usable_capacity_bytes: 1 TB\n  worst_second_horizon: 2h\n")
    assert from_file.constraints.worst_second_horizon.ToSeconds() == 7200
    spec.constraints.ClearField("worst_second_horizon")
    assert convert.plan_request_from_proto(spec).constraints.worst_second_horizon_s == simulation.DEFAULT_HORIZON_S
    spec.constraints.worst_second_horizon.CopyFrom(duration_pb2.Duration(seconds=1))
    with pytest.raises(InvalidInputError, match=r"plan\.spec\.constraints\.worst_second_horizon: must be in \[2, 3.1536e7\] s, got 1"):
        convert.plan_request_from_proto(spec)
    with pytest.raises(InvalidInputError, match="constraints.worst_second_horizon_s"):
        plan_request.validate_request(plan_request.PlanRequest(
            workload=REQ.workload, constraints=plan_request.Constraints(usable_capacity_bytes=1e12, worst_second_horizon_s=0.5)))


def test_the_summary_says_when_the_top_two_are_within_each_others_intervals(outcome) -> None:  # type: ignore[no-untyped-def]
    """Ranked on headroom, two arrays whose binding intervals overlap are called a toss-up; on
    cost, a second array whose cost interval (the simulated utilisation's, carried into power)
    reaches the first's is one too, and one whose whole interval lies above is not."""
    import math
    from dataclasses import replace

    from arrayplan_engine import ranking
    from arrayplan_engine.plan_request import Objective

    e = outcome.recommendations[0].evaluation
    k = next(c for c in e.checks if c.constraint == e.binding_constraint)

    def twin(extra_usd: float):  # type: ignore[no-untyped-def]
        return replace(e, candidate=replace(e.candidate, index=e.candidate.index + 1), total_cost_usd=e.total_cost_usd + extra_usd,
                       total_cost_interval_usd=Interval(value=e.total_cost_interval_usd.value + extra_usd,
                                                        low=e.total_cost_interval_usd.low + extra_usd,
                                                        high=e.total_cost_interval_usd.high + extra_usd))

    def recs(other):  # type: ignore[no-untyped-def]
        return [ranking.Recommendation(rank=1, evaluation=e, explanation=""), ranking.Recommendation(rank=2, evaluation=other, explanation="")]

    if k.confidence_level == simulation.CONFIDENCE_LEVEL:
        assert "95 % intervals of the top two overlap" in ranking.too_close_text(recs(twin(1.0)), Objective.HEADROOM)
    tco = e.total_cost_interval_usd
    assert math.isfinite(tco.low) and tco.low <= e.total_cost_usd == tco.value <= tco.high
    width = tco.high - tco.low
    if width > 1.0:
        assert "overlap" in ranking.too_close_text(recs(twin(0.5 * width)), Objective.TOTAL_COST_OF_OWNERSHIP)
    assert ranking.too_close_text(recs(twin(2.0 * width + 1.0)), Objective.TOTAL_COST_OF_OWNERSHIP) == ""
