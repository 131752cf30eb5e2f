"""arrayplan_services.client.PlannerClient against a real server (tests/conftest.py), and its
TLS + bearer-token transport against a recording gRPC server with a throw-away certificate."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_services.client import ClientError, PlanFailedError, PlannerClient, load_plan_file, to_json
from conftest import ROOT, ServerProcess, free_port

SMALL = {
    "workload": {"read_fraction": 0.7, "io_size_mix": [["8 KiB", 1]], "target_iops": 5000},
    "constraints": {"usable_capacity_bytes": "1 TB", "latency_target": "5ms"},
    "candidate_space": {"drive_models": ["intel-dc-s3700-400gb"], "layouts": ["raid10", "raid6"], "max_drive_count": 8},
    "seed": 2,
}


@pytest.fixture()
def client(server: ServerProcess) -> Iterator[PlannerClient]:
    with PlannerClient(server.address) as c:
        yield c


@pytest.mark.slow
def test_plan_returns_the_finished_plan_with_progress(client: PlannerClient) -> None:
    seen: list[pb.PlanProgress] = []
    plan = client.plan(SMALL, progress=seen.append)
    assert plan.state == pb.Plan.STATE_SUCCEEDED and plan.name.startswith("plans/") and len(plan.trace_id) == 32
    assert plan.result.recommendations and plan.result.recommendations[0].rank == 1
    assert seen and seen[-1].candidates_evaluated <= seen[-1].candidates_to_evaluate
    # The stored plan is the same; it is listed; its trace has the workers' spans.
    assert client.get(plan.name).result == plan.result
    assert any(p.name == plan.name for p in client.list(page_size=2))
    trace = client.trace(plan.name)
    assert trace.trace_id == plan.trace_id and any(s.kind == "CONSUMER" for s in trace.spans)
    # The JSON convention on the client's messages.
    body = to_json(plan)
    assert isinstance(body["result"]["recommendations"][0]["usable_capacity_bytes"], int)


def test_plan_file_loader_is_public() -> None:
    spec, warnings = load_plan_file(ROOT / "examples" / "oltp.yaml")
    assert spec.constraints.usable_capacity_bytes == 8_000_000_000_000 and spec.workload.io_size_mix[0].io_bytes == 8192
    assert warnings == []
    assert PlannerClient.spec(ROOT / "examples" / "oltp.yaml") == spec


@pytest.mark.slow
def test_bad_input_cancel_simulate_and_drives(client: PlannerClient) -> None:
    with pytest.raises(ClientError) as exc:
        client.create({**SMALL, "service_life_years": 99})
    assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert any(f == "plan.spec.service_life_years" for f, _ in exc.value.violations)
    with pytest.raises(ClientError) as nf:
        client.get("plans/does-not-exist")
    assert nf.value.code == grpc.StatusCode.NOT_FOUND
    # A wide plan cancelled at once ends CANCELLED.
    wide = {**SMALL, "candidate_space": {"layouts": ["raid10", "raid5", "raid6"], "max_drive_count": 48}}
    created = client.create(wide)
    cancelled = client.cancel(created.name)
    assert cancelled.state in (pb.Plan.STATE_CANCELLED, pb.Plan.STATE_SUCCEEDED)
    final = [e for e in client.watch(created.name) if isinstance(e, pb.Plan)][-1]
    assert final.state in (pb.Plan.STATE_CANCELLED, pb.Plan.STATE_SUCCEEDED)
    if final.state == pb.Plan.STATE_CANCELLED:
        assert "cancelled" in str(PlanFailedError(final))
    sim = client.simulate(drive_model="intel-dc-s3500-480gb", drive_count=12, layout="raid6",
                          workload=pb.Workload(read_fraction=0.7, target_iops=10_000, io_size_mix=[pb.IoSizeShare(io_bytes=4096, weight=1)]),
                          duration=duration_pb2.Duration(seconds=2))
    # RAID 6 of 12, 70/30 random 4 KiB: 0.7 x 1 + 0.3 x 6 = 2.5 member IOs per host IO (layout.py).
    assert sim.member_ios_per_host_io == pytest.approx(2.5, rel=0.03)
    assert sim.achieved_iops == pytest.approx(10_000, rel=0.05)
    ssds = client.drives("ssd")
    assert ssds and all(d.kind == pb.DRIVE_KIND_SSD for d in ssds)
    assert client.drive("intel-dc-s3500-480gb").provenance


# -- transport: TLS root + bearer token ------------------------------------------------------------

class _Recorder(grpc.GenericRpcHandler):
    def __init__(self) -> None:
        self.metadata: list[dict[str, str]] = []
        self.lock = threading.Lock()

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        with self.lock:
            self.metadata.append(dict(handler_call_details.invocation_metadata))

        def reply(request: bytes, context: grpc.ServicerContext) -> bytes:
            return pb.Drive(name="recorded").SerializeToString()
        return grpc.unary_unary_rpc_method_handler(reply)


def _self_signed(tmp: Path) -> tuple[bytes, bytes]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a throw-away certificate")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(tmp / "key.pem"), "-out", str(tmp / "cert.pem"), "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], check=True, capture_output=True, timeout=60)
    return (tmp / "key.pem").read_bytes(), (tmp / "cert.pem").read_bytes()


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "plaintext"])
def test_token_is_sent_as_bearer_metadata(tmp_path: Path, tls: bool) -> None:
    recorder = _Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), handlers=[recorder])
    port = free_port()
    if tls:
        key, cert = _self_signed(tmp_path)
        server.add_secure_port(f"127.0.0.1:{port}", grpc.ssl_server_credentials([(key, cert)]))
    else:
        server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    try:
        with PlannerClient(f"127.0.0.1:{port}", tls_ca=tmp_path / "cert.pem" if tls else None, token="s3cret", timeout_s=10) as c:
            assert c.drive("x").name == "recorded"
        assert recorder.metadata[-1].get("authorization") == "Bearer s3cret"
    finally:
        server.stop(0)


@pytest.mark.slow
def test_docs_python_examples_run(server: ServerProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/python.md's examples, run as written against the test server (its address swapped in)."""
    import re

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "python.md").read_text(), re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block.replace("127.0.0.1:50051", server.address), "docs/python.md", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out
    assert "simulated" in out and "of rated endurance used" in out and "INVALID_ARGUMENT" not in out
