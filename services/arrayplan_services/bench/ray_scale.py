"""Scale-out on a multi-node Ray cluster on one machine: the same plan on one node, then two.

``LoopbackRayCluster`` starts real ``ray start`` nodes on distinct loopback addresses (head on
127.0.0.2, workers on 127.0.0.3, ...: Ray would otherwise swap 127.0.0.1 for the machine's address
and see one node), each ``--block``ed in its own process group so it is stopped by PID, never by
``ray stop`` (which would stop every Ray on the machine). tests/cluster/test_ray_multinode.py uses
it too.

``run()`` for ``make bench``: ``ray_two_node_speedup`` = wall time of a fixed plan on a one-node
cluster (1 CPU) / on the same cluster after a second node (1 CPU) joined, the planner being the
driver (``PlanRunner`` + ``RayExecutor`` with the head's address, as ``arrayplan serve
--ray-address`` runs it). Both nodes share this machine's cores, so the figure is an upper bound of
what two real machines would lose to contention, not of what they would gain.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_DISABLE_USAGE_STATS": "1", "RAY_USAGE_STATS_ENABLED": "0"}
READY_MARK = "This command will now block forever"


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass
class RayNode:
    ip: str
    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def pids(self) -> list[int]:
        """Every live process of this node (its `ray start --block` process group)."""
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z" and os.getpgid(int(entry)) == self.proc.pid:
                        out.append(int(entry))
                except (ProcessLookupError, PermissionError, OSError, IndexError):
                    continue
        return out

    def raylet_pid(self) -> int | None:
        for pid in self.pids():
            try:
                exe = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if exe.endswith(b"/raylet"):
                return pid
        return None

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 5.0) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.pids():
            time.sleep(0.2)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


@dataclass
class LoopbackRayCluster:
    workdir: Path
    cpus_per_node: int = 1
    head_ip: str = "127.0.0.2"
    start_timeout_s: float = 90.0
    nodes: list[RayNode] = field(default_factory=list)
    port: int = 0

    @property
    def address(self) -> str:
        return f"{self.head_ip}:{self.port}"

    def _ray(self) -> str:
        return str(Path(sys.executable).parent / "ray")

    def _start(self, ip: str, args: list[str]) -> RayNode:
        log_path = self.workdir / f"ray-{ip}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([self._ray(), "start", f"--node-ip-address={ip}", f"--num-cpus={self.cpus_per_node}",
                                     "--disable-usage-stats", "--block", *args],
                                    stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **RAY_ENV}, start_new_session=True)
        node = RayNode(ip, proc, log_path)
        self.nodes.append(node)
        deadline = time.monotonic() + self.start_timeout_s  # a wrong address makes `ray start` hang: bound it
        while READY_MARK not in node.log():
            if proc.poll() is not None or time.monotonic() > deadline:
                node.stop(signal.SIGKILL)
                raise RuntimeError(f"ray node {ip} did not start:\n{node.log()[-3000:]}")
            time.sleep(0.3)
        return node

    def start_head(self) -> str:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port(self.head_ip)
        self._start(self.head_ip, ["--head", f"--port={self.port}", "--include-dashboard=false",
                                   f"--temp-dir={self.workdir / 'ray'}"])
        return self.address

    def add_worker(self, ip: str) -> RayNode:
        return self._start(ip, [f"--address={self.address}"])

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()
        self.nodes.clear()


# -- the benchmark ------------------------------------------------------------------------------

def bench_spec() -> Any:
    from arrayplan.v1 import planner_pb2 as pb

    # ~120 simulated candidates, about ten seconds of work on one CPU in batches of ~2 s.
    return pb.PlanSpec(workload=pb.Workload(read_fraction=0.7), constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000),
                       candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb", "intel-dc-s3500-480gb", "intel-ssd-320-300gb"],
                                                         layouts=["raid10", "raid6"], group_widths=[4, 8], max_drive_count=48),
                       seed=7)


def _run_once(runner: Any, spec: Any) -> tuple[float, Any]:
    from arrayplan.v1 import planner_pb2 as pb

    start = time.perf_counter()
    plan = runner.create(pb.Plan(spec=spec))
    for event in runner.reads.watch(plan.name, poll_s=0.05):
        if event.HasField("plan"):
            if event.plan.state != pb.Plan.STATE_SUCCEEDED:
                raise RuntimeError(f"plan {event.plan.state}: {event.plan.error_message}")
            return time.perf_counter() - start, event.plan
    raise RuntimeError("watch ended without a plan")


def run(repeats: int = 2) -> dict[str, object]:
    import ray

    from .. import telemetry
    from ..fanout import RayExecutor
    from ..plan.planner import PlanRunner
    from ..store import RunStore

    for k, v in RAY_ENV.items():
        os.environ[k] = v  # the driver must agree with the nodes on auth
    spec = bench_spec()
    with tempfile.TemporaryDirectory(prefix="arrayplan-ray-scale-") as tmp:
        cluster = LoopbackRayCluster(Path(tmp))
        try:
            address = cluster.start_head()
            store = RunStore(Path(tmp) / "runs.sqlite3")
            telemetry.configure_server(store)
            runner = PlanRunner(store, RayExecutor(address))
            _run_once(runner, spec)  # warm the head's worker processes (imports, numba)
            one = min(_run_once(runner, spec)[0] for _ in range(repeats))
            cluster.add_worker("127.0.0.3")
            deadline = time.monotonic() + 60
            while ray.cluster_resources().get("CPU", 0) < 2 * cluster.cpus_per_node:
                if time.monotonic() > deadline:
                    raise RuntimeError("the second node did not join")
                time.sleep(0.2)
            _, warm = _run_once(runner, spec)  # warm the new node's workers
            runs = [_run_once(runner, spec) for _ in range(repeats)]
            two = min(t for t, _ in runs)
            identical = all(p.result == warm.result for _, p in runs)
            candidates = warm.progress.candidates_evaluated
        finally:
            if ray.is_initialized():
                ray.shutdown()
            cluster.stop()
    return {"ray_two_node_speedup": round(one / two, 2), "ray_one_node_wall_s": round(one, 3), "ray_two_node_wall_s": round(two, 3),
            "ray_scale_candidates": int(candidates), "ray_scale_identical_results": identical}


if __name__ == "__main__":
    import json

    print(json.dumps(run(), sort_keys=True))
