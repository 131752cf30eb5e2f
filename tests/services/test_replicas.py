"""Two real `arrayplan serve` replicas on one real PostgreSQL (pgserver.py), as a cluster runs them
behind one Service: either answers for any plan; a replica killed with SIGKILL mid-plan loses its
lease and the other resumes the plan from its checkpoints with the undisturbed answer bit for bit;
a cancel sent to one replica stops the plan running on the other. Short leases (``--lease-s``)
keep the take-over quick; every wait polls with a deadline. The replicas use the in-process
executor (no Ray beside each): its simulation batches hold the server's GIL for a second or two,
so the lease is 10 s, well above a batch (docs/service.md, "Several replicas on PostgreSQL")."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from pgserver import PostgresServer, fresh_database, postgres  # noqa: F401 - fixtures

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from conftest import ServerProcess, start_server, tiny_spec

# The crash-resume test's plan: 124 candidates x 5 simulated years, about 60 batches in one process.
LONG = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=10_000),
                   constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000),
                   candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"],
                                                     layouts=["raid0", "raid10", "raid5", "raid6"], max_drive_count=24),
                   exhaustive=True)  # every kept candidate simulated: the search would end before the kill
LEASE_S = 10
WATCH_S = 900


def _replica(data_dir: Path, url: str) -> ServerProcess:
    return start_server(data_dir, extra=("--executor", "local", "--store-url", url, "--lease-s", str(LEASE_S)))


@pytest.fixture()
def replicas(tmp_path: Path, fresh_database: str) -> Iterator[tuple[ServerProcess, ServerProcess]]:  # noqa: F811
    a = _replica(tmp_path / "a", fresh_database)
    try:
        b = _replica(tmp_path / "b", fresh_database)
    except BaseException:
        a.stop()
        raise
    yield a, b
    for s in (a, b):
        s.stop()


def _stub(channel: grpc.Channel) -> pb_grpc.PlannerServiceStub:
    return pb_grpc.PlannerServiceStub(channel)


def _final(stub: pb_grpc.PlannerServiceStub, name: str) -> pb.Plan:
    events = list(stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=WATCH_S))
    return events[-1].plan


def _wait_log(server: ServerProcess, text: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in server.log():
            return
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in the log of {server.address} after {timeout_s} s:\n{server.log()[-4000:]}")


def _watch_until_evaluated(stub: pb_grpc.PlannerServiceStub, name: str, count: int) -> int:
    for event in stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=WATCH_S):
        if event.HasField("plan"):
            pytest.fail(f"{name} ended ({pb.Plan.State.Name(event.plan.state)}) before it could be interrupted mid-plan")
        if event.progress.candidates_evaluated >= count:
            return int(event.progress.candidates_evaluated)
    pytest.fail("the watch ended without the plan")


def test_either_replica_answers_for_any_plan(replicas: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = replicas
    with grpc.insecure_channel(a.address) as ch_a, grpc.insecure_channel(b.address) as ch_b:
        created = _stub(ch_a).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=tiny_spec()), plan_id="made-on-a"), timeout=60)
        on_b = _stub(ch_b).GetPlan(pb.GetPlanRequest(name=created.name), timeout=60)
        assert on_b.name == "plans/made-on-a" and on_b.spec == created.spec
        final = _final(_stub(ch_b), created.name)
        assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
        listed = _stub(ch_b).ListPlans(pb.ListPlansRequest(page_size=10), timeout=60)
        assert [p.name for p in listed.plans] == ["plans/made-on-a"]
        assert _stub(ch_a).GetPlan(pb.GetPlanRequest(name=created.name), timeout=60).result == final.result


def test_a_killed_replicas_plan_is_taken_over_and_gives_the_same_answer(replicas: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = replicas
    with grpc.insecure_channel(b.address) as ch_b:
        _stub(ch_b).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id="undisturbed"), timeout=60)
        reference = _final(_stub(ch_b), "plans/undisturbed")
    assert reference.state == pb.Plan.STATE_SUCCEEDED, reference.error_message
    to_evaluate = reference.progress.candidates_to_evaluate
    assert to_evaluate > 20

    with grpc.insecure_channel(a.address) as ch_a:
        _stub(ch_a).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id="taken-over"), timeout=60)
        seen = _watch_until_evaluated(_stub(ch_a), "plans/taken-over", 4)
    a.stop(signal.SIGKILL)
    assert seen < to_evaluate

    with grpc.insecure_channel(b.address) as ch_b:
        during = _stub(ch_b).GetPlan(pb.GetPlanRequest(name="plans/taken-over"), timeout=60)
        assert during.state == pb.Plan.STATE_RUNNING  # still A's until its lease runs out
        resumed = _final(_stub(ch_b), "plans/taken-over")
    assert resumed.state == pb.Plan.STATE_SUCCEEDED, resumed.error_message
    # Bit for bit: the taken-over run's result is the undisturbed run's.
    assert resumed.result.SerializeToString(deterministic=True) == reference.result.SerializeToString(deterministic=True)
    assert resumed.progress.candidates_evaluated == to_evaluate
    log = b.log()
    assert "taking over plan taken-over" in log
    restored = [line for line in log.splitlines() if "plan taken-over:" in line and "restored from checkpoints" in line]
    assert restored, "B resumed from A's checkpoints"
    count = int(restored[0].split("plan taken-over: ")[1].split(" of ")[0])
    assert seen <= count < to_evaluate


def test_a_cancel_sent_to_one_replica_stops_the_plan_on_the_other(replicas: tuple[ServerProcess, ServerProcess]) -> None:
    a, b = replicas
    with grpc.insecure_channel(a.address) as ch_a, grpc.insecure_channel(b.address) as ch_b:
        _stub(ch_a).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=LONG), plan_id="cancel-on-b"), timeout=60)
        _watch_until_evaluated(_stub(ch_a), "plans/cancel-on-b", 1)
        cancelled = _stub(ch_b).CancelPlan(pb.CancelPlanRequest(name="plans/cancel-on-b"), timeout=60)
        assert cancelled.state == pb.Plan.STATE_CANCELLED
        # A hears of it at its next renew and stops the run without writing to it.
        _wait_log(a, "plan cancel-on-b: its lease is lost")
        on_a = _final(_stub(ch_a), "plans/cancel-on-b")
        assert on_a.state == pb.Plan.STATE_CANCELLED and on_a.error_reason == "CANCELLED"
        stopped_at = on_a.progress.candidates_evaluated
        assert stopped_at < on_a.progress.candidates_to_evaluate
        # A is free for new work and the cancelled plan stays as it was.
        created = _stub(ch_a).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=tiny_spec()), plan_id="after-cancel"), timeout=60)
        assert _final(_stub(ch_a), created.name).state == pb.Plan.STATE_SUCCEEDED
        again = _stub(ch_b).GetPlan(pb.GetPlanRequest(name="plans/cancel-on-b"), timeout=60)
        assert again.state == pb.Plan.STATE_CANCELLED and again.progress.candidates_evaluated == stopped_at
    assert "taking over plan cancel-on-b" not in b.log()
