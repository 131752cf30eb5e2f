"""A server that dies mid-plan loses nothing: on restart the interrupted run is resumed and every
completed run is still there, byte for byte."""

from __future__ import annotations

import signal
import sqlite3

import grpc
import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from conftest import start_server

SMALL = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=5_000),
                    constraints=pb.Constraints(usable_capacity_bytes=2_000_000_000_000),
                    candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"],
                                                      layouts=["raid10", "raid6"], max_drive_count=16),
                    service_life_years=2)
# About 120 candidates x 5 simulated years: ~10 s on 2 Ray CPUs, long enough to stop mid-plan.
LONG = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=10_000),
                   constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000),
                   candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"],
                                                     layouts=["raid0", "raid10", "raid5", "raid6"], max_drive_count=24),
                   exhaustive=True)  # every kept candidate: the search would finish before the stop


def _wait_running(stub, name: str) -> None:  # type: ignore[no-untyped-def]
    for event in stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=120):
        if event.HasField("progress") and event.progress.candidates_evaluated > 0:
            return
        if event.HasField("plan"):
            pytest.fail("the long plan finished before the server could be stopped mid-plan")


# A SIGTERM mid-plan is test_rolling_updates_never_fail_a_plan (twice, then the plan finishes).
@pytest.mark.parametrize("sig", [signal.SIGKILL], ids=["killed"])
def test_restart_mid_plan(tmp_path, sig: int) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data"
    first = start_server(data)
    try:
        with grpc.insecure_channel(first.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            done = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SMALL), plan_id="completed-before"), timeout=30)
            done_final = list(stub.WatchPlan(pb.WatchPlanRequest(name=done.name), timeout=120))[-1].plan
            assert done_final.state == pb.Plan.STATE_SUCCEEDED
            long = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id="interrupted"), timeout=30)
            _wait_running(stub, long.name)
    finally:
        first.stop(sig)
    with sqlite3.connect(data / "runs.sqlite3") as db:
        state = db.execute("SELECT state FROM runs WHERE id='interrupted'").fetchone()[0]
    assert state == "RUNNING", "a run in flight is left RUNNING for the next start, not lost or faked as finished"

    second = start_server(data, port=first.port)
    try:
        with grpc.insecure_channel(second.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            again = stub.GetPlan(pb.GetPlanRequest(name="plans/completed-before"), timeout=30)
            assert again == done_final, "a completed run reads back exactly as before the restart"
            final = list(stub.WatchPlan(pb.WatchPlanRequest(name="plans/interrupted"), timeout=600))[-1].plan
            assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
            assert final.progress.candidates_evaluated == final.progress.candidates_to_evaluate
            assert "resuming plan interrupted" in second.log()
    finally:
        second.stop()
    with sqlite3.connect(data / "runs.sqlite3") as db:
        attempts = db.execute("SELECT attempts FROM runs WHERE id='interrupted'").fetchone()[0]
    # a crash counts towards the two-strikes rule; a graceful stop (SIGTERM) hands the plan over without a strike
    assert attempts == (2 if sig == signal.SIGKILL else 1)


def test_rolling_updates_never_fail_a_plan(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Two graceful stops (SIGTERM, as a rolling update sends) during one plan: each hands the plan
    over with its checkpoints and no strike, so the third server finishes it (two crashes would
    have failed it SERVER_RESTARTED)."""
    data = tmp_path / "data"
    server = start_server(data)
    port = server.port
    try:
        for round_ in range(2):
            with grpc.insecure_channel(server.address) as ch:
                stub = pb_grpc.PlannerServiceStub(ch)
                if round_ == 0:
                    stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id="rolled"), timeout=30)
                _wait_running(stub, "plans/rolled")
            assert server.stop(signal.SIGTERM) == 0
            with sqlite3.connect(data / "runs.sqlite3") as db:
                state, attempts = db.execute("SELECT state, attempts FROM runs WHERE id='rolled'").fetchone()
            assert (state, attempts) == ("RUNNING", 0), "a graceful stop leaves the plan resumable, without a strike"
            server = start_server(data, port=port)
        with grpc.insecure_channel(server.address) as ch:
            final = list(pb_grpc.PlannerServiceStub(ch).WatchPlan(pb.WatchPlanRequest(name="plans/rolled"), timeout=600))[-1].plan
        assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
        assert final.progress.candidates_evaluated == final.progress.candidates_to_evaluate
    finally:
        server.stop()


def test_run_interrupted_twice_is_marked_failed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A run that keeps dying with its server (say it exhausts memory) is not retried forever."""
    from google.protobuf import json_format

    from arrayplan_services.store import RunStore

    data = tmp_path / "data"
    store = RunStore(data / "runs.sqlite3")
    store.create("doomed", json_format.MessageToJson(SMALL), "0" * 32)
    store.set_state("doomed", "RUNNING", attempts_increment=True)
    store.set_state("doomed", "RUNNING", attempts_increment=True)
    server = start_server(data)
    try:
        with grpc.insecure_channel(server.address) as ch:
            plan = pb_grpc.PlannerServiceStub(ch).GetPlan(pb.GetPlanRequest(name="plans/doomed"), timeout=30)
    finally:
        server.stop()
    assert plan.state == pb.Plan.STATE_FAILED
    assert plan.error_reason == "SERVER_RESTARTED" and "create it again" in plan.error_message
