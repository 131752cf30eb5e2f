"""One stage sequence: the server runs the engine's own pipeline (``recommend.plan``) with its
executor's hooks, so a plan through the real server (127.0.0.1, local Ray with 2 CPUs, SQLite)
answers what ``recommend.plan`` answers in-process, bit for bit; and the hard-disk comparison is a
stage of its own whose sizing runs as a task on the Ray workers (the trace's ``arrayplan.size_hdd``
span comes from a worker process, not the server) with the in-process figures."""

from __future__ import annotations

from typing import Any

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import hdd_comparison, ranking, recommend
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_services.api.convert import outcome_to_proto, plan_request_from_proto

# Two SSDs x RAID 10/6 up to 16 drives, 2 years: a search that stops before the end (its Pareto
# phase runs beside the comparison's sizing), a winner that meets every constraint, and a
# comparison with the catalog's fitting disks (a 20 ms p99 target that disks can hold).
SPEC = pb.PlanSpec(
    workload=pb.Workload(read_fraction=0.7, target_iops=4_000, daily_write_bytes=300e9,
                         io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1.0)]),
    constraints=pb.Constraints(usable_capacity_bytes=2 * 10**12, latency_percentile=99.0),
    candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"],
                                      layouts=["raid10", "raid6"], max_drive_count=16),
    service_life_years=2, seed=3, max_recommendations=2)
SPEC.constraints.latency_target.FromMilliseconds(20)


def test_the_server_runs_the_engines_pipeline(stub: Any) -> None:
    created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC)), timeout=30)
    final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=600))[-1].plan
    assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
    # the stored spec carries the defaults the server applied: the engine plans the same request
    req = plan_request_from_proto(final.spec, "plan.spec", builtin_catalog())
    outcome = recommend.plan(req)
    assert outcome.constraints_met and outcome.hdd_equivalence is not None
    assert outcome.search_note, "the search stopped before the end (a Pareto phase ran)"
    # Bit for bit: the server's result (Ray workers, the sizing beside the search) is the engine's
    # in-process result (one process, sizing after the search).
    expected = outcome_to_proto(outcome)
    assert final.result.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    # the comparison stage on its own gives the same disk figures for the winner
    best = ranking.winner(req, [r.evaluation for r in outcome.recommendations])
    assert best is not None and hdd_comparison.hdd_equivalence(req, best) == outcome.hdd_equivalence
    assert final.result.hdd_equivalence.drive_count == outcome.hdd_equivalence.drive_count > 0

    spans = stub.GetPlanTrace(pb.GetPlanTraceRequest(name=created.name), timeout=60).spans
    names = {s.name for s in spans}
    assert {"arrayplan.plan", "arrayplan.enumerate", "arrayplan.fanout", "arrayplan.hdd", "arrayplan.rank"} <= names
    server_pid = {s.process for s in spans if s.name == "arrayplan.plan"}
    sizing = [s for s in spans if s.name == "arrayplan.size_hdd"]
    # one sizing task per disk compared, each run by a Ray worker: another process than the server's
    disks = [d.name for d in hdd_comparison.hdd_disks(req)]
    assert sorted(s.attributes["arrayplan.drive_model"] for s in sizing) == sorted(disks) and disks
    assert all(s.process not in server_pid for s in sizing)
