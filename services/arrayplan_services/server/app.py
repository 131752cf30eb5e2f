"""``arrayplan serve``: the gRPC server with reflection, health, tracing and the run store."""

from __future__ import annotations

import logging
import signal
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.grpc import filters, server_interceptor

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_engine.catalog import Catalog, builtin_catalog

from .. import telemetry
from ..fanout import make_executor
from ..planner import DEFAULT_CANDIDATE_LIMIT, PlanRunner
from ..store import RunStore
from .errors import ErrorMappingInterceptor
from .servicer import PlannerServicer

log = logging.getLogger(__name__)
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["PlannerService"].full_name


@dataclass
class Server:
    grpc_server: grpc.Server
    port: int
    runner: PlanRunner
    store: RunStore
    health: health.HealthServicer

    def stop(self, grace_s: float = 5.0) -> None:
        self.health.enter_graceful_shutdown()
        self.runner.shutdown()
        self.grpc_server.stop(grace_s).wait()
        telemetry.flush()
        self.runner.executor.shutdown()


def build_server(*, host: str = "127.0.0.1", port: int = 50051, data_dir: Path, executor_kind: str = "ray",
                 ray_address: str | None = None, num_cpus: int | None = None,
                 candidate_limit: int = DEFAULT_CANDIDATE_LIMIT, max_workers: int = 16, catalog: Catalog | None = None) -> Server:
    store = RunStore(Path(data_dir) / "runs.sqlite3")
    telemetry.configure_server(store)
    catalog = catalog or builtin_catalog()  # a site's drives: drive_catalog.load_catalog_dir (serve --catalog)
    executor = make_executor(executor_kind, ray_address, num_cpus=num_cpus)
    runner = PlanRunner(store, executor, catalog=catalog, candidate_limit=candidate_limit)
    interceptors = [
        server_interceptor(filter_=filters.negate(filters.health_check())),
        ErrorMappingInterceptor(),
    ]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers), interceptors=interceptors)
    pb_grpc.add_PlannerServiceServicer_to_server(PlannerServicer(runner, catalog), server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port} (in use?)")
    server.start()
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    resumed = runner.resume_interrupted()
    if resumed:
        log.warning("resumed %d plan(s) interrupted by the last shutdown: %s", len(resumed), ", ".join(resumed))
    return Server(grpc_server=server, port=bound, runner=runner, store=store, health=health_servicer)


def serve_forever(server: Server, ready_message: str) -> None:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(ready_message, flush=True)
    stop.wait()
    log.info("stopping")
    server.stop()
