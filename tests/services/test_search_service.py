"""The search through the real server (127.0.0.1, local Ray, SQLite): a plan answered by the
search and the same plan with ``exhaustive`` give the same top recommendations; the search's
counts add up in the progress and the result; ``arrayplan plan --exhaustive`` sets the field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from arrayplan.v1 import planner_pb2 as pb
from conftest import ROOT, ServerProcess, oltp_spec

# 2 drives x RAID 10/6 up to 16 drives, two recommendations: the search stops before the end
SMALL_PLAN = ("workload:\n  read_fraction: 0.7\n  io_size_mix: [{io_bytes: 8 KiB, weight: 1}]\n  target_iops: 5000\n"
              "  daily_write_bytes: 500 GB\nconstraints:\n  usable_capacity_bytes: 2 TB\n  latency_percentile: 99\n"
              "  latency_target: 5ms\ncandidate_space:\n  drive_models: [intel-dc-s3500-480gb, intel-dc-s3700-400gb]\n"
              "  layouts: [raid10, raid6]\n  max_drive_count: 16\nservice_life_years: 3\nseed: 2\nmax_recommendations: 2\n")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arrayplan_services.cli.main", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def _plan(stub: Any, spec: pb.PlanSpec) -> pb.Plan:
    created = stub.CreatePlan(pb.CreatePlanRequest(plan=pb.Plan(spec=spec)), timeout=30)
    final = list(stub.WatchPlan(pb.WatchPlanRequest(name=created.name), timeout=600))[-1].plan
    assert final.state == pb.Plan.STATE_SUCCEEDED, final.error_message
    return final


def _top(plan: pb.Plan) -> list[tuple[str, str, int, int, int, float]]:
    return [(r.drive_model, r.layout, r.group_width, r.drive_count, r.stripe_unit_bytes, r.total_cost_usd)
            for r in plan.result.recommendations]


def test_search_and_exhaustive_agree_through_the_server(stub: Any) -> None:
    spec = oltp_spec()
    spec.max_recommendations = 2
    fast = _plan(stub, spec)
    spec.exhaustive = True
    full = _plan(stub, spec)
    assert fast.result.constraints_met and _top(fast) == _top(full)
    assert all(r.stripe_unit_bytes == 64 * 1024 for r in fast.result.recommendations)  # 8 KiB IOs: the default unit
    p, q = fast.progress, full.progress
    assert full.result.candidates_not_simulated == q.candidates_not_simulated == 0 and full.result.search_note == ""
    assert q.candidates_evaluated == q.candidates_to_evaluate == q.candidates_total - q.candidates_pruned
    assert p.candidates_evaluated == p.candidates_to_evaluate < q.candidates_evaluated
    assert p.candidates_not_simulated == fast.result.candidates_not_simulated == q.candidates_evaluated - p.candidates_evaluated
    assert p.candidates_total == p.candidates_pruned + p.candidates_to_evaluate + p.candidates_not_simulated
    assert f"{p.candidates_not_simulated:,} candidates not simulated" in fast.result.search_note
    assert fast.result.search_note in fast.result.summary
    assert any(a.startswith("Search: candidates simulated in the order") for a in fast.result.assumptions)
    assert any(a.startswith("Search: every kept candidate simulated") for a in full.result.assumptions)


def test_plan_exhaustive_flag(server: ServerProcess, tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_PLAN)
    runs = {}
    for flags in ((), ("--exhaustive",)):
        out = run_cli("plan", str(path), *flags, "--server", server.address, "--format", "json", "--quiet")
        assert out.returncode == 0, out.stderr
        runs[flags] = json.loads(out.stdout)
    fast, full = runs[()], runs[("--exhaustive",)]
    assert fast["spec"].get("exhaustive", False) is False and full["spec"]["exhaustive"] is True
    key = ("drive_model", "layout", "group_width", "drive_count", "total_cost_usd")
    assert [[r[k] for k in key] for r in fast["result"]["recommendations"]] == \
           [[r[k] for k in key] for r in full["result"]["recommendations"]]
    assert full["result"].get("candidates_not_simulated", 0) == 0
