"""The service under load: a thousand WatchPlan streams do not starve
health, GetPlan or ListDrives; plans beyond the run slots queue PENDING with their position, and
beyond the queue CreatePlan answers RESOURCE_EXHAUSTED with a RetryInfo.

The server runs a real local Ray with no CPUs (``--num-cpus 0``): its plans enumerate, prune and
submit their tasks, which then wait for a CPU that never comes, so a plan stays RUNNING for as
long as the test needs without loading the machine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from conftest import ServerProcess, start_server

STREAMS = 1000
SPEC = pb.PlanSpec(
    workload=pb.Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1e12),
    constraints=pb.Constraints(usable_capacity_bytes=4_000_000_000_000),
    candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3700-400gb"], layouts=["raid10", "raid6"],
                                      max_drive_count=24),
    service_life_years=3, seed=5,
)


@pytest.fixture(scope="module")
def idle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = start_server(tmp_path_factory.mktemp("load-data"),
                     extra=("--num-cpus", "0", "--max-running-plans", "1", "--max-queued-plans", "2"))
    yield s
    s.stop()


def _state(stub, name: str) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    p = stub.GetPlan(pb.GetPlanRequest(name=name), timeout=30)
    return p.state, p.progress.queue_position


def test_admission_queue_and_thousand_watchers(idle_server: ServerProcess) -> None:
    with grpc.insecure_channel(idle_server.address) as channel:
        stub = pb_grpc.PlannerServiceStub(channel)
        a = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="load-a"), timeout=60)
        deadline = time.monotonic() + 120
        while _state(stub, a.name)[0] != pb.Plan.STATE_RUNNING and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _state(stub, a.name) == (pb.Plan.STATE_RUNNING, 0)
        b = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="load-b"), timeout=60)
        c = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="load-c"), timeout=60)
        # Beyond the running slot: PENDING with the place in the queue (1 = next).
        assert (b.state, b.progress.queue_position) == (pb.Plan.STATE_PENDING, 1)
        assert (c.state, c.progress.queue_position) == (pb.Plan.STATE_PENDING, 2)
        # Beyond the queue: RESOURCE_EXHAUSTED with a RetryInfo, and nothing stored.
        with pytest.raises(grpc.RpcError) as err:
            stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="load-d"), timeout=60)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(err.value)
        retry = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
        assert len(retry) == 1
        info = error_details_pb2.RetryInfo()
        retry[0].Unpack(info)
        assert info.retry_delay.seconds >= 1
        with pytest.raises(grpc.RpcError) as err:
            stub.GetPlan(pb.GetPlanRequest(name="plans/load-d"), timeout=30)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        # A thousand streams open on the three plans; the quick RPCs keep answering meanwhile.
        latencies = asyncio.run(_watch_and_probe(idle_server.address, [a.name, b.name, c.name]))
        assert max(latencies) < 10.0, f"slowest quick call took {max(latencies):.1f} s under {STREAMS} streams"

        # The queue moves: cancelling the queued C leaves B first; cancelling A starts B.
        assert stub.CancelPlan(pb.CancelPlanRequest(name=c.name), timeout=60).state == pb.Plan.STATE_CANCELLED
        assert _state(stub, b.name) == (pb.Plan.STATE_PENDING, 1)
        assert stub.CancelPlan(pb.CancelPlanRequest(name=a.name), timeout=60).state == pb.Plan.STATE_CANCELLED
        deadline = time.monotonic() + 60
        while _state(stub, b.name)[0] == pb.Plan.STATE_PENDING and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _state(stub, b.name) == (pb.Plan.STATE_RUNNING, 0)
        stub.CancelPlan(pb.CancelPlanRequest(name=b.name), timeout=60)


async def _watch_and_probe(address: str, names: list[str]) -> list[float]:
    """Open STREAMS WatchPlan calls (spread over 10 connections), wait for each one's first
    event, then time health, GetPlan and ListDrives calls on another connection while all the
    streams stay open. Returns the latencies."""
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(10)]
    probe_channel = grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    first_events = 0
    calls = []
    try:
        for i in range(STREAMS):
            stub = pb_grpc.PlannerServiceStub(channels[i % len(channels)])
            calls.append(stub.WatchPlan(pb.WatchPlanRequest(name=names[i % len(names)]), timeout=300))

        async def first(call) -> None:  # type: ignore[no-untyped-def]
            nonlocal first_events
            event = await call.read()
            assert event is not grpc.aio.EOF and event.HasField("progress")
            first_events += 1

        await asyncio.wait_for(asyncio.gather(*(first(c) for c in calls)), timeout=240)
        assert first_events == STREAMS
        stub = pb_grpc.PlannerServiceStub(probe_channel)
        health = health_pb2_grpc.HealthStub(probe_channel)
        latencies = []
        for _ in range(5):
            for call in (lambda: health.Check(health_pb2.HealthCheckRequest(), timeout=10),
                         lambda: stub.GetPlan(pb.GetPlanRequest(name=names[0]), timeout=10),
                         lambda: stub.ListDrives(pb.ListDrivesRequest(), timeout=10)):
                t0 = time.monotonic()
                reply = await call()
                latencies.append(time.monotonic() - t0)
                assert reply is not None
        assert (await health.Check(health_pb2.HealthCheckRequest(), timeout=10)).status == health_pb2.HealthCheckResponse.SERVING
        # Every stream is still open (none ended or was refused).
        assert not any(c.done() for c in calls)
        return latencies
    finally:
        for c in calls:
            c.cancel()
        for ch in [*channels, probe_channel]:
            await ch.close()
