"""Plan runs: create, run in the background on an executor, store, watch, cancel, resume.

The server's thin servicer calls ``PlanRunner``; the CLI's ``--local`` mode runs the same server
in-process. A run's life: PENDING (stored) -> RUNNING (candidates enumerated, pruned, batches out
on the executor, progress stored as batches finish) -> SUCCEEDED (ranked result stored) | FAILED |
CANCELLED. Each finished batch is checkpointed in the store (its evaluations), so a run that a dead
server left RUNNING resumes on the next start with only the candidates no batch finished; the
answer is the one an undisturbed run gives, bit for bit. Every run has one trace: the CreatePlan
RPC span, a ``arrayplan.plan`` span, a PRODUCER span per batch and the workers' CONSUMER spans
below them.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from opentelemetry import context as otel_context
from opentelemetry import trace

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import candidates, evaluation, hdd_comparison, plan_request, ranking, recommend
from arrayplan_engine.catalog import Catalog, Drive, builtin_catalog
from arrayplan_engine.errors import InvalidInputError, NotFoundError, SearchSpaceTooLargeError

from .. import numba_cache, telemetry
from ..admission import Admission, AdmissionFullError
from ..api.convert import outcome_to_proto, plan_request_from_proto
from ..api.errors import PermissionDeniedError, PlanQueueFullError, new_error_id
from ..fanout import Cancelled, Executor, ExecutorUnavailableError, TaskCall
from ..fanout.tasks import evaluate_candidates, size_hdd
from ..store import TERMINAL_STATES, PlanStore, RunRow, StoreUnavailableError
from ..store import checkpoints as ckpt
from .reads import PLAN_ID_RE, LiveRun, PlanReads, WatchCursor, parse_list_token, parse_name, plan_name, trace_from_store

# Re-exported for the callers that knew them here (the reads live in reads.py).
__all__ = ["DEFAULT_CANDIDATE_LIMIT", "DEFAULT_MAX_QUEUED_PLANS", "DEFAULT_MAX_RUNNING_PLANS", "PLAN_ID_RE", "PlanRunner",
           "WatchCursor", "batches", "parse_list_token", "parse_name", "plan_name", "trace_from_store"]

log = logging.getLogger(__name__)

DEFAULT_CANDIDATE_LIMIT = 20_000
TARGET_BATCH_S = 2.0
MAX_RESUME_ATTEMPTS = 2
DEFAULT_MAX_RUNNING_PLANS = 4
DEFAULT_MAX_QUEUED_PLANS = 64
STORE_RETRY_S = 2.0


@dataclass
class _Live:
    """In-memory state of a run this process is executing (watchers wait on ``cond``)."""

    cancel: threading.Event = field(default_factory=threading.Event)
    cond: threading.Condition = field(default_factory=threading.Condition)
    version: int = 0
    thread: threading.Thread | None = None
    listeners: list[Callable[[], None]] = field(default_factory=list)
    snapshot: tuple[int, pb.Plan] | None = None
    # Another server holds the run now, or it ended there (a shared store's lease was lost): stop
    # without writing to it.
    lease_lost: bool = False
    # This start counted an attempt in the store (a crash from here on counts towards the limit;
    # a graceful stop takes it back: ``shutdown``).
    counted: bool = False


def batches(req: plan_request.PlanRequest, cands: list[candidates.Candidate], workers: int,
            catalog: Catalog | None = None) -> list[list[candidates.Candidate]]:
    """Batches of about ``TARGET_BATCH_S`` seconds of work by the cost model
    (``evaluation.estimated_cost_s``), and at least two per worker so the fan-out stays balanced
    and progress moves. Consecutive candidates are cut where the running cost passes each
    batch's share, so a batch of large arrays holds fewer of them."""
    if not cands:
        return []
    costs = [evaluation.estimated_cost_s(req, c, catalog) for c in cands]
    total_s = sum(costs)
    count = min(len(cands), max(2 * workers, math.ceil(total_s / TARGET_BATCH_S)))
    share = total_s / count
    out: list[list[candidates.Candidate]] = [[]]
    running = 0.0
    for c, cost_s in zip(cands, costs, strict=True):
        if out[-1] and running + cost_s / 2 > share * len(out) and len(out) < count:
            out.append([])
        out[-1].append(c)
        running += cost_s
    return out


# Span names of the engine's stages (``recommend.STAGES``) in a plan's trace.
_STAGE_SPANS = {"candidates": "arrayplan.enumerate", "search": "arrayplan.fanout", "hdd": "arrayplan.hdd", "rank": "arrayplan.rank"}


class _RunHooks:
    """One run's ``recommend.PlanHooks``: the search's waves fanned out as executor batches
    (checkpointed as they finish), the hard-disk sizings as executor tasks beside them, a span
    per stage, progress in the store."""

    def __init__(self, runner: PlanRunner, run_id: str, req: plan_request.PlanRequest, catalog: Catalog, live: _Live,
                 span: trace.Span) -> None:
        self.runner, self.run_id, self.req, self.catalog, self.live, self.span = runner, run_id, req, catalog, live, span
        self.fingerprint = ckpt.fingerprint(req, catalog)
        self.progress: dict[str, object] = {}
        self.saving = True  # checkpoints are written until the run's bound is reached
        self.tasks = 0

    def hooks(self) -> recommend.PlanHooks:
        return recommend.PlanHooks(evaluate_wave=self.wave, size_hdds=self.size_hdds, restore=self.restore, stage=self.stage)

    def _publish(self) -> None:
        self.runner._set_progress(self.run_id, self.progress)  # noqa: SLF001 - the runner's own hooks
        self.runner._notify(self.live)  # noqa: SLF001

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[dict[str, Any]]:
        """A stage of the engine's sequence under its span; what it did goes into the span and the progress."""
        out: dict[str, Any] = {}
        span_name = _STAGE_SPANS.get(name)
        if span_name is None:
            yield out
            return
        kind = trace.SpanKind.PRODUCER if name == "search" else trace.SpanKind.INTERNAL
        with telemetry.tracer().start_as_current_span(span_name, kind=kind) as s:
            if name == "search":
                s.set_attribute("arrayplan.candidate_count", int(self.progress.get("candidates_to_evaluate", 0)))  # type: ignore[call-overload]
                s.set_attribute("arrayplan.exhaustive", self.req.exhaustive)
            yield out
            for k, v in out.items():
                s.set_attribute(f"arrayplan.{k}", v)
            if name == "candidates":
                s.set_attribute("arrayplan.candidate_count", out["candidates_total"])
                s.set_attribute("arrayplan.pruned_count", out["candidates_pruned"])
                self.span.set_attribute("arrayplan.candidate_count", out["candidates_total"])
                self.progress.update(candidates_total=out["candidates_total"], candidates_pruned=out["candidates_pruned"])
            elif name == "search":
                s.set_attribute("arrayplan.task_count", self.tasks)
                s.set_attribute("arrayplan.wave_count", out["waves"])
                # what the search simulated is the plan's work: the progress ends with it done
                self.progress.update(candidates_evaluated=out["simulated"], candidates_to_evaluate=out["simulated"],
                                     candidates_not_simulated=out["not_simulated"])
                self.runner._set_progress(self.run_id, self.progress)  # noqa: SLF001

    def restore(self, kept: Sequence[candidates.Candidate]) -> dict[int, evaluation.Evaluation]:
        """A resumed run starts from what its earlier attempt checkpointed (progress included),
        and says so while the kernels compile."""
        restored = self.runner._restore_checkpoints(self.run_id, self.fingerprint, list(kept))  # noqa: SLF001
        self.span.set_attribute("arrayplan.candidates_from_checkpoints", len(restored))
        if restored:
            log.warning("plan %s: %d of %d candidates restored from checkpoints; evaluating the other %d", self.run_id,
                        len(restored), len(kept), len(kept) - len(restored))
        self.progress.update(candidates_evaluated=len(restored), candidates_to_evaluate=len(kept))
        cold = numba_cache.cold_kernels() if len(restored) < len(kept) else []
        if cold:  # the workers compile before the first batch returns: say so instead of sitting at 0
            self.progress["phase"] = (f"compiling the simulation kernels ({', '.join(cold)}) into "
                                      f"{numba_cache.default_cache_dir()}: once per install, about a minute; `make setup` does it ahead")
            self.span.set_attribute("arrayplan.compiling_kernels", len(cold))
        self._publish()
        return restored

    def _store_spans(self, spans: list[dict[str, Any]]) -> None:
        if spans:
            try:
                self.runner.store.insert_spans(spans)
            except StoreUnavailableError:
                pass  # spans are diagnostics: dropped while the store cannot write

    def wave(self, todo: Sequence[candidates.Candidate], simulated_s: float) -> list[evaluation.Evaluation]:
        """One wave of the search, fanned out as executor batches sized by the cost model."""
        req = self.req if simulated_s == self.req.simulated_seconds else dataclasses.replace(self.req, simulated_seconds=simulated_s)
        executor = self.runner.executor
        calls = [TaskCall(batch=b, weight=len(b)) for b in batches(req, list(todo), executor.worker_count, self.catalog)]
        self.tasks += len(calls)
        out: list[evaluation.Evaluation] = []

        def collect(call: TaskCall, value: tuple[list[evaluation.Evaluation], list[dict[str, Any]]]) -> None:
            evaluations, spans = value
            out.extend(evaluations)
            if self.saving and evaluations:
                self.saving = self.runner._checkpoint(self.run_id, self.fingerprint, evaluations)  # noqa: SLF001
            self._store_spans(spans)
            self.progress["candidates_evaluated"] = int(self.progress["candidates_evaluated"]) + call.weight  # type: ignore[call-overload]
            self.progress.pop("phase", None)
            self._publish()

        if self.live.cancel.is_set():
            raise Cancelled()
        executor.run(evaluate_candidates, (req, tuple(self.catalog)), calls, telemetry.inject_carrier(), on_result=collect,
                     cancel=self.live.cancel)
        return out

    def size_hdds(self, req: plan_request.PlanRequest, best: evaluation.Evaluation, catalog: Catalog,
                  disks: Sequence[Drive]) -> Callable[[], builtins.list[hdd_comparison.HddEquivalence | None]]:
        """The hard-disk comparison's sizings, one executor task per disk, started on a thread of
        their own so they run beside the search's later waves; returns the wait."""
        calls = [TaskCall(batch=d.name, weight=0) for d in disks]
        results: dict[str, hdd_comparison.HddEquivalence | None] = {}
        failed: builtins.list[BaseException] = []
        carrier = telemetry.inject_carrier()  # the tasks' spans are children of the search's span they run beside

        def collect(call: TaskCall, value: tuple[hdd_comparison.HddEquivalence | None, builtins.list[dict[str, Any]]]) -> None:
            results[call.batch] = value[0]
            self._store_spans(value[1])

        def work() -> None:
            try:
                self.runner.executor.run(size_hdd, (req, tuple(catalog), best), calls, carrier, on_result=collect,
                                         cancel=self.live.cancel)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting stage, which raises it
                failed.append(exc)

        thread = threading.Thread(target=work, name=f"plan-{self.run_id}-hdd", daemon=True)
        thread.start()

        def wait() -> builtins.list[hdd_comparison.HddEquivalence | None]:
            thread.join()
            if failed:
                raise failed[0]
            return [results[d.name] for d in disks]
        return wait


class PlanRunner:
    def __init__(self, store: PlanStore, executor: Executor, *, catalog: Catalog | None = None,
                 candidate_limit: int = DEFAULT_CANDIDATE_LIMIT, max_running: int = DEFAULT_MAX_RUNNING_PLANS,
                 max_queued: int = DEFAULT_MAX_QUEUED_PLANS, owner: str = "", lease_s: float = 0.0) -> None:
        if max_running < 1 or max_queued < 0:
            raise ValueError(f"max_running must be >= 1 and max_queued >= 0, got {max_running}, {max_queued}")
        # The server's admission policy (shared with the heavy calls): run slots and a FIFO queue
        # of run ids; a queued run's request and trace context wait in ``_waiting``.
        self.admission: Admission[str] = Admission(max_running, max_queued, mean_run_s=30.0)
        self.store = store
        self.executor = executor
        self.catalog = catalog or builtin_catalog()
        self.candidate_limit = candidate_limit
        self.max_running = max_running
        self.max_queued = max_queued
        # The lease this server takes on the runs it holds (store/base.py); renewed by the server's
        # lease keeper (server/leases.py) when the store is shared.
        self.owner = owner or f"server-{uuid.uuid4().hex[:12]}"
        self.lease_s = lease_s
        self._live: dict[str, _Live] = {}
        self._waiting: dict[str, tuple[plan_request.PlanRequest, otel_context.Context]] = {}
        self._lock = threading.Lock()
        self._stopping = False
        self._progress_mem: dict[str, dict[str, Any]] = {}
        # GetPlan, ListPlans, GetPlanTrace, WatchPlan: the store's, with this queue's live state
        self.reads = PlanReads(store, self)

    # -- create / run -----------------------------------------------------------------------
    def create(self, plan: pb.Plan, plan_id: str = "", creator: str = "") -> pb.Plan:
        """Validate, check the size limit, admit (run, queue or refuse), store and start. Raises
        engine errors for bad input, PlanQueueFullError when the run queue is full."""
        if plan_id and not PLAN_ID_RE.fullmatch(plan_id):
            raise InvalidInputError.one("plan_id", f"must be 4-63 lowercase letters, digits or hyphens, starting with a letter; got {plan_id[:200]!r}")
        req = plan_request_from_proto(plan.spec, "plan.spec", self.catalog)  # its bounds checked there, every violation at once
        # Defaults applied are stated in the answer: the stored spec carries the margin used.
        plan.spec.constraints.endurance_margin_fraction = req.constraints.endurance_margin_fraction
        plan.spec.constraints.max_array_loss_probability = req.constraints.max_array_loss_probability
        plan.spec.constraints.max_fill_fraction = req.constraints.max_fill_fraction
        total = candidates.count_candidates(req, self.catalog)
        if total > self.candidate_limit:
            raise SearchSpaceTooLargeError(total, self.candidate_limit)
        if plan_id and self.store.exists(plan_id):
            raise InvalidInputError.one("plan_id", f"plans/{plan_id} already exists")
        run_id = plan_id or f"p-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
        spec_json = json_format.MessageToJson(plan.spec, indent=None, preserving_proto_field_name=True)
        trace_id = telemetry.current_trace_id()
        with self._lock:
            try:
                runs_now = self.admission.admit(run_id)
            except AdmissionFullError as exc:
                raise PlanQueueFullError(exc.running, exc.queued, exc.retry_after_s) from None
            try:
                self.store.create(run_id, spec_json, trace_id, creator, lease_owner=self.owner, lease_s=self.lease_s)
            except BaseException:
                if runs_now:  # nothing was queued behind it meanwhile (the lock is held): the slot goes back
                    self.admission.finish()
                    self.admission.hand_over()
                else:
                    self.admission.leave(run_id)
                raise
            self._start_or_wait(run_id, req, otel_context.get_current(), runs_now)
        return self.reads.get(plan_name(run_id))

    def _admit(self, run_id: str, req: plan_request.PlanRequest, ctx: otel_context.Context) -> None:
        """A resumed run: started now or queued, beyond the queue's limit if need be (caller holds ``_lock``)."""
        self._start_or_wait(run_id, req, ctx, self.admission.admit(run_id, force=True))

    def _start_or_wait(self, run_id: str, req: plan_request.PlanRequest, ctx: otel_context.Context, runs_now: bool) -> None:
        live = _Live()
        self._live[run_id] = live
        if runs_now:
            self._launch(run_id, req, ctx, live)
        else:
            self._waiting[run_id] = (req, ctx)

    def _launch(self, run_id: str, req: plan_request.PlanRequest, ctx: otel_context.Context, live: _Live) -> None:
        live.thread = threading.Thread(target=self._run, args=(run_id, req, ctx, live), name=f"plan-{run_id}", daemon=True)
        live.thread.start()

    def _start_next(self) -> None:
        """A run slot is free: it goes to the first queued plan still wanted (caller holds
        ``_lock``); every queued plan's watchers hear that their position moved."""
        if self._stopping:
            self.admission.clear_queue()
        while (run_id := self.admission.hand_over()) is not None:
            req, ctx = self._waiting.pop(run_id)
            live = self._live.get(run_id)
            if live is None or live.cancel.is_set():
                self.admission.finish()
                continue
            self._launch(run_id, req, ctx, live)
            break
        self._notify_queued()

    def _notify_queued(self) -> None:
        for queued_id in self.admission.queued_items():
            queued = self._live.get(queued_id)
            if queued is not None:
                self._notify(queued)

    def _dequeue(self, run_id: str) -> bool:
        """Take a queued run out of the queue before it started (caller holds ``_lock``)."""
        if not self.admission.leave(run_id):
            return False
        self._waiting.pop(run_id, None)
        self._live.pop(run_id, None)
        return True

    def queue_position(self, run_id: str) -> int:
        with self._lock:
            return self.admission.position(run_id)

    def _notify(self, live: _Live) -> None:
        with live.cond:
            live.version += 1
            live.cond.notify_all()
            listeners = list(live.listeners)
        for fn in listeners:
            fn()

    def subscribe(self, run_id: str, fn: Callable[[], None]) -> Callable[[], None] | None:
        """Call ``fn`` (from any thread) whenever the run changes; returns the unsubscribe
        function, or None when this process is not executing or queueing the run."""
        with self._lock:
            live = self._live.get(run_id)
        if live is None:
            return None
        with live.cond:
            live.listeners.append(fn)

        def unsubscribe() -> None:
            with live.cond:
                if fn in live.listeners:
                    live.listeners.remove(fn)
        return unsubscribe

    def _store_retry(self, what: Callable[[], object], live: _Live) -> bool:
        """Run a store write, waiting out a full or read-only store (the work is kept in memory
        meanwhile). Returns False when the server stops first (the run stays resumable)."""
        while True:
            try:
                what()
                return True
            except StoreUnavailableError:
                if self._stopping:
                    return False
                log.warning("run store unavailable; holding the plan's state in memory and retrying in %.0f s", STORE_RETRY_S)
                time.sleep(STORE_RETRY_S)
                try:
                    self.store.probe()
                except Exception:  # noqa: BLE001 - the probe is best effort
                    pass

    def _run(self, run_id: str, req: plan_request.PlanRequest, ctx: otel_context.Context, live: _Live) -> None:
        token = otel_context.attach(ctx)
        tracer = telemetry.tracer()
        started = time.monotonic()
        try:
            with tracer.start_as_current_span("arrayplan.plan", attributes={"arrayplan.plan_id": run_id}) as span:
                trace_id = telemetry.current_trace_id()
                if not self._store_retry(lambda: self.store.set_state(run_id, "RUNNING", trace_id=trace_id, attempts_increment=True), live):
                    return
                live.counted = True
                self._notify(live)
                try:
                    outcome = self._execute(run_id, req, live, span)
                except Cancelled:
                    if self._stopping or live.lease_lost:
                        # The server is shutting down: leave the run RUNNING so the next start resumes it
                        # (or, its lease lost, the run is another server's now or already ended there).
                        span.set_attribute("arrayplan.interrupted_by_shutdown", True)
                        return
                    self._store_retry(lambda: self.store.finish(run_id, "CANCELLED", error_message="cancelled by a client",
                                                                error_reason="CANCELLED"), live)
                    span.set_attribute("arrayplan.cancelled", True)
                    return
                result = outcome_to_proto(outcome)
                if req.cluster is not None:  # arrays that span servers, ranked with the boxes
                    self._add_clusters(req, result, live)
                result_json = json_format.MessageToJson(result, indent=None, preserving_proto_field_name=True)
                self._store_retry(lambda: self.store.finish(run_id, "SUCCEEDED", result_json=result_json,
                                                                 progress=self._progress_mem.get(run_id)), live)
                span.set_attribute("arrayplan.constraints_met", outcome.constraints_met)
        except ExecutorUnavailableError as exc:
            log.error("plan %s failed: %s", run_id, exc)
            message, reason = str(exc), exc.reason_code
            self._store_retry(lambda: self.store.finish(run_id, "FAILED", error_message=message, error_reason=reason), live)
        except Exception:  # noqa: BLE001 - a failed run is recorded, never lost
            error_id = new_error_id()
            log.exception("plan %s failed (error id %s)", run_id, error_id)
            # The client sees the error id only: the exception may carry tracebacks, paths, pids.
            self._store_retry(lambda: self.store.finish(
                run_id, "FAILED", error_reason="INTERNAL",
                error_message=f"internal error {error_id} while running the plan (the server log has the details under this id)"), live)
        finally:
            otel_context.detach(token)
            telemetry.flush()
            self._notify(live)
            with self._lock:
                self._live.pop(run_id, None)
                self._progress_mem.pop(run_id, None)
                self.admission.finish(elapsed_s=time.monotonic() - started)
                self._start_next()

    def _execute(self, run_id: str, req: plan_request.PlanRequest, live: _Live, span: trace.Span) -> ranking.PlanOutcome:
        """The engine's stage sequence (``recommend.plan``) with this server's hooks (``_RunHooks``):
        the search's waves and the hard-disk sizings on the executor, checkpoints, progress, a span
        per stage, cancellation (the executor raises ``Cancelled`` once ``live.cancel`` is set)."""
        catalog = plan_request.request_catalog(req, self.catalog)  # plus the plan's custom drives
        hooks = _RunHooks(self, run_id, req, catalog, live, span).hooks()
        return recommend.plan(req, catalog, limit=self.candidate_limit, hooks=hooks)

    def _add_clusters(self, req: plan_request.PlanRequest, result: pb.PlanResult, live: _Live) -> None:
        """Cluster candidates (fanout/cluster_task.py, on the executor) merged into ``result``."""
        from ..api.cluster_convert import merge_clusters
        from ..fanout.cluster_task import evaluate_cluster_candidates

        catalog = plan_request.request_catalog(req, self.catalog)
        found: list[Any] = []
        with telemetry.tracer().start_as_current_span("arrayplan.clusters") as s:
            self.executor.run(evaluate_cluster_candidates, (req, tuple(catalog)), [TaskCall(batch=[0], weight=1)],
                              telemetry.inject_carrier(), on_result=lambda _call, out: found.append(out), cancel=live.cancel)
            s.set_attribute("arrayplan.cluster_evaluated", found[0].evaluated)
            s.set_attribute("arrayplan.cluster_checked", len(found[0].recommendations))
        merge_clusters(result, found[0], max_recommendations=req.max_recommendations, objective=str(req.objective.value))

    def _restore_checkpoints(self, run_id: str, fingerprint: str,
                             kept: list[candidates.Candidate]) -> dict[int, evaluation.Evaluation]:
        """The evaluations a previous attempt of this run checkpointed, by candidate index: only
        those written with this run's fingerprint whose candidate is the one enumerated now at that
        index (anything else is evaluated again)."""
        try:
            rows = self.store.checkpoints(run_id)
        except StoreUnavailableError:
            return {}
        if not rows:
            return {}
        by_index = {c.index: c for c in kept}
        out: dict[int, evaluation.Evaluation] = {}
        ignored = 0
        for first_index, count, stored_fingerprint, payload in rows:
            if stored_fingerprint != fingerprint:
                ignored += count
                continue
            try:
                evaluations = ckpt.decode(payload)
            except ckpt.CheckpointFormatError as exc:
                log.warning("plan %s: checkpoint at candidate %d ignored: %s", run_id, first_index, exc)
                ignored += count
                continue
            for e in evaluations:
                if by_index.get(e.candidate.index) == e.candidate:
                    out[e.candidate.index] = e
                else:
                    ignored += 1
        if ignored:
            log.warning("plan %s: %d checkpointed candidate(s) ignored (written by another engine, catalog or request "
                        "reading); they are evaluated again", run_id, ignored)
        return out

    def _checkpoint(self, run_id: str, fingerprint: str, evaluations: list[evaluation.Evaluation]) -> bool:
        """Store a finished batch; returns False once the run's checkpoint bound is reached (the
        run goes on; a resume evaluates the rest again). A store that cannot write skips it."""
        try:
            stored = self.store.add_checkpoint(run_id, first_index=min(e.candidate.index for e in evaluations),
                                               candidate_count=len(evaluations), fingerprint=fingerprint,
                                               payload=ckpt.encode(evaluations))
        except StoreUnavailableError:
            return True  # this batch is lost to a resume only; later ones may be written
        if not stored:
            log.warning("plan %s: checkpoint bound reached (or the run ended); its further batches are not checkpointed", run_id)
        return stored

    def _set_progress(self, run_id: str, progress: dict[str, Any]) -> None:
        """Progress is best effort: while the store cannot write, watchers still hear of it from
        memory and the final state is written once the store recovers."""
        self._progress_mem[run_id] = dict(progress)
        try:
            self.store.set_progress(run_id, progress)
        except StoreUnavailableError:
            pass

    # -- the live state the reads use (reads.LiveRuns), and the reads themselves ----------------
    def live(self, run_id: str) -> LiveRun | None:
        with self._lock:
            return self._live.get(run_id)

    def live_progress(self, run_id: str) -> dict[str, Any] | None:
        return self._progress_mem.get(run_id)

    def cancel(self, name: str, *, caller: str = "", admin: bool = True) -> pb.Plan:
        """Cancel a plan; unless ``admin``, only its creator (``caller``) may."""
        run_id = parse_name(name)
        row = self.store.get(run_id)
        if row is None:
            raise NotFoundError("plan", name)
        if not admin and row.creator != caller:
            raise PermissionDeniedError(f"{name} was created by another caller; only its creator or an admin token may cancel it")
        with self._lock:
            live = self._live.get(run_id)
            queued = self._dequeue(run_id)
        if queued:
            assert live is not None
            live.cancel.set()
            self.store.finish(run_id, "CANCELLED", error_message="cancelled by a client before it started", error_reason="CANCELLED")
            self._notify(live)
            with self._lock:
                self._notify_queued()
        elif live is not None:
            live.cancel.set()
            if live.thread is not None:
                live.thread.join(timeout=30)
        elif row.state not in TERMINAL_STATES:
            self.store.finish(run_id, "CANCELLED", error_message="cancelled by a client", error_reason="CANCELLED")
        return self.reads.get(name)

    # -- restart ----------------------------------------------------------------------------
    def resume_interrupted(self) -> builtins.list[str]:
        """Runs left PENDING/RUNNING by a dead server: resumed once, then marked FAILED. With a
        shared store, only those whose lease has expired or was released (the others are held by
        live servers; the lease keeper claims them when they expire)."""
        dropped = self.store.drop_stale_checkpoints()
        if dropped:
            log.warning("dropped %d checkpoint(s) of plans that are no longer running", dropped)
        rows = self.store.claim_orphans(self.owner, self.lease_s, include_unexpired=not self.store.shared, limit=1 << 30)
        return self.resume_rows(rows)

    def held_run_ids(self) -> builtins.list[str]:
        """The runs this server executes or queues (whose leases it renews)."""
        with self._lock:
            return list(self._live)

    def lose_lease(self, run_id: str) -> None:
        """The run's lease is gone (another server took it over, or it ended there): stop it here
        without writing to it."""
        with self._lock:
            live = self._live.get(run_id)
            if live is None or live.lease_lost:  # gone, or already stopping (its batch still finishing)
                return
            live.lease_lost = True
            live.cancel.set()
            self._dequeue(run_id)
        log.warning("plan %s: its lease is lost (cancelled or taken over through another server); stopped here", run_id)
        self._notify(live)

    def resume_rows(self, rows: builtins.list[RunRow]) -> builtins.list[str]:
        """Resume runs whose lease this server has just claimed (from their checkpoints)."""
        resumed = []
        for row in rows:
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
            batches_done, candidates_done, _ = self.store.checkpoint_summary(row.id)
            log.warning("resuming plan %s interrupted by a server restart (%d candidate(s) in %d checkpointed batch(es))",
                        row.id, candidates_done, batches_done)
            tracer = telemetry.tracer()
            with tracer.start_as_current_span("arrayplan.resume", attributes={"arrayplan.plan_id": row.id}), self._lock:
                self._admit(row.id, req, otel_context.get_current())  # queued beyond the run slots, never refused
            resumed.append(row.id)
        return resumed

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Stop running plans without finishing them: they stay RUNNING and resume on restart (with
        a shared store their leases are released, so another server resumes them at once)."""
        self._stopping = True
        with self._lock:
            for run_id in self.admission.clear_queue():  # queued plans stay PENDING in the store and resume on restart
                self._waiting.pop(run_id, None)
            held = dict(self._live)
        for live in held.values():
            live.cancel.set()
        for live in held.values():
            if live.thread is not None:
                live.thread.join(timeout=timeout_s)
        # A graceful stop (SIGTERM of a rolling update) hands the plan over with its checkpoints: it
        # is not a crash, so the attempt its start counted is taken back (kill -9 never gets here,
        # so crash loops still end in SERVER_RESTARTED after MAX_RESUME_ATTEMPTS).
        for run_id, live in held.items():
            if live.counted and not live.lease_lost:
                try:
                    self.store.forgive_attempt(run_id)
                except StoreUnavailableError:
                    pass  # counted as an interruption then: the store could not be written
        if self.store.shared:
            for run_id, live in held.items():
                if not live.lease_lost:
                    try:
                        self.store.release_lease(run_id, self.owner)
                    except StoreUnavailableError:
                        pass  # the lease expires instead
