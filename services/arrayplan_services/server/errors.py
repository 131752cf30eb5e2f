"""The one place engine exceptions become gRPC status codes (with google.rpc error details).

InvalidInputError -> INVALID_ARGUMENT with a BadRequest (one FieldViolation per bad field) and an
ErrorInfo; NotFoundError -> NOT_FOUND; SearchSpaceTooLargeError -> RESOURCE_EXHAUSTED; anything
else is a server fault -> INTERNAL (and only then is the server span marked as an error).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from arrayplan_engine.errors import InvalidInputError, NotFoundError, SearchSpaceTooLargeError

log = logging.getLogger(__name__)
DOMAIN = "arrayplan.dev"


def _pack(msg: Any) -> any_pb2.Any:
    a = any_pb2.Any()
    a.Pack(msg)
    return a


def status_for(exc: BaseException) -> status_pb2.Status:
    """The google.rpc.Status a client receives for ``exc``."""
    if isinstance(exc, InvalidInputError):
        bad = error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.reason) for v in exc.violations
        ])
        info = error_details_pb2.ErrorInfo(reason=exc.reason_code, domain=DOMAIN,
                                           metadata={"fields": ",".join(v.field for v in exc.violations)})
        return status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=str(exc), details=[_pack(info), _pack(bad)])
    if isinstance(exc, NotFoundError):
        info = error_details_pb2.ErrorInfo(reason="NOT_FOUND", domain=DOMAIN, metadata={"kind": exc.kind, "name": exc.name})
        return status_pb2.Status(code=code_pb2.NOT_FOUND, message=str(exc), details=[_pack(info)])
    if isinstance(exc, SearchSpaceTooLargeError):
        info = error_details_pb2.ErrorInfo(reason=exc.reason_code, domain=DOMAIN,
                                           metadata={"candidate_count": str(exc.candidate_count), "limit": str(exc.limit)})
        return status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=str(exc), details=[_pack(info)])
    info = error_details_pb2.ErrorInfo(reason="INTERNAL", domain=DOMAIN)
    return status_pb2.Status(code=code_pb2.INTERNAL, message=f"internal error: {type(exc).__name__}: {exc}", details=[_pack(info)])


def _abort(context: grpc.ServicerContext, exc: BaseException) -> None:
    status = status_for(exc)
    span = trace.get_current_span()
    span.set_attribute("rpc.grpc.status_code", status.code)
    if status.code == code_pb2.INTERNAL:
        log.exception("internal error", exc_info=exc)
        span.record_exception(exc)
        span.set_status(Status(StatusCode.ERROR, status.message))
    context.abort_with_status(rpc_status.to_status(status))


class ErrorMappingInterceptor(grpc.ServerInterceptor):
    def intercept_service(self, continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler],
                          handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        handler = continuation(handler_call_details)
        if handler is None:
            return handler
        if handler.unary_unary is not None:
            inner = handler.unary_unary

            def unary(request: Any, context: grpc.ServicerContext) -> Any:
                try:
                    return inner(request, context)
                except Exception as exc:  # noqa: BLE001 - every fault becomes a status
                    if type(exc) is Exception:  # grpc's own abort: already a status
                        raise
                    _abort(context, exc)
            return grpc.unary_unary_rpc_method_handler(unary, handler.request_deserializer, handler.response_serializer)
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            def stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
                try:
                    yield from inner_stream(request, context)
                except Exception as exc:  # noqa: BLE001 - every fault becomes a status
                    if type(exc) is Exception:  # grpc's own abort: already a status
                        raise
                    _abort(context, exc)
            return grpc.unary_stream_rpc_method_handler(stream, handler.request_deserializer, handler.response_serializer)
        return handler
