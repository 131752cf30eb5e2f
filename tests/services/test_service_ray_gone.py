"""An external Ray cluster that goes away mid-plan (issue 12, part 5), on a real `ray start` head
(127.0.0.2, stopped by PID): Ray's driver library ends the server process once the cluster's GCS
is gone (at once when the head shuts down, after 60 s when it vanishes); the plan is left RUNNING in the store (not lost, not faked as finished); a start
while Ray is still down exits 1 with one line naming Ray; once Ray is back, the next start
resumes the plan."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

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
)


def _state(data: Path) -> str:
    with sqlite3.connect(data / "runs.sqlite3") as db:
        return db.execute("SELECT state FROM runs WHERE id='ray-goes-away'").fetchone()[0]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_external_ray_gone_then_back_resumes_the_plan(tmp_path: Path) -> None:
    import tempfile

    short = Path(tempfile.mkdtemp(prefix="aprg-"))  # Ray's socket paths must stay under 107 bytes
    cluster = LoopbackRayCluster(short)
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
                plan = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="ray-goes-away"), timeout=60)
                for event in stub.WatchPlan(pb.WatchPlanRequest(name=plan.name), timeout=300):
                    if event.HasField("progress") and event.progress.candidates_to_evaluate:
                        break
                    assert not event.HasField("plan"), "the plan finished before Ray could be stopped"
            cluster.stop()  # the whole head node, by its process group
            assert server.proc.wait(timeout=240) != 0, "Ray's driver ends the process once the cluster is gone"
            assert _state(data) == "RUNNING", "left for the next start, not lost or faked as finished"
        finally:
            server.stop()
        # While Ray is still down a start fails with one line, not a traceback.
        down = subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", "0", "--data-dir", str(data),
                               "--ray-address", cluster.address], capture_output=True, text=True, timeout=300, cwd=ROOT,
                              env={**os.environ, **RAY_ENV})
        assert down.returncode == 1
        last = [x for x in down.stderr.splitlines() if x.startswith("arrayplan:")]
        assert last and "Ray" in last[-1] and "Traceback" not in down.stderr, down.stderr[-2000:]
        # Ray is back (a new head): the next start resumes the plan.
        cluster.start_head()
        again = start_server(data, extra=("--ray-address", cluster.address), env=RAY_ENV)
        try:
            deadline = time.monotonic() + 60
            while "resuming plan ray-goes-away" not in again.log():
                assert time.monotonic() < deadline, again.log()[-2000:]
                time.sleep(0.5)
            with grpc.insecure_channel(again.address) as channel:
                stub = pb_grpc.PlannerServiceStub(channel)
                resumed = stub.GetPlan(pb.GetPlanRequest(name="plans/ray-goes-away"), timeout=30)
                assert resumed.state in (pb.Plan.STATE_RUNNING, pb.Plan.STATE_SUCCEEDED), resumed.error_message
                stub.CancelPlan(pb.CancelPlanRequest(name="plans/ray-goes-away"), timeout=120)
            with sqlite3.connect(data / "runs.sqlite3") as db:
                assert db.execute("SELECT attempts FROM runs WHERE id='ray-goes-away'").fetchone()[0] == 2
        finally:
            again.stop()
    finally:
        cluster.stop()
        import shutil

        shutil.rmtree(short, ignore_errors=True)
