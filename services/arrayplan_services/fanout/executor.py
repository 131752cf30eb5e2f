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
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

log = logging.getLogger(__name__)

MAX_RETRIES = 3


def _warm_worker() -> int:
    """Import what a task needs (in a Ray worker); returns the worker's PID."""
    import importlib

    importlib.import_module("arrayplan_services.fanout.tasks")
    return os.getpid()


class Cancelled(Exception):
    """The caller cancelled the work (its plan was cancelled or its deadline passed)."""


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


class RayExecutor:
    """Fans tasks out over a Ray cluster: local by default, or ``address`` (``RAY_ADDRESS``)."""

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None) -> None:
        import ray

        self._ray = ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": False}
            runtime_env = {"env_vars": {k: v for k, v in os.environ.items() if k.startswith("OTEL_")}}
            if address:
                ray.init(address=address, runtime_env=runtime_env, **kwargs)
            else:
                # A new local cluster turns Ray's token auth on by default and warns so at every
                # start; keep the behaviour, drop the notice (RAY_AUTH_MODE set by the caller wins).
                logging.getLogger("ray._private.authentication.authentication_token_setup").setLevel(logging.ERROR)
                ray.init(num_cpus=num_cpus, runtime_env=runtime_env, **kwargs)
        self._remote_cache: dict[Callable[..., Any], Any] = {}
        self._warm_workers()

    def _warm_workers(self, timeout_s: float = 120.0) -> None:
        """Before the server reports SERVING: one task per CPU imports the task module (numpy,
        numba, the engine, telemetry) in each worker Ray keeps, so the first plan's batches do not
        pay for it. The kernels themselves come from the shared numba cache (numba_cache.py).
        Best effort: a failure is logged, plans still run."""
        ray = self._ray
        try:
            remote = ray.remote(num_cpus=1)(_warm_worker)
            pids = ray.get([remote.remote() for _ in range(min(self.worker_count, 64))], timeout=timeout_s)
            log.info("Ray workers warmed: %s", sorted(set(pids)))
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation only
            log.warning("could not warm the Ray workers: %s", exc)

    @property
    def worker_count(self) -> int:
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _remote(self, fn: Callable[..., Any]) -> Any:
        remote = self._remote_cache.get(fn)
        if remote is None:
            remote = self._ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(fn)
            self._remote_cache[fn] = remote
        return remote

    def run(self, fn: Callable[..., Any], shared: Any, calls: Sequence[TaskCall], carrier: dict[str, str], *,
            on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None:
        ray = self._ray
        remote = self._remote(fn)
        shared_ref = ray.put(shared)
        pending = {remote.remote(shared_ref, call.batch, carrier): call for call in calls}
        try:
            while pending:
                if cancel.is_set():
                    raise Cancelled()
                done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
                for ref in done:
                    call = pending.pop(ref)
                    on_result(call, ray.get(ref))
        except BaseException:
            # force=True: a task inside a numba kernel cannot see a KeyboardInterrupt, so its
            # worker process is stopped (Ray starts a fresh one); cancelled tasks are not retried.
            for ref in pending:
                ray.cancel(ref, force=True)
            raise

    def shutdown(self) -> None:
        if self._ray.is_initialized():
            self._ray.shutdown()


def make_executor(kind: str, address: str | None = None, *, num_cpus: int | None = None) -> Executor:
    if kind == "local":
        return LocalExecutor()
    if kind == "ray":
        return RayExecutor(address, num_cpus=num_cpus)
    raise ValueError(f"executor must be 'ray' or 'local', got {kind!r}")
