"""The store-facing reads of plans: GetPlan, ListPlans, GetPlanTrace, WatchPlan (``PlanReads``).
A plan is read from the store; what only the process running it knows (its progress while the
store cannot write, its queue position, a snapshot shared by its watchers) comes from the run
queue (``planner.PlanRunner``, through ``LiveRuns``)."""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from google.protobuf import json_format, timestamp_pb2

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine.errors import InvalidInputError, NotFoundError, require_range

from ..store import TERMINAL_STATES, PlanStore, RunRow

_TERMINAL_ENUMS = frozenset(pb.Plan.State.Value(f"STATE_{s}") for s in TERMINAL_STATES)
PLAN_ID_RE = re.compile(r"[a-z][a-z0-9-]{2,61}[a-z0-9]", re.ASCII)
# A ListPlans page ends before its plans would exceed this many serialized bytes (the client's
# default receive limit is 4 MiB).
MAX_LIST_PAGE_BYTES = 1 << 20
FINISHED_CACHE_PLANS = 128


class LiveRun(Protocol):
    """A run this process executes or queues, as its watchers see it."""

    cond: threading.Condition
    version: int
    snapshot: tuple[int, pb.Plan] | None


class LiveRuns(Protocol):
    """What the run queue tells the reads about the runs it holds."""

    def queue_position(self, run_id: str) -> int: ...

    def live_progress(self, run_id: str) -> dict[str, Any] | None: ...

    def live(self, run_id: str) -> LiveRun | None: ...

    def subscribe(self, run_id: str, fn: Callable[[], None]) -> Callable[[], None] | None: ...


def _ts(t: float | None) -> timestamp_pb2.Timestamp | None:
    if t is None:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(t * 1e9))
    return ts


def plan_name(run_id: str) -> str:
    return f"plans/{run_id}"


def trace_from_store(store: PlanStore, name: str) -> pb.GetPlanTraceResponse:
    """A run's stored spans as the GetPlanTrace response (the server's RPC, and ``arrayplan trace
    --data-dir`` reading a store file directly)."""
    from google.protobuf import struct_pb2

    run_id = parse_name(name)
    row = store.get(run_id)
    if row is None:
        raise NotFoundError("plan", name)
    out = pb.GetPlanTraceResponse(trace_id=row.trace_id)
    for s in store.spans(row.trace_id):
        span = out.spans.add(span_id=s["span_id"], parent_span_id=s["parent_span_id"], name=s["name"], kind=s["kind"],
                             status=s["status"], process=s["process"])
        span.start_time.FromNanoseconds(int(s["start_ns"]))
        span.end_time.FromNanoseconds(int(s["end_ns"]))
        attrs = struct_pb2.Struct()
        for k, v in (s["attributes"] or {}).items():
            attrs[str(k)] = list(v) if isinstance(v, tuple) else v
        span.attributes.CopyFrom(attrs)
    return out


def parse_name(name: str, field_name: str = "name") -> str:
    if not name.startswith("plans/") or not PLAN_ID_RE.fullmatch(name[len("plans/"):]):
        raise InvalidInputError.one(field_name, f"must look like plans/ID (ID: 4-63 lowercase letters, digits, hyphens), got {name[:200]!r}")
    return name[len("plans/"):]


def parse_list_token(token: str) -> int | None:
    """The seq a ListPlans page token continues before (tokens are lowercase hex of a seq)."""
    if not token:
        return None
    if not re.fullmatch(r"[0-9a-f]{1,15}", token, re.ASCII):
        raise InvalidInputError.one("page_token", "is not a token this server issued")
    return int(token, 16)


class WatchCursor:
    """What a WatchPlan stream sends for each plan snapshot it reads: the progress when it changed
    since the last one sent, and the plan itself once it is terminal (then ``finished``). The
    blocking ``PlanRunner.watch`` and the server's async WatchPlan both step one of these."""

    def __init__(self) -> None:
        self._last: pb.PlanProgress | None = None
        self.finished = False

    def step(self, plan: pb.Plan) -> pb.WatchPlanResponse | None:
        if plan.state in _TERMINAL_ENUMS:
            self.finished = True
            return pb.WatchPlanResponse(plan=plan, trace_id=plan.trace_id)
        if plan.progress != self._last:
            self._last = pb.PlanProgress()
            self._last.CopyFrom(plan.progress)
            return pb.WatchPlanResponse(progress=plan.progress, trace_id=plan.trace_id)
        return None


class PlanReads:
    """GetPlan, ListPlans, GetPlanTrace and WatchPlan over the store, with the run queue's live
    state (``LiveRuns``)."""

    def __init__(self, store: PlanStore, runs: LiveRuns) -> None:
        self.store = store
        self.runs = runs
        self._lock = threading.Lock()
        self._finished: OrderedDict[tuple[str, float], pb.Plan] = OrderedDict()

    def _to_proto(self, row: RunRow, *, with_result: bool = True, with_spec: bool = True) -> pb.Plan:
        plan = pb.Plan(name=plan_name(row.id), state=f"STATE_{row.state}", trace_id=row.trace_id,
                       error_message=row.error_message, error_reason=row.error_reason, creator=row.creator)
        if with_spec:
            json_format.Parse(row.spec_json, plan.spec)
        progress = self.runs.live_progress(row.id) if row.state not in TERMINAL_STATES else None
        json_format.ParseDict(progress if progress is not None else json.loads(row.progress_json or "{}"), plan.progress,
                              ignore_unknown_fields=True)
        if row.state == "PENDING":
            plan.progress.queue_position = self.runs.queue_position(row.id)
        if with_result and row.result_json:
            json_format.Parse(row.result_json, plan.result)
        for name, t in (("create_time", row.create_time), ("update_time", row.update_time), ("end_time", row.end_time)):
            ts = _ts(t)
            if ts is not None:
                getattr(plan, name).CopyFrom(ts)
        return plan

    def get(self, name: str, field_name: str = "name") -> pb.Plan:
        run_id = parse_name(name, field_name)
        row = self.store.get(run_id)
        if row is None:
            raise NotFoundError("plan", name)
        if row.state not in TERMINAL_STATES:
            return self._to_proto(row)
        # A finished plan never changes: keep its decoded form (parsing the stored JSON is most of
        # a GetPlan's cost).
        key = (row.id, row.update_time)
        with self._lock:
            cached = self._finished.get(key)
            if cached is not None:
                self._finished.move_to_end(key)
                return cached
        plan = self._to_proto(row)
        with self._lock:
            self._finished[key] = plan
            while len(self._finished) > FINISHED_CACHE_PLANS:
                self._finished.popitem(last=False)
        return plan

    def trace(self, name: str) -> pb.GetPlanTraceResponse:
        """The stored spans of a plan's run (GetPlanTrace)."""
        return trace_from_store(self.store, name)

    def list(self, page_size: int, page_token: str, view: int = pb.PLAN_VIEW_UNSPECIFIED,
             creator: str | None = None) -> tuple[list[pb.Plan], str]:
        """A page of plans, newest first: at most ``page_size`` and at most MAX_LIST_PAGE_BYTES;
        only ``creator``'s plans unless None (read authorisation, server/auth.py)."""
        require_range("page_size", page_size, 0, 1000)
        if view not in (pb.PLAN_VIEW_UNSPECIFIED, pb.PLAN_VIEW_BASIC, pb.PLAN_VIEW_FULL):
            raise InvalidInputError.one("view", f"must be one of {', '.join(pb.PlanView.keys())}, got {view}")
        before = parse_list_token(page_token)
        rows, next_seq = self.store.list(page_size=page_size or 50, before_seq=before, creator=creator)
        plans: list[pb.Plan] = []
        used = 0
        for row in rows:
            plan = self._to_proto(row, with_result=False, with_spec=view == pb.PLAN_VIEW_FULL)
            size = plan.ByteSize() + 8
            if size > MAX_LIST_PAGE_BYTES // 4:  # one stored spec of a quarter page or more: listed without it
                plan.ClearField("spec")
                size = plan.ByteSize() + 8
            if plans and used + size > MAX_LIST_PAGE_BYTES:
                return plans, format(rows[len(plans) - 1].seq, "x")
            plans.append(plan)
            used += size
        return plans, (format(next_seq, "x") if next_seq is not None else "")

    def snapshot(self, run_id: str) -> pb.Plan | None:
        """The plan as GetPlan returns it, shared by every watcher of the same change (so a
        thousand watchers of one plan cost one store read per change)."""
        live = self.runs.live(run_id)
        if live is not None:
            with live.cond:
                version = live.version
                cached = live.snapshot
            if cached is not None and cached[0] == version:
                return cached[1]
        row = self.store.get(run_id)
        if row is None:
            return None
        plan = self._to_proto(row)
        if live is not None:
            with live.cond:
                if live.version == version:
                    live.snapshot = (version, plan)
        return plan

    def watch(self, name: str, is_active: Callable[[], bool] = lambda: True, poll_s: float = 0.5) -> Iterator[pb.WatchPlanResponse]:
        """Progress events as they change, then the plan in its terminal state (the in-process,
        blocking form of WatchPlan, for benchmarks and embedding)."""
        run_id = parse_name(name)
        changed = threading.Event()
        unsubscribe = self.runs.subscribe(run_id, changed.set)
        cursor = WatchCursor()
        try:
            while is_active():
                changed.clear()
                plan = self.snapshot(run_id)
                if plan is None:
                    raise NotFoundError("plan", name)
                event = cursor.step(plan)
                if event is not None:
                    yield event
                if cursor.finished:
                    return
                if unsubscribe is None:
                    unsubscribe = self.runs.subscribe(run_id, changed.set)
                changed.wait(poll_s)
        finally:
            if unsubscribe is not None:
                unsubscribe()
