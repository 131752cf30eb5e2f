"""Traces to a real OpenTelemetry Collector: the collector built by scripts/cluster_tools.sh (v0.160.0,
OTLP receiver -> batch -> file exporter) on 127.0.0.1, `arrayplan serve` with
OTEL_EXPORTER_OTLP_ENDPOINT and a local Ray, a plan sent over gRPC; its spans, the Ray workers'
included, are found in the collector's output by the plan's trace id."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from arrayplan.v1 import planner_pb2 as pb
from arrayplan.v1 import planner_pb2_grpc as pb_grpc

from .clusterlib import Proc, free_port, start_planner, start_proc, tool, wait_for

SPEC = pb.PlanSpec(workload=pb.Workload(read_fraction=0.7, target_iops=5_000),
                   constraints=pb.Constraints(usable_capacity_bytes=1_000_000_000_000),
                   candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3700-400gb", "intel-dc-s3500-480gb"], layouts=["raid6"],
                                                     max_drive_count=12), seed=4)


@pytest.fixture()
def collector(tmp_path: Path) -> Iterator[tuple[str, Path, Proc]]:
    otelcol = tool("otelcol")
    port = free_port()
    out = tmp_path / "spans.jsonl"
    config = {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": f"127.0.0.1:{port}"}}}},
        "processors": {"batch": {"timeout": "200ms"}, "memory_limiter": {"check_interval": "1s", "limit_mib": 256}},
        "exporters": {"file": {"path": str(out), "flush_interval": "200ms"}},
        "service": {"telemetry": {"metrics": {"level": "none"}},
                    "pipelines": {"traces": {"receivers": ["otlp"], "processors": ["memory_limiter", "batch"], "exporters": ["file"]}}},
    }
    cfg = tmp_path / "otelcol.yaml"
    cfg.write_text(yaml.safe_dump(config))
    proc = start_proc([str(otelcol), "--config", str(cfg)], tmp_path / "otelcol.log")

    def listening() -> bool:
        if not proc.alive():
            raise RuntimeError(f"otelcol exited:\n{proc.log()}")
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True

    wait_for(listening, 30, "the collector's OTLP port")
    yield f"http://127.0.0.1:{port}", out, proc
    proc.stop()


def _spans(path: Path) -> list[dict[str, Any]]:
    """Every span in the file exporter's OTLP/JSON lines, with its resource's service.name."""
    if not path.exists():
        return []
    spans = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        for rs in json.loads(line).get("resourceSpans", []):
            attrs = {a["key"]: a["value"].get("stringValue") for a in rs.get("resource", {}).get("attributes", [])}
            for ss in rs.get("scopeSpans", []):
                for s in ss.get("spans", []):
                    spans.append({**s, "service": attrs.get("service.name")})
    return spans


def test_plan_spans_reach_the_collector(collector: tuple[str, Path, Proc], tmp_path: Path) -> None:
    endpoint, out, otelcol = collector
    planner = start_planner(tmp_path / "data", executor="ray", extra=("--num-cpus", "2"),
                            env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_INSECURE": "true",
                                 "OTEL_BSP_SCHEDULE_DELAY": "200"})
    try:
        with grpc.insecure_channel(planner.address) as ch:
            stub = pb_grpc.PlannerServiceStub(ch)
            created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=SPEC)), timeout=60)
            final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=300))[-1].plan
        assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
        trace_id = final.trace_id
        assert len(trace_id) == 32

        def found() -> list[dict[str, Any]] | None:
            mine = [s for s in _spans(out) if s["traceId"] == trace_id]
            names = {s["name"] for s in mine}
            if {"arrayplan.plan", "arrayplan.fanout", "arrayplan.evaluate_batch", "arrayplan.rank"} <= names:
                return mine
            return None

        try:
            spans = wait_for(found, 60, f"the plan's spans (trace {trace_id}) at the collector", interval_s=0.5)
        except TimeoutError:
            names = sorted({(s["service"], s["name"]) for s in _spans(out) if s["traceId"] == trace_id})
            pytest.fail(f"spans at the collector for {trace_id}: {names}\ncollector log:\n{otelcol.log()[-3000:]}")
    finally:
        planner.proc.stop()
    by_id = {s["spanId"]: s for s in spans}
    workers = [s for s in spans if s["name"] == "arrayplan.evaluate_batch"]
    assert workers and all(s["service"] == "arrayplan-worker" for s in workers), "worker spans come from the Ray workers' own exporter"
    assert all(s["kind"] == 5 for s in workers), "CONSUMER"  # SPAN_KIND_CONSUMER in OTLP
    fanout = next(s for s in spans if s["name"] == "arrayplan.fanout")
    assert fanout["kind"] == 4 and fanout["service"] == "arrayplan"  # SPAN_KIND_PRODUCER
    assert all(by_id.get(s["parentSpanId"], {}).get("name") == "arrayplan.fanout" for s in workers), "workers are children of the fan-out"
    server = [s for s in spans if s["name"] == "/arrayplan.v1.PlannerService/CreatePlan"]
    assert server and server[0]["kind"] == 2, "the gRPC server span (SPAN_KIND_SERVER) heads the trace"
    assert not [s for s in _spans(out) if "grpc.health" in s["name"]], "health checks are not traced"
