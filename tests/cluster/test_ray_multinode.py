"""Scale-out on a real two-node Ray cluster on this machine (head on 127.0.0.2, worker on 127.0.0.3,
`ray start` processes stopped by PID): `arrayplan serve --ray-address` spreads a plan over both
nodes, and killing the worker node's raylet mid-plan still gives the identical answer (Ray retries
the lost tasks on the head; our tasks are pure and seeded)."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.bench.ray_scale import RAY_ENV, LoopbackRayCluster, bench_spec

from .clusterlib import start_planner

# ~120 candidates in several ~2 s batches: seconds of work per node, so the worker can be killed mid-plan.
SPEC = bench_spec()


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[LoopbackRayCluster]:
    # Ray's sockets live under this directory and a socket path may not exceed 107 bytes: a short
    # directory of its own (an xdist worker's tmp_path alone is ~60 bytes deep).
    short = Path(tempfile.mkdtemp(prefix="apray-"))
    cluster = LoopbackRayCluster(short)
    try:
        try:
            cluster.start_head()
            cluster.add_worker("127.0.0.3")
        except RuntimeError as exc:
            if "Cannot assign requested address" in str(exc):
                pytest.skip(f"this machine has no 127.0.0.2/127.0.0.3 loopback addresses: {exc}")
            raise
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(short, ignore_errors=True)


def _node_of(pid: int, cluster: LoopbackRayCluster) -> str | None:
    """The node a Ray worker process belongs to: its raylet (or an ancestor) is in that node's
    `ray start --block` process group. (A worker's own command line is overwritten by its title.)"""
    groups = {n.proc.pid: n.ip for n in cluster.nodes}
    while pid > 1:
        try:
            pgid = os.getpgid(pid)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (ProcessLookupError, OSError):
            return None
        if pgid in groups:
            return groups[pgid]
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # ppid
    return None


def _worker_pids(data_dir: Path, trace_id: str) -> set[int]:
    with sqlite3.connect(data_dir / "runs.sqlite3") as db:
        rows = db.execute("SELECT process FROM spans WHERE trace_id = ? AND name = 'arrayplan.evaluate_batch'", (trace_id,)).fetchall()
    return {int(p.split(":", 1)[1]) for (p,) in rows if p.startswith("worker:")}


def test_plan_spreads_over_two_nodes_and_survives_losing_one(ray_cluster: LoopbackRayCluster, tmp_path: Path) -> None:
    data = tmp_path / "data"
    planner = start_planner(data, executor="ray", extra=("--ray-address", ray_cluster.address), env=RAY_ENV)
    try:
        with grpc.insecure_channel(planner.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            baseline = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="two-nodes"), timeout=60)
            base = list(stub.WatchPlan(pb.WatchPlanRequest(name=baseline.name), timeout=600))[-1].plan
            assert base.state == pb.Plan.STATE_SUCCEEDED, base.error_message
            nodes = {_node_of(pid, ray_cluster) for pid in _worker_pids(data, base.trace_id)}
            assert nodes == {"127.0.0.2", "127.0.0.3"}, f"batches ran on {nodes}: the plan should spread over both nodes"

            worker = ray_cluster.nodes[1]
            raylet = worker.raylet_pid()
            assert raylet is not None, worker.log()
            again = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="lose-a-node"), timeout=60)
            killed_at = None
            for event in stub.WatchPlan(pb.WatchPlanRequest(name=again.name), timeout=600):
                if event.HasField("progress") and event.progress.candidates_to_evaluate and killed_at is None:
                    os.kill(raylet, signal.SIGKILL)  # the worker node dies with its tasks in flight
                    killed_at = event.progress.candidates_evaluated, event.progress.candidates_to_evaluate
                if event.HasField("plan"):
                    final = event.plan
            assert killed_at is not None and killed_at[0] < killed_at[1], f"killed mid-plan: {killed_at}"
            assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
            assert final.result == base.result, "the same answer after losing a node"
            assert final.progress.candidates_evaluated == base.progress.candidates_evaluated
            after = {_node_of(pid, ray_cluster) for pid in _worker_pids(data, final.trace_id)}
            assert "127.0.0.2" in after
    finally:
        planner.proc.stop()
