"""Helpers for the cluster tests: a real etcd + kube-apiserver on 127.0.0.1 (started as processes,
stopped by PID), the CapacityPlan CRD applied to it, planner servers, controllers, helm.

Tools come from the project's bin/ (scripts/cluster_tools.sh builds them); a test that needs a tool
that could not be built here skips and says which and why.
"""

from __future__ import annotations

import base64
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import stop_process

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "bin"
CHART = ROOT / "helm" / "arrayplan"
CRD = CHART / "crds" / "capacityplans.yaml"
KUBE_VERSION = "1.33.0"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def tool(name: str) -> Path:
    """bin/NAME, or skip with how to get it."""
    path = BIN / name
    if not (path.exists() and os.access(path, os.X_OK)):
        pytest.skip(f"bin/{name} is not built (scripts/cluster_tools.sh {name}; see build/tools/{name}.log if it failed)")
    return path


def venv_tool(name: str) -> Path:
    path = Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in the venv (scripts/cluster_tools.sh python)")
    return path


def kubectl_path() -> str:
    path = shutil.which("kubectl")
    if path is None:
        pytest.skip("kubectl is not installed on this machine")
    return path


@dataclass
class Proc:
    """A process we started, in its own session; stopped by PID (then its group)."""

    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> int | None:
        return stop_process(self.proc, sig, timeout_s)


def start_proc(cmd: list[str], log_path: Path, env: dict[str, str] | None = None, cwd: Path = ROOT) -> Proc:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env={**os.environ, **(env or {})},
                             start_new_session=True)
    return Proc(p, log_path)


def wait_for(predicate: Callable[[], Any], timeout_s: float, what: str, interval_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    last_exc: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001 - keep polling; report the last one
            last_exc = exc
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}" + (f" (last error: {last_exc})" if last_exc else ""))


@dataclass
class Cluster:
    """A real kube-apiserver (+ etcd) on 127.0.0.1 with an admin token."""

    url: str
    ca_path: Path
    admin_token: str
    kubeconfig: Path
    workdir: Path
    apiserver: Proc
    etcd: Proc
    namespaces: list[str] = field(default_factory=list)

    def write_kubeconfig(self, path: Path, token: str, namespace: str = "default") -> Path:
        cfg = {"apiVersion": "v1", "kind": "Config", "current-context": "test",
               "clusters": [{"name": "test", "cluster": {"server": self.url, "certificate-authority": str(self.ca_path)}}],
               "users": [{"name": "test", "user": {"token": token}}],
               "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test", "namespace": namespace}}]}
        path.write_text(yaml.safe_dump(cfg))
        return path

    def api_client(self, kubeconfig: Path | None = None) -> Any:
        from kubernetes import client, config

        c = client.Configuration()
        config.load_kube_config(config_file=str(kubeconfig or self.kubeconfig), client_configuration=c)
        return client.ApiClient(c)

    def kubectl(self, *args: str, kubeconfig: Path | None = None, check: bool = True, input_: str | None = None,
                timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        res = subprocess.run([kubectl_path(), "--kubeconfig", str(kubeconfig or self.kubeconfig), *args], check=False, text=True,
                             capture_output=True, input=input_, timeout=timeout_s)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    def new_namespace(self, prefix: str) -> str:
        from kubernetes import client

        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        client.CoreV1Api(self.api_client()).create_namespace({"metadata": {"name": name}})
        self.namespaces.append(name)
        return name

    def service_account_kubeconfig(self, namespace: str, sa: str, path: Path) -> Path:
        """A kubeconfig holding a bound token of ServiceAccount ``sa`` (TokenRequest API)."""
        from kubernetes import client

        core = client.CoreV1Api(self.api_client())
        tr = core.create_namespaced_service_account_token(sa, namespace, {"spec": {"expirationSeconds": 3600}})
        return self.write_kubeconfig(path, tr.status.token, namespace)


def _start_cluster(workdir: Path) -> Cluster:
    etcd_bin = tool("etcd")
    apiserver_bin = tool("kube-apiserver")
    workdir.mkdir(parents=True, exist_ok=True)
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make the service-account key pair")
    subprocess.run(["openssl", "genrsa", "-out", str(workdir / "sa.key"), "2048"], check=True, capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", str(workdir / "sa.key"), "-pubout", "-out", str(workdir / "sa.pub")], check=True,
                   capture_output=True)
    token = base64.b32encode(os.urandom(20)).decode().lower().rstrip("=")
    (workdir / "tokens.csv").write_text(f'{token},admin,admin-uid,"system:masters"\n')
    client_port, peer_port, secure_port = free_port(), free_port(), free_port()
    etcd = start_proc([str(etcd_bin), "--name", "test", "--data-dir", str(workdir / "etcd"),
                       "--listen-client-urls", f"http://127.0.0.1:{client_port}",
                       "--advertise-client-urls", f"http://127.0.0.1:{client_port}",
                       "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
                       "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
                       "--initial-cluster", f"test=http://127.0.0.1:{peer_port}", "--unsafe-no-fsync"],
                      workdir / "etcd.log", env={"ETCD_UNSUPPORTED_ARCH": ""})
    try:
        wait_for(lambda: socket.create_connection(("127.0.0.1", client_port), timeout=1).close() or True, 30, "etcd")
    except TimeoutError:
        etcd.stop(signal.SIGKILL)
        raise RuntimeError(f"etcd did not start:\n{etcd.log()}") from None
    certs = workdir / "certs"
    apiserver = start_proc([str(apiserver_bin), f"--etcd-servers=http://127.0.0.1:{client_port}", "--bind-address=127.0.0.1",
                            "--advertise-address=127.0.0.1", f"--secure-port={secure_port}", f"--cert-dir={certs}",
                            f"--token-auth-file={workdir / 'tokens.csv'}", "--authorization-mode=RBAC",
                            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                            f"--service-account-key-file={workdir / 'sa.pub'}",
                            f"--service-account-signing-key-file={workdir / 'sa.key'}",
                            "--service-cluster-ip-range=10.96.0.0/24", "--disable-admission-plugins=ServiceAccount",
                            "--enable-priority-and-fairness=false", "--endpoint-reconciler-type=none"],
                           workdir / "kube-apiserver.log")
    url = f"https://127.0.0.1:{secure_port}"
    ca = certs / "apiserver.crt"
    cluster = Cluster(url=url, ca_path=ca, admin_token=token, kubeconfig=workdir / "admin.kubeconfig", workdir=workdir,
                      apiserver=apiserver, etcd=etcd)
    cluster.write_kubeconfig(cluster.kubeconfig, token)

    def ready() -> bool:
        import ssl
        import urllib.request

        if not apiserver.alive():
            raise RuntimeError(f"kube-apiserver exited:\n{apiserver.log()[-4000:]}")
        if not ca.exists():
            return False
        ctx = ssl.create_default_context(cafile=str(ca))
        req = urllib.request.Request(f"{url}/readyz", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, context=ctx, timeout=2) as resp:
            return resp.status == 200

    try:
        wait_for(ready, 90, "kube-apiserver /readyz", interval_s=0.5)
    except BaseException:
        apiserver.stop(signal.SIGKILL)
        etcd.stop(signal.SIGKILL)
        raise
    return cluster


@dataclass
class Planner:
    proc: Proc
    port: int
    data_dir: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


def start_planner(data_dir: Path, *, port: int | None = None, executor: str = "local", extra: tuple[str, ...] = (),
                  env: dict[str, str] | None = None, timeout_s: float = 120) -> Planner:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    port = port or free_port()
    data_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "arrayplan_services.cli.main", "serve", "--port", str(port), "--data-dir", str(data_dir),
           "--executor", executor, *extra]
    proc = start_proc(cmd, data_dir / f"serve-{port}.log", env={"RAY_DISABLE_USAGE_STATS": "1", **(env or {})})
    planner = Planner(proc, port, data_dir)

    def healthy() -> bool:
        if not proc.alive():
            raise RuntimeError(f"arrayplan serve exited:\n{proc.log()[-4000:]}")
        with grpc.insecure_channel(planner.address) as ch:
            try:
                resp = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=2)
            except grpc.RpcError:
                return False
            return resp.status == health_pb2.HealthCheckResponse.SERVING

    try:
        wait_for(healthy, timeout_s, f"arrayplan serve on {planner.address}", interval_s=0.3)
    except BaseException:
        proc.stop(signal.SIGKILL)
        raise
    return planner


def arrayplan_command() -> list[str]:
    """How to run `arrayplan` (its plugins include the cluster subcommands)."""
    return [sys.executable, "-m", "arrayplan_services.cli.main"]


def start_controller(cluster: Cluster, namespace: str, server: str, log_path: Path, *, kubeconfig: Path | None = None,
                     lease: str = "arrayplan-controller", extra: tuple[str, ...] = ()) -> Proc:
    cmd = [*arrayplan_command(), "controller", "--kubeconfig", str(kubeconfig or cluster.kubeconfig), "--namespace", namespace,
           "--server", server, "--lease-name", lease, "--lease-duration", "2", "--renew-deadline", "1.5", "--retry-period", "0.3",
           *extra]
    return start_proc(cmd, log_path)
