"""An external Ray cluster that goes away mid-plan, on a real `ray start` head
(127.0.0.2, stopped by its process group): the server's watchdog disconnects from Ray before
Ray's driver library would end the process, so the server stays up (GetPlan, ListDrives and the
liveness check answer; readiness is NOT_SERVING while Ray is gone); a start while Ray is down exits 1
with one line naming Ray; when the head is back on the same address the server reconnects, the
plan's unfinished batches run again and the plan SUCCEEDS with the answer of an undisturbed run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.bench.ray_scale import RAY_ENV, LoopbackRayCluster
from conftest import ROOT, start_server

SPEC = pb.PlanSpec(
    workload=pb.Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1e12),
    constraints=pb.Constraints(usable_capacity_bytes=4_000_000_000_000),
    candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb", "intel-dc-s3500-800gb"],
                                      layouts=["raid10", "raid6", "raid5"], max_drive_count=48),
    service_life_years=3, seed=11,
    exhaustive=True,  # every kept candidate: the search could finish before Ray goes
)


class SamePortCluster(LoopbackRayCluster):
    """A head that comes back on the address the server was given (a restarted head pod)."""

    def restart_head(self) -> str:
        self._start(self.head_ip, ["--head", f"--port={self.port}", "--include-dashboard=false",
                                   f"--temp-dir={self.workdir / 'ray'}"])
        return self.address


def _wait(cond: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def _ready(channel: grpc.Channel, service: str = "") -> int:
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


def _finish(stub: pb_grpc.PlannerServiceStub, name: str, timeout_s: float) -> pb.Plan:
    deadline = time.monotonic() + timeout_s
    while True:
        plan = stub.GetPlan(pb.GetPlanRequest(name=name), timeout=30)
        if plan.state not in (pb.Plan.STATE_PENDING, pb.Plan.STATE_RUNNING):
            return plan
        assert time.monotonic() < deadline, f"{name} still {pb.Plan.State.Name(plan.state)}"
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_external_ray_gone_server_stays_up_and_the_plan_resumes(tmp_path: Path) -> None:
    import tempfile

    short = Path(tempfile.mkdtemp(prefix="aprg-"))  # Ray's socket paths must stay under 107 bytes
    cluster = SamePortCluster(short)
    data = tmp_path / "data"
    try:
        try:
            cluster.start_head()
        except RuntimeError as exc:
            if "Cannot assign requested address" in str(exc):
                pytest.skip(f"no 127.0.0.2 loopback address here: {exc}")
            raise
        server = start_server(data, extra=("--ray-address", cluster.address), env=RAY_ENV)
        try:
            with grpc.insecure_channel(server.address) as channel:
                stub = pb_grpc.PlannerServiceStub(channel)
                stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="ray-goes-away"), timeout=60)
                for event in stub.WatchPlan(pb.WatchPlanRequest(name="plans/ray-goes-away"), timeout=300):
                    if event.HasField("progress") and event.progress.candidates_evaluated:
                        break  # batches are out on Ray and some are done: the rest must run again
                    assert not event.HasField("plan"), "the plan finished before Ray could be stopped"
                cluster.stop()  # the whole head node, by its process group
                _wait(lambda: _ready(channel) == health_pb2.HealthCheckResponse.NOT_SERVING, 30, "readiness NOT_SERVING")
                time.sleep(5)  # Ray would have ended the driver by now (at once when its raylet goes)
                assert server.proc.poll() is None, server.log()[-3000:]
                assert _ready(channel, "liveness") == health_pb2.HealthCheckResponse.SERVING
                waiting = stub.GetPlan(pb.GetPlanRequest(name="plans/ray-goes-away"), timeout=30)
                assert waiting.state == pb.Plan.STATE_RUNNING, "waits for Ray, not failed or faked as finished"
                assert len(stub.ListDrives(pb.ListDrivesRequest(), timeout=30).drives) >= 3
                # While Ray is down a second server start fails with one line, not a traceback.
                down = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", "0",
                                       "--data-dir", str(tmp_path / "other"), "--ray-address", cluster.address],
                                      capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ, **RAY_ENV})
                assert down.returncode == 1
                last = [x for x in down.stderr.splitlines() if x.startswith("arrayplan:")]
                assert last and "Ray" in last[-1] and "Traceback" not in down.stderr, down.stderr[-2000:]
                # The head is back on the same address: the server reconnects and the plan finishes.
                cluster.restart_head()
                _wait(lambda: _ready(channel) == health_pb2.HealthCheckResponse.SERVING, 90, "readiness SERVING again")
                resumed = _finish(stub, "plans/ray-goes-away", 240)
                assert resumed.state == pb.Plan.STATE_SUCCEEDED, (resumed.error_reason, resumed.error_message)
                assert "reconnected" in server.log() and "batch(es) out: they run again" in server.log(), server.log()[-3000:]
                # The same spec on an undisturbed run gives the same answer.
                stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="ray-undisturbed"), timeout=60)
                calm = _finish(stub, "plans/ray-undisturbed", 240)
                assert calm.state == pb.Plan.STATE_SUCCEEDED, calm.error_message
                assert resumed.result == calm.result
                assert resumed.progress.candidates_evaluated == resumed.progress.candidates_to_evaluate
            assert server.proc.poll() is None
        finally:
            server.stop()
    finally:
        cluster.stop()
        import shutil

        shutil.rmtree(short, ignore_errors=True)
