"""Shared fixtures: real servers on 127.0.0.1, started as processes and stopped by PID."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arrayplan_services import numba_cache

# The engine's kernels in the tests come from the cache `make setup` warmed (as the server's do),
# not from numba's default beside the sources: on a clean clone that default is empty, and each
# xdist worker compiled every kernel again (~200 s of a 12-minute suite). Before numba is imported.
numba_cache.configure()

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BIN = ROOT / "bin"
#: Vendored public sample data (traces, fio jobs, Backblaze tables), each with its licence: tests/data/README.md.
DATA = ROOT / "tests" / "data"
#: The seed reviews (copyrighted articles, never copied into the repository) beside a checkout.
SEEDS = SHARED / "seeds"
needs_seeds = pytest.mark.skipif(
    not SEEDS.is_dir(),
    reason=f"needs the seed reviews in {SEEDS} (copyrighted texts, not redistributed with the repository)")


def data_path(source: str) -> Path:
    """A provenance source path: ``data/...`` is vendored under tests/data, anything else is a seed."""
    return DATA / source.removeprefix("data/") if source.startswith("data/") else SEEDS / source.removeprefix("seeds/")


# Bearer tokens of the security tests: two users and an admin, as a server's token file holds them.
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef00"
ADMIN = "admin-token-0123456789abcdef"
TOKEN_FILE_TEXT = f"# name token [admin]\nalice {ALICE}\nbob {BOB}\nops {ADMIN} admin\n"


def tiny_spec():  # type: ignore[no-untyped-def]
    """A plan that finishes at once: every candidate is below the capacity (4 x 400 GB in RAID 10
    < 1 TB), no simulation. A fresh ``PlanSpec`` each call."""
    from arrayplan.v1 import planner_pb2 as pb

    return pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=1000),
                       constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000_000),
                       candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb"], layouts=["raid10"], max_drive_count=4))


def oltp_spec():  # type: ignore[no-untyped-def]
    """The services tests' small OLTP plan (8 KiB, 70 % reads, 20K IOPS, 4 TB usable, p99.9 <= 5 ms
    over three Intel drives in RAID 10/6, three years): a fresh ``PlanSpec`` each call."""
    from google.protobuf import duration_pb2

    from arrayplan.v1 import planner_pb2 as pb

    return pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1e12,
                             io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1)]),
        constraints=pb.Constraints(usable_capacity_bytes=4_000_000_000_000, latency_percentile=99.9,
                                   latency_target=duration_pb2.Duration(nanos=5_000_000)),
        candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb", "intel-dc-s3500-800gb", "intel-dc-s3700-400gb"],
                                          layouts=["raid10", "raid6"], max_drive_count=16),
        service_life_years=3, seed=3,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop_process(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> int:
    """Signal a process started in its own session by PID, wait (SIGKILL after ``timeout_s``),
    then kill whatever is left of its process group."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return proc.returncode


@dataclass
class ServerProcess:
    """An `arrayplan serve` process on 127.0.0.1."""

    proc: subprocess.Popen[bytes]
    port: int
    data_dir: Path
    log_path: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 60.0) -> int:
        """Signal the server by PID, wait, then clear its process group (its local Ray)."""
        return stop_process(self.proc, sig, timeout_s)


#: The health name only an arrayplan server answers SERVING for: a bare health check ("") is also
#: answered by Ray's own gRPC servers, which can hold a port picked by free_port() before the
#: planner binds it (seen in CI: healthy, then UNIMPLEMENTED for CreatePlan).
PLANNER_HEALTH_NAME = "arrayplan.v1.PlannerService"


class PortTakenError(RuntimeError):
    """The server could not listen on its port (another process took it after free_port())."""


def wait_healthy(address: str, proc: subprocess.Popen[bytes], log_path: Path, timeout_s: float = 120.0) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                log = log_path.read_text(errors="replace")
                error = PortTakenError if "cannot listen on" in log else RuntimeError
                raise error(f"server exited with {proc.returncode}:\n{log}")
            try:
                request = health_pb2.HealthCheckRequest(service=PLANNER_HEALTH_NAME)
                if stub.Check(request, timeout=2).status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                time.sleep(0.3)
    raise TimeoutError(f"server on {address} not healthy after {timeout_s} s:\n{log_path.read_text(errors='replace')}")


def start_server(data_dir: Path, *, port: int | None = None, extra: tuple[str, ...] = (), env: dict[str, str] | None = None,
                 global_args: tuple[str, ...] = ()) -> ServerProcess:
    """``arrayplan [global_args] serve ... [extra]`` on 127.0.0.1, healthy when it returns. A port
    picked here that another process takes before the server binds it is picked again (twice)."""
    if port is None:
        for _ in range(2):
            try:
                return _start_server(data_dir, free_port(), extra, env, global_args)
            except PortTakenError:
                continue
        port = free_port()
    return _start_server(data_dir, port, extra, env, global_args)


def _start_server(data_dir: Path, port: int, extra: tuple[str, ...], env: dict[str, str] | None,
                  global_args: tuple[str, ...]) -> ServerProcess:
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / f"server-{port}-{time.monotonic_ns()}.log"
    cmd = [sys.executable, "-m", "arrayplan_services.cli.main", *global_args, "serve", "--port", str(port), "--data-dir", str(data_dir),
           "--num-cpus", "2", *extra]
    full_env = {**os.environ, "RAY_DISABLE_USAGE_STATS": "1", **(env or {})}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=full_env, start_new_session=True)
    server = ServerProcess(proc=proc, port=port, data_dir=data_dir, log_path=log_path)
    try:
        wait_healthy(server.address, proc, log_path)
    except BaseException:
        server.stop(signal.SIGKILL)
        raise
    return server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server (local Ray with 2 CPUs, SQLite store) for the session's API tests."""
    s = start_server(tmp_path_factory.mktemp("server-data"))
    yield s
    s.stop()


@pytest.fixture()
def stub(server: ServerProcess) -> Iterator[object]:
    import grpc

    from arrayplan.v1 import planner_pb2_grpc as pb_grpc

    with grpc.insecure_channel(server.address) as channel:
        yield pb_grpc.PlannerServiceStub(channel)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``pytest -n 2 --dist loadgroup`` (what ``make test`` runs), the tests that start real
    servers run in two groups, one per worker, each in file order: tests/services (the gRPC server
    and its Ray) and tests/cluster (kube-apiserver, etcd, a collector, a two-node Ray, the
    controller). Each group keeps its session fixtures to itself; the CPU-bound engine tests fill
    both workers while the servers wait on start-ups and sockets. The two groups are moved to the
    front so each starts first on its worker (one group of all of them ran 695 s alone and 854 s
    beside the engine tests, the whole suite's wall time, with one worker idle for its last
    minutes). Without xdist the markers do nothing and the order is the files' own."""
    del config
    tests_dir = ROOT / "tests"
    first: list[pytest.Item] = []
    rest: list[pytest.Item] = []
    for item in items:
        try:
            part = Path(str(item.path)).relative_to(tests_dir).parts[0]
        except ValueError:
            part = ""
        if part in ("services", "cluster"):
            item.add_marker(pytest.mark.xdist_group(part))
            first.append(item)
        else:
            rest.append(item)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = first + rest
