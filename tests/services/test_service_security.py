"""TLS, mutual TLS and bearer tokens, with a real certificate authority made
by the test (openssl CLI): health stays open, everything else needs a known token, plans record
their creator and only the creator or an admin cancels them, tokens reload on SIGHUP,
reflection can be switched off, and the CLI connects with --tls-ca and $ARRAYPLAN_TOKEN."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_services.connection import open_channel
from conftest import ADMIN, ALICE, BIN, BOB, ROOT, TOKEN_FILE_TEXT, free_port, stop_process, tiny_spec

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl CLI to make certificates")

SPEC = tiny_spec()


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA."""
    d = tmp_path_factory.mktemp("pki")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=arrayplan test CA", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        _openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN=arrayplan test {name}", cwd=d)
        (d / f"{name}.ext").write_text(ext)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", f"{name}.pem",
                 "-days", "2", "-extfile", f"{name}.ext", cwd=d)
    (d / "tokens").write_text(TOKEN_FILE_TEXT)
    (d / "tokens").chmod(0o600)
    return d


@dataclass
class Tls:
    proc: subprocess.Popen[bytes]
    address: str
    log: Path


def _start(data: Path, pki: Path, *extra: str) -> Tls:
    port = free_port()
    data.mkdir(parents=True, exist_ok=True)
    log = data / f"server-{port}.log"
    cmd = [sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", str(port), "--data-dir", str(data),
           "--executor", "local", "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key"),
           "--auth-token-file", str(pki / "tokens"), *extra]
    with open(log, "wb") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)
    address = f"127.0.0.1:{port}"
    client_cert = ("--tls-client-ca" in extra)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(log.read_text())
        try:
            with _channel(address, pki, token=None, client_cert=client_cert) as ch:
                if health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=2).status == 1:
                    return Tls(proc, address, log)
        except grpc.RpcError:
            time.sleep(0.3)
    stop_process(proc, signal.SIGKILL)
    raise TimeoutError(log.read_text())


def _channel(address: str, pki: Path, token: str | None, client_cert: bool = False) -> grpc.Channel:
    return open_channel(address, tls_ca=pki / "ca.pem", token=token or "",
                        tls_cert=pki / "client.pem" if client_cert else None, tls_key=pki / "client.key" if client_cert else None)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory, pki: Path) -> Iterator[Tls]:
    s = _start(tmp_path_factory.mktemp("tls-data"), pki, "--no-reflection")
    yield s
    stop_process(s.proc)


def _code(fn) -> grpc.StatusCode | None:  # type: ignore[no-untyped-def]
    try:
        fn()
    except grpc.RpcError as exc:
        return exc.code()
    return None


def test_tokens_creator_and_cancel(tls_server: Tls, pki: Path) -> None:
    addr = tls_server.address
    # Plaintext to a TLS port does not get an answer.
    with grpc.insecure_channel(addr) as ch:
        assert _code(lambda: health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)) is not None
    with _channel(addr, pki, None) as anon, _channel(addr, pki, ALICE) as alice, _channel(addr, pki, BOB) as bob, \
            _channel(addr, pki, ADMIN) as ops, _channel(addr, pki, "not-a-known-token-000000") as wrong:
        # Health is open for probes; everything else needs a known token.
        assert health_pb2_grpc.HealthStub(anon).Check(health_pb2.HealthCheckRequest(), timeout=10).status == 1
        for ch in (anon, wrong):
            assert _code(lambda ch=ch: pb_grpc.PlannerServiceStub(ch).ListDrives(pb.ListDrivesRequest(), timeout=10)) \
                == grpc.StatusCode.UNAUTHENTICATED
        drives = pb_grpc.PlannerServiceStub(alice).ListDrives(pb.ListDrivesRequest(), timeout=10).drives
        assert drives
        # The plan records its creator; bob may not read or cancel it, the admin token may
        # (every read RPC: tests/services/test_read_authz.py).
        plan = pb_grpc.PlannerServiceStub(alice).CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC)), timeout=30)
        assert plan.creator == "alice"
        assert _code(lambda: pb_grpc.PlannerServiceStub(bob).GetPlan(pb.GetPlanRequest(name=plan.name), timeout=10)) \
            == grpc.StatusCode.PERMISSION_DENIED
        assert pb_grpc.PlannerServiceStub(ops).GetPlan(pb.GetPlanRequest(name=plan.name), timeout=10).creator == "alice"
        assert _code(lambda: pb_grpc.PlannerServiceStub(bob).CancelPlan(pb.CancelPlanRequest(name=plan.name), timeout=30)) \
            == grpc.StatusCode.PERMISSION_DENIED
        assert _code(lambda: pb_grpc.PlannerServiceStub(alice).CancelPlan(pb.CancelPlanRequest(name=plan.name), timeout=30)) is None
        assert _code(lambda: pb_grpc.PlannerServiceStub(ops).CancelPlan(pb.CancelPlanRequest(name=plan.name), timeout=30)) is None
        # --no-reflection: the reflection service is not there.
        if (BIN / "grpcurl").exists():
            out = subprocess.run([str(BIN / "grpcurl"), "-cacert", str(pki / "ca.pem"), "-H", f"authorization: Bearer {ALICE}",
                                  addr, "list"], capture_output=True, text=True, timeout=60)
            assert out.returncode != 0 and "reflection" in (out.stderr + out.stdout).lower()


def test_tokens_reload_on_sighup(tmp_path: Path, pki: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {ALICE}\n")
    tokens.chmod(0o600)
    local_pki = tmp_path / "pki"
    shutil.copytree(pki, local_pki)
    shutil.copy(tokens, local_pki / "tokens")
    s = _start(tmp_path / "data", local_pki)
    try:
        with _channel(s.address, pki, ALICE) as alice, _channel(s.address, pki, BOB) as bob:
            ok = pb_grpc.PlannerServiceStub(alice).ListDrives
            assert _code(lambda: ok(pb.ListDrivesRequest(), timeout=10)) is None
            assert _code(lambda: pb_grpc.PlannerServiceStub(bob).ListDrives(pb.ListDrivesRequest(), timeout=10)) \
                == grpc.StatusCode.UNAUTHENTICATED
            (local_pki / "tokens").write_text(f"bob {BOB}\n")
            (local_pki / "tokens").chmod(0o600)
            os.kill(s.proc.pid, signal.SIGHUP)
            deadline = time.monotonic() + 30
            while _code(lambda: pb_grpc.PlannerServiceStub(bob).ListDrives(pb.ListDrivesRequest(), timeout=10)) is not None:
                assert time.monotonic() < deadline, "bob's token accepted after SIGHUP"
                time.sleep(0.3)
            assert _code(lambda: ok(pb.ListDrivesRequest(), timeout=10)) == grpc.StatusCode.UNAUTHENTICATED
            # A broken file on reload keeps the tokens in use.
            (local_pki / "tokens").write_text("bob short\n")
            (local_pki / "tokens").chmod(0o600)
            os.kill(s.proc.pid, signal.SIGHUP)
            time.sleep(2)
            assert _code(lambda: pb_grpc.PlannerServiceStub(bob).ListDrives(pb.ListDrivesRequest(), timeout=10)) is None
            assert "token file not reloaded" in s.log.read_text()
            # Nor does a token under two names, a file others can read, or a FIFO (which must not block the reload).
            tok = local_pki / "tokens"
            tok.write_text(f"bob {BOB}\nroot {BOB} admin\n")
            os.kill(s.proc.pid, signal.SIGHUP)
            time.sleep(1)
            tok.write_text(f"bob {BOB}\n")
            tok.chmod(0o666)
            time.sleep(1)
            os.kill(s.proc.pid, signal.SIGHUP)
            time.sleep(1)
            tok.unlink()
            os.mkfifo(tok, 0o600)
            os.kill(s.proc.pid, signal.SIGHUP)
            time.sleep(2)
            assert _code(lambda: pb_grpc.PlannerServiceStub(bob).ListDrives(pb.ListDrivesRequest(), timeout=10)) is None
            log = s.log.read_text()
            assert "is also the token of bob (lines 1 and 2)" in log and "mode 0666" in log and "is not a regular file" in log, log[-3000:]
            assert BOB not in log
            # The CLI: --tls-ca and $ARRAYPLAN_TOKEN.
            env = {**os.environ, "ARRAYPLAN_TOKEN": BOB}
            cli = [sys.executable, "-m", "arrayplan_services.cli.main", "drives", "--server", s.address, "--tls-ca", str(pki / "ca.pem")]
            out = subprocess.run(cli, capture_output=True, text=True, timeout=120, env=env, cwd=ROOT)
            assert out.returncode == 0 and "intel-dc-s3500-480gb" in out.stdout, out.stderr
            out = subprocess.run(cli, capture_output=True, text=True, timeout=120, env={**env, "ARRAYPLAN_TOKEN": ALICE}, cwd=ROOT)
            assert out.returncode == 1 and "UNAUTHENTICATED" in out.stderr
    finally:
        stop_process(s.proc)


def test_mutual_tls_needs_a_client_certificate(tmp_path: Path, pki: Path) -> None:
    health_port = free_port()
    s = _start(tmp_path / "data", pki, "--tls-client-ca", str(pki / "ca.pem"), "--health-port", str(health_port))
    try:
        # The plaintext health port (for kubelet probes) answers health and nothing else.
        with grpc.insecure_channel(f"127.0.0.1:{health_port}") as plain:
            assert health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=10).status == 1
            assert _code(lambda: pb_grpc.PlannerServiceStub(plain).ListDrives(pb.ListDrivesRequest(), timeout=10)) \
                == grpc.StatusCode.UNIMPLEMENTED
        with _channel(s.address, pki, ALICE, client_cert=False) as without:
            assert _code(lambda: health_pb2_grpc.HealthStub(without).Check(health_pb2.HealthCheckRequest(), timeout=10)) \
                == grpc.StatusCode.UNAVAILABLE
        with _channel(s.address, pki, ALICE, client_cert=True) as with_cert:
            assert pb_grpc.PlannerServiceStub(with_cert).GetDrive(pb.GetDriveRequest(name="intel-dc-s3700-400gb"), timeout=10).name
    finally:
        stop_process(s.proc)


def test_bad_tls_and_token_flags_exit_2(tmp_path: Path, pki: Path) -> None:
    base = [sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", "0", "--data-dir", str(tmp_path / "d"),
            "--executor", "local"]
    for extra, words in ((["--tls-cert", str(pki / "server.pem")], "--tls-key"),
                         (["--auth-token-file", str(tmp_path / "missing")], "--auth-token-file"),
                         (["--max-running-plans", "0"], "--max-running-plans")):
        out = subprocess.run(base + extra, capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
