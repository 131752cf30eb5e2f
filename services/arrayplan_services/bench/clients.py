"""`make bench`: the Go client beside the Python one, and the OpenTofu provider beside the CLI, on
one server (`arrayplan serve --executor local` on 127.0.0.1, started and stopped here by PID).

* ``go_getdrive_p50_ms`` / ``python_getdrive_p50_ms``: one unary GetDrive call's latency, median
  (and p99) over ``CALLS`` sequential calls after ``WARMUP`` untimed ones; the Go side is the
  Go client (clients/go/cmd/arrayplan-bench: default deadline, retry and otelgrpc interceptors
  included), the Python side a plain grpcio stub on one channel.
* ``provider_plan_s`` / ``cli_plan_s``: the same small plan (examples/terraform/plan.yaml) through
  ``tofu plan`` of a data source (bin/tofu, the provider from ``make provider`` through
  dev_overrides) and through ``arrayplan plan --server``, median wall time of ``RUNS`` runs each;
  ``provider_overhead_s`` is their difference (the aim: under 1 s).

Needs Go (the two binaries are built here) and bin/tofu (`make test-setup`); without them the
figures it cannot take are left out with a ``*_skipped`` reason.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BIN = ROOT / "bin"
CALLS = 2000
WARMUP = 200
RUNS = 5
DRIVE = "intel-dc-s3700-400gb"
PLAN_FILE = ROOT / "examples" / "terraform" / "plan.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(data: Path, args: tuple[str, ...] = ("--executor", "local"), *, timeout_s: float = 120,
                 env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``arrayplan serve`` on a free 127.0.0.1 port with ``args``, its log in ``data``, healthy
    (started here, in its own session; ``stop_server`` stops it by PID with its local Ray)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    port = _free_port()
    log = open(data / "server.log", "wb")  # noqa: SIM115 - the server writes it until it stops
    proc = subprocess.Popen([sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", str(port), "--data-dir", str(data),
                             *args], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True,
                            env=env if env is not None else {**os.environ, "RAY_DISABLE_USAGE_STATS": "1"})
    address = f"127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {(data / 'server.log').read_text()[-2000:]}")
            try:
                request = health_pb2.HealthCheckRequest(service="arrayplan.v1.PlannerService")
                if stub.Check(request, timeout=2).status == health_pb2.HealthCheckResponse.SERVING:  # type: ignore[attr-defined]  # grpc_health ships no stub types
                    return proc, address
            except grpc.RpcError:
                time.sleep(0.3)
    stop_server(proc)
    raise TimeoutError(f"server not healthy after {timeout_s:g} s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _python_getdrive(address: str) -> dict[str, float]:
    import grpc

    from arrayplan.v1 import planner_pb2 as pb
    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    with grpc.insecure_channel(address) as channel:
        stub = pb_grpc.PlannerServiceStub(channel)
        request = pb.GetDriveRequest(name=DRIVE)
        for _ in range(WARMUP):
            stub.GetDrive(request, timeout=30)
        lat = []
        for _ in range(CALLS):
            t = time.perf_counter()
            stub.GetDrive(request, timeout=30)
            lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {"python_getdrive_p50_ms": round(lat[len(lat) // 2], 3), "python_getdrive_p99_ms": round(lat[int(0.99 * (len(lat) - 1))], 3)}


def _median_wall_s(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True, timeout=600)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run() -> dict[str, object]:
    out: dict[str, object] = {"clients_getdrive_calls": CALLS}
    go = shutil.which("go")
    work = Path(tempfile.mkdtemp(prefix="arrayplan-bench-clients-"))
    try:
        proc, address = start_server(work)
        try:
            out.update(_python_getdrive(address))
            if go is None:
                out["go_client_skipped"] = "go is not installed"
            else:
                bench = work / "arrayplan-bench"
                subprocess.run([go, "build", "-o", str(bench), "./cmd/arrayplan-bench"], cwd=ROOT / "clients" / "go", check=True, timeout=600)
                got = json.loads(subprocess.run([str(bench), "-addr", address, "-calls", str(CALLS), "-warmup", str(WARMUP), "-drive", DRIVE],
                                                check=True, capture_output=True, text=True, timeout=600).stdout)
                out["go_getdrive_p50_ms"] = round(got["p50_ms"], 3)
                out["go_getdrive_p99_ms"] = round(got["p99_ms"], 3)
            tofu = BIN / "tofu"
            if go is None or not tofu.exists():
                out["provider_skipped"] = "needs go and bin/tofu (make test-setup)"
            else:
                out.update(_provider_vs_cli(go, tofu, address, work))
        finally:
            stop_server(proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def _provider_vs_cli(go: str, tofu: Path, address: str, work: Path) -> dict[str, object]:
    plugins = work / "plugins"
    subprocess.run([go, "build", "-o", str(plugins / "terraform-provider-arrayplan"), "."], cwd=ROOT / "clients" / "terraform",
                   check=True, timeout=600)
    rc = work / "tofurc"
    rc.write_text("provider_installation {\n  dev_overrides { \"registry.opentofu.org/arrayplan/arrayplan\" = " + json.dumps(str(plugins))
                  + " }\n  direct {}\n}\n")
    cfg = work / "cfg"
    cfg.mkdir()
    shutil.copy(PLAN_FILE, cfg / "plan.yaml")
    (cfg / "main.tf").write_text(
        'terraform {\n  required_providers {\n    arrayplan = { source = "arrayplan/arrayplan" }\n  }\n}\n'
        f'provider "arrayplan" {{\n  address   = "{address}"\n  plaintext = true\n}}\n'
        'data "arrayplan_plan" "db" {\n  spec_yaml = file("plan.yaml")\n}\n'
        'output "drives" { value = data.arrayplan_plan.db.recommendations[0].drive_count }\n')
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(rc), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    provider_s = _median_wall_s([str(tofu), "plan", "-input=false", "-no-color"], cfg, env)
    cli_s = _median_wall_s([sys.executable, "-m", "arrayplan_services.cli.main", "plan", str(cfg / "plan.yaml"), "--server", address,
                            "--format", "json"], cfg, dict(os.environ))
    return {"provider_plan_s": round(provider_s, 3), "cli_plan_s": round(cli_s, 3), "provider_overhead_s": round(provider_s - cli_s, 3),
            "provider_cli_runs": RUNS}
