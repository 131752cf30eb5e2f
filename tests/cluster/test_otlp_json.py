"""`arrayplan trace --otlp-json` into a real OpenTelemetry Collector (bin/otelcol, built by
scripts/cluster_tools.sh): the file is POSTed to the collector's OTLP/HTTP receiver as
docs/tracing.md shows, and every span comes out of its file exporter with the plan's trace id."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import yaml

from conftest import ROOT, ServerProcess

from .clusterlib import free_port, start_proc, tool, wait_for

PLAN = ("workload:\n  read_fraction: 0.7\n  io_size_mix: [[8k, 1]]\n  target_iops: 5000\n"
        "constraints:\n  usable_capacity_bytes: 1 TB\n"
        "candidate_space:\n  drive_models: [intel-dc-s3700-400gb]\n  layouts: [raid10]\n  max_drive_count: 8\nseed: 5\n")


def test_exported_trace_is_accepted_by_the_collector(server: ServerProcess, tmp_path: Path) -> None:
    otelcol = tool("otelcol")
    port = free_port()
    out = tmp_path / "spans.jsonl"
    cfg = tmp_path / "otelcol.yaml"
    cfg.write_text(yaml.safe_dump({
        "receivers": {"otlp": {"protocols": {"http": {"endpoint": f"127.0.0.1:{port}"}}}},
        "exporters": {"file": {"path": str(out), "flush_interval": "200ms"}},
        "service": {"telemetry": {"metrics": {"level": "none"}},
                    "pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["file"]}}},
    }))
    proc = start_proc([str(otelcol), "--config", str(cfg)], tmp_path / "otelcol.log")
    try:
        wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close() or True, 30, "the collector's OTLP/HTTP port")
        plan_file = tmp_path / "p.yaml"
        plan_file.write_text(PLAN)
        cli = [sys.executable, "-m", "arrayplan_services.cli.main"]
        planned = subprocess.run([*cli, "plan", str(plan_file), "--server", server.address, "--format", "json", "--quiet"],
                                 capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert planned.returncode in (0, 3), planned.stderr
        plan = json.loads(planned.stdout)
        export = tmp_path / "trace.json"
        traced = subprocess.run([*cli, "trace", plan["name"], "--server", server.address, "--otlp-json", str(export)],
                                capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert traced.returncode == 0, traced.stderr
        sent = [s for rs in json.loads(export.read_text())["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/traces", data=export.read_bytes(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200

        def received() -> list[dict] | None:
            if not out.exists():
                return None
            got = [s for line in out.read_text().splitlines() if line.strip()
                   for rs in json.loads(line).get("resourceSpans", []) for ss in rs.get("scopeSpans", []) for s in ss.get("spans", [])
                   if s.get("traceId") == plan["trace_id"]]
            return got if len(got) >= len(sent) else None

        got = wait_for(received, 30, "the exported spans in the collector's file exporter", interval_s=0.3)
        assert {s["spanId"] for s in got} == {s["spanId"] for s in sent}
        assert {s["name"] for s in got} >= {"arrayplan.plan", "arrayplan.evaluate_batch"}
    finally:
        proc.stop()
