"""The CapacityPlan controller: watch CapacityPlans, run each generation once on the planner, and
write what happened into status.

* **Watch.** List, then watch from the list's resourceVersion; every event moves the
  resourceVersion on (bookmarks too). A watch that ends is re-opened from where it stopped; a 410
  Gone (the version has been compacted away) falls back to a fresh list. At start-up the watch
  resumes from the resourceVersion the last leader saved in its Lease, so events that happened
  while no controller ran (a deleted plan whose run must be cancelled, an edit) are still seen.
* **Reconcile** is level-based and idempotent. A generation's run id is derived from the object's
  uid and generation (``resource.run_id``): before creating a run the controller asks the planner
  for that id, so a restart between "run created" and "status written" adopts the run instead of
  starting it again, and ``status.observedGeneration`` with a terminal phase ends the story for a
  generation. A generation is never run twice.
* **Runs** go to the planner's gRPC service (``CreatePlan`` with the run id, ``WatchPlan`` without
  ``cancel_on_disconnect``): the run is stored, traced and resumed by the planner like any other,
  and a controller restart does not disturb it. One tracker thread per running generation streams
  progress into status and writes the terminal status.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc

from ..connection import field_violations
from ..retry import Backoff, BackoffPolicy
from . import resource as r

log = logging.getLogger(__name__)
# Waits between tries of a failed CapacityPlan watch (arrayplan_services.retry).
WATCH_BACKOFF = BackoffPolicy(initial_s=1.0, max_s=30.0)


def _violations(exc: grpc.RpcError) -> list[tuple[str, str]]:
    """The server's field violations with API field paths renamed to the resource's."""
    return [(r.field_from_api(f), reason) for f, reason in field_violations(exc)]


@dataclass
class _Tracker:
    uid: str
    name: str
    generation: int
    run_name: str
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    call: Any = None

    @property
    def alive(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def halt(self) -> None:
        self.stop.set()
        call = self.call
        if call is not None:
            call.cancel()  # ends our stream only: the run goes on (no cancel_on_disconnect)


class Controller:
    def __init__(self, custom_api: Any, server_address: str, namespace: str, *, status_recommendations: int = 5,
                 progress_interval_s: float = 1.0, watch_timeout_s: int = 300, requeue_s: float = 5.0,
                 channel: grpc.Channel | None = None) -> None:
        self.api = custom_api  # kubernetes.client.CustomObjectsApi
        self.namespace = namespace
        self.server_address = server_address
        if channel is None:
            from ..connection import open_channel

            channel = open_channel(server_address)  # TLS and token from $ARRAYPLAN_TLS_CA / $ARRAYPLAN_TOKEN when set
        self.channel = channel
        self.stub = pb_grpc.PlannerServiceStub(self.channel)
        self.status_recommendations = status_recommendations
        self.progress_interval_s = progress_interval_s
        self.watch_timeout_s = watch_timeout_s
        self.requeue_s = requeue_s
        self.resource_version: str | None = None
        self.stop_event = threading.Event()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._trackers: dict[str, _Tracker] = {}
        self._lock = threading.Lock()
        self._watch: Any = None
        self.stats = {"lists": 0, "watch_gone": 0, "runs_created": 0, "runs_adopted": 0}

    # -- Kubernetes I/O ---------------------------------------------------------------------
    def _get(self, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            obj: dict[str, Any] = self.api.get_namespaced_custom_object(r.GROUP, r.VERSION, self.namespace, r.PLURAL, name)
            return obj
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def _patch_status(self, name: str, uid: str, generation: int, status: dict[str, Any],
                      conditions: list[dict[str, Any]] | None = None) -> bool:
        """Merge ``status`` into the object's status if it is still the same object at the same
        generation; False when it is gone or has moved on (a newer generation owns the status)."""
        obj = self._get(name)
        if obj is None or obj["metadata"].get("uid") != uid or int(obj["metadata"]["generation"]) != generation:
            return False
        body = dict(status)
        if conditions is not None:
            body["conditions"] = r.merge_conditions((obj.get("status") or {}).get("conditions"), conditions)
        self.api.patch_namespaced_custom_object_status(r.GROUP, r.VERSION, self.namespace, r.PLURAL, name, {"status": body})
        return True

    # -- run ---------------------------------------------------------------------------------
    def run(self, stop: threading.Event | None = None, start_resource_version: str | None = None) -> None:
        """Watch and reconcile until ``stop`` is set."""
        if stop is not None:
            self.stop_event = stop
        worker = threading.Thread(target=self._work, name="reconcile", daemon=True)
        worker.start()
        try:
            self._watch_loop(start_resource_version)
        finally:
            self._queue.put(None)
            worker.join(timeout=10)
            with self._lock:
                trackers = list(self._trackers.values())
            for t in trackers:
                t.halt()
            for t in trackers:
                if t.thread is not None:
                    t.thread.join(timeout=5)

    def shutdown(self) -> None:
        self.stop_event.set()
        w = self._watch
        if w is not None:
            w.stop()

    def _list(self, only_unfinished: bool) -> str:
        objs = self.api.list_namespaced_custom_object(r.GROUP, r.VERSION, self.namespace, r.PLURAL)
        self.stats["lists"] += 1
        queued = 0
        for obj in objs.get("items", []):
            if not only_unfinished or self._needs_work(obj):
                self._enqueue(obj["metadata"]["name"])
                queued += 1
        rv = objs["metadata"]["resourceVersion"]
        log.info("listed %d CapacityPlan(s) in %s at resourceVersion %s (%d to reconcile)", len(objs.get("items", [])),
                 self.namespace, rv, queued)
        return str(rv)

    def _watch_loop(self, start_resource_version: str | None) -> None:
        from kubernetes import watch
        from kubernetes.client.exceptions import ApiException

        rv = start_resource_version
        if rv:
            log.info("resuming the CapacityPlan watch from resourceVersion %s", rv)
            # Runs in flight when the last leader stopped have no pending event: pick them up.
            self._list(only_unfinished=True)
        backoff = Backoff(WATCH_BACKOFF)
        while not self.stop_event.is_set():
            try:
                if rv is None:
                    rv = self._list(only_unfinished=False)
                self.resource_version = rv
                w = watch.Watch()
                self._watch = w
                for event in w.stream(self.api.list_namespaced_custom_object, r.GROUP, r.VERSION, self.namespace, r.PLURAL,
                                      resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=self.watch_timeout_s):
                    obj = event.get("raw_object") or event.get("object") or {}
                    new_rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if event["type"] != "BOOKMARK":
                        self._on_event(event["type"], obj)
                    if new_rv:
                        rv = str(new_rv)
                        self.resource_version = rv
                    if self.stop_event.is_set():
                        w.stop()
                        break
                backoff.reset()
            except ApiException as exc:
                if exc.status == 410:
                    self.stats["watch_gone"] += 1
                    log.warning("watch from resourceVersion %s expired (410 Gone): listing again", rv)
                    rv = None
                    continue
                delay_s = backoff.next_delay_s()
                log.warning("watch failed (%s %s); retrying in %.0f s", exc.status, exc.reason, delay_s)
                self.stop_event.wait(delay_s)
            except Exception as exc:  # noqa: BLE001 - connection resets and the like: retry
                if self.stop_event.is_set():
                    break
                delay_s = backoff.next_delay_s()
                log.warning("watch interrupted (%s); retrying in %.0f s", exc, delay_s)
                self.stop_event.wait(delay_s)

    @staticmethod
    def _needs_work(obj: dict[str, Any]) -> bool:
        status = obj.get("status") or {}
        gen = int(obj["metadata"].get("generation", 0))
        return not (status.get("observedGeneration") == gen and status.get("phase") in r.TERMINAL_PHASES)

    def _on_event(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name:
            return
        if kind == "DELETED":
            self._forget(meta.get("uid", ""), obj)
            return
        if kind in ("ADDED", "MODIFIED") and self._needs_work(obj):
            with self._lock:
                t = self._trackers.get(meta.get("uid", ""))
            if t is not None and t.alive and t.generation == int(meta.get("generation", 0)):
                return  # our own progress writes
            self._enqueue(name)

    def _forget(self, uid: str, obj: dict[str, Any]) -> None:
        with self._lock:
            t = self._trackers.pop(uid, None)
        if t is not None:
            t.halt()
        status = obj.get("status") or {}
        run_name = status.get("runName")
        if run_name and status.get("phase") not in r.TERMINAL_PHASES:
            self._cancel_run(run_name, f"CapacityPlan {obj['metadata']['name']} was deleted")

    def _cancel_run(self, run_name: str, why: str) -> None:
        try:
            self.stub.CancelPlan(pb.CancelPlanRequest(name=run_name), timeout=60)
            log.info("cancelled run %s: %s", run_name, why)
        except grpc.RpcError as exc:
            log.warning("could not cancel run %s (%s): %s", run_name, why, exc.code().name)

    def _enqueue(self, name: str) -> None:
        self._queue.put(name)

    def _requeue_later(self, name: str, delay_s: float | None = None) -> None:
        timer = threading.Timer(delay_s or self.requeue_s, self._enqueue, args=(name,))
        timer.daemon = True
        timer.start()

    def _work(self) -> None:
        while True:
            name = self._queue.get()
            if name is None or self.stop_event.is_set():
                return
            try:
                self.reconcile(name)
            except Exception:
                log.exception("reconcile %s/%s failed; retrying", self.namespace, name)
                self._requeue_later(name)

    # -- reconcile ---------------------------------------------------------------------------
    def reconcile(self, name: str) -> None:
        obj = self._get(name)
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        meta = obj["metadata"]
        uid, gen = meta["uid"], int(meta["generation"])
        status = obj.get("status") or {}
        if status.get("observedGeneration") == gen and status.get("phase") in r.TERMINAL_PHASES:
            return
        with self._lock:
            t = self._trackers.get(uid)
        if t is not None:
            if t.generation == gen and t.alive:
                return
            if t.generation != gen:
                t.halt()
                self._cancel_run(t.run_name, f"{name} generation {gen} supersedes {t.generation}")
        if status.get("observedGeneration") == gen and status.get("runName"):
            # This generation's run exists (started before a restart or by the previous leader).
            log.info("%s generation %d: following run %s started earlier", name, gen, status["runName"])
            self._track(name, uid, gen, status["runName"])
            return
        if status.get("runName") and status.get("phase") not in r.TERMINAL_PHASES and status.get("observedGeneration") != gen:
            self._cancel_run(status["runName"], f"{name} generation {gen} supersedes {status.get('observedGeneration')}")

        try:
            plan_spec = r.spec_to_plan_spec(obj.get("spec"))
        except r.SpecError as exc:
            self._fail(name, uid, gen, "InvalidSpec", str(exc))
            return
        rid = r.run_id(obj)
        run_name = f"plans/{rid}"
        try:
            plan = self.stub.GetPlan(pb.GetPlanRequest(name=run_name), timeout=30)
            self.stats["runs_adopted"] += 1
            log.info("%s generation %d: run %s already exists; adopting it (not starting it again)", name, gen, run_name)
            how = "RunAdopted"
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.NOT_FOUND:
                self._planner_trouble(name, uid, gen, exc)
                return
            try:
                plan = self.stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=plan_spec), plan_id=rid), timeout=60)
            except grpc.RpcError as exc2:
                code = exc2.code()
                if code == grpc.StatusCode.INVALID_ARGUMENT:
                    violations = _violations(exc2) or [("spec", exc2.details() or "invalid")]
                    self._fail(name, uid, gen, "InvalidSpec", "; ".join(f"{f}: {m}" for f, m in violations))
                elif code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    self._fail(name, uid, gen, "SearchSpaceTooLarge", f"spec.candidate_space: {exc2.details()}")
                else:
                    self._planner_trouble(name, uid, gen, exc2)
                return
            self.stats["runs_created"] += 1
            log.info("%s generation %d: created run %s (trace %s)", name, gen, plan.name, plan.trace_id)
            how = "RunCreated"
        started = r.timestamp_rfc3339(plan.create_time) or r.now_rfc3339()
        ok = self._patch_status(name, uid, gen, {
            "observedGeneration": gen, "phase": "Running" if plan.state == pb.Plan.STATE_RUNNING else "Pending",
            "runName": plan.name, "traceId": plan.trace_id, "startTime": started, "completionTime": None,
            "progress": r.progress_status(plan.progress), "constraintsMet": None, "best": None, "summary": None,
            "recommendations": None,
        }, [r.condition(r.ACCEPTED, True, how, f"run {plan.name} on planner {self.server_address}", gen),
            r.condition(r.RUNNING, plan.state == pb.Plan.STATE_RUNNING, "Started" if plan.state == pb.Plan.STATE_RUNNING else "Pending",
                        "candidates are being simulated" if plan.state == pb.Plan.STATE_RUNNING else "waiting to start", gen),
            r.condition(r.SUCCEEDED, False, "NotFinished", "", gen),
            r.condition(r.FAILED, False, "NotFinished", "", gen)])
        if ok:
            self._track(name, uid, gen, plan.name)

    def _planner_trouble(self, name: str, uid: str, gen: int, exc: grpc.RpcError) -> None:
        code = exc.code()
        if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED,
                    grpc.StatusCode.ABORTED, grpc.StatusCode.UNKNOWN):
            log.warning("%s: planner %s: %s %s; retrying in %.0f s", name, self.server_address, code.name, exc.details(), self.requeue_s)
            self._patch_status(name, uid, gen, {"observedGeneration": gen, "phase": "Pending"},
                               [r.condition(r.ACCEPTED, None, "PlannerUnavailable",
                                            f"planner {self.server_address}: {code.name}: {exc.details()}; retrying", gen)])
            self._requeue_later(name)
            return
        self._fail(name, uid, gen, "PlannerError", f"{code.name}: {exc.details()}")

    def _fail(self, name: str, uid: str, gen: int, reason: str, message: str) -> None:
        log.info("%s generation %d: Failed %s: %s", name, gen, reason, message)
        accepted_failed = reason in r.BAD_INPUT_REASONS
        conditions = [r.condition(r.RUNNING, False, reason, "", gen), r.condition(r.SUCCEEDED, False, reason, "", gen),
                      r.condition(r.FAILED, True, reason, message, gen)]
        if accepted_failed:
            conditions.insert(0, r.condition(r.ACCEPTED, False, reason, message, gen))
        body: dict[str, Any] = {"observedGeneration": gen, "phase": "Failed", "completionTime": r.now_rfc3339()}
        if accepted_failed:
            body.update({"runName": None, "traceId": None, "startTime": None, "progress": None, "constraintsMet": None,
                         "best": None, "summary": None, "recommendations": None})
        self._patch_status(name, uid, gen, body, conditions)

    # -- follow a run ------------------------------------------------------------------------
    def _track(self, name: str, uid: str, gen: int, run_name: str) -> None:
        t = _Tracker(uid=uid, name=name, generation=gen, run_name=run_name)
        t.thread = threading.Thread(target=self._follow, args=(t,), name=f"track-{name}", daemon=True)
        with self._lock:
            self._trackers[uid] = t
        t.thread.start()

    def _follow(self, t: _Tracker) -> None:
        try:
            self._follow_run(t)
        finally:
            with self._lock:
                if self._trackers.get(t.uid) is t:
                    del self._trackers[t.uid]

    def _follow_run(self, t: _Tracker) -> None:
        backoff = 1.0
        last_write = 0.0
        running_marked = False
        while not t.stop.is_set() and not self.stop_event.is_set():
            try:
                t.call = self.stub.WatchPlan(pb.WatchPlanRequest(name=t.run_name), timeout=600)
                for event in t.call:
                    if t.stop.is_set():
                        return
                    if event.HasField("plan"):
                        self._finish(t, event.plan)
                        return
                    now = time.monotonic()
                    if now - last_write >= self.progress_interval_s or not running_marked:
                        conditions = None if running_marked else [r.condition(r.RUNNING, True, "Started", "candidates are being simulated", t.generation)]
                        if not self._patch_status(t.name, t.uid, t.generation,
                                                  {"phase": "Running", "progress": r.progress_status(event.progress)}, conditions):
                            return
                        running_marked = True
                        last_write = now
                backoff = 1.0
            except grpc.RpcError as exc:
                code = exc.code()
                if t.stop.is_set() or code == grpc.StatusCode.CANCELLED:
                    return
                if code == grpc.StatusCode.NOT_FOUND:
                    self._fail(t.name, t.uid, t.generation, "RunLost",
                               f"the planner has no run {t.run_name} (its run store was replaced?); "
                               "the generation is not run again: edit the spec or re-create the object")
                    return
                if code != grpc.StatusCode.DEADLINE_EXCEEDED:
                    log.warning("%s: following %s: %s; retrying in %.0f s", t.name, t.run_name, code.name, backoff)
                    t.stop.wait(backoff)
                    backoff = min(backoff * 2, 30.0)
            except Exception:
                log.exception("%s: following %s failed; retrying", t.name, t.run_name)
                t.stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
            finally:
                t.call = None

    def _finish(self, t: _Tracker, plan: pb.Plan) -> None:
        gen = t.generation
        body: dict[str, Any] = {"observedGeneration": gen, "runName": plan.name, "traceId": plan.trace_id,
                                "progress": r.progress_status(plan.progress),
                                "completionTime": r.timestamp_rfc3339(plan.end_time) or r.now_rfc3339()}
        if plan.state == pb.Plan.STATE_SUCCEEDED:
            res = plan.result
            met = res.constraints_met
            recs = list(res.recommendations)[: self.status_recommendations]
            body.update({"phase": "Succeeded", "constraintsMet": met, "summary": res.summary[:4000],
                         "best": r.best_line(recs[0]) if recs else "",
                         "recommendations": [r.recommendation_status(x) for x in recs]})
            reason = "ConstraintsMet" if met else "ConstraintsNotMet"
            conditions = [r.condition(r.RUNNING, False, "Finished", "", gen),
                          r.condition(r.SUCCEEDED, True, reason, res.summary[:4000], gen),
                          r.condition(r.FAILED, False, "Succeeded", "", gen)]
        else:
            cancelled = plan.state == pb.Plan.STATE_CANCELLED
            reason = "RunCancelled" if cancelled else r.camel_reason(plan.error_reason)
            body.update({"phase": "Failed"})
            conditions = [r.condition(r.RUNNING, False, reason, "", gen), r.condition(r.SUCCEEDED, False, reason, "", gen),
                          r.condition(r.FAILED, True, reason, plan.error_message or pb.Plan.State.Name(plan.state), gen)]
        if self._patch_status(t.name, t.uid, gen, body, conditions):
            log.info("%s generation %d: %s (%s)", t.name, gen, body["phase"], reason)

