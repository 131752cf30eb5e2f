"""Faults: a full run store is UNAVAILABLE (not INTERNAL), health goes
NOT_SERVING, a running plan keeps its result and writes it once space returns; an unusable data
dir at start exits 2 with one line; a killed server's local Ray is cleaned up at the next start.

The full disk is real: a small tmpfs (``mount -t tmpfs -o size=...``, so the test needs root)
filled with a file until the kernel answers ENOSPC.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from conftest import ROOT, oltp_spec, start_server

SPEC = oltp_spec()


@pytest.fixture()
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {out.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(path: Path) -> None:
    """Write zeros until the filesystem refuses (unbuffered: nothing is left to flush at close,
    which would raise ENOSPC again outside the loop)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while True:
            os.write(fd, b"\0" * (1 << 16))
    except OSError:
        pass
    finally:
        os.close(fd)


def _health(channel: grpc.Channel) -> int:
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10).status


def _wait(cond, timeout_s: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.3)


@pytest.mark.slow
def test_full_store_is_unavailable_then_recovers_without_losing_the_plan(small_fs: Path) -> None:
    server = start_server(small_fs / "data", extra=("--executor", "local"))
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = pb_grpc.PlannerServiceStub(channel)
            running = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="before-the-fault"), timeout=60)
            _wait(lambda: stub.GetPlan(pb.GetPlanRequest(name=running.name), timeout=10).state == pb.Plan.STATE_RUNNING, 60,
                  "the plan starts")
            _fill(small_fs / "filler")
            codes = []
            for i in range(3):
                try:
                    stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id=f"during-the-fault-{i}"), timeout=30)
                    codes.append(grpc.StatusCode.OK)
                except grpc.RpcError as exc:
                    codes.append(exc.code())
                    assert exc.code() == grpc.StatusCode.UNAVAILABLE, exc.details()
                    assert "run store is full" in exc.details() and "Traceback" not in exc.details()
                    break
            assert grpc.StatusCode.UNAVAILABLE in codes, "a write to a full store is refused as UNAVAILABLE"
            _wait(lambda: _health(channel) == health_pb2.HealthCheckResponse.NOT_SERVING, 15, "health NOT_SERVING")
            liveness = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=10)
            assert liveness.status == health_pb2.HealthCheckResponse.SERVING, "alive (a restart would not free the disk)"
            # Reads still work, and the running plan is not failed for good.
            assert stub.GetPlan(pb.GetPlanRequest(name=running.name), timeout=10).state == pb.Plan.STATE_RUNNING
            time.sleep(2)
            (small_fs / "filler").unlink()
            _wait(lambda: _health(channel) == health_pb2.HealthCheckResponse.SERVING, 30, "health SERVING again")
            _wait(lambda: stub.GetPlan(pb.GetPlanRequest(name=running.name), timeout=10).state != pb.Plan.STATE_RUNNING, 300,
                  "the plan finishes")
            done = stub.GetPlan(pb.GetPlanRequest(name=running.name), timeout=10)
            assert done.state == pb.Plan.STATE_SUCCEEDED, done.error_message
            assert done.result.recommendations and done.progress.candidates_evaluated == done.progress.candidates_to_evaluate
            after = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC), plan_id="after-the-fault"), timeout=60)
            assert after.state in (pb.Plan.STATE_PENDING, pb.Plan.STATE_RUNNING)
            stub.CancelPlan(pb.CancelPlanRequest(name=after.name), timeout=60)
    finally:
        server.stop()


def _serve(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", "0", "--data-dir", str(data_dir),
                           "--executor", "local"], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_unusable_data_dir_exits_2_with_one_line(small_fs: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    full = small_fs / "full"
    full.mkdir()
    _fill(small_fs / "filler")
    ro = tmp_path / "ro"
    ro.mkdir()
    out = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(ro)], capture_output=True, text=True)
    try:
        cases = [(not_a_dir, "is not a directory"), (full, "full")]
        if out.returncode == 0:
            cases.append((ro, "read-only"))
        for data_dir, words in cases:
            res = _serve(data_dir)
            assert res.returncode == 2, res.stderr
            lines = [x for x in res.stderr.splitlines() if x.strip()]
            assert len(lines) == 1 and words in lines[0] and "Traceback" not in res.stderr, res.stderr
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def _session_pids(state: dict) -> set[int]:
    """Processes of a local Ray: its session dir in their command line or its node id in their
    environment (agents and workers rename themselves ray::...)."""
    marker = f"RAY_NODE_ID={state['node_id']}".encode()
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if state["session_dir"] in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace") \
                        or marker in (entry / "environ").read_bytes().split(b"\0"):
                    pids.add(int(entry.name))
            except OSError:
                pass
    return pids


@pytest.mark.slow
def test_killed_servers_local_ray_is_cleaned_up_at_next_start(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start_server(data, extra=("--num-cpus", "1"))
    state = json.loads((data / "local-ray.json").read_text())
    assert _session_pids(state), "the local Ray's processes are found"
    os.kill(first.proc.pid, signal.SIGKILL)  # the server only: its Ray is left behind
    first.proc.wait(timeout=30)
    # Ray's dashboard and runtime-env agents often outlive a killed server (reparented to init),
    # but not always: a process started the way Ray starts them (the node's RAY_NODE_ID in its
    # environment, its own session) stands in for one, so the clean-up is always exercised.
    lingering = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env={**os.environ, "RAY_NODE_ID": state["node_id"]}, start_new_session=True)
    try:
        time.sleep(1)
        stale = _session_pids(state)
        assert lingering.pid in stale
        second = start_server(data, extra=("--num-cpus", "1"))
        try:
            _wait(lambda: not _session_pids(state), 30, f"stale Ray processes {sorted(_session_pids(state))} stopped")
            assert lingering.wait(timeout=10) == -signal.SIGKILL
            assert "previous server's local Ray session" in second.log()
        finally:
            second.stop()
            first.stop(signal.SIGKILL)
    finally:
        if lingering.poll() is None:
            lingering.kill()
