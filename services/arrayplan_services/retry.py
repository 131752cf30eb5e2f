"""One retry helper: exponential backoff with a cap and jitter, for every loop that waits to try
again (the Ray watchdog's reconnect in ``fanout/executor.py``, the controller's CapacityPlan watch
in ``controller/reconciler.py``).

``BackoffPolicy`` says how (first delay, growth factor, cap, jitter); ``Backoff`` is one loop's
state: ``next_delay_s()`` gives the delay before the next try and moves on, ``reset()`` after a
success starts again from the first delay, ``wait(stop)`` sleeps that delay on a
``threading.Event`` and returns early (True) when the event is set, so a stopping server or
controller never sits out a backoff.

Delay n (from 0) is ``min(initial_s * factor**n, max_s)`` scaled by a factor drawn uniformly from
``[1 - jitter_fraction, 1]``: never more than the cap, and processes that lost the same peer at
the same moment (every server of a Ray cluster, every controller replica) spread their retries out
instead of knocking together.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass

__all__ = ["Backoff", "BackoffPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BackoffPolicy:
    """How a loop backs off (see the module doc). Bad values raise ``ValueError`` naming the field
    and its allowed range."""

    initial_s: float = 1.0
    max_s: float = 30.0
    factor: float = 2.0
    jitter_fraction: float = 0.2

    def __post_init__(self) -> None:
        checks = (
            ("initial_s", self.initial_s, self.initial_s > 0, "> 0"),
            ("max_s", self.max_s, self.max_s >= self.initial_s, f">= initial_s ({self.initial_s:g})"),
            ("factor", self.factor, self.factor >= 1, ">= 1"),
            ("jitter_fraction", self.jitter_fraction, 0 <= self.jitter_fraction < 1, "in [0, 1)"),
        )
        for name, value, ok, allowed in checks:
            if not (math.isfinite(value) and ok):
                raise ValueError(f"BackoffPolicy.{name}: must be {allowed}, got {value!r}")

    def ceiling_s(self, attempt: int) -> float:
        """The delay before try ``attempt`` (0 = the first retry) without jitter: the most it can be."""
        if attempt < 0:
            raise ValueError(f"attempt: must be >= 0, got {attempt}")
        try:
            return min(self.initial_s * self.factor**attempt, self.max_s)
        except OverflowError:  # factor**attempt past the float range: long since at the cap
            return self.max_s


class Backoff:
    """One loop's backoff state under a ``BackoffPolicy`` (not thread-safe: one loop owns it).
    ``rng`` draws the jitter (a seeded ``random.Random`` makes the delays reproducible)."""

    def __init__(self, policy: BackoffPolicy, rng: random.Random | None = None) -> None:
        self.policy = policy
        self._rng = rng if rng is not None else random.Random()
        self.attempt = 0

    def next_delay_s(self) -> float:
        """The delay before the next try; each call moves one step towards the cap."""
        ceiling = self.policy.ceiling_s(self.attempt)
        self.attempt += 1
        return ceiling * (1.0 - self.policy.jitter_fraction * self._rng.random())

    def reset(self) -> None:
        """After a success: the next delay is the first one again."""
        self.attempt = 0

    def wait(self, stop: threading.Event) -> bool:
        """Wait the next delay, or less if ``stop`` is set meanwhile; True when ``stop`` is set."""
        return stop.wait(self.next_delay_s())
