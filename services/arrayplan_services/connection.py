"""Client channels to an arrayplan server: plaintext, TLS (``tls_ca``) and bearer tokens.

``open_channel(address, tls_ca=..., token=...)`` is the one recipe the CLI (``--tls-ca``,
``$ARRAYPLAN_TOKEN``) and the Python client share. The token travels as ``authorization: Bearer
TOKEN`` metadata on every call; it is added by a client interceptor rather than call credentials
so it also works on a plaintext channel to 127.0.0.1 (gRPC refuses call credentials without TLS).
"""

from __future__ import annotations

import collections
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

TOKEN_ENV = "ARRAYPLAN_TOKEN"
TLS_CA_ENV = "ARRAYPLAN_TLS_CA"


class _ClientCallDetails(collections.namedtuple("_ClientCallDetails",
                                                ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")),
                         grpc.ClientCallDetails):
    pass


class BearerTokenInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
                             grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds ``authorization: Bearer TOKEN`` to every call."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _details(self, d: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        metadata = [*(d.metadata or ()), self._header]
        return _ClientCallDetails(d.method, d.timeout, metadata, d.credentials, getattr(d, "wait_for_ready", None),
                                  getattr(d, "compression", None))

    def intercept_unary_unary(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request_iterator: Any) -> Any:
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation: Callable[..., Any], client_call_details: grpc.ClientCallDetails, request_iterator: Any) -> Any:
        return continuation(self._details(client_call_details), request_iterator)


def field_violations(exc: grpc.RpcError) -> list[tuple[str, str]]:
    """The (field, reason) pairs of a failed call's ``google.rpc.BadRequest`` details, in the
    server's order; empty when the status carries none."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    out: list[tuple[str, str]] = []
    status = rpc_status.from_call(exc)  # type: ignore[arg-type]
    if status is not None:
        for detail in status.details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                out.extend((v.field, v.description) for v in bad.field_violations)
    return out


def open_channel(address: str, *, tls_ca: str | os.PathLike[str] | bytes | None = None, token: str | None = None,
                 tls_cert: str | Path | None = None, tls_key: str | Path | None = None,
                 server_name: str | None = None) -> grpc.Channel:
    """A channel to ``address``: TLS when ``tls_ca`` (a PEM file of the CA that signed the
    server's certificate) is given, with a client certificate for mutual TLS when
    ``tls_cert``/``tls_key`` are; a bearer ``token`` on every call when given. ``tls_ca`` is a
    path or the PEM bytes themselves. ``token`` and ``tls_ca`` default to ``$ARRAYPLAN_TOKEN``
    and ``$ARRAYPLAN_TLS_CA``."""
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    tls_ca = tls_ca if tls_ca is not None else os.environ.get(TLS_CA_ENV) or None
    options: list[tuple[str, object]] = []
    if server_name:
        options.append(("grpc.ssl_target_name_override", server_name))
    if tls_ca is not None:
        creds = grpc.ssl_channel_credentials(
            root_certificates=tls_ca if isinstance(tls_ca, bytes) else Path(tls_ca).read_bytes(),
            private_key=Path(tls_key).read_bytes() if tls_key else None,
            certificate_chain=Path(tls_cert).read_bytes() if tls_cert else None,
        )
        channel = grpc.secure_channel(address, creds, options=options)
    else:
        channel = grpc.insecure_channel(address, options=options)
    if token:
        channel = grpc.intercept_channel(channel, BearerTokenInterceptor(token.strip()))
    return channel
