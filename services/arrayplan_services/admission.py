"""The one admission policy of the server's long work: plans (``plan/planner.py``'s run queue)
and heavy calls (``server/heavy.py``: SimulateArray, RunConsistencyTest, ForecastArray).

At most ``max_running`` run at once; more wait in a FIFO queue of at most ``max_queued``; one
caller has at most ``max_per_caller`` running or waiting (0: no per-caller limit). Beyond a limit
the work is refused at once (``AdmissionFullError``) with the time after which a retry may find
room: the mean run time (an exponential average of the finished ones) times the runs ahead of
it, over the slots, between 1 s and 10 minutes. A finished run hands its slot to the first in
line (``hand_over``).

Bookkeeping only: the caller synchronises (the plan queue holds a lock, the heavy calls live on
the event loop) and starts what it is handed.
"""

from __future__ import annotations

import collections
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)

MAX_RETRY_S = 600.0
MIN_RETRY_S = 1.0


class AdmissionFullError(Exception):
    """No slot, and the queue is full or this caller has its share (``caller_limit``)."""

    def __init__(self, running: int, queued: int, retry_after_s: float, caller_limit: int | None = None) -> None:
        super().__init__(f"{running} running, {queued} queued; retry in about {retry_after_s:.0f} s")
        self.running, self.queued, self.retry_after_s, self.caller_limit = running, queued, retry_after_s, caller_limit


class Admission(Generic[T]):
    """Running slots, a bounded FIFO queue of items ``T`` and a per-caller limit."""

    def __init__(self, max_running: int, max_queued: int, max_per_caller: int = 0, *, mean_run_s: float = 10.0) -> None:
        if max_running < 1 or max_queued < 0 or max_per_caller < 0:
            raise ValueError(f"max_running must be >= 1, max_queued and max_per_caller >= 0, "
                             f"got {max_running}, {max_queued}, {max_per_caller}")
        self.max_running, self.max_queued, self.max_per_caller = max_running, max_queued, max_per_caller
        self.running = 0
        self.mean_run_s = mean_run_s
        self._queue: collections.deque[T] = collections.deque()
        self._per_caller: collections.Counter[str] = collections.Counter()
        self._caller_of: dict[T, str] = {}  # of the queued items

    @property
    def queued(self) -> int:
        return len(self._queue)

    def retry_s(self) -> float:
        return min(MAX_RETRY_S, max(MIN_RETRY_S, self.mean_run_s * (1 + len(self._queue)) / self.max_running))

    def admit(self, item: T, caller: str = "", *, force: bool = False) -> bool:
        """True: ``item`` runs now (a slot is taken); False: it waits at the end of the queue.
        Raises ``AdmissionFullError`` beyond a limit, unless ``force`` (a run resumed after a
        restart is queued beyond the limits, never refused)."""
        if not force and self.max_per_caller and self._per_caller[caller] >= self.max_per_caller:
            raise AdmissionFullError(self.running, len(self._queue), self.retry_s(), caller_limit=self.max_per_caller)
        if self.running < self.max_running and not self._queue:
            self.running += 1
            self._per_caller[caller] += 1
            return True
        if not force and len(self._queue) >= self.max_queued:
            raise AdmissionFullError(self.running, len(self._queue), self.retry_s())
        self._queue.append(item)
        self._caller_of[item] = caller
        self._per_caller[caller] += 1
        return False

    def leave(self, item: T) -> bool:
        """``item`` leaves the queue before it started (False when it is not queued)."""
        try:
            self._queue.remove(item)
        except ValueError:
            return False
        self._forget(self._caller_of.pop(item, ""))
        return True

    def position(self, item: T) -> int:
        """1 for the first in line, 0 when ``item`` is not queued."""
        for i, queued in enumerate(self._queue):
            if queued == item:
                return i + 1
        return 0

    def queued_items(self) -> list[T]:
        return list(self._queue)

    def finish(self, caller: str = "", elapsed_s: float | None = None) -> None:
        """A running item's work has stopped; then ``hand_over`` its slot."""
        self._forget(caller)
        if elapsed_s is not None:
            self.mean_run_s = 0.8 * self.mean_run_s + 0.2 * elapsed_s

    def hand_over(self) -> T | None:
        """The freed slot goes to the first in line (returned: it runs now, ``running`` does not
        change), or is given back when nobody waits (None)."""
        if self._queue:
            item = self._queue.popleft()
            self._caller_of.pop(item, None)  # counted as running now
            return item
        self.running -= 1
        return None

    def clear_queue(self) -> list[T]:
        """Every waiting item leaves the queue (a server stopping: they stay stored and resume)."""
        out = list(self._queue)
        self._queue.clear()
        for item in out:
            self._forget(self._caller_of.pop(item, ""))
        return out

    def _forget(self, caller: str) -> None:
        self._per_caller[caller] -= 1
        if self._per_caller[caller] <= 0:
            del self._per_caller[caller]
