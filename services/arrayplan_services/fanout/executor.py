"""The one seam between the planner and where work runs: an ``Executor``.

``RayExecutor`` fans batches out as Ray tasks (the default, local ``ray.init`` or an existing
cluster by address); ``LocalExecutor`` runs them in this process, for debugging. Both call the
same task function, so a plan gives the same answer on either.

Ray conventions (one place sets them): shared inputs are ``ray.put`` once and passed by
reference; tasks are batches sized to about ``target_batch_s`` seconds of work; results are
drained with ``ray.wait`` as they finish (progress comes from that, and memory stays bounded);
``max_retries`` re-runs a task whose worker or node died, and ``retry_exceptions=False`` means an
exception raised by our code (a validation error) is never retried; cancelling a plan cancels every
outstanding task (force-stopping the workers of running ones).

An external cluster (``--ray-address host:port``) that goes away: Ray's driver library ends this
process once it loses the cluster's GCS, so a watchdog thread connects to the GCS port every
``RAY_WATCH_S``; when nothing answers it disconnects first (``ray.shutdown()``), marks the
executor unavailable (health NOT_SERVING through ``on_availability``) and reconnects with backoff
once the address answers again (``arrayplan_services.retry``: capped, jittered). A plan whose tasks were out meanwhile waits (up to
``reconnect_wait_s``) and then sends its unfinished batches again: tasks are deterministic, so the
answer is the one an undisturbed run gives. If the cluster does not return in time the plan fails
with ``ExecutorUnavailableError`` (reason ``RAY_UNAVAILABLE``) naming the address.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..retry import Backoff, BackoffPolicy

log = logging.getLogger(__name__)

MAX_RETRIES = 3
RAY_WATCH_S = 0.5  # how often the watchdog connects to an external cluster's GCS port
RAY_WATCH_CONNECT_S = 2.0
RAY_RECONNECT_BACKOFF_MAX_S = 5.0
# Waits between reconnect tries while the cluster does not answer (arrayplan_services.retry).
RAY_RECONNECT_BACKOFF = BackoffPolicy(initial_s=1.0, max_s=RAY_RECONNECT_BACKOFF_MAX_S)
RAY_SETTLE_S = 3.0  # the address must answer this long before the driver reconnects
RAY_RECONNECT_WAIT_S = 600.0  # how long a running plan waits for a cluster that went away


def _warm_worker() -> int:
    """Import what a task needs (in a Ray worker); returns the worker's PID."""
    import importlib

    importlib.import_module("arrayplan_services.fanout.tasks")
    return os.getpid()


class Cancelled(Exception):
    """The caller cancelled the work (its plan was cancelled or its deadline passed)."""


class ExecutorUnavailableError(Exception):
    """The cluster that runs the tasks went away (not an error of the task's own code)."""

    reason_code = "RAY_UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class TaskCall:
    """One task: ``fn(shared, batch, carrier)``; ``weight`` counts toward progress."""

    batch: Any
    weight: int


class Executor(Protocol):
    @property
    def worker_count(self) -> int: ...

    def run(self, fn: Callable[..., Any], shared: Any, calls: Sequence[TaskCall], carrier: dict[str, str], *,
            on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None: ...

    def shutdown(self) -> None: ...


class LocalExecutor:
    """Runs tasks one after another in this process."""

    worker_count = 1

    def run(self, fn: Callable[..., Any], shared: Any, calls: Sequence[TaskCall], carrier: dict[str, str], *,
            on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None:
        for call in calls:
            if cancel.is_set():
                raise Cancelled()
            on_result(call, fn(shared, call.batch, carrier))

    def shutdown(self) -> None:
        return None


class _ClusterLost(Exception):
    """The watchdog found the external cluster gone while a run had tasks out."""


class RayExecutor:
    """Fans tasks out over a Ray cluster: local by default, or ``address`` (``RAY_ADDRESS``)."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None, state_dir: Path | None = None,
                 reconnect_wait_s: float = RAY_RECONNECT_WAIT_S) -> None:
        import ray

        self._ray = ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        self._address = address or ""
        self._state_dir = state_dir
        self._reconnect_wait_s = reconnect_wait_s
        # Ray calls of the runs vs the watchdog's shutdown/init: never both at once.
        self._ray_lock = threading.Lock()
        self._available = threading.Event()
        self._available.set()
        self._generation = 0  # bumped at every disconnect: a run's refs of an older one are gone
        self._stopped = threading.Event()
        self._listeners: list[Callable[[bool], None]] = []
        self._cpus = 1
        self._init_kwargs: dict[str, Any] = {}
        watch = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": False}
            runtime_env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("OTEL_")}}
            if address:
                _check_reachable(address)
                self._init_kwargs = {"address": address, "runtime_env": runtime_env, **kwargs}
                ray.init(**self._init_kwargs)
                watch = _host_port(address) is not None
            else:
                # A new local cluster turns Ray's token auth on by default and warns so at every
                # start; keep the behaviour, drop the notice (RAY_AUTH_MODE set by the caller wins).
                logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
                if state_dir is not None:
                    clean_stale_local_ray(state_dir)
                ray.init(num_cpus=num_cpus, runtime_env=runtime_env, **kwargs)
                if state_dir is not None:
                    record_local_ray(state_dir)
        self._remote_cache: dict[Callable[..., Any], Any] = {}
        self._warm_workers()
        self._cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if watch:
            threading.Thread(target=self._watch, name="ray-watchdog", daemon=True).start()

    # -- the external cluster's watchdog ------------------------------------------------------
    @property
    def available(self) -> bool:
        return self._available.is_set()

    def add_listener(self, fn: Callable[[bool], None]) -> None:
        """``fn(available)`` is called when the external cluster goes away or is back."""
        self._listeners.append(fn)

    def _tell(self, available: bool) -> None:
        for fn in list(self._listeners):
            try:
                fn(available)
            except Exception:  # noqa: BLE001 - a listener never stops the watchdog
                log.exception("Ray availability listener")

    def _watch(self) -> None:
        while not self._stopped.wait(RAY_WATCH_S):
            try:
                _check_reachable(self._address, timeout_s=RAY_WATCH_CONNECT_S)
            except ConnectionError as exc:
                if self._stopped.is_set():
                    return
                self._disconnect(str(exc))
                self._reconnect()

    def _disconnect(self, why: str) -> None:
        """The cluster is gone: drop the driver's connection before Ray ends the process."""
        log.error("%s: disconnecting from Ray; running plans wait for it to come back (up to %.0f s)", why,
                  self._reconnect_wait_s)
        self._available.clear()
        self._tell(False)
        with self._ray_lock:
            self._generation += 1
            self._remote_cache.clear()
            try:
                self._ray.shutdown()
            except Exception:  # noqa: BLE001 - the cluster is gone: nothing left to close cleanly
                log.warning("ray.shutdown after the cluster went away", exc_info=True)

    def _reconnect(self) -> None:
        """Reconnect with backoff once the address answers again (until the server stops)."""
        backoff = Backoff(RAY_RECONNECT_BACKOFF)
        backoff_s = backoff.next_delay_s()
        answered = 0
        while not self._stopped.wait(backoff_s if not answered else RAY_WATCH_S):
            try:
                _check_reachable(self._address, timeout_s=RAY_WATCH_CONNECT_S)
            except ConnectionError:
                answered = 0
                backoff_s = backoff.next_delay_s()
                continue
            answered += 1
            if answered * RAY_WATCH_S < RAY_SETTLE_S:
                continue  # a head that just opened its port is still starting its raylet
            log.warning("the Ray cluster at %s answers again: reconnecting", self._address)
            try:
                with self._ray_lock:
                    if self._stopped.is_set():
                        return
                    self._ray.init(**self._init_kwargs)
            except Exception as exc:  # noqa: BLE001 - not back yet: try again later
                log.warning("could not reconnect to Ray at %s yet: %s", self._address, exc)
                answered = 0
                with self._ray_lock:
                    try:
                        self._ray.shutdown()
                    except Exception:  # noqa: BLE001
                        pass
                backoff_s = backoff.next_delay_s()
                continue
            log.warning("the Ray cluster at %s is back: reconnected", self._address)
            self._available.set()
            self._tell(True)
            return

    def _warm_workers(self, timeout_s: float = 120.0) -> None:
        """Before the server reports SERVING: one task per CPU imports the task module (numpy,
        numba, the engine, telemetry) in each worker Ray keeps, so the first plan's batches do not
        pay for it. The kernels themselves come from the shared numba cache (numba_cache.py).
        Best effort: a failure is logged, plans still run."""
        ray = self._ray
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if cpus < 1:  # a cluster with no CPUs yet (workers join later): nothing to warm
            return
        try:
            remote = ray.remote(num_cpus=1)(_warm_worker)
            pids = ray.get([remote.remote() for _ in range(min(cpus, 64))], timeout=timeout_s)
            log.info("Ray workers warmed: %s", sorted(set(pids)))
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
            log.warning("could not warm the Ray workers: %s", exc)

    @property
    def worker_count(self) -> int:
        if not self._available.is_set():
            return self._cpus  # the last known size while the cluster is away
        try:
            with self._ray_lock:
                self._cpus = self._cluster_cpus()
        except Exception:  # noqa: BLE001 - gone meanwhile: the watchdog deals with it
            pass
        return self._cpus

    def _cluster_cpus(self) -> int:
        """The CPUs of the cluster's live nodes, asked with a deadline: ``ray.cluster_resources``
        waits for a GCS that went away and aborts the process if another one answers at its
        address (a RAY_CHECK on WrongClusterID), so it is not used after start."""
        gcs = self._ray._private.worker.global_worker.gcs_client  # type: ignore[attr-defined]  # noqa: SLF001 - the client with a timeout; Ray's private Worker declares no gcs_client
        nodes = gcs.get_all_node_info(timeout=RAY_WATCH_CONNECT_S)
        alive_state = 0  # GcsNodeInfo.ALIVE
        return max(1, int(sum(n.resources_total.get("CPU", 0) for n in nodes.values() if n.state == alive_state)))

    def _remote(self, fn: Callable[..., Any]) -> Any:
        remote = self._remote_cache.get(fn)
        if remote is None:
            remote = self._ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(fn)
            self._remote_cache[fn] = remote
        return remote

    def run(self, fn: Callable[..., Any], shared: Any, calls: Sequence[TaskCall], carrier: dict[str, str], *,
            on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None:
        todo = list(calls)
        while True:
            self._wait_available(cancel)
            try:
                self._run_once(fn, shared, todo, carrier, on_result=on_result, cancel=cancel)
                return
            except _ClusterLost:
                log.warning("the Ray cluster at %s went away with %d batch(es) out: they run again once it is back",
                            self._address, len(todo))

    def _wait_available(self, cancel: threading.Event) -> None:
        if self._available.is_set():
            return
        deadline = time.monotonic() + self._reconnect_wait_s
        while not self._available.wait(0.2):
            if cancel.is_set():
                raise Cancelled()
            if time.monotonic() > deadline:
                raise ExecutorUnavailableError(
                    f"the Ray cluster at {self._address} went away while the plan ran and did not come back within "
                    f"{self._reconnect_wait_s:.0f} s; create the plan again once it is back")

    def _run_once(self, fn: Callable[..., Any], shared: Any, todo: list[TaskCall], carrier: dict[str, str], *,
                  on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None:
        """Run ``todo`` once; finished calls are removed from it. Raises _ClusterLost when the
        watchdog disconnected meanwhile (the rest of ``todo`` is to be sent again)."""
        ray = self._ray
        pending: dict[Any, TaskCall] = {}
        with self._ray_lock:
            generation = self._generation
            if not self._available.is_set():
                raise _ClusterLost()
        try:
            with self._ray_lock:
                if generation != self._generation:
                    raise _ClusterLost()
                remote = self._remote(fn)
                shared_ref = ray.put(shared)
                pending = {remote.remote(shared_ref, call.batch, carrier): call for call in todo}
            while pending:
                if cancel.is_set():
                    raise Cancelled()
                with self._ray_lock:
                    if generation != self._generation:
                        raise _ClusterLost()
                    done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                    values = [(pending.pop(ref), ray.get(ref)) for ref in done]
                for call, value in values:
                    todo[:] = [c for c in todo if c is not call]
                    on_result(call, value)
        except _ClusterLost:
            raise
        except BaseException as exc:
            if self._lost(exc, generation):
                raise _ClusterLost() from None
            # force=True: a task inside a numba kernel cannot see a KeyboardInterrupt, so its
            # worker process is stopped (Ray starts a fresh one); cancelled tasks are not retried.
            with self._ray_lock:
                if generation == self._generation:
                    for ref in pending:
                        try:
                            ray.cancel(ref, force=True)
                        except Exception:  # noqa: BLE001 - the cluster may be gone already
                            pass
            if _is_cluster_fault(exc):
                raise ExecutorUnavailableError(
                    f"the Ray cluster{' at ' + self._address if self._address else ''} stopped answering while the plan ran "
                    f"({type(exc).__name__}); create the plan again once it is back") from None
            raise

    def _lost(self, exc: BaseException, generation: int) -> bool:
        """An error raised because the watched cluster went away (now, or being noticed): Ray
        raises several kinds then (a lost connection, WrongClusterID from a GCS mid-restart)."""
        if isinstance(exc, (Cancelled, KeyboardInterrupt, SystemExit)) or not self._init_kwargs:
            return False
        if generation != self._generation or not self._available.is_set():
            return True
        try:  # the watchdog may not have looked yet
            _check_reachable(self._address, timeout_s=RAY_WATCH_CONNECT_S)
        except ConnectionError:
            deadline = time.monotonic() + 2 * (RAY_WATCH_S + RAY_WATCH_CONNECT_S)
            while generation == self._generation and time.monotonic() < deadline:
                time.sleep(0.1)  # let the watchdog disconnect before the run sends its batches again
            return True
        return generation != self._generation

    def shutdown(self) -> None:
        self._stopped.set()
        with self._ray_lock:
            if self._ray.is_initialized():
                self._ray.shutdown()
        if self._state_dir is not None and not self._address:
            Path(self._state_dir, RAY_STATE_FILE).unlink(missing_ok=True)


RAY_STATE_FILE = "local-ray.json"
RAY_CONNECT_TIMEOUT_S = 10.0


def _host_port(address: str) -> tuple[str, int] | None:
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "//" in host:
        return None  # ray://, auto, ...: left to Ray
    return host, int(port)


def _check_reachable(address: str, timeout_s: float = RAY_CONNECT_TIMEOUT_S) -> None:
    """Fail fast with one sentence when nothing answers at a Ray ``host:port`` (``ray.init``
    would wait for it without end)."""
    import socket

    hp = _host_port(address)
    if hp is None:
        return
    host, port = hp
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        raise ConnectionError(f"the Ray cluster at {address} does not answer ({exc.strerror or type(exc).__name__}); "
                              "start it, or pass another --ray-address") from None


def _proc_start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def record_local_ray(state_dir: Path) -> None:
    """Write down this server's local Ray session (its directory and head processes), so the next
    start can clean up after a server that was killed before it could stop Ray."""
    try:
        import ray

        node: Any = ray._private.worker._global_node  # noqa: SLF001 - the only place Ray lists its processes (declared None until init)
        session_dir = node.get_session_dir_path()
        pids = [info.process.pid for infos in node.all_processes.values() for info in infos if info.process is not None]
        procs = [(pid, _proc_start_ticks(pid)) for pid in pids]
        node_id = ray.get_runtime_context().get_node_id()
        Path(state_dir, RAY_STATE_FILE).write_text(json.dumps({"server_pid": os.getpid(), "session_dir": session_dir,
                                                               "node_id": node_id, "processes": procs}))
    except Exception:  # noqa: BLE001 - best effort: never stops the server from starting
        log.warning("could not record the local Ray session for clean-up", exc_info=True)


def clean_stale_local_ray(state_dir: Path) -> list[int]:
    """Stop the local Ray processes of a previous server on this data dir that died without
    stopping them (kill -9): its head processes and every process of its Ray session. Returns
    the pids stopped."""
    path = Path(state_dir, RAY_STATE_FILE)
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    owner = int(state.get("server_pid", 0))
    if owner and owner != os.getpid() and _proc_start_ticks(owner) is not None and "arrayplan" in _cmdline(owner):
        return []  # that server is still alive: its Ray is not stale
    session_dir = str(state.get("session_dir") or "")
    node_marker = f"RAY_NODE_ID={state.get('node_id')}\0".encode() if state.get("node_id") else None
    victims: set[int] = set()
    for pid, ticks in state.get("processes", []):
        if ticks is not None and _proc_start_ticks(int(pid)) == ticks:
            victims.add(int(pid))
    # Ray's agents and workers rename themselves (ray::...), so they are found by the node id in
    # their environment as well as by the session dir in their command line.
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        if (session_dir and session_dir in _cmdline(pid)) or (node_marker and node_marker in _environ(pid) + b"\0"):
            victims.add(pid)
    for pid in sorted(victims):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if victims:
        log.warning("stopped %d process(es) of a previous server's local Ray session %s", len(victims), session_dir)
    path.unlink(missing_ok=True)
    return sorted(victims)


def _is_cluster_fault(exc: BaseException) -> bool:
    """Ray's own failures (lost nodes, a dead GCS, a broken connection), as opposed to an
    exception raised by the task function (RayTaskError) or a cancel."""
    try:
        from ray import exceptions as rex
    except ImportError:
        return False
    if isinstance(exc, (Cancelled, rex.RayTaskError, rex.TaskCancelledError)):
        return False
    faults = tuple(getattr(rex, n) for n in ("RaySystemError", "NodeDiedError", "ObjectLostError", "OwnerDiedError",
                                              "WorkerCrashedError", "GetTimeoutError", "LocalRayletDiedError",
                                              "RpcError", "ActorUnavailableError") if hasattr(rex, n))
    return isinstance(exc, faults) or (isinstance(exc, ConnectionError))


def make_executor(kind: str, address: str | None = None, *, num_cpus: int | None = None, state_dir: Path | None = None) -> Executor:
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        return RayExecutor(address, num_cpus=num_cpus, state_dir=state_dir)
    raise ValueError(f"executor must be 'ray' or 'local', got {kind!r}")
