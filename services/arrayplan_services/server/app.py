"""``arrayplan serve``: the asyncio gRPC server with health, reflection, tracing, the run store,
admission control, TLS and bearer tokens.

The server runs on its own event loop thread (``build_server`` returns at once, so the CLI's
``--local`` mode and tests use it like any other object). Limits that are written down:

* ``MAX_RECEIVE_BYTES``: the largest request message accepted (1 MiB; a plan spec is a few KB).
  Larger ones are refused by gRPC with RESOURCE_EXHAUSTED before they are decoded.
* ``--max-running-plans`` / ``--max-queued-plans``: plans beyond the running slots wait PENDING in
  a queue (their place in ``progress.queue_position``); beyond the queue, CreatePlan answers
  RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo``.
* Heavy calls (SimulateArray, RunConsistencyTest, ForecastArray; ``heavy.py``): at most
  ``max_running_heavy`` at once, ``max_queued_heavy`` waiting and ``max_heavy_per_caller`` per
  caller; beyond, RESOURCE_EXHAUSTED with a RetryInfo. They run as Ray tasks, or with the local
  executor in worker processes, and stop when their caller leaves.
* The run store on a full or read-only disk: UNAVAILABLE, health NOT_SERVING until a probe write
  succeeds again; running plans keep their results in memory and write them then.
* A damaged run store (``PRAGMA quick_check`` fails, not a SQLite file, not readable): the server
  does not start (StoreDamagedError, one line naming the file and the restore command).
* Reads of stored plans: their creator and admin tokens only, unless ``shared_reads`` (auth.py).
* ``store_url`` (``serve --store-url postgresql://...``): the run store in PostgreSQL, shared by
  several replicas; each holds a lease on the plans it runs (``lease_s``, renewed by
  ``leases.LeaseKeeper``) and takes over those whose lease expired. Without it, SQLite in
  ``data_dir``. A store that cannot be opened stops the start (StoreConnectError / StoreUrlError).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status
from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_engine.catalog import Catalog, builtin_catalog

from .. import telemetry
from ..api.errors import UnauthenticatedError
from ..fanout import make_executor
from ..plan.planner import DEFAULT_CANDIDATE_LIMIT, DEFAULT_MAX_QUEUED_PLANS, DEFAULT_MAX_RUNNING_PLANS, PlanRunner
from ..store import PlanStore, open_store
from .auth import OPEN_SERVICES, Authenticator, ReadPolicy
from .errors import status_for
from .heavy import DEFAULT_MAX_HEAVY_PER_CALLER, DEFAULT_MAX_QUEUED_HEAVY, DEFAULT_MAX_RUNNING_HEAVY, HeavyCalls
from .leases import DEFAULT_LEASE_S, LeaseKeeper
from .memory import Trimmer
from .servicer import PlannerServicer

log = logging.getLogger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["PlannerService"].full_name
MAX_RECEIVE_BYTES = 1 << 20
# A health service name that stays SERVING while the process runs, whatever the store's state:
# for liveness probes (restarting the pod does not make a full disk empty; readiness uses "").
LIVENESS_SERVICE = "liveness"
STORE_PROBE_S = 2.0


@dataclass(frozen=True, slots=True)
class TlsConfig:
    cert_file: Path
    key_file: Path
    client_ca_file: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        key = Path(self.key_file).read_bytes()
        cert = Path(self.cert_file).read_bytes()
        ca = Path(self.client_ca_file).read_bytes() if self.client_ca_file else None
        return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=ca is not None)


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Refuses every call without a known bearer token, except the health service's."""

    def __init__(self, auth: Authenticator) -> None:
        self.auth = auth
        status = rpc_status.to_status(status_for(UnauthenticatedError(
            "this server needs a bearer token: send metadata 'authorization: Bearer TOKEN' (the CLI reads $ARRAYPLAN_TOKEN)")))

        async def deny(request: object, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            await context.abort_with_status(status)
        self._deny: grpc.RpcMethodHandler[Any, Any] = grpc.unary_unary_rpc_method_handler(deny)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        if not self.auth.enabled or handler_call_details.method.startswith(OPEN_SERVICES):
            return await continuation(handler_call_details)
        if self.auth.caller(handler_call_details.invocation_metadata) is None:
            return self._deny
        return await continuation(handler_call_details)


@dataclass
class Server:
    grpc_server: grpc.aio.Server
    port: int
    runner: PlanRunner
    store: PlanStore
    health: health.aio.HealthServicer
    auth: Authenticator
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    servicer: PlannerServicer
    extra_servers: list[grpc.aio.Server] = field(default_factory=list)
    leases: LeaseKeeper | None = None
    _stopped: threading.Event = field(default_factory=threading.Event)

    def _call(self, coro: Coroutine[Any, Any, Any], timeout_s: float = 60.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def set_serving(self, serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING

        async def _set() -> None:
            for name in ("", SERVICE_NAME):
                await self.health.set(name, status)
        if not self._stopped.is_set():
            asyncio.run_coroutine_threadsafe(_set(), self.loop)

    def stop(self, grace_s: float = 5.0) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        try:
            self._call(self.health.enter_graceful_shutdown())
        except Exception:  # noqa: BLE001 - stopping anyway
            pass
        if self.leases is not None:
            self.leases.stop()  # no take-over while stopping; shutdown() releases this server's leases
        self.runner.shutdown()
        try:
            self._call(self.grpc_server.stop(grace_s), timeout_s=grace_s + 30)
            for extra in self.extra_servers:
                self._call(extra.stop(0), timeout_s=30)
        finally:
            self.servicer.close()
            telemetry.flush()
            self.runner.executor.shutdown()
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)
            self.store.close()


def _loop_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()
    thread = threading.Thread(target=run, name="grpc-aio", daemon=True)
    thread.start()
    ready.wait()
    return loop, thread


def build_server(*, host: str = "127.0.0.1", port: int = 50051, data_dir: Path, executor_kind: str = "ray",
                 ray_address: str | None = None, num_cpus: int | None = None,
                 candidate_limit: int = DEFAULT_CANDIDATE_LIMIT, max_running_plans: int = DEFAULT_MAX_RUNNING_PLANS,
                 max_queued_plans: int = DEFAULT_MAX_QUEUED_PLANS, tls: TlsConfig | None = None,
                 auth_token_file: Path | None = None, reflection_enabled: bool = True,
                 health_port: int | None = None, max_workers: int | None = None,
                 catalog: Catalog | None = None, shared_reads: bool = False, max_running_heavy: int = DEFAULT_MAX_RUNNING_HEAVY,
                 max_queued_heavy: int = DEFAULT_MAX_QUEUED_HEAVY, max_heavy_per_caller: int = DEFAULT_MAX_HEAVY_PER_CALLER,
                 store_url: str | None = None, lease_s: float = DEFAULT_LEASE_S,
                 allow_open_token_file: bool = False) -> Server:
    del max_workers  # the asyncio server holds no thread per call
    auth = Authenticator(auth_token_file, allow_open_mode=allow_open_token_file)
    credentials = tls.credentials() if tls is not None else None
    # SQLite in data_dir (checked first: StoreDamagedError) or PostgreSQL (StoreConnectError).
    store = open_store(data_dir=Path(data_dir), store_url=store_url)
    try:
        return _build(store, host=host, port=port, data_dir=data_dir, executor_kind=executor_kind, ray_address=ray_address,
                      num_cpus=num_cpus, candidate_limit=candidate_limit, max_running_plans=max_running_plans,
                      max_queued_plans=max_queued_plans, auth=auth, credentials=credentials, reflection_enabled=reflection_enabled,
                      health_port=health_port, catalog=catalog, shared_reads=shared_reads, max_running_heavy=max_running_heavy,
                      max_queued_heavy=max_queued_heavy, max_heavy_per_caller=max_heavy_per_caller, lease_s=lease_s)
    except BaseException:
        store.close()
        raise


def _build(store: PlanStore, *, host: str, port: int, data_dir: Path, executor_kind: str, ray_address: str | None,
           num_cpus: int | None, candidate_limit: int, max_running_plans: int, max_queued_plans: int, auth: Authenticator,
           credentials: grpc.ServerCredentials | None, reflection_enabled: bool, health_port: int | None, catalog: Catalog | None,
           shared_reads: bool, max_running_heavy: int, max_queued_heavy: int, max_heavy_per_caller: int, lease_s: float) -> Server:
    telemetry.configure_server(store)
    catalog = catalog or builtin_catalog()  # a site's drives: drive_catalog.load_catalog_dir (serve --catalog)
    executor = make_executor(executor_kind, ray_address, num_cpus=num_cpus, state_dir=Path(data_dir))
    # The owner id names this server in the plans' leases: the host (a pod's name) and the process.
    owner = f"{socket.gethostname()}-{os.getpid()}-{os.urandom(3).hex()}"
    runner = PlanRunner(store, executor, catalog=catalog, candidate_limit=candidate_limit,
                        max_running=max_running_plans, max_queued=max_queued_plans, owner=owner,
                        lease_s=lease_s if store.shared else 0.0)
    leases = LeaseKeeper(runner, store, lease_s=lease_s) if store.shared else None
    heavy = HeavyCalls(executor, max_running=max_running_heavy, max_queued=max_queued_heavy, max_per_caller=max_heavy_per_caller)
    servicer = PlannerServicer(runner, catalog, auth=auth, reads=ReadPolicy(shared_reads=shared_reads), heavy=heavy)
    loop, thread = _loop_thread()
    extra_servers: list[grpc.aio.Server] = []

    async def start() -> tuple[grpc.aio.Server, health.aio.HealthServicer, int]:
        interceptors = [aio_server_interceptor(filter_=filters.negate(filters.health_check())), AuthInterceptor(auth)]
        server = grpc.aio.server(interceptors=interceptors, options=[
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.so_reuseport", 0),
        ])
        pb_grpc.add_PlannerServiceServicer_to_server(servicer, server)
        health_servicer = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        if reflection_enabled:
            reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
        address = f"{host}:{port}"
        bound = server.add_secure_port(address, credentials) if credentials is not None else server.add_insecure_port(address)
        if bound == 0:
            raise OSError(f"cannot listen on {host}:{port} (in use?)")
        if health_port is not None:
            # Plaintext health only (kubelet gRPC probes cannot speak TLS); the same servicer.
            health_server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
            health_pb2_grpc.add_HealthServicer_to_server(health_servicer, health_server)
            if health_server.add_insecure_port(f"{host}:{health_port}") == 0:
                raise OSError(f"cannot listen on {host}:{health_port} for health checks (in use?)")
            await health_server.start()
            extra_servers.append(health_server)
        await server.start()
        for name in ("", SERVICE_NAME, LIVENESS_SERVICE):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        return server, health_servicer, bound

    try:
        grpc_server, health_servicer, bound = asyncio.run_coroutine_threadsafe(start(), loop).result(60)
    except BaseException:
        loop.call_soon_threadsafe(loop.stop)
        heavy.close()
        executor.shutdown()
        raise
    srv = Server(grpc_server=grpc_server, port=bound, runner=runner, store=store, health=health_servicer, auth=auth,
                 loop=loop, thread=thread, servicer=servicer, extra_servers=extra_servers, leases=leases)
    def ready(_changed: bool = True) -> None:
        # Readiness needs a writable store and (an external) Ray that answers; liveness stays.
        srv.set_serving(store.healthy and bool(getattr(executor, "available", True)))
    store.add_listener(ready)
    add_listener = getattr(executor, "add_listener", None)
    if add_listener is not None:
        add_listener(ready)
        ready()
    threading.Thread(target=_probe_store, args=(srv,), name="store-probe", daemon=True).start()
    resumed = runner.resume_interrupted()
    if resumed:
        log.warning("resumed %d plan(s) interrupted by the last shutdown: %s", len(resumed), ", ".join(resumed))
    if leases is not None:
        log.info("run store %s is shared: leases of %.0f s as %s", store.location, lease_s, owner)
        leases.start()
    return srv


def _probe_store(server: Server) -> None:
    """While the store is unusable, try a small write every STORE_PROBE_S; health follows. Also
    returns the memory of plans that ended to the OS (memory.py)."""
    trimmer = Trimmer()
    while not server._stopped.wait(STORE_PROBE_S):
        try:
            trimmer.poll(len(server.runner.held_run_ids()))
        except Exception:  # noqa: BLE001 - best effort
            log.exception("memory trim")
        if not server.store.healthy:
            try:
                server.store.probe()
            except Exception:  # noqa: BLE001 - keep probing
                log.exception("store probe")


def serve_forever(server: Server, ready_message: str) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    if server.auth.enabled:
        signal.signal(signal.SIGHUP, lambda *_: threading.Thread(target=server.auth.reload, daemon=True).start())
    print(ready_message, flush=True)
    stop.wait()
    log.info("stopping")
    server.stop()
