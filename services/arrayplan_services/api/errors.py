"""The API's own failures besides the engine's (``arrayplan_engine.errors``): raised by the planner
and the server, turned into gRPC status codes by ``server/errors.py`` (which sits above the planner,
so the planner cannot import it)."""

from __future__ import annotations

import uuid


class PlanQueueFullError(Exception):
    """Every run slot is busy and the queue of waiting plans is full."""

    def __init__(self, running: int, queued: int, retry_after_s: float) -> None:
        super().__init__(f"the server is running {running} plan(s) and {queued} more are queued (its limits); "
                         f"retry in about {retry_after_s:.0f} s")
        self.running = running
        self.queued = queued
        self.retry_after_s = retry_after_s


class UnauthenticatedError(Exception):
    """No bearer token, or one the server does not know."""


class PermissionDeniedError(Exception):
    """A known caller asked for something only another caller (or an admin) may do."""


def new_error_id() -> str:
    """A short random id that ties a client's INTERNAL error to the server log entry."""
    return uuid.uuid4().hex[:16]
