"""``arrayplan trace NAME``: a run's spans (server and worker) as a tree with their attributes, as
JSON, or as OTLP/JSON to post to a collector (docs/tracing.md). Read from a server, or straight
from a run store file with ``--data-dir`` alone (no server needed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import EXIT_BAD_INPUT, EXIT_OK, add_connection_flags, add_format_flag, connect, err, grpc_error_exit, plan_name, print_json

if TYPE_CHECKING:
    from arrayplan.v1 import planner_pb2 as pb


def _fetch_trace(args: argparse.Namespace) -> pb.GetPlanTraceResponse:
    """GetPlanTrace from the server (``--server``/``--local``), or straight from a run store file
    when only ``--data-dir`` is given (no server needed)."""
    name = plan_name(args.name)
    if args.data_dir is not None and not args.local and not args.server:
        from ..plan.planner import trace_from_store
        from ..store import RunStore

        store_path = Path(args.data_dir) / "runs.sqlite3"
        if not store_path.exists():
            raise FileNotFoundError(f"no run store at {store_path}")
        return trace_from_store(RunStore(store_path), name)
    from arrayplan.v1 import planner_pb2 as pb

    with connect(args) as stub:
        trace: pb.GetPlanTraceResponse = stub.GetPlanTrace(pb.GetPlanTraceRequest(name=name), timeout=60)
        return trace


def _attr_text(v: object) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return str(int(v))
    return str(v)


def cmd_trace(args: argparse.Namespace) -> int:
    """Print a run's spans as a tree with their attributes; optionally export OTLP/JSON."""

    import grpc
    from google.protobuf import json_format

    from arrayplan_engine.errors import ArrayplanError

    try:
        trace = _fetch_trace(args)
    except grpc.RpcError as exc:
        return grpc_error_exit(exc)
    except (FileNotFoundError, ArrayplanError) as exc:
        err(str(exc))
        return EXIT_BAD_INPUT
    if not trace.spans:
        err(f"no spans stored for {args.name!r}")
        return EXIT_BAD_INPUT
    if args.otlp_json:
        from ..telemetry.otlp_json import to_otlp_json

        text = json.dumps(to_otlp_json(trace))
        if args.otlp_json == "-":
            print(text)
            return EXIT_OK
        Path(args.otlp_json).write_text(text + "\n", encoding="utf-8")
        print(f"OTLP/JSON of {len(trace.spans)} spans written to {args.otlp_json} "
              "(POST it to an OTLP/HTTP /v1/traces endpoint; docs/tracing.md)", file=sys.stderr)
    if args.format == "json":
        print_json(trace)
        return EXIT_OK
    spans = list(trace.spans)
    ids = {s.span_id for s in spans}
    children: dict[str, list[Any]] = {}
    for s in spans:
        children.setdefault(s.parent_span_id if s.parent_span_id in ids else "", []).append(s)

    def show(parent: str, depth: int) -> None:
        for s in children.get(parent, []):
            ms = (s.end_time.ToNanoseconds() - s.start_time.ToNanoseconds()) / 1e6
            status = "" if s.status in ("", "UNSET", "OK") else f", {s.status}"
            print(f"{'  ' * depth}{s.name} [{s.kind.lower()}, {s.process}{status}] {ms:.1f} ms")
            if not args.no_attributes and s.HasField("attributes"):
                for k, v in sorted(json_format.MessageToDict(s.attributes).items()):
                    print(f"{'  ' * depth}    {k} = {_attr_text(v)}")
            show(s.span_id, depth + 1)
    print(f"trace {trace.trace_id}: {len(spans)} spans")
    show("", 0)
    return EXIT_OK


def register(sub: Any) -> None:
    """Add ``trace``."""
    p = sub.add_parser("trace", help="print a run's trace (server and worker spans, with attributes); export OTLP/JSON")
    p.add_argument("name", help="run name (plans/ID or ID)")
    p.add_argument("--no-attributes", action="store_true", help="span names and durations only")
    add_format_flag(p, ("tree", "json"))
    p.add_argument("--otlp-json", metavar="FILE", help="also write the spans as OTLP/JSON to FILE ('-' = stdout only): "
                                                       "POST it to a collector's /v1/traces (docs/tracing.md)")
    add_connection_flags(p)
    p.set_defaults(func=cmd_trace)
