"""`make load`: ghz against a real `arrayplan serve` (local Ray, SQLite store, 127.0.0.1).

Starts a server on a free port with a fresh data dir, stores one small plan (so GetPlan has
something to read), warms up, then runs ghz (bin/ghz, built by scripts/setup.sh) at concurrency
50 on GetDrive, GetPlan and ListDrives and prints, per method, requests per second, p99 latency
and errors, and the server's resident memory before and after. ghz cannot parse proto3
``optional``, so it gets a protoset made with ``grpc_tools.protoc --descriptor_set_out
--include_imports``.

Then, on the same server: its resident memory before 16 big plans are created (4 run, 12 wait in
the queue), once they are all admitted, once they have all finished and 5 s later (the server
returns freed memory to the OS when plans end: server/memory.py). ``--big-plans`` runs only this
part (no ghz). Last, for each executor
(the Ray server, then a second server with ``--executor local``): the p99 of health checks while 4
RunConsistencyTest calls of a simulated day (86,400 s) are abandoned by their clients after 2 s,
and (locally) how many worker processes the server killed for them.

Environment: LOAD_REQUESTS (per method, default 10000), LOAD_CONCURRENCY (default 50),
LOAD_BIG_PLANS (default 16), LOAD_HEALTH_PROBES (default 500).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GHZ = ROOT / "bin" / "ghz"
if not GHZ.exists():  # the cache scripts/setup.sh fills
    GHZ = Path(os.environ.get("ARRAYPLAN_TOOL_CACHE", Path.home() / ".cache" / "arrayplan" / "bin")) / "ghz-v0.93.0"
REQUESTS = int(os.environ.get("LOAD_REQUESTS", "10000"))
CONCURRENCY = int(os.environ.get("LOAD_CONCURRENCY", "50"))
BIG_PLANS = int(os.environ.get("LOAD_BIG_PLANS", "16"))
HEALTH_PROBES = int(os.environ.get("LOAD_HEALTH_PROBES", "500"))
ABANDONED = 4
ABANDON_AFTER_S = 2.0
SETTLE_S = 5.0
SERVICE = "arrayplan.v1.PlannerService"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _protoset(out: Path) -> Path:
    from grpc_tools import protoc

    path = out / "arrayplan.protoset"
    import grpc_tools

    include = Path(grpc_tools.__file__).parent / "_proto"
    rc = protoc.main(["protoc", f"-I{ROOT / 'proto'}", f"-I{include}", f"--descriptor_set_out={path}", "--include_imports",
                      str(ROOT / "proto" / "arrayplan" / "v1" / "planner.proto")])
    if rc != 0:
        raise SystemExit("protoc could not build the protoset")
    return path


def _ghz(protoset: Path, address: str, method: str, data: dict, n: int) -> dict:
    out = subprocess.run([str(GHZ), "--insecure", "--protoset", str(protoset), "--call", f"{SERVICE}/{method}", "-d", json.dumps(data),
                          "-c", str(CONCURRENCY), "-n", str(n), "--connections", "5", "--timeout", "20s", "--format", "json", address],
                         capture_output=True, text=True, timeout=1800)
    if out.returncode != 0 and not out.stdout.strip():
        raise SystemExit(f"ghz failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def _start(tmpdir: Path, name: str, *extra: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = _free_port()
    log_path = tmpdir / f"{name}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "arrayplan_services.cli.main", "--verbose", "serve", "--port", str(port),
                                 "--data-dir", str(tmpdir / name), "--num-cpus", "2", *extra], stdout=log, stderr=subprocess.STDOUT,
                                cwd=ROOT, start_new_session=True, env={**os.environ, "RAY_DISABLE_USAGE_STATS": "1"})
    return proc, f"127.0.0.1:{port}", log_path


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _big_spec(pb, seed: int):  # type: ignore[no-untyped-def]
    """A plan with a big search space (three drives, four layouts, up to 48 drives: 246 candidates,
    207 of them simulated)."""
    return pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1e12),
                       constraints=pb.Constraints(usable_capacity_bytes=4_000_000_000_000),
                       candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3500-800gb",
                                                                       "intel-dc-s3700-400gb"],
                                                         layouts=["raid10", "raid6", "raid5", "ec:8+2"], max_drive_count=48),
                       service_life_years=3, seed=seed)


def _big_plans(stub, pb, pid: int) -> dict:  # type: ignore[no-untyped-def]
    """RSS before BIG_PLANS big plans, once all are admitted (running or queued), and once all
    have finished."""
    before = _rss_mib(pid)
    t0 = time.monotonic()
    names = [stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=_big_spec(pb, i)), plan_id=f"load-big-{i:02d}"), timeout=120).name
             for i in range(BIG_PLANS)]
    admitted = _rss_mib(pid)
    states: dict[str, int] = {}
    candidates = 0
    for name in names:
        plan = None
        for event in stub.WatchPlan(pb.WatchPlanRequest(name=name), timeout=3600):
            plan = event.plan if event.HasField("plan") else plan
        state = pb.Plan.State.Name(plan.state) if plan is not None else "UNKNOWN"
        states[state] = states.get(state, 0) + 1
        candidates += plan.progress.candidates_total if plan is not None else 0
    finished = _rss_mib(pid)
    seconds = time.monotonic() - t0
    # The server returns freed memory to the OS within a few seconds of plans ending (its store
    # probe loop, every 2 s): read RSS again after SETTLE_S.
    time.sleep(SETTLE_S)
    return {"plans": BIG_PLANS, "candidates_total": candidates, "rss_before_mib": round(before, 1),
            "rss_admitted_mib": round(admitted, 1), "rss_finished_mib": round(finished, 1),
            "rss_settled_mib": round(_rss_mib(pid), 1), "states": states, "seconds": round(seconds, 1)}


async def _health_under_abandoned(address: str) -> dict:
    """Health checks one after another while ABANDONED day-long RunConsistencyTest calls are sent and
    abandoned (their deadline, ABANDON_AFTER_S, passes); HEALTH_PROBES of them, timed."""
    import grpc
    from google.protobuf import duration_pb2
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    day = pb.RunConsistencyTestRequest(drive_model="intel-dc-s3700-400gb", duration=duration_pb2.Duration(seconds=86_400), seed=2)
    async with grpc.aio.insecure_channel(address) as heavy_channel, \
            grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as probe_channel:
        stub = pb_grpc.PlannerServiceStub(heavy_channel)
        health = health_pb2_grpc.HealthStub(probe_channel)
        await health.Check(health_pb2.HealthCheckRequest(), timeout=10)  # the connection is up before the clock starts

        async def heavy() -> str:
            try:
                await stub.RunConsistencyTest(day, timeout=ABANDON_AFTER_S)
                return "OK"
            except grpc.aio.AioRpcError as exc:
                return exc.code().name

        calls = [asyncio.create_task(heavy()) for _ in range(ABANDONED)]
        latencies: list[float] = []
        errors = 0
        for _ in range(HEALTH_PROBES):
            t0 = time.perf_counter()
            try:
                await health.Check(health_pb2.HealthCheckRequest(), timeout=10)
            except grpc.aio.AioRpcError:
                errors += 1
            latencies.append(time.perf_counter() - t0)
            await asyncio.sleep(0.01)
        outcomes = await asyncio.gather(*calls)
    latencies.sort()
    return {"probes": len(latencies), "errors": errors, "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
            "p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))] * 1000, 2), "max_ms": round(latencies[-1] * 1000, 2),
            "heavy_outcomes": sorted(outcomes)}


def big_plans_only() -> int:
    """``scripts/load.py --big-plans``: only the RSS around BIG_PLANS big plans (no ghz), on a
    server with the Ray executor; for measuring memory alone."""
    import grpc

    sys.path.insert(0, str(ROOT / "services"))
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory(prefix="arrayplan-load-") as tmp:
        proc, address, _log = _start(Path(tmp), "ray")
        try:
            with grpc.insecure_channel(address) as channel:
                grpc.channel_ready_future(channel).result(timeout=180)
                big = _big_plans(pb_grpc.PlannerServiceStub(channel), pb, proc.pid)
        finally:
            _stop(proc)
    _print_big(big)
    print(json.dumps({"big_plans": big}))
    return 0


def heavy_calls_only() -> int:
    """``scripts/load.py --heavy-calls``: only the health p99 under ABANDONED abandoned day-long
    RunConsistencyTest calls, on a Ray server and on a ``--executor local`` one (no ghz)."""
    heavy: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="arrayplan-load-") as tmp:
        heavy = _heavy_calls(Path(tmp))
    _print_heavy(heavy)
    print(json.dumps({"health_under_abandoned_heavy_calls": heavy}))
    return 0 if all(h["errors"] == 0 for h in heavy.values()) else 1


def _heavy_calls(tmpdir: Path, ray_address: str | None = None, ray_proc: subprocess.Popen[bytes] | None = None) -> dict[str, dict]:
    """Health under abandoned heavy calls: on the Ray server at ``ray_address`` (``ray_proc``,
    stopped after; started here when None), then on a second server with ``--executor local``
    (with its worker kill count)."""
    import grpc

    heavy: dict[str, dict] = {}
    proc = ray_proc
    if ray_address is None:
        proc, ray_address, _log = _start(tmpdir, "ray-heavy")
        with grpc.insecure_channel(ray_address) as channel:
            grpc.channel_ready_future(channel).result(timeout=180)
    try:
        heavy["ray"] = asyncio.run(_health_under_abandoned(ray_address))
    finally:
        if proc is not None:
            _stop(proc)
    proc, address, log_path = _start(tmpdir, "local", "--executor", "local")
    try:
        with grpc.insecure_channel(address) as channel:
            grpc.channel_ready_future(channel).result(timeout=180)
        heavy["local"] = asyncio.run(_health_under_abandoned(address))
        deadline = time.monotonic() + 60  # the kills are logged within a second or so of the deadline
        killed: list[str] = []
        started: list[str] = []
        while time.monotonic() < deadline:
            killed = re.findall(r"the caller left; worker process (\d+) killed", log_path.read_text(errors="replace"))
            started = re.findall(r"running in worker process (\d+)", log_path.read_text(errors="replace"))
            if sorted(killed) == sorted(started):
                break
            time.sleep(0.2)
        heavy["local"]["workers_started"] = len(started)
        heavy["local"]["workers_killed"] = len(killed)
    finally:
        _stop(proc)
    return heavy


def _print_heavy(heavy: dict[str, dict]) -> None:
    for kind, h in heavy.items():
        print(f"health under {ABANDONED} abandoned day-long RunConsistencyTest calls ({kind} executor): {h['probes']} checks, "
              f"p50 {h['p50_ms']} ms, p99 {h['p99_ms']} ms, max {h['max_ms']} ms, {h['errors']} errors; calls ended {h['heavy_outcomes']}"
              + (f"; {h['workers_killed']} of {h['workers_started']} started workers killed" if "workers_killed" in h else ""))


def _print_big(big: dict) -> None:
    print(f"{big['plans']} big plans ({big['candidates_total']} candidates): server RSS {big['rss_before_mib']:.0f} MiB before, "
          f"{big['rss_admitted_mib']:.0f} MiB once admitted, {big['rss_finished_mib']:.0f} MiB once finished, "
          f"{big['rss_settled_mib']:.0f} MiB {SETTLE_S:.0f} s later ({big['states']}, {big['seconds']:.0f} s)")


def main() -> int:
    if "--big-plans" in sys.argv[1:]:
        return big_plans_only()
    if "--heavy-calls" in sys.argv[1:]:
        return heavy_calls_only()
    if not GHZ.exists():
        print("bin/ghz is missing: run `make setup` (it builds ghz v0.93.0 with go install)", file=sys.stderr)
        return 2
    import grpc

    sys.path.insert(0, str(ROOT / "services"))
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    heavy: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="arrayplan-load-") as tmp:
        tmpdir = Path(tmp)
        protoset = _protoset(tmpdir)
        proc, address, _log = _start(tmpdir, "ray")
        ray_address = address
        try:
            with grpc.insecure_channel(address) as channel:
                grpc.channel_ready_future(channel).result(timeout=180)
                stub = pb_grpc.PlannerServiceStub(channel)
                spec = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=1000),
                                   constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000_000),
                                   candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb"], layouts=["raid10"],
                                                                     max_drive_count=8))
                plan = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec), plan_id="load-target"), timeout=60)
                for _ in stub.WatchPlan(pb.WatchPlanRequest(name=plan.name), timeout=600):
                    pass
            calls = [("GetDrive", {"name": "intel-dc-s3500-480gb"}), ("GetPlan", {"name": plan.name}), ("ListDrives", {})]
            for method, data in calls:  # warm-up: caches, connections, allocator
                _ghz(protoset, address, method, data, 500)
            before = _rss_mib(proc.pid)
            rows = []
            for method, data in calls:
                r = _ghz(protoset, address, method, data, REQUESTS)
                p99 = next((d["latency"] for d in r.get("latencyDistribution") or [] if d["percentage"] == 99), None)
                codes = r.get("statusCodeDistribution") or {}
                errors = sum(v for k, v in codes.items() if k != "OK")
                rows.append({"method": method, "requests": r["count"], "rps": round(r["rps"], 1),
                             "p99_ms": round(p99 / 1e6, 2) if p99 is not None else None, "errors": errors,
                             "error_kinds": r.get("errorDistribution") or {}})
            after = _rss_mib(proc.pid)
            with grpc.insecure_channel(address) as channel:
                big = _big_plans(pb_grpc.PlannerServiceStub(channel), pb, proc.pid)
            heavy = _heavy_calls(tmpdir, ray_address=address, ray_proc=proc)
        finally:
            _stop(proc)
    print(f"ghz, concurrency {CONCURRENCY}, {REQUESTS} requests per method, against {ray_address} (local Ray, 2 CPUs)")
    print(f"{'method':12s} {'requests':>9s} {'rps':>9s} {'p99 ms':>8s} {'errors':>7s}")
    for row in rows:
        print(f"{row['method']:12s} {row['requests']:>9d} {row['rps']:>9.1f} {row['p99_ms']!s:>8s} {row['errors']:>7d}"
              + (f"  {row['error_kinds']}" if row["error_kinds"] else ""))
    growth = (after - before) / before * 100
    print(f"server memory (RSS): {before:.0f} MiB before, {after:.0f} MiB after ({growth:+.1f} %)")
    _print_big(big)
    _print_heavy(heavy)
    print(json.dumps({"concurrency": CONCURRENCY, "methods": rows, "rss_before_mib": round(before, 1),
                      "rss_after_mib": round(after, 1), "rss_growth_percent": round(growth, 1), "big_plans": big,
                      "health_under_abandoned_heavy_calls": heavy}))
    ok = all(r["errors"] == 0 for r in rows) and all(h["errors"] == 0 for h in heavy.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
