"""OpenTelemetry at the edge.

Only entry points (``arrayplan serve``, a Ray worker's first task) configure the SDK; everything
else uses the API (``trace.get_tracer``). Spans always go to the run store (SQLite, so a run's
trace can be read back after a restart: "traces kept in-process" needs no extra service) and, when
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, to an OTLP collector as well.

Crossing into Ray (Celery's pattern): the submitter opens a PRODUCER span and ``inject``s the
context into a plain dict carrier passed as an explicit task argument; the worker ``extract``s it
and opens a CONSUMER span, so worker spans share the plan's trace id. A worker without an OTLP
endpoint collects its finished spans in memory and returns them as records with its result; the
driver writes them to the store.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter, SpanExportResult

TRACER_NAME = "arrayplan"
_lock = threading.Lock()
_configured: TracerProvider | None = None


def span_record(span: ReadableSpan, process: str) -> dict[str, Any]:
    """A finished span as a plain, picklable record (what the store keeps)."""
    ctx = span.context
    parent = span.parent
    return {
        "trace_id": format(ctx.trace_id, "032x"),
        "span_id": format(ctx.span_id, "016x"),
        "parent_span_id": format(parent.span_id, "016x") if parent else "",
        "name": span.name,
        "kind": span.kind.name,
        "start_ns": span.start_time or 0,
        "end_ns": span.end_time or 0,
        "status": span.status.status_code.name,
        "attributes": {k: (v if isinstance(v, (str, int, float, bool)) else str(v)) for k, v in (span.attributes or {}).items()},
        "process": process,
    }


class StoreSpanExporter(SpanExporter):
    """Writes spans to the run store (any object with ``insert_spans(records)``)."""

    def __init__(self, store: Any, process: str = "server") -> None:
        self._store = store
        self._process = process

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            self._store.insert_spans([span_record(s, self._process) for s in spans])
        except Exception:  # noqa: BLE001 - an exporter must never raise into the SDK
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None


class CollectingExporter(SpanExporter):
    """Keeps finished spans in memory until drained (a Ray worker returns them to the driver)."""

    def __init__(self, process: str) -> None:
        self._spans: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._process = process

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with self._lock:
            self._spans.extend(span_record(s, self._process) for s in spans)
        return SpanExportResult.SUCCESS

    def drain(self, trace_id: str) -> list[dict[str, Any]]:
        with self._lock:
            mine = [s for s in self._spans if s["trace_id"] == trace_id]
            self._spans = [s for s in self._spans if s["trace_id"] != trace_id]
        return mine

    def shutdown(self) -> None:
        return None


def otlp_endpoint() -> str | None:
    return os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def _otlp_processor() -> BatchSpanProcessor:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return BatchSpanProcessor(OTLPSpanExporter())


def configure_server(store: Any, service_name: str = "arrayplan") -> TracerProvider:
    """Entry-point set-up for the server process: store exporter, plus OTLP when configured."""
    global _configured
    with _lock:
        if _configured is not None:
            return _configured
        provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        # Batched: one store transaction per batch, not per span (every RPC makes a span; under
        # load a write per call would serialise the server on the store). flush() writes them now.
        provider.add_span_processor(BatchSpanProcessor(StoreSpanExporter(store, "server"), schedule_delay_millis=500,
                                                       max_queue_size=8192, max_export_batch_size=512))
        if otlp_endpoint():
            provider.add_span_processor(_otlp_processor())
        trace.set_tracer_provider(provider)
        _configured = provider
        return provider


_worker_collector: CollectingExporter | None = None


def configure_worker(service_name: str = "arrayplan-worker") -> CollectingExporter | None:
    """Entry-point set-up inside a Ray worker (idempotent per process). Returns the collector whose
    spans go back to the driver, or None when the worker exports to OTLP itself."""
    global _configured, _worker_collector
    with _lock:
        if _configured is None:
            provider = TracerProvider(resource=Resource.create({"service.name": service_name, "process.pid": os.getpid()}))
            if otlp_endpoint():
                provider.add_span_processor(_otlp_processor())
            else:
                _worker_collector = CollectingExporter(f"worker:{os.getpid()}")
                provider.add_span_processor(SimpleSpanProcessor(_worker_collector))
            trace.set_tracer_provider(provider)
            _configured = provider
        return _worker_collector


def flush() -> None:
    if _configured is not None:
        _configured.force_flush()


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


def inject_carrier() -> dict[str, str]:
    """The current context as a W3C traceparent carrier (an explicit Ray task argument)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextmanager
def consumer_span(name: str, carrier: dict[str, str], **attributes: Any) -> Iterator[trace.Span]:
    """Open a CONSUMER span whose parent is the carrier's context (worker side of a Ray task)."""
    parent = propagate.extract(carrier)
    token = otel_context.attach(parent)
    try:
        with tracer().start_as_current_span(name, kind=trace.SpanKind.CONSUMER, attributes=attributes) as span:
            yield span
    finally:
        otel_context.detach(token)


def current_trace_id() -> str:
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else ""
