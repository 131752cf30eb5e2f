"""Leader election through a ``coordination.k8s.io/v1`` Lease (client-go's algorithm).

One replica holds the Lease and renews it every ``retry_period_s``; the others poll. A Lease counts
as expired when its record has not changed for ``lease_duration_s`` *as observed locally* (the
holder's clock is never compared with ours). Writes carry the Lease's resourceVersion, so two
candidates racing for an expired Lease cannot both win: the loser gets 409 Conflict. A leader that
cannot renew within ``renew_deadline_s`` stops acting (the controller exits and is restarted).

The leader also keeps the controller's last seen CapacityPlan resourceVersion in an annotation of
the Lease, so the next leader (a restarted process or the other replica) resumes the watch from it.

Why not ``kubernetes.leaderelection``: the installed client (kubernetes 37.0.2) ships
``LeaderElection`` with a ``LeaseLock``, and its algorithm is the same as this one; what the
controller needs around it is missing (read in ``kubernetes/leaderelection/``):

* No way to stop: ``LeaderElection.acquire`` and ``renew_loop`` are ``while True`` loops over
  ``time.sleep(retry_period)``. A standby waiting for the Lease cannot leave at SIGTERM, and
  ``renew_loop`` returns only when a renewal fails or ``onstarted_leading`` raises, so a leader
  whose controller stopped cleanly keeps renewing. Here both loops wait on the caller's ``stop``.
* No release: nothing clears the holder at a clean stop (client-go's ``ReleaseOnCancel``), so the
  standby would wait a whole lease duration after every rolling update. ``release`` does it here.
* No place for the watch position: ``LeaseLock.update`` writes only the four record fields on the
  Lease it last read; the resourceVersion annotation the next leader resumes from would need
  ``update`` overridden, and a release written besides.
* Its timing limits: ``electionconfig.Config`` ends the process (``sys.exit``, not an exception)
  unless ``retry_period >= 1`` s and ``renew_deadline > 1.2 * retry_period``. The CLI and the chart
  take fractional periods, and the cluster tests fail over in seconds with ``--lease-duration 2
  --renew-deadline 1.5 --retry-period 0.3``.
* Wall-clock timing: the observed time and the renew deadline come from ``time.time()``, so a
  clock step stretches or cuts a lease; here they come from ``time.monotonic()``.
* ``LeaseLock`` builds its own ``CoordinationV1Api()`` on the process-wide default configuration
  (the controller loads ``--kubeconfig`` or the service account into its own ``ApiClient``), and it
  never counts ``leaseTransitions``.

``tests/services/test_lease_choice.py`` checks these facts against the installed client, so an
upgrade that changes them shows up as a failing test and this choice can be made again.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

RESOURCE_VERSION_ANNOTATION = "arrayplan.io/capacityplans-resource-version"


def _micro_time(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(self, api: Any, namespace: str, name: str, identity: str, *, lease_duration_s: int = 15,
                 renew_deadline_s: float = 10.0, retry_period_s: float = 2.0) -> None:
        if not renew_deadline_s < lease_duration_s:
            raise ValueError("renew deadline must be shorter than the lease duration")
        self.api = api  # kubernetes.client.CoordinationV1Api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration_s = lease_duration_s
        self.renew_deadline_s = renew_deadline_s
        self.retry_period_s = retry_period_s
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self.saved_resource_version: str | None = None
        self._last_renew = 0.0
        self._resource_version_source: Callable[[], str | None] = lambda: None

    # -- one attempt ------------------------------------------------------------------------
    def _record(self, lease: Any) -> tuple[Any, ...]:
        s = lease.spec
        return (s.holder_identity, s.renew_time, s.acquire_time, s.lease_transitions)

    def try_acquire_or_renew(self) -> bool:
        from kubernetes.client.exceptions import ApiException

        now = dt.datetime.now(dt.UTC)
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
        except ApiException as exc:
            if exc.status != 404:
                raise
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": self.lease_duration_s,
                             "acquireTime": _micro_time(now), "renewTime": _micro_time(now), "leaseTransitions": 0}}
            try:
                self.api.create_namespaced_lease(self.namespace, body)
            except ApiException as exc2:
                if exc2.status == 409:
                    return False
                raise
            self._observed_at = time.monotonic()
            return True
        record = self._record(lease)
        if record != self._observed:
            self._observed, self._observed_at = record, time.monotonic()
        spec = lease.spec
        holder = spec.holder_identity or ""
        duration = spec.lease_duration_seconds or self.lease_duration_s
        expired = time.monotonic() > self._observed_at + duration
        if holder and holder != self.identity and not expired:
            return False
        annotations = dict(lease.metadata.annotations or {})
        if holder != self.identity:
            # Taking over: read where the previous leader's watch had got to.
            self.saved_resource_version = annotations.get(RESOURCE_VERSION_ANNOTATION) or None
        rv = self._resource_version_source()
        if rv:
            annotations[RESOURCE_VERSION_ANNOTATION] = rv
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace, "resourceVersion": lease.metadata.resource_version,
                             "annotations": annotations, "labels": dict(lease.metadata.labels or {})},
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": self.lease_duration_s,
                         "acquireTime": _micro_time(spec.acquire_time if holder == self.identity and spec.acquire_time else now),
                         "renewTime": _micro_time(now),
                         "leaseTransitions": (spec.lease_transitions or 0) + (0 if holder == self.identity or not holder else 1)}}
        try:
            updated = self.api.replace_namespaced_lease(self.name, self.namespace, body)
        except ApiException as exc:
            if exc.status == 409:  # someone else wrote first
                return False
            raise
        self._observed, self._observed_at = self._record(updated), time.monotonic()
        return True

    # -- loops ------------------------------------------------------------------------------
    def acquire(self, stop: threading.Event) -> bool:
        """Block until this process leads (True) or ``stop`` is set (False)."""
        waiting_logged = False
        while not stop.is_set():
            try:
                if self.try_acquire_or_renew():
                    self._last_renew = time.monotonic()
                    log.info("leader election: %s holds lease %s/%s", self.identity, self.namespace, self.name)
                    return True
                if not waiting_logged:
                    log.info("leader election: lease %s/%s is held by another replica; waiting", self.namespace, self.name)
                    waiting_logged = True
            except Exception as exc:  # noqa: BLE001 - API hiccups: try again
                log.warning("leader election: %s", exc)
            stop.wait(self.retry_period_s)
        return False

    def keep_renewing(self, stop: threading.Event, on_lost: Callable[[], None],
                      resource_version: Callable[[], str | None]) -> threading.Thread:
        """Renew in the background; call ``on_lost`` when the lease cannot be renewed in time."""
        self._resource_version_source = resource_version

        def loop() -> None:
            while not stop.wait(self.retry_period_s):
                try:
                    ok = self.try_acquire_or_renew()
                except Exception as exc:  # noqa: BLE001
                    log.warning("leader election: renew failed: %s", exc)
                    ok = False
                if ok:
                    self._last_renew = time.monotonic()
                elif time.monotonic() - self._last_renew > self.renew_deadline_s:
                    log.error("leader election: lost lease %s/%s", self.namespace, self.name)
                    on_lost()
                    return

        t = threading.Thread(target=loop, name="lease-renew", daemon=True)
        t.start()
        return t

    def release(self) -> None:
        """Give the lease up at a clean stop (holder cleared, duration 1 s) after saving the
        resourceVersion, so the next replica takes over at once and resumes where we stopped."""
        from kubernetes.client.exceptions import ApiException

        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
            if lease.spec.holder_identity != self.identity:
                return
            annotations = dict(lease.metadata.annotations or {})
            rv = self._resource_version_source()
            if rv:
                annotations[RESOURCE_VERSION_ANNOTATION] = rv
            now = dt.datetime.now(dt.UTC)
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace, "resourceVersion": lease.metadata.resource_version,
                                 "annotations": annotations, "labels": dict(lease.metadata.labels or {})},
                    "spec": {"holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": _micro_time(now),
                             "acquireTime": _micro_time(now), "leaseTransitions": lease.spec.lease_transitions or 0}}
            self.api.replace_namespaced_lease(self.name, self.namespace, body)
            log.info("leader election: released lease %s/%s", self.namespace, self.name)
        except ApiException as exc:
            log.warning("leader election: release failed: %s", exc)
