"""Heavy calls never hold up health or the cheap calls (server/heavy.py, docs/service.md).

A real `arrayplan serve --executor local` on 127.0.0.1 (started and stopped by PID): four
RunConsistencyTest calls of a simulated day, abandoned by their clients, while health checks and
GetDrive calls are timed the whole way through; the abandoned calls' worker processes are killed
(the server says which, and the test sees the processes gone); bad requests are refused with
INVALID_ARGUMENT while every heavy slot is taken; a fifth heavy call of the same caller is refused
with RESOURCE_EXHAUSTED and a RetryInfo; afterwards heavy calls run in fresh workers and give the
in-process answers.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from conftest import ServerProcess, start_server

ABANDONED = 4  # the server's default heavy slots and per-caller limit
PROBES = 250  # health checks, and as many GetDrive calls
P99_LIMIT_S = 0.100
DAY = pb.RunConsistencyTestRequest(drive_model="intel-dc-s3700-400gb", duration=duration_pb2.Duration(seconds=86_400), seed=2)
RUNNING = re.compile(r"heavy call RunConsistencyTest \(caller '[^']*'\) running in worker process (\d+)")
KILLED = re.compile(r"heavy call RunConsistencyTest \(caller '[^']*'\): the caller left; worker process (\d+) killed")


def _start_local_server(data_dir: Path) -> ServerProcess:
    """conftest.start_server with `--verbose` (the heavy-call log lines are INFO) and the local executor."""
    return start_server(data_dir, extra=("--executor", "local"), global_args=("--verbose",))


@pytest.fixture(scope="module")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    s = _start_local_server(tmp_path_factory.mktemp("heavy-data"))
    yield s
    s.stop()


def _wait_for(predicate, what: str, server: ServerProcess, timeout_s: float = 120.0):  # type: ignore[no-untyped-def]
    """Poll ``predicate()`` until it returns something truthy (a condition, not a sleep-then-check)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout_s:.0f} s; server log:\n{server.log()[-4000:]}")


def _gone(pid: int) -> bool:
    """The process has ended (reaped, or a zombie waiting for its parent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _status_detail(err: grpc.aio.AioRpcError, kind):  # type: ignore[no-untyped-def]
    status = rpc_status.from_call(err)  # type: ignore[arg-type]
    assert status is not None, err
    found = [d for d in status.details if d.Is(kind.DESCRIPTOR)]
    assert len(found) == 1, status
    out = kind()
    found[0].Unpack(out)
    return out


async def _probe(address: str, stop: asyncio.Event, latencies: dict[str, list[float]]) -> None:
    """Health checks and GetDrive calls one after another on their own connection, timed, until
    ``stop`` is set and each has been answered at least PROBES times."""
    async with grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        stub = pb_grpc.PlannerServiceStub(channel)
        while not stop.is_set() or min(len(v) for v in latencies.values()) < PROBES:
            t0 = time.perf_counter()
            reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            latencies["health"].append(time.perf_counter() - t0)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            t0 = time.perf_counter()
            drive = await stub.GetDrive(pb.GetDriveRequest(name="intel-dc-s3700-400gb"), timeout=10)
            latencies["GetDrive"].append(time.perf_counter() - t0)
            assert drive.name == "intel-dc-s3700-400gb"
            await asyncio.sleep(0.01)


async def _abandon_day_long_calls(server: ServerProcess) -> tuple[dict[str, list[float]], list[int]]:
    latencies: dict[str, list[float]] = {"health": [], "GetDrive": []}
    stop = asyncio.Event()
    probe = asyncio.create_task(_probe(server.address, stop, latencies))
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = pb_grpc.PlannerServiceStub(channel)
        calls = [stub.RunConsistencyTest(DAY, timeout=600) for _ in range(ABANDONED)]
        # Every one runs in a worker process of its own (the log line names it).
        pids = await asyncio.to_thread(_wait_for, lambda: [int(p) for p in RUNNING.findall(server.log())]
                                       if len(RUNNING.findall(server.log())) >= ABANDONED else None,
                                       f"{ABANDONED} heavy calls running", server)
        assert len(set(pids)) == ABANDONED and os.getpid() not in pids and server.proc.pid not in pids
        assert not any(_gone(p) for p in pids)

        # With every slot taken: bad requests are refused on the spot, not queued ...
        bad = [(stub.SimulateArray, pb.SimulateArrayRequest(drive_model="intel-dc-s3500-480gb", drive_count=12, layout="raid6",
                                                            workload=pb.Workload(read_fraction=0.7, target_iops=10_000),
                                                            duration=duration_pb2.Duration(seconds=1_000_000_000)), "3600"),
               (stub.RunConsistencyTest, pb.RunConsistencyTestRequest(drive_model="intel-dc-s3700-400gb",
                                                                      duration=duration_pb2.Duration(seconds=86_401)), "86400")] * 3
        for method, request, upper in bad:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await method(request, timeout=30)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
            violations = _status_detail(err.value, error_details_pb2.BadRequest).field_violations
            assert [v.field for v in violations] == ["duration"]
            assert upper in violations[0].description.replace(",", ""), violations[0].description  # the allowed range
        # ... and a fifth heavy call of this caller is refused with a RetryInfo.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.RunConsistencyTest(DAY, timeout=30)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.value
        assert _status_detail(err.value, error_details_pb2.ErrorInfo).reason == "HEAVY_CALLS_PER_CALLER"
        assert _status_detail(err.value, error_details_pb2.RetryInfo).retry_delay.seconds >= 1

        # The clients leave (cancel); then two more calls whose deadline passes (2 s).
        for call in calls:
            call.cancel()
        for call in calls:
            with pytest.raises(asyncio.CancelledError):
                await call
        killed = await asyncio.to_thread(_wait_for, lambda: [int(p) for p in KILLED.findall(server.log())]
                                         if len(KILLED.findall(server.log())) >= ABANDONED else None,
                                         "the abandoned calls' workers killed", server)
        assert sorted(killed) == sorted(pids)
        await asyncio.to_thread(_wait_for, lambda: all(_gone(p) for p in pids), "the killed workers gone", server)

        late = [stub.RunConsistencyTest(DAY, timeout=2.0) for _ in range(2)]
        for call in late:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call
            assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        # Every call that started in a worker was stopped there (one that was still being
        # admitted when its deadline passed never started).
        def all_stopped() -> list[int] | None:
            log = server.log()
            started = [int(p) for p in RUNNING.findall(log)]
            stopped = [int(p) for p in KILLED.findall(log)]
            return started if sorted(started) == sorted(stopped) and all(_gone(p) for p in started) else None
        started = await asyncio.to_thread(_wait_for, all_stopped, "every started call stopped", server)
        assert len(started) >= ABANDONED
    stop.set()
    await asyncio.wait_for(probe, timeout=300)
    return latencies, started


def _p99(values: list[float]) -> float:
    return float(np.percentile(values, 99))


def test_abandoned_day_long_calls_stop_and_cheap_calls_answer(local_server: ServerProcess) -> None:
    latencies, started = asyncio.run(_abandon_day_long_calls(local_server))
    print("heavy calls started and stopped:", len(started), {k: f"{len(v)} calls, p99 {_p99(v) * 1000:.1f} ms, max {max(v) * 1000:.1f} ms"
                                                            for k, v in latencies.items()})
    for name, values in latencies.items():
        assert len(values) >= PROBES
        assert _p99(values) <= P99_LIMIT_S, (f"{name}: p99 {_p99(values) * 1000:.0f} ms over {len(values)} calls "
                                             f"while {len(started)} day-long calls ran and were abandoned")
    assert local_server.proc.poll() is None


def test_heavy_calls_run_in_fresh_workers_with_the_in_process_answers(local_server: ServerProcess) -> None:
    """After abandoned calls the slots are free again: a short consistency test, a simulation and a
    forecast with a re-plan run in the worker processes and answer what the in-process functions do."""
    from test_forecast_api import _request

    from arrayplan_engine.catalog import builtin_catalog
    from arrayplan_services.api.forecast_convert import forecast_response
    from arrayplan_services.fanout import LocalExecutor
    from arrayplan_services.plan import simulate

    with grpc.insecure_channel(local_server.address) as channel:
        stub = pb_grpc.PlannerServiceStub(channel)
        req = pb.RunConsistencyTestRequest(drive_model="intel-dc-s3700-400gb", duration=duration_pb2.Duration(seconds=60), seed=4)
        got = stub.RunConsistencyTest(req, timeout=300)
        want = simulate.consistency_test(req, builtin_catalog(), LocalExecutor())
        assert list(got.iops_per_second) == list(want.iops_per_second) and len(got.iops_per_second) == 60
        assert got.trace_id

        sim = pb.SimulateArrayRequest(drive_model="intel-dc-s3500-480gb", drive_count=12, layout="raid6",
                                      workload=pb.Workload(read_fraction=0.7, target_iops=10_000),
                                      duration=duration_pb2.Duration(seconds=1), seed=3)
        got_sim = stub.SimulateArray(sim, timeout=300)
        want_sim = simulate.simulate_array(sim, builtin_catalog(), LocalExecutor())
        assert got_sim.achieved_iops == pytest.approx(want_sim.achieved_iops, rel=1e-12)
        assert list(got_sim.iops_per_second) == list(want_sim.iops_per_second)

        fc = _request(create_replan=True)
        fc.now_time.FromSeconds(1_795_000_000)  # the telemetry's age judged at one time on both paths, not at two clocks
        got_fc = stub.ForecastArray(fc, timeout=300)
        want_fc, spec = forecast_response(fc, builtin_catalog())
        assert spec is not None and got_fc.replan_plan_name.startswith("plans/")
        plan = stub.GetPlan(pb.GetPlanRequest(name=got_fc.replan_plan_name), timeout=30)
        # the defaults the planner applied, stated in the stored spec: the endurance margin, the durability floor, the fill target
        spec.constraints.endurance_margin_fraction = plan.spec.constraints.endurance_margin_fraction
        spec.constraints.max_array_loss_probability = plan.spec.constraints.max_array_loss_probability
        spec.constraints.max_fill_fraction = plan.spec.constraints.max_fill_fraction
        assert plan.spec.constraints.max_array_loss_probability == 1e-4 and plan.spec.constraints.max_fill_fraction == 0.8
        assert plan.spec == spec
        got_fc.ClearField("replan_plan_name")
        got_fc.ClearField("trace_id")
        assert got_fc == want_fc
        # A bad forecast is refused before it is queued, naming the field.
        with pytest.raises(grpc.RpcError) as err:
            stub.ForecastArray(pb.ForecastArrayRequest(), timeout=30)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        stub.CancelPlan(pb.CancelPlanRequest(name=plan.name), timeout=60)
    assert local_server.proc.poll() is None


def test_admission_is_fifo_bounded_per_caller_and_forgets_callers_who_left() -> None:
    """HeavyAdmission itself (the server's object, on an event loop of its own): one slot, a queue
    of two, two calls per caller."""
    from arrayplan_services.server.errors import status_for
    from arrayplan_services.server.heavy import HeavyAdmission, HeavyCallsFullError

    async def settle(admission: HeavyAdmission, queued: int) -> None:
        for _ in range(100):  # let the waiting tasks reach the queue (no clock involved)
            if admission.queued == queued:
                return
            await asyncio.sleep(0)
        raise AssertionError(f"queue length {admission.queued}, expected {queued}")

    async def scenario() -> None:
        admission = HeavyAdmission(max_running=1, max_queued=2, max_per_caller=2)
        first = await admission.acquire("a")
        b = asyncio.create_task(admission.acquire("b"))
        c = asyncio.create_task(admission.acquire("c"))
        await settle(admission, 2)
        with pytest.raises(HeavyCallsFullError) as full:
            await admission.acquire("d")  # the queue is full
        status = status_for(full.value)
        assert status.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert [d.TypeName() for d in status.details] == ["google.rpc.ErrorInfo", "google.rpc.RetryInfo"]
        info = error_details_pb2.ErrorInfo()
        status.details[0].Unpack(info)
        assert info.reason == "HEAVY_CALLS_FULL"
        c.cancel()  # a caller who leaves while waiting leaves the queue
        with pytest.raises(asyncio.CancelledError):
            await c
        assert admission.queued == 1
        a2 = asyncio.create_task(admission.acquire("a"))
        await settle(admission, 2)
        with pytest.raises(HeavyCallsFullError) as mine:
            await admission.acquire("a")  # "a" has one running and one waiting
        assert mine.value.reason_code == "HEAVY_CALLS_PER_CALLER"
        admission.release(first, elapsed_s=3.0)  # the slot goes to the first in line, b
        second = await b
        assert not a2.done() and admission.running == 1 and admission.queued == 1
        admission.release(second)
        third = await a2
        admission.release(third)
        assert admission.running == 0 and admission.queued == 0
        assert await admission.acquire("a") is not None  # nothing left counted against anyone

    asyncio.run(scenario())
