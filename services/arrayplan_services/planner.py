"""Plan runs: create, run in the background on an executor, store, watch, cancel, resume.

The server's thin servicer calls ``PlanRunner``; the CLI's ``--local`` mode runs the same server
in-process. A run's life: PENDING (stored) -> RUNNING (candidates enumerated, pruned, batches out
on the executor, progress stored as batches finish) -> SUCCEEDED (ranked result stored) | FAILED |
CANCELLED. Every run has one trace: the CreatePlan RPC span, a ``arrayplan.plan`` span, a PRODUCER
span per batch and the workers' CONSUMER spans below them.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

from google.protobuf import json_format, timestamp_pb2
from opentelemetry import context as otel_context
from opentelemetry import trace

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import recommend
from arrayplan_engine.catalog import Catalog, builtin_catalog
from arrayplan_engine.errors import InvalidInputError, NotFoundError, SearchSpaceTooLargeError

from . import numba_cache, telemetry
from .fanout import Cancelled, Executor, TaskCall
from .fanout.tasks import evaluate_candidates
from .server.convert import outcome_to_proto, plan_request_from_proto
from .store import TERMINAL_STATES, RunRow, RunStore

log = logging.getLogger(__name__)

PLAN_ID_RE = re.compile(r"^[a-z][a-z0-9-]{2,61}[a-z0-9]$")
DEFAULT_CANDIDATE_LIMIT = 20_000
TARGET_BATCH_S = 2.0
MAX_RESUME_ATTEMPTS = 2


@dataclass
class _Live:
    """In-memory state of a run this process is executing (watchers wait on ``cond``)."""

    cancel: threading.Event = field(default_factory=threading.Event)
    cond: threading.Condition = field(default_factory=threading.Condition)
    version: int = 0
    thread: threading.Thread | None = None


def _ts(t: float | None) -> timestamp_pb2.Timestamp | None:
    if t is None:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(t * 1e9))
    return ts


def plan_name(run_id: str) -> str:
    return f"plans/{run_id}"


def trace_from_store(store: RunStore, name: str) -> pb.GetPlanTraceResponse:
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
    if not name.startswith("plans/") or not PLAN_ID_RE.match(name[len("plans/"):]):
        raise InvalidInputError.one(field_name, f"must look like plans/ID (ID: 4-63 lowercase letters, digits, hyphens), got {name!r}")
    return name[len("plans/"):]


def batches(req: recommend.PlanRequest, candidates: list[recommend.Candidate], workers: int) -> list[list[recommend.Candidate]]:
    """Batches of about ``TARGET_BATCH_S`` seconds of work, and at least two per worker so the
    fan-out stays balanced and progress moves."""
    if not candidates:
        return []
    total_s = sum(recommend.estimated_cost_s(req, c) for c in candidates)
    count = max(2 * workers, math.ceil(total_s / TARGET_BATCH_S))
    count = min(count, len(candidates))
    size = math.ceil(len(candidates) / count)
    return [candidates[i:i + size] for i in range(0, len(candidates), size)]


class PlanRunner:
    def __init__(self, store: RunStore, executor: Executor, *, catalog: Catalog | None = None,
                 candidate_limit: int = DEFAULT_CANDIDATE_LIMIT) -> None:
        self.store = store
        self.executor = executor
        self.catalog = catalog or builtin_catalog()
        self.candidate_limit = candidate_limit
        self._live: dict[str, _Live] = {}
        self._lock = threading.Lock()
        self._stopping = False

    # -- create / run -----------------------------------------------------------------------
    def create(self, plan: pb.Plan, plan_id: str = "") -> pb.Plan:
        """Validate, check the size limit, store and start. Raises engine errors for bad input."""
        req = plan_request_from_proto(plan.spec, "plan.spec", self.catalog)
        # Defaults applied are stated in the answer: the stored spec carries the margin used.
        plan.spec.constraints.endurance_margin_fraction = req.constraints.endurance_margin_fraction
        total = recommend.count_candidates(req, self.catalog)
        if total > self.candidate_limit:
            raise SearchSpaceTooLargeError(total, self.candidate_limit)
        if plan_id:
            if not PLAN_ID_RE.match(plan_id):
                raise InvalidInputError.one("plan_id", f"must be 4-63 lowercase letters, digits or hyphens, starting with a letter; got {plan_id!r}")
            if self.store.exists(plan_id):
                raise InvalidInputError.one("plan_id", f"plans/{plan_id} already exists")
        run_id = plan_id or f"p-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        spec_json = json_format.MessageToJson(plan.spec, indent=None, preserving_proto_field_name=True)
        trace_id = telemetry.current_trace_id()
        self.store.create(run_id, spec_json, trace_id)
        self._start(run_id, req, otel_context.get_current())
        return self.get(plan_name(run_id))

    def _start(self, run_id: str, req: recommend.PlanRequest, ctx: otel_context.Context) -> None:
        live = _Live()
        with self._lock:
            self._live[run_id] = live
        live.thread = threading.Thread(target=self._run, args=(run_id, req, ctx, live), name=f"plan-{run_id}", daemon=True)
        live.thread.start()

    def _notify(self, live: _Live) -> None:
        with live.cond:
            live.version += 1
            live.cond.notify_all()

    def _run(self, run_id: str, req: recommend.PlanRequest, ctx: otel_context.Context, live: _Live) -> None:
        token = otel_context.attach(ctx)
        tracer = telemetry.tracer()
        try:
            with tracer.start_as_current_span("arrayplan.plan", attributes={"arrayplan.plan_id": run_id}) as span:
                trace_id = telemetry.current_trace_id()
                self.store.set_state(run_id, "RUNNING", trace_id=trace_id, attempts_increment=True)
                self._notify(live)
                try:
                    outcome = self._execute(run_id, req, live, span)
                except Cancelled:
                    if self._stopping:
                        # The server is shutting down: leave the run RUNNING so the next start resumes it.
                        span.set_attribute("arrayplan.interrupted_by_shutdown", True)
                        return
                    self.store.finish(run_id, "CANCELLED", error_message="cancelled by a client", error_reason="CANCELLED")
                    span.set_attribute("arrayplan.cancelled", True)
                    return
                result = outcome_to_proto(outcome)
                self.store.finish(run_id, "SUCCEEDED", result_json=json_format.MessageToJson(result, indent=None, preserving_proto_field_name=True))
                span.set_attribute("arrayplan.constraints_met", outcome.constraints_met)
        except Exception as exc:  # noqa: BLE001 - a failed run is recorded, never lost
            log.exception("plan %s failed", run_id)
            self.store.finish(run_id, "FAILED", error_message=f"{type(exc).__name__}: {exc}", error_reason="INTERNAL")
        finally:
            otel_context.detach(token)
            telemetry.flush()
            self._notify(live)
            with self._lock:
                self._live.pop(run_id, None)

    def _execute(self, run_id: str, req: recommend.PlanRequest, live: _Live, span: trace.Span) -> recommend.PlanOutcome:
        tracer = telemetry.tracer()
        catalog = recommend.request_catalog(req, self.catalog)  # plus the plan's custom drives
        with tracer.start_as_current_span("arrayplan.enumerate") as s:
            candidates = recommend.enumerate_candidates(req, catalog, limit=self.candidate_limit)
            pruning = recommend.prune_report(req, candidates, catalog)
            kept, pruned = list(pruning.kept), pruning.pruned
            s.set_attribute("arrayplan.candidate_count", len(candidates))
            s.set_attribute("arrayplan.pruned_count", pruned)
        progress: dict[str, object] = {"candidates_total": len(candidates), "candidates_pruned": pruned, "candidates_evaluated": 0,
                                       "candidates_to_evaluate": len(kept)}
        cold = numba_cache.cold_kernels() if kept else []
        if cold:  # the workers compile before the first batch returns: say so instead of sitting at 0
            progress["phase"] = (f"compiling the simulation kernels ({', '.join(cold)}) into {numba_cache.default_cache_dir()}: "
                                 "once per install, about a minute; `make setup` does it ahead")
            span.set_attribute("arrayplan.compiling_kernels", len(cold))
        self.store.set_progress(run_id, progress)
        self._notify(live)
        span.set_attribute("arrayplan.candidate_count", len(candidates))
        results: list[recommend.Evaluation] = []
        calls = [TaskCall(batch=b, weight=len(b)) for b in batches(req, kept, self.executor.worker_count)]

        def on_result(call: TaskCall, value: tuple[list[recommend.Evaluation], list[dict]]) -> None:
            evaluations, spans = value
            results.extend(evaluations)
            if spans:
                self.store.insert_spans(spans)
            progress["candidates_evaluated"] = int(progress["candidates_evaluated"]) + call.weight  # type: ignore[call-overload]
            progress.pop("phase", None)
            self.store.set_progress(run_id, progress)
            self._notify(live)

        with tracer.start_as_current_span("arrayplan.fanout", kind=trace.SpanKind.PRODUCER,
                                          attributes={"arrayplan.task_count": len(calls), "arrayplan.candidate_count": len(kept)}):
            carrier = telemetry.inject_carrier()
            if live.cancel.is_set():
                raise Cancelled()
            self.executor.run(evaluate_candidates, (req, tuple(catalog)), calls, carrier, on_result=on_result, cancel=live.cancel)
        with tracer.start_as_current_span("arrayplan.rank"):
            results.sort(key=lambda e: e.candidate.index)
            return recommend.rank(req, results, candidates_total=len(candidates), candidates_pruned=pruned, catalog=catalog,
                                  pruning=pruning)

    # -- read -------------------------------------------------------------------------------
    def _to_proto(self, row: RunRow, *, with_result: bool = True) -> pb.Plan:
        plan = pb.Plan(name=plan_name(row.id), state=pb.Plan.State.Value(f"STATE_{row.state}"), trace_id=row.trace_id,
                       error_message=row.error_message, error_reason=row.error_reason)
        json_format.Parse(row.spec_json, plan.spec)
        json_format.ParseDict(json.loads(row.progress_json or "{}"), plan.progress)
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
        return self._to_proto(row)

    def trace(self, name: str) -> pb.GetPlanTraceResponse:
        """The stored spans of a plan's run (GetPlanTrace)."""
        return trace_from_store(self.store, name)

    def list(self, page_size: int, page_token: str) -> tuple[list[pb.Plan], str]:
        if page_size < 0 or page_size > 1000:
            raise InvalidInputError.one("page_size", f"must be in [0, 1000], got {page_size}")
        before: int | None = None
        if page_token:
            try:
                before = int(page_token, 16)
            except ValueError:
                raise InvalidInputError.one("page_token", "is not a token this server issued") from None
        rows, next_seq = self.store.list(page_size=page_size or 50, before_seq=before)
        return [self._to_proto(r, with_result=False) for r in rows], (format(next_seq, "x") if next_seq is not None else "")

    def cancel(self, name: str) -> pb.Plan:
        run_id = parse_name(name)
        row = self.store.get(run_id)
        if row is None:
            raise NotFoundError("plan", name)
        with self._lock:
            live = self._live.get(run_id)
        if live is not None:
            live.cancel.set()
            if live.thread is not None:
                live.thread.join(timeout=30)
        elif row.state not in TERMINAL_STATES:
            self.store.finish(run_id, "CANCELLED", error_message="cancelled by a client", error_reason="CANCELLED")
        return self.get(name)

    def watch(self, name: str, is_active: callable = lambda: True, poll_s: float = 0.5) -> Iterator[pb.WatchPlanResponse]:
        """Progress events as they change, then the plan in its terminal state."""
        run_id = parse_name(name)
        row = self.store.get(run_id)
        if row is None:
            raise NotFoundError("plan", name)
        last_progress = None
        seen = -1
        while is_active():
            with self._lock:
                live = self._live.get(run_id)
            if live is not None:
                with live.cond:
                    if live.version == seen:
                        live.cond.wait(timeout=poll_s)
                    seen = live.version
            row = self.store.get(run_id)
            assert row is not None
            plan = self._to_proto(row)
            if row.state in TERMINAL_STATES:
                yield pb.WatchPlanResponse(plan=plan, trace_id=row.trace_id)
                return
            if plan.progress != last_progress:
                last_progress = pb.PlanProgress()
                last_progress.CopyFrom(plan.progress)
                yield pb.WatchPlanResponse(progress=plan.progress, trace_id=row.trace_id)
            if live is None:
                time.sleep(poll_s)

    # -- restart ----------------------------------------------------------------------------
    def resume_interrupted(self) -> list[str]:
        """Runs left PENDING/RUNNING by a dead server: resumed once, then marked FAILED."""
        resumed = []
        for row in self.store.interrupted():
            if row.attempts >= MAX_RESUME_ATTEMPTS:
                self.store.finish(row.id, "FAILED", error_reason="SERVER_RESTARTED",
                                  error_message=f"the server stopped while this plan ran ({row.attempts} attempts); create it again")
                continue
            spec = pb.PlanSpec()
            try:
                json_format.Parse(row.spec_json, spec)
                req = plan_request_from_proto(spec, "plan.spec", self.catalog)
            except Exception as exc:  # noqa: BLE001
                self.store.finish(row.id, "FAILED", error_reason="SERVER_RESTARTED",
                                  error_message=f"could not resume after a restart: {exc}")
                continue
            log.warning("resuming plan %s interrupted by a server restart", row.id)
            tracer = telemetry.tracer()
            with tracer.start_as_current_span("arrayplan.resume", attributes={"arrayplan.plan_id": row.id}):
                self._start(row.id, req, otel_context.get_current())
            resumed.append(row.id)
        return resumed

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Stop running plans without finishing them: they stay RUNNING and resume on restart."""
        self._stopping = True
        with self._lock:
            lives = list(self._live.values())
        for live in lives:
            live.cancel.set()
        for live in lives:
            if live.thread is not None:
                live.thread.join(timeout=timeout_s)
