"""The API's own failures besides the engine's (``arrayplan_engine.errors``): raised by the planner
and the server, turned into gRPC status codes by ``server/errors.py`` (which sits above the planner,
so the planner cannot import it), and the one mapping of the engine's violations to the API's
error details (``field_violation``)."""

from __future__ import annotations

import uuid

from google.rpc import error_details_pb2

from arrayplan_engine.errors import Violation


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def field_violation(v: Violation, *, max_field_chars: int, max_description_chars: int) -> error_details_pb2.BadRequest.FieldViolation:
    """One engine violation as a ``google.rpc.BadRequest.FieldViolation``: its field path, its reason
    as the description (naming the allowed range), and its code (``arrayplan_engine.errors.CODES``:
    ``OUT_OF_RANGE``, ``REQUIRED``, ...) as the violation's ``reason``, so a program can act on
    the kind of rule without reading the text."""
    return error_details_pb2.BadRequest.FieldViolation(field=_clip(v.field, max_field_chars),
                                                       description=_clip(v.reason, max_description_chars), reason=v.code)


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
