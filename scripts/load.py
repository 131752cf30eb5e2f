"""`make load`: ghz against a real `arrayplan serve` (local Ray, SQLite store, 127.0.0.1).

Starts a server on a free port with a fresh data dir, stores one small plan (so GetPlan has
something to read), warms up, then runs ghz (bin/ghz, built by scripts/setup.sh) at concurrency
50 on GetDrive, GetPlan and ListDrives and prints, per method, requests per second, p99 latency
and errors, and the server's resident memory before and after. ghz cannot parse proto3
``optional``, so it gets a protoset made with ``grpc_tools.protoc --descriptor_set_out
--include_imports``.

Environment: LOAD_REQUESTS (per method, default 10000), LOAD_CONCURRENCY (default 50).
"""

from __future__ import annotations

import json
import os
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


def main() -> int:
    if not GHZ.exists():
        print("bin/ghz is missing: run `make setup` (it builds ghz v0.93.0 with go install)", file=sys.stderr)
        return 2
    import grpc

    sys.path.insert(0, str(ROOT / "services"))
    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory(prefix="arrayplan-load-") as tmp:
        tmpdir = Path(tmp)
        protoset = _protoset(tmpdir)
        port = _free_port()
        address = f"127.0.0.1:{port}"
        log = open(tmpdir / "server.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", str(port), "--data-dir",
                                 str(tmpdir / "data"), "--num-cpus", "2"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                                start_new_session=True, env={**os.environ, "RAY_DISABLE_USAGE_STATS": "1"})
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
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            log.close()
    print(f"ghz, concurrency {CONCURRENCY}, {REQUESTS} requests per method, against {address} (local Ray, 2 CPUs)")
    print(f"{'method':12s} {'requests':>9s} {'rps':>9s} {'p99 ms':>8s} {'errors':>7s}")
    for row in rows:
        print(f"{row['method']:12s} {row['requests']:>9d} {row['rps']:>9.1f} {row['p99_ms']!s:>8s} {row['errors']:>7d}"
              + (f"  {row['error_kinds']}" if row["error_kinds"] else ""))
    growth = (after - before) / before * 100
    print(f"server memory (RSS): {before:.0f} MiB before, {after:.0f} MiB after ({growth:+.1f} %)")
    print(json.dumps({"concurrency": CONCURRENCY, "methods": rows, "rss_before_mib": round(before, 1),
                      "rss_after_mib": round(after, 1), "rss_growth_percent": round(growth, 1)}))
    return 0 if all(r["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
