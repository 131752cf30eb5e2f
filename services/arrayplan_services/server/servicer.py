"""PlannerService on the asyncio gRPC server: thin methods that validate, call one function,
convert.

No RPC holds a thread while it waits: blocking work (the run store, the catalog) runs on a bounded
thread pool and is awaited; WatchPlan is an async generator that sleeps on an asyncio event the
plan runner pokes on every change. So a thousand open WatchPlan streams cost a thousand small
coroutines, not a thousand threads, and health, GetPlan and ListDrives keep answering.

Heavy calls (SimulateArray, RunConsistencyTest, ForecastArray) are validated here on the event
loop, then admitted, run and stopped by ``heavy.HeavyCalls``: they never share a thread pool with
the cheap calls, and their simulations never run in this process's threads.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NoReturn, TypeVar

import grpc
from google.rpc import code_pb2
from grpc_status import rpc_status
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc
from arrayplan_engine.catalog import Catalog, Drive
from arrayplan_engine.errors import InvalidInputError, NotFoundError, UnknownNameError, Violation, check_range

from .. import telemetry
from ..api.convert import MAX_NAME_CHARS, drive_to_proto
from ..api.errors import PermissionDeniedError, UnauthenticatedError
from ..api.forecast_convert import validate_forecast_request
from ..api.simulate_convert import validate_consistency_request, validate_simulate_request
from ..fanout import Cancelled, Executor, TaskCall
from ..plan import simulate
from ..plan.planner import PlanRunner
from ..plan.reads import WatchCursor, parse_name, plan_name
from .auth import Authenticator, Caller, ReadPolicy, may_cancel
from .errors import status_for
from .forecast import forecast_task
from .heavy import HeavyCalls

log = logging.getLogger(__name__)
T = TypeVar("T")
WATCH_POLL_S = 5.0  # a watcher re-reads the store this often even without a change notice


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> NoReturn:
    """End the call with the status for ``exc`` (never returns)."""
    status = status_for(exc)
    span = trace.get_current_span()
    span.set_attribute("rpc.grpc.status_code", status.code)
    if status.code == code_pb2.INTERNAL:
        span.set_status(Status(StatusCode.ERROR, status.message))
    await context.abort_with_status(rpc_status.to_status(status))


class PlannerServicer(pb_grpc.PlannerServiceServicer):
    def __init__(self, runner: PlanRunner, catalog: Catalog, *, auth: Authenticator | None = None,
                 quick_threads: int = 8, heavy: HeavyCalls | None = None, reads: ReadPolicy | None = None) -> None:
        self.runner = runner
        self.catalog = catalog
        self.auth = auth or Authenticator(None)
        self.reads = reads or ReadPolicy()  # who reads a stored plan: its creator and admins (server/auth.py)
        # Store reads/writes and catalog look-ups (milliseconds); heavy calls have threads of their own.
        self.quick = ThreadPoolExecutor(max_workers=quick_threads, thread_name_prefix="rpc-quick")
        self.heavy = heavy or HeavyCalls(runner.executor)
        self._drive_cache: dict[int, tuple[Drive, pb.Drive]] = {}
        self._page_cache: dict[tuple[Any, ...], pb.ListDrivesResponse] = {}

    def close(self) -> None:
        self.quick.shutdown(wait=False, cancel_futures=True)
        self.heavy.close()

    async def _run(self, context: grpc.aio.ServicerContext[Any, Any], fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on a quick-pool thread in this call's context (trace span); exceptions
        become the call's status."""
        loop = asyncio.get_running_loop()
        ctx = contextvars.copy_context()
        deadline = time.monotonic() + (context.time_remaining() or 1e9)

        def call() -> T:
            if time.monotonic() > deadline:
                raise Cancelled()  # the caller gave up while this waited for a thread
            return ctx.run(fn, *args)
        try:
            return await loop.run_in_executor(self.quick, call)
        except Cancelled:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "the call ended before its work started")
            raise AssertionError("unreachable") from None
        except Exception as exc:  # noqa: BLE001 - every fault becomes a status
            await abort(context, exc)
            raise AssertionError("unreachable") from None

    async def _run_heavy(self, context: grpc.aio.ServicerContext[Any, Any], what: str,
                         fn: Callable[[Executor, Callable[[], bool]], T]) -> T:
        """A heavy call whose request is already validated: admitted (RESOURCE_EXHAUSTED with a
        RetryInfo beyond the limits), ``fn(executor, is_active)`` run by ``self.heavy``, stopped
        when the caller cancels or its deadline passes; exceptions become the call's status."""
        gone = threading.Event()
        context.add_done_callback(lambda _ctx: gone.set())  # type: ignore[arg-type]  # the stub types the callback as a private class, not a Protocol
        try:
            return await self.heavy.run(what, self._admission_key(context), fn, gone)
        except Cancelled:
            await context.abort(grpc.StatusCode.CANCELLED, "the call ended before its work finished")
            raise AssertionError("unreachable") from None
        except Exception as exc:  # noqa: BLE001 - every fault becomes a status
            await abort(context, exc)
            raise AssertionError("unreachable") from None

    def _admission_key(self, context: grpc.aio.ServicerContext[Any, Any]) -> str:
        """Who a heavy call counts against: the token's name, or without tokens the client's
        address (its host: one client opening many connections is still one caller)."""
        if self.auth.enabled:
            return "token:" + self._caller(context).name
        peer = context.peer() or ""
        host = peer.rsplit(":", 1)[0] if peer.startswith(("ipv4:", "ipv6:")) else peer
        return "peer:" + host

    def _caller(self, context: grpc.aio.ServicerContext[Any, Any]) -> Caller:
        caller = self.auth.caller(context.invocation_metadata())
        if caller is None:  # the interceptor has refused it already; kept for direct use
            raise UnauthenticatedError("a bearer token is required")
        return caller

    async def CreatePlan(self, request: pb.CreatePlanRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.Plan:
        if not request.HasField("plan"):
            await abort(context, InvalidInputError.one("plan", "is required"))
        caller = self._caller(context)
        return await self._run(context, self.runner.create, request.plan, request.plan_id, caller.name)

    async def GetPlan(self, request: pb.GetPlanRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.Plan:
        caller = self._caller(context)

        def read() -> pb.Plan:
            plan = self.runner.reads.get(request.name)
            self.reads.check(caller, plan.name, plan.creator)
            return plan
        return await self._run(context, read)

    async def GetPlanTrace(self, request: pb.GetPlanTraceRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.GetPlanTraceResponse:
        caller = self._caller(context)

        def read() -> pb.GetPlanTraceResponse:
            if not self.reads.reads_all(caller):
                row = self.runner.store.get(parse_name(request.name))
                if row is not None:  # an unknown plan: trace() answers NOT_FOUND
                    self.reads.check(caller, request.name, row.creator)
            return self.runner.reads.trace(request.name)
        return await self._run(context, read)

    async def ListPlans(self, request: pb.ListPlansRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.ListPlansResponse:
        creator = self.reads.list_creator(self._caller(context))  # a non-admin lists their own plans only
        plans, token = await self._run(context, self.runner.reads.list, request.page_size, request.page_token, request.view, creator)
        return pb.ListPlansResponse(plans=plans, next_page_token=token)

    async def CancelPlan(self, request: pb.CancelPlanRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.Plan:
        caller = self._caller(context)
        return await self._run(context, functools.partial(self.runner.cancel, caller=caller.name, admin=caller.admin), request.name)

    async def WatchPlan(self, request: pb.WatchPlanRequest, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[pb.WatchPlanResponse]:
        caller = self._caller(context)
        try:
            run_id = parse_name(request.name)
        except InvalidInputError as exc:
            await abort(context, exc)
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def poke() -> None:
            loop.call_soon_threadsafe(changed.set)

        unsubscribe = self.runner.subscribe(run_id, poke)
        cursor = WatchCursor()
        try:
            while True:
                changed.clear()
                plan = await self._run(context, self.runner.reads.snapshot, run_id)
                if plan is None:
                    await abort(context, NotFoundError("plan", request.name))
                if not self.reads.may_read(caller, plan.creator):
                    await abort(context, self.reads.denied(request.name))
                if request.cancel_on_disconnect and not may_cancel(caller, plan.creator):
                    await abort(context, PermissionDeniedError(
                        f"cancel_on_disconnect: {request.name} was created by another caller; only its creator or an admin token "
                        "may cancel it (watch without cancel_on_disconnect)"))
                event = cursor.step(plan)
                if event is not None:
                    yield event
                if cursor.finished:
                    return
                if unsubscribe is None:  # not executing here (yet): poll, and listen once it is
                    unsubscribe = self.runner.subscribe(run_id, poke)
                try:
                    await asyncio.wait_for(changed.wait(), timeout=WATCH_POLL_S if unsubscribe is not None else 1.0)
                except TimeoutError:
                    pass
        except asyncio.CancelledError:
            if request.cancel_on_disconnect and not cursor.finished:
                # The client's deadline passed or it cancelled the call: stop the plan's tasks.
                loop.run_in_executor(self.quick, functools.partial(self._cancel_quietly, plan_name(run_id)))
            raise
        finally:
            if unsubscribe is not None:
                unsubscribe()

    def _cancel_quietly(self, name: str) -> None:
        try:
            self.runner.cancel(name)
        except Exception:  # noqa: BLE001 - the watcher is gone; nobody to tell
            log.exception("cancelling %s after its watcher went away", name)

    async def SimulateArray(self, request: pb.SimulateArrayRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.SimulateArrayResponse:
        try:
            validate_simulate_request(request, self.catalog)
        except InvalidInputError as exc:
            await abort(context, exc)

        def run(executor: Executor, is_active: Callable[[], bool]) -> pb.SimulateArrayResponse:
            response = simulate.simulate_array(request, self.catalog, executor, is_active=is_active)
            response.trace_id = telemetry.current_trace_id()
            return response
        return await self._run_heavy(context, "SimulateArray", run)

    async def RunConsistencyTest(self, request: pb.RunConsistencyTestRequest,
                                 context: grpc.aio.ServicerContext[Any, Any]) -> pb.RunConsistencyTestResponse:
        try:
            validate_consistency_request(request, self.catalog)
        except InvalidInputError as exc:
            await abort(context, exc)

        def run(executor: Executor, is_active: Callable[[], bool]) -> pb.RunConsistencyTestResponse:
            with telemetry.tracer().start_as_current_span("arrayplan.consistency_test",
                                                          attributes={"arrayplan.drive_model": request.drive_model[:MAX_NAME_CHARS]}):
                response = simulate.consistency_test(request, self.catalog, executor, is_active=is_active)
            response.trace_id = telemetry.current_trace_id()
            return response
        return await self._run_heavy(context, "RunConsistencyTest", run)

    async def ListDrives(self, request: pb.ListDrivesRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.ListDrivesResponse:
        return await self._run(context, self._list_drives, request)

    def _list_drives(self, request: pb.ListDrivesRequest) -> pb.ListDrivesResponse:
        v: list[Violation] = []
        check_range(v, "page_size", request.page_size, 0, 1000)
        if request.kind not in pb.DriveKind.values():
            v.append(Violation(field="kind", reason=f"must be one of {', '.join(pb.DriveKind.keys())}, got {request.kind}"))
        if request.page_token and not re.fullmatch(r"[0-9]{1,9}", request.page_token, re.ASCII):
            v.append(Violation(field="page_token", reason="is not a token this server issued"))
        if v:
            raise InvalidInputError(v)
        drives = [d for d in self.catalog if request.kind == pb.DRIVE_KIND_UNSPECIFIED
                  or (d.kind == "ssd") == (request.kind == pb.DRIVE_KIND_SSD)]
        start = int(request.page_token) if request.page_token else 0
        if start > len(drives):
            raise InvalidInputError.one("page_token", "is not a token this server issued")
        size = request.page_size or len(drives)
        page = drives[start:start + size]
        # The same page of the same drives is the same response: built once (it is most of the cost).
        key = (request.kind, start, size, tuple(id(d) for d in page))
        cached = self._page_cache.get(key)
        if cached is not None:
            return cached
        token = str(start + size) if start + size < len(drives) else ""
        response = pb.ListDrivesResponse(drives=[self._drive_proto(d) for d in page], next_page_token=token)
        if len(self._page_cache) > 256:
            self._page_cache.clear()
        self._page_cache[key] = response
        return response

    def _drive_proto(self, d: Drive) -> pb.Drive:
        """The API form of a catalog drive, converted once per drive object."""
        hit = self._drive_cache.get(id(d))
        if hit is None or hit[0] is not d:
            hit = (d, drive_to_proto(d))
            if len(self._drive_cache) > 4096:
                self._drive_cache.clear()
            self._drive_cache[id(d)] = hit
        return hit[1]

    async def GetDrive(self, request: pb.GetDriveRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.Drive:
        return await self._run(context, self._get_drive, request.name)

    def _get_drive(self, name: str) -> pb.Drive:
        if not name:
            raise InvalidInputError([Violation(field="name", reason="is required (a catalog drive name)")])
        try:
            return self._drive_proto(self.catalog.get(name))
        except UnknownNameError as exc:
            raise UnknownNameError("name", name, exc.known) from None

    async def ForecastArray(self, request: pb.ForecastArrayRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.ForecastArrayResponse:
        caller = self._caller(context)
        try:
            validate_forecast_request(request, self.catalog)
        except InvalidInputError as exc:
            await abort(context, exc)

        def run(executor: Executor, is_active: Callable[[], bool]) -> pb.ForecastArrayResponse:
            out: list[tuple[bytes, bytes | None]] = []
            cancel = threading.Event()
            stop = threading.Thread(target=_cancel_when_gone, args=(is_active, cancel), daemon=True)
            stop.start()
            try:
                executor.run(forecast_task, tuple(self.catalog), [TaskCall(batch=request.SerializeToString(), weight=1)],
                             telemetry.inject_carrier(), on_result=lambda _call, value: out.append(value[0]), cancel=cancel)
            finally:
                cancel.set()
            response = pb.ForecastArrayResponse.FromString(out[0][0])
            if out[0][1] is not None:  # the re-plan: a plan like any other, through the plan admission
                plan = self.runner.create(pb.Plan(spec=pb.PlanSpec.FromString(out[0][1])), creator=caller.name)
                response.replan_plan_name = plan.name
            response.trace_id = telemetry.current_trace_id()
            return response
        return await self._run_heavy(context, "ForecastArray", run)

    async def ParsePlanFile(self, request: pb.ParsePlanFileRequest, context: grpc.aio.ServicerContext[Any, Any]) -> pb.ParsePlanFileResponse:
        from ..api.planfile import parse_plan_file_request

        return await self._run(context, parse_plan_file_request, request)


def _cancel_when_gone(is_active: Callable[[], bool], cancel: threading.Event) -> None:
    while not cancel.wait(0.2):
        if not is_active():
            cancel.set()
