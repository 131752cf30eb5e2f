"""The lease keeper of a server on a shared run store (PostgreSQL; store/base.py explains leases).

Every ``lease_s / 3`` it renews the leases of the runs this server holds (running or queued) and
stops those whose lease is lost: cancelled through another replica (the run is terminal) or taken
over after this server stalled past its lease. Then it claims the runs whose lease has expired (a
replica died) or was released (a replica stopped) and resumes them from their checkpoints. A store
that cannot be reached is skipped for that round; runs go on meanwhile, and a renew that finds the
lease taken stops them once the store answers again.
"""

from __future__ import annotations

import logging
import threading

from ..plan.planner import PlanRunner
from ..store import PlanStore, StoreUnavailableError

log = logging.getLogger(__name__)
#: The smallest and largest lease (serve --lease-s).
MIN_LEASE_S = 1.0
MAX_LEASE_S = 3600.0
DEFAULT_LEASE_S = 30.0


class LeaseKeeper:
    def __init__(self, runner: PlanRunner, store: PlanStore, *, lease_s: float) -> None:
        if not MIN_LEASE_S <= lease_s <= MAX_LEASE_S:
            raise ValueError(f"lease_s must be in [{MIN_LEASE_S:g}, {MAX_LEASE_S:g}] s, got {lease_s}")
        self.runner = runner
        self.store = store
        self.lease_s = lease_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="lease-keeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            try:
                self.tick()
            except StoreUnavailableError:
                pass  # the store's health says so; next round
            except Exception:  # noqa: BLE001 - keep the leases going
                log.exception("lease keeper")

    def tick(self) -> list[str]:
        """One round: renew, stop the lost, claim and resume the orphans. Returns the ids resumed."""
        owner = self.runner.owner
        lost = self.store.renew_leases(owner, self.runner.held_run_ids(), self.lease_s)
        for run_id in sorted(lost):
            self.runner.lose_lease(run_id)
        if self._stop.is_set():
            return []
        rows = self.store.claim_orphans(owner, self.lease_s)
        if not rows:
            return []
        for row in rows:
            log.warning("taking over plan %s: its lease expired or was released by the server that held it", row.id)
        return self.runner.resume_rows(rows)
