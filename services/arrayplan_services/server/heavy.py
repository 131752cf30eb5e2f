"""Heavy calls (SimulateArray, RunConsistencyTest, ForecastArray): admitted like plans, run away
from the server's event loop and its thread pools, stopped when their caller leaves.

* Admission (``HeavyAdmission``, on the event loop): at most ``max_running`` heavy calls run at
  once; more wait in a FIFO queue of at most ``max_queued`` (a waiting call is a suspended
  coroutine, it holds no thread); one caller (its token's name, or its address without tokens)
  has at most ``max_per_caller`` running or waiting. Beyond either limit the call is refused at
  once with RESOURCE_EXHAUSTED and a ``google.rpc.RetryInfo`` (``HeavyCallsFullError``).
* Where they run: the call's orchestration (splitting, merging, converting) runs on one of
  ``max_running`` threads of their own, which only wait; the simulation itself runs on the
  executor: Ray tasks with the Ray executor, and with ``--executor local`` a worker process of
  ``WorkerPool`` (forked from a forkserver that has imported the engine, niced so the server
  process keeps the CPU it needs). The numba kernels hold the GIL for as long as they run, so in
  the server process they would stop the event loop, health checks included.
* Stopping: when the caller cancels or its deadline passes (the handler is cancelled, and the
  call's done callback fires) the call's ``gone`` event is set; the executor cancels its work:
  ``ray.cancel(force=True)`` on Ray, SIGKILL of the worker process locally (a numba kernel cannot
  be interrupted any other way). The slot is freed when the work has really stopped, and a fresh
  worker replaces the killed one. Workers start with the first heavy call and are kept (at most
  ``max_running``) for the next ones.
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import logging
import multiprocessing
import os
import signal
import threading
import time
import traceback
import types
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, TypeVar

from arrayplan_engine.errors import InvalidInputError, Violation

from ..admission import Admission, AdmissionFullError
from ..api.errors import PlanQueueFullError
from ..fanout import Cancelled, Executor, LocalExecutor, TaskCall

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MAX_RUNNING_HEAVY = 4
DEFAULT_MAX_QUEUED_HEAVY = 16
DEFAULT_MAX_HEAVY_PER_CALLER = 4
WORKER_NICE = 10  # worker processes yield the CPU to the server process (health, cheap calls)
POLL_S = 0.05  # how often a waiting call looks at its cancel event
# Imported by the forkserver once, so a fresh worker starts in milliseconds.
WORKER_PRELOAD = ["arrayplan_services.fanout.tasks", "arrayplan_services.server.forecast"]


class HeavyCallsFullError(PlanQueueFullError):
    """Every heavy-call slot is busy and the queue is full, or this caller has its share."""

    reason_code = "HEAVY_CALLS_FULL"

    def __init__(self, running: int, queued: int, retry_after_s: float, *, caller_limit: int | None = None) -> None:
        super().__init__(running, queued, retry_after_s)
        if caller_limit is not None:
            self.reason_code = "HEAVY_CALLS_PER_CALLER"
            what = f"this caller already has {caller_limit} heavy call(s) running or waiting (the per-caller limit)"
        else:
            what = f"the server is running {running} heavy call(s) and {queued} more are waiting (its limits)"
        self.args = (f"{what}; retry in about {retry_after_s:.0f} s",)


class WorkerDiedError(Exception):
    """A heavy call's worker process ended without an answer (killed from outside, out of memory)."""


@dataclass(eq=False)  # hashed by identity: the admission's queue holds tickets
class _Ticket:
    caller: str
    waiter: asyncio.Future[None] | None = None
    skipped: bool = False  # left the queue cancelled while a slot was being handed over


class HeavyAdmission:
    """The server's admission policy (``arrayplan_services.admission``, shared with the plans'
    run queue) on the event loop: a waiting call is a future (no lock: only the loop's thread
    touches it)."""

    def __init__(self, max_running: int, max_queued: int, max_per_caller: int) -> None:
        if max_running < 1 or max_queued < 0 or max_per_caller < 1:
            raise ValueError(f"max_running and max_per_caller must be >= 1 and max_queued >= 0, "
                             f"got {max_running}, {max_queued}, {max_per_caller}")
        self.policy: Admission[_Ticket] = Admission(max_running, max_queued, max_per_caller, mean_run_s=10.0)
        self.max_running = max_running
        self.max_queued = max_queued
        self.max_per_caller = max_per_caller

    @property
    def running(self) -> int:
        return self.policy.running

    @property
    def queued(self) -> int:
        return self.policy.queued

    async def acquire(self, caller: str) -> _Ticket:
        """A running slot for ``caller``: at once, after waiting in the queue, or
        HeavyCallsFullError. A call cancelled while it waits leaves the queue."""
        ticket = _Ticket(caller)
        try:
            if self.policy.admit(ticket, caller):
                return ticket
        except AdmissionFullError as exc:
            raise HeavyCallsFullError(exc.running, exc.queued, exc.retry_after_s, caller_limit=exc.caller_limit) from None
        ticket.waiter = asyncio.get_running_loop().create_future()
        try:
            await ticket.waiter  # release() hands its slot over: ``running`` does not change
        except asyncio.CancelledError:
            if not self.policy.leave(ticket) and not ticket.skipped:  # handed a slot as the caller left: pass it on
                self.release(ticket)
            raise
        return ticket

    def release(self, ticket: _Ticket, elapsed_s: float | None = None) -> None:
        """The call's work has stopped: its slot goes to the first waiting call."""
        self.policy.finish(ticket.caller, elapsed_s)
        while (nxt := self.policy.hand_over()) is not None:
            if nxt.waiter is not None and not nxt.waiter.done():
                nxt.waiter.set_result(None)
                return
            nxt.skipped = True  # cancelled meanwhile: never ran, its count goes
            self.policy.finish(nxt.caller)


# -- worker processes ------------------------------------------------------------------------

def _mappingproxy(d: dict[Any, Any]) -> types.MappingProxyType[Any, Any]:
    return types.MappingProxyType(d)


def _reduce_mappingproxy(m: types.MappingProxyType[Any, Any]) -> tuple[Any, tuple[dict[Any, Any]]]:
    return _mappingproxy, (dict(m),)


# Catalog drives keep read-only mappings; the pipe's pickler (both ends import this module) copies them.
ForkingPickler.register(types.MappingProxyType, _reduce_mappingproxy)


def _die_with_parent() -> None:
    """SIGKILL this worker when its parent (the forkserver, which ends with the server) ends:
    a kernel in the middle of a day-long run would not notice otherwise."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _worker_main(conn: Connection, nice: int) -> None:
    """A worker process: run ``fn(shared, batch, carrier)`` for each message until the pipe closes.
    Engine errors go back as their violations (exceptions with custom constructors do not pickle)."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C at the terminal is the server's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass
    while True:
        try:
            fn, shared, batch, carrier = conn.recv()
        except (EOFError, OSError):
            return
        try:
            value = fn(shared, batch, carrier)
            reply: tuple[Any, ...] = ("ok", value)
        except InvalidInputError as exc:
            reply = ("invalid", [(v.field, v.reason) for v in exc.violations], exc.reason_code)
        except Exception as exc:  # noqa: BLE001 - every fault goes back to the server's log
            reply = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


class _Worker:
    def __init__(self, ctx: Any, nice: int) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, nice), name="arrayplan-heavy", daemon=True)
        self.proc.start()
        child.close()
        self.killed = False

    @property
    def pid(self) -> int:
        return int(self.proc.pid or 0)

    @property
    def alive(self) -> bool:
        return not self.killed and self.proc.is_alive()

    def call(self, fn: Callable[..., Any], shared: Any, batch: Any, carrier: dict[str, str], cancel: threading.Event) -> Any:
        self.conn.send((fn, shared, batch, carrier))
        while True:
            ready = wait([self.conn, self.proc.sentinel], timeout=POLL_S)
            if self.conn in ready:
                try:
                    reply = self.conn.recv()
                except EOFError:
                    reply = None
                if reply is not None:
                    break
            if ready:  # the process ended without an answer
                self.proc.join(1)
                raise WorkerDiedError(f"the worker process {self.pid} ended without an answer (exit code {self.proc.exitcode})")
            if cancel.is_set():
                self.kill()
                raise Cancelled()
        if reply[0] == "ok":
            return reply[1]
        if reply[0] == "invalid":
            exc = InvalidInputError([Violation(field=f, reason=r) for f, r in reply[1]])
            exc.reason_code = reply[2]
            raise exc
        log.error("a heavy call failed in worker process %d: %s\n%s", self.pid, reply[1], reply[2])
        raise RuntimeError(reply[1])

    def kill(self) -> None:
        self.killed = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.join(5)
        self.conn.close()

    def close(self) -> None:
        self.conn.close()  # the worker's recv sees EOF and returns
        self.proc.join(2)
        if self.proc.is_alive():
            self.kill()


class WorkerPool:
    """Worker processes for heavy calls under ``--executor local``: one per running call, up to
    ``size`` kept idle for the next; a killed one is replaced in the background."""

    def __init__(self, size: int, *, nice: int = WORKER_NICE) -> None:
        self.size = size
        self.nice = nice
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(WORKER_PRELOAD)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def checkout(self) -> _Worker:
        """An idle worker, or a new one (the first starts the forkserver: a second or two, once;
        ``arrayplan plan --local`` and other in-process servers that never simulate pay nothing)."""
        with self._lock:
            while self._idle:
                w = self._idle.pop()
                if w.alive:
                    return w
        w = _Worker(self._ctx, self.nice)
        log.info("heavy-call worker process %d started", w.pid)
        return w

    def give_back(self, worker: _Worker) -> None:
        if worker.alive and not self._closed:
            with self._lock:
                if len(self._idle) < self.size:
                    self._idle.append(worker)
                    return
            worker.close()
            return
        worker.conn.close()  # killed, or ended on its own: its pipe goes too
        if not self._closed:
            threading.Thread(target=self._replace, name="heavy-worker-replace", daemon=True).start()

    def _replace(self) -> None:
        try:
            w = _Worker(self._ctx, self.nice)
        except Exception:  # noqa: BLE001 - the next call starts one itself
            log.exception("starting a heavy-call worker process")
            return
        with self._lock:
            if not self._closed and len(self._idle) < self.size:
                self._idle.append(w)
                return
        w.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for w in idle:
            w.close()


class ProcessExecutor:
    """The ``Executor`` of one heavy call under ``--executor local``: its tasks run one after
    another in the call's worker process; ``cancel`` kills the process."""

    worker_count = 1

    def __init__(self, worker: _Worker, on_start: Callable[[int], None] | None = None) -> None:
        self.worker = worker
        self._on_start = on_start

    def run(self, fn: Callable[..., Any], shared: Any, calls: Sequence[TaskCall], carrier: dict[str, str], *,
            on_result: Callable[[TaskCall, Any], None], cancel: threading.Event) -> None:
        for call in calls:
            if cancel.is_set():
                raise Cancelled()
            if self._on_start is not None:
                self._on_start(self.worker.pid)
            on_result(call, self.worker.call(fn, shared, call.batch, carrier, cancel))

    def shutdown(self) -> None:
        return None


# -- the runner --------------------------------------------------------------------------------

class HeavyCalls:
    """Admission, threads and (locally) worker processes for the server's heavy calls."""

    def __init__(self, executor: Executor, *, max_running: int = DEFAULT_MAX_RUNNING_HEAVY,
                 max_queued: int = DEFAULT_MAX_QUEUED_HEAVY, max_per_caller: int = DEFAULT_MAX_HEAVY_PER_CALLER) -> None:
        self.admission = HeavyAdmission(max_running, max_queued, max_per_caller)
        self.executor = executor
        # Threads that only orchestrate and wait: one per running slot, so admitted calls never
        # queue here, and nothing else (store reads, catalog look-ups) ever runs on them.
        self.threads = ThreadPoolExecutor(max_workers=max_running, thread_name_prefix="rpc-heavy")
        self.pool = WorkerPool(max_running) if isinstance(executor, LocalExecutor) else None

    def close(self) -> None:
        self.threads.shutdown(wait=False, cancel_futures=True)
        if self.pool is not None:
            self.pool.close()

    async def run(self, what: str, caller: str, fn: Callable[[Executor, Callable[[], bool]], T],
                  gone: threading.Event) -> T:
        """Admit the call, then ``fn(executor, is_active)`` on a heavy thread in this context.
        ``gone`` is set (by the servicer, or here on cancellation) when the caller leaves; the
        slot is freed when the work has really stopped."""
        loop = asyncio.get_running_loop()
        ticket = await self.admission.acquire(caller)
        ctx = contextvars.copy_context()
        started = time.monotonic()
        killed: list[int] = []

        def work() -> T:
            if gone.is_set():
                raise Cancelled()
            if self.pool is None:
                return ctx.run(fn, self.executor, lambda: not gone.is_set())
            worker = self.pool.checkout()

            def on_start(pid: int) -> None:
                log.info("heavy call %s (caller %r) running in worker process %d", what, caller, pid)
            try:
                return ctx.run(fn, ProcessExecutor(worker, on_start), lambda: not gone.is_set())
            finally:
                if worker.killed:
                    killed.append(worker.pid)
                self.pool.give_back(worker)

        def done(f: asyncio.Future[T]) -> None:
            if not f.cancelled():
                f.exception()  # retrieved: a caller that left gets no answer, and no "never retrieved" traceback in the log
            self.admission.release(ticket, time.monotonic() - started)
            for pid in killed:  # said once the slot is free again
                log.info("heavy call %s (caller %r): the caller left; worker process %d killed", what, caller, pid)

        future = loop.run_in_executor(self.threads, work)
        future.add_done_callback(done)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            gone.set()  # the work sees it within POLL_S (locally) or 0.2 s (Ray) and stops
            raise
