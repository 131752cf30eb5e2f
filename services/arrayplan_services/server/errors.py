"""The one place exceptions become gRPC status codes (with google.rpc error details).

InvalidInputError -> INVALID_ARGUMENT with a BadRequest (one FieldViolation per bad field) and an
ErrorInfo; NotFoundError -> NOT_FOUND; SearchSpaceTooLargeError -> RESOURCE_EXHAUSTED;
PlanQueueFullError (and the heavy calls' HeavyCallsFullError) -> RESOURCE_EXHAUSTED with a RetryInfo; StoreUnavailableError -> UNAVAILABLE;
Unauthenticated/PermissionDenied -> UNAUTHENTICATED/PERMISSION_DENIED. Anything else is a server
fault -> INTERNAL, whose message carries only an error id: the exception (traceback, paths, pids,
addresses) goes to the server log under that id, never to the client.

Every status is bounded so it fits the client's metadata limit (the details travel in a
trailer): at most ``MAX_VIOLATIONS`` field violations, each description at most
``MAX_DESCRIPTION_CHARS``, the message at most ``MAX_MESSAGE_CHARS``.
"""

from __future__ import annotations

import logging

from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

from arrayplan_engine.errors import InvalidInputError, NotFoundError, SearchSpaceTooLargeError

from ..api.errors import PermissionDeniedError, PlanQueueFullError, UnauthenticatedError, field_violation, new_error_id
from ..store import StoreUnavailableError

log = logging.getLogger(__name__)
DOMAIN = "arrayplan.dev"
MAX_VIOLATIONS = 20
MAX_DESCRIPTION_CHARS = 600
MAX_FIELD_CHARS = 200
MAX_MESSAGE_CHARS = 1000


def _pack(msg: object) -> any_pb2.Any:
    a = any_pb2.Any()
    a.Pack(msg)  # type: ignore[arg-type]
    return a


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def status_for(exc: BaseException) -> status_pb2.Status:
    """The google.rpc.Status a client receives for ``exc`` (bounded; never a traceback)."""
    if isinstance(exc, InvalidInputError):
        shown = exc.violations[:MAX_VIOLATIONS]
        bad = error_details_pb2.BadRequest(field_violations=[
            field_violation(v, max_field_chars=MAX_FIELD_CHARS, max_description_chars=MAX_DESCRIPTION_CHARS) for v in shown])
        fields = ",".join(_clip(v.field, MAX_FIELD_CHARS) for v in shown)
        info = error_details_pb2.ErrorInfo(reason=exc.reason_code, domain=DOMAIN, metadata={"fields": _clip(fields, 2000)})
        more = len(exc.violations) - len(shown)
        message = "; ".join(f"{_clip(v.field, MAX_FIELD_CHARS)}: {_clip(v.reason, 300)}" for v in shown[:5])
        if len(exc.violations) > 5:
            message += f"; and {len(exc.violations) - 5} more" + (f" ({more} not listed)" if more > 0 else "")
        return status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=_clip(message, MAX_MESSAGE_CHARS),
                                 details=[_pack(info), _pack(bad)])
    if isinstance(exc, NotFoundError):
        info = error_details_pb2.ErrorInfo(reason="NOT_FOUND", domain=DOMAIN,
                                           metadata={"kind": exc.kind, "name": _clip(exc.name, MAX_FIELD_CHARS)})
        return status_pb2.Status(code=code_pb2.NOT_FOUND, message=_clip(f"{exc.kind} {exc.name!r} not found", MAX_MESSAGE_CHARS),
                                 details=[_pack(info)])
    if isinstance(exc, SearchSpaceTooLargeError):
        info = error_details_pb2.ErrorInfo(reason=exc.reason_code, domain=DOMAIN,
                                           metadata={"candidate_count": str(exc.candidate_count), "limit": str(exc.limit)})
        return status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=str(exc), details=[_pack(info)])
    if isinstance(exc, PlanQueueFullError):
        info = error_details_pb2.ErrorInfo(reason=getattr(exc, "reason_code", "PLAN_QUEUE_FULL"), domain=DOMAIN,
                                           metadata={"running": str(exc.running), "queued": str(exc.queued)})
        retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=max(1, round(exc.retry_after_s))))
        return status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=str(exc), details=[_pack(info), _pack(retry)])
    if isinstance(exc, StoreUnavailableError):
        info = error_details_pb2.ErrorInfo(reason=exc.reason_code, domain=DOMAIN)
        retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=10))
        return status_pb2.Status(code=code_pb2.UNAVAILABLE, message=str(exc), details=[_pack(info), _pack(retry)])
    if isinstance(exc, UnauthenticatedError):
        info = error_details_pb2.ErrorInfo(reason="UNAUTHENTICATED", domain=DOMAIN)
        return status_pb2.Status(code=code_pb2.UNAUTHENTICATED, message=str(exc), details=[_pack(info)])
    if isinstance(exc, PermissionDeniedError):
        info = error_details_pb2.ErrorInfo(reason="PERMISSION_DENIED", domain=DOMAIN)
        return status_pb2.Status(code=code_pb2.PERMISSION_DENIED, message=str(exc), details=[_pack(info)])
    error_id = new_error_id()
    log.error("internal error %s", error_id, exc_info=exc)
    info = error_details_pb2.ErrorInfo(reason="INTERNAL", domain=DOMAIN, metadata={"error_id": error_id})
    return status_pb2.Status(code=code_pb2.INTERNAL,
                             message=f"internal error {error_id} (the server log has the details under this id)",
                             details=[_pack(info)])
