"""One path for every answer, through the services: a plan's figures, SimulateArray's and the
report's latency CDF for the same (request, candidate, year) are the same simulation, bit for bit
(the report and SimulateArray once built their service models with factories of their own)."""

from __future__ import annotations

import pytest
from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import array, evaluation, plan_request, ranking, recommend, simulation
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_services.api.convert import outcome_to_proto, plan_request_from_proto
from arrayplan_services.fanout import LocalExecutor
from arrayplan_services.plan import simulate
from arrayplan_services.report import frame as report_frame


def _spec() -> pb.PlanSpec:
    return pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, target_iops=15_000, daily_write_bytes=5e11, growth_fraction_per_year=0.1,
                             io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1.0)]),
        constraints=pb.Constraints(usable_capacity_bytes=2 * 10**12, latency_percentile=99.0,
                                   latency_target=duration_pb2.Duration(nanos=5_000_000)),
        service_life_years=2,
        candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb"], layouts=["raid6"], group_widths=[8],
                                          max_drive_count=16),
    )


@pytest.fixture(scope="module")
def planned() -> tuple[plan_request.PlanRequest, ranking.PlanOutcome, pb.Plan]:
    spec = _spec()
    req = plan_request_from_proto(spec)
    outcome = recommend.plan(req)
    assert outcome.recommendations
    plan = pb.Plan(name="plans/one-path", spec=spec, state=pb.Plan.STATE_SUCCEEDED, result=outcome_to_proto(outcome))
    return req, outcome, plan


def _ns(seconds: float) -> int:
    return round(seconds * 1e9)


def test_simulate_array_gives_the_planners_numbers(planned: tuple[plan_request.PlanRequest, ranking.PlanOutcome, pb.Plan]) -> None:
    req, outcome, _ = planned
    e = outcome.recommendations[0].evaluation
    cand = e.candidate
    for y in e.years:
        case = evaluation.candidate_year_case(req, cand, y.year)
        wl = case.workload
        request = pb.SimulateArrayRequest(
            drive_model=cand.drive_model, drive_count=cand.drive_count, layout=cand.layout, group_width=cand.group_width,
            workload=pb.Workload(read_fraction=wl.read_fraction, random_fraction=wl.random_fraction, queue_depth=wl.queue_depth,
                                 target_iops=wl.target_iops, hot_write_fraction=wl.hot_write_fraction,
                                 hot_space_fraction=wl.hot_space_fraction, working_set_fraction=wl.working_set_fraction,
                                 io_size_mix=[pb.IoSizeShare(io_bytes=int(b), weight=float(w)) for b, w in wl.io_size_mix]),
            fill_fraction=case.fill_fraction, seed=case.seed, replications=1)
        request.duration.FromNanoseconds(_ns(case.spec.duration_s))
        resp = simulate.simulate_array(request, builtin_catalog(), LocalExecutor())
        planner_run = array.simulate(case.spec)
        assert resp.achieved_iops == planner_run.achieved_iops
        # one replication is the plan's replication 0 (the case's own spec and seed) exactly, with
        # no interval; the plan's figure pools the replications, and replication 0's p99 sits
        # within two interval widths of it (the request's percentile is 99)
        assert resp.replications == 1 and resp.achieved_iops_low == resp.achieved_iops_high == 0.0
        assert not resp.latency.HasField("low") and not resp.latency.HasField("high")
        assert resp.latency.p99.ToNanoseconds() == _ns(planner_run.latency_percentile_s(0.99))
        assert resp.latency.p50.ToNanoseconds() == _ns(planner_run.latency_percentile_s(0.5))
        # the default pools 3 replications (replication_spec: 0 is the case's spec itself, the
        # others the seed's children, the plan's own streams) with intervals around the pooled figures
        request.replications = 0
        pooled = simulate.simulate_array(request, builtin_catalog(), LocalExecutor())
        runs = [planner_run] + [array.simulate(simulation.replication_spec(case.spec, r)) for r in (1, 2)]
        assert pooled.replications == 3
        assert pooled.achieved_iops == pytest.approx(sum(r.achieved_iops for r in runs) / 3, rel=1e-12)
        assert pooled.achieved_iops_low < pooled.achieved_iops < pooled.achieved_iops_high
        pooled_run = simulation.pooled_result(runs)
        assert pooled.latency.p99.ToNanoseconds() == _ns(pooled_run.latency_percentile_s(0.99))
        assert pooled.latency.low.p99.ToNanoseconds() <= pooled.latency.p99.ToNanoseconds() <= pooled.latency.high.p99.ToNanoseconds()
        lat = y.latency_at_percentile_s
        assert lat.low <= lat.value <= lat.high
        width = lat.high - lat.low
        assert abs(planner_run.latency_percentile_s(0.99) - lat.value) <= 2.0 * width


def test_report_cdf_is_the_plans_run(planned: tuple[plan_request.PlanRequest, ranking.PlanOutcome, pb.Plan]) -> None:
    """The report simulates through the Executor seam with SimulateArray's task function; its CDF
    is the plan's replication 0 of each top array's worst year, exactly (the plan's figure pools
    the replications: the curve's percentile sits within two interval widths of it)."""
    req, outcome, plan = planned
    frame = report_frame.frame_of(plan)
    sims = report_frame.simulate_cdfs(plan, frame, executor=LocalExecutor(), timeout_s=600.0)
    assert sims.simulated, sims.note
    by_rank = {r.rank: r.evaluation for r in outcome.recommendations}
    assert sorted(sims.curves) == [r.rank for r in frame.top]
    for rank, curve in sims.curves.items():
        worst = max(by_rank[rank].years, key=lambda y: y.latency_at_percentile_s.value)
        run0 = array.simulate(evaluation.candidate_year_case(req, by_rank[rank].candidate, worst.year).spec)
        assert curve.at_percentile_s == run0.latency_percentile_s(0.99)
        width = worst.latency_at_percentile_s.high - worst.latency_at_percentile_s.low
        assert abs(curve.at_percentile_s - worst.latency_at_percentile_s.value) <= 2.0 * width
        assert curve.fraction[0] == 0.0 and curve.fraction[-1] == pytest.approx(1.0, abs=1e-12)
