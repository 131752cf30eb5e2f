"""Coordinated reads as a plan option and on SimulateArray / ``arrayplan simulate`` (docs/array-model.md,
"Coordinated reads (optional)"): the plan applies it to its parity candidates only and reports each
one's tail without it; SimulateArray answers with and without on the same seeds, with intervals."""

from __future__ import annotations

import json
import math
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2
from test_cli import run_cli, small_plan

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import ranking, recommend
from arrayplan_services.api.convert import outcome_to_proto, plan_request_from_proto
from arrayplan_services.cli.render import _table
from arrayplan_services.report import frame as report_frame
from arrayplan_services.report import page
from conftest import ServerProcess


def _plan_spec(coordinated: bool) -> pb.PlanSpec:
    return pb.PlanSpec(
        workload=pb.Workload(read_fraction=0.7, target_iops=15_000, daily_write_bytes=5e11,
                             io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1.0)]),
        constraints=pb.Constraints(usable_capacity_bytes=2 * 10**12, latency_percentile=99.0,
                                   latency_target=duration_pb2.Duration(nanos=5_000_000)),
        service_life_years=2, coordinated_reads=coordinated, max_recommendations=20,
        candidate_space=pb.CandidateSpace(drive_models=["intel-dc-s3500-480gb"], layouts=["raid6", "raid10"], group_widths=[8],
                                          max_drive_count=16),
    )


@pytest.fixture(scope="module")
def planned() -> tuple[ranking.PlanOutcome, ranking.PlanOutcome, pb.Plan]:
    plain = recommend.plan(plan_request_from_proto(_plan_spec(False)))
    spec = _plan_spec(True)
    req = plan_request_from_proto(spec)
    assert req.coordinated_reads
    outcome = recommend.plan(req)
    plan = pb.Plan(name="plans/coordinated", spec=spec, state=pb.Plan.STATE_SUCCEEDED, result=outcome_to_proto(outcome))
    return plain, outcome, plan


def test_the_plan_applies_it_to_parity_layouts_and_reports_the_tail_without(
        planned: tuple[ranking.PlanOutcome, ranking.PlanOutcome, pb.Plan]) -> None:
    plain, outcome, plan = planned
    evals = {(r.evaluation.candidate.layout, r.evaluation.candidate.drive_count): r.evaluation for r in outcome.recommendations}
    assert any(layout == "raid6" for layout, _ in evals) and any(layout == "raid10" for layout, _ in evals), sorted(evals)
    plain_evals = {(r.evaluation.candidate.layout, r.evaluation.candidate.drive_count): r.evaluation for r in plain.recommendations}
    for key, e in evals.items():
        if key[0] == "raid10":
            # a mirror has no parity to read around: simulated without, the same figures as a
            # plan without the option, and the answer says it did not apply
            assert not e.coordinated_reads
            assert math.isnan(e.latency_at_percentile_without_coordinated_reads_s.value)
            if key in plain_evals:
                assert e.latency_at_percentile_s == plain_evals[key].latency_at_percentile_s
            continue
        assert e.coordinated_reads
        without_iv = e.latency_at_percentile_without_coordinated_reads_s
        without, low, high = without_iv.value, without_iv.low, without_iv.high
        assert 0 < low <= without <= high
        # the tail without the policy is the plan without the option's figure (same streams,
        # same replications, same year when the same year binds): within its interval there
        if key in plain_evals:
            p = plain_evals[key]
            assert p.latency_at_percentile_s.low <= without <= p.latency_at_percentile_s.high or \
                abs(without - p.latency_at_percentile_s.value) <= high - low
        # 8 KiB random reads at 15K IOPS on 8-16 members: a few % are read around (each read
        # whose member is busy on its die and whose sources are idle), within 0.5 to 10 %
        assert 0.005 < e.reconstructed_read_fraction < 0.10, e.reconstructed_read_fraction
    # the proto, the terminal table and the report carry it
    for r in plan.result.recommendations:
        if r.layout == "raid10":
            assert not r.coordinated_reads_applied and not r.HasField("latency_at_percentile_without_coordinated_reads")
        else:
            assert r.coordinated_reads_applied and r.latency_at_percentile_without_coordinated_reads.ToNanoseconds() > 0
            assert r.latency_at_percentile_without_coordinated_reads_low.ToNanoseconds() > 0
            assert 0 < r.reconstructed_read_fraction < 0.1
    headers, rows = _table(plan)
    titles = [h for h, _ in headers]
    assert "p99 without coord. reads ms" in titles and "reads read around" in titles
    col = titles.index("reads read around")
    assert {cells[col] == "n/a (no parity)" for r, cells in rows} == {True, False}
    frame = report_frame.frame_of(plan)
    md = page.markdown(plan, frame, {}, {})
    assert "p99 without coord. reads" in md and "n/a (no parity)" in md and "coordinated reads on parity layouts" in md
    html = page.html(plan, frame, {}, {})
    assert "p99 without coord. reads" in html and "reads read around" in html and "n/a (no parity)" in html
    # a plan without the option shows none of it
    plain_plan = pb.Plan(name="plans/plain", spec=_plan_spec(False), state=pb.Plan.STATE_SUCCEEDED, result=outcome_to_proto(plain))
    assert not any("coord" in h for h, _ in _table(plain_plan)[0])


def _request(**fields: object) -> pb.SimulateArrayRequest:
    req = pb.SimulateArrayRequest(drive_model="intel-dc-s3500-480gb", drive_count=24, layout="raid6", group_width=12,
                                  workload=pb.Workload(read_fraction=0.7, target_iops=25_000, queue_depth=32,
                                                       io_size_mix=[pb.IoSizeShare(io_bytes=8192, weight=1.0)]),
                                  seed=1, **fields)  # type: ignore[arg-type]
    req.duration.FromNanoseconds(3 * 10**9)
    return req


def test_simulate_array_rpc_with_and_without(stub) -> None:  # type: ignore[no-untyped-def]
    resp = stub.SimulateArray(_request(coordinated_reads=True, replications=4), timeout=300)
    assert resp.coordinated_reads and resp.replications == 4
    # open loop at 25,000 IOPS, 4 x 3 s: the mean of the replications within 2 %, its interval around it
    assert resp.achieved_iops == pytest.approx(25_000, rel=0.02)
    assert 0 < resp.achieved_iops_low < resp.achieved_iops < resp.achieved_iops_high
    for summary in (resp.latency, resp.read_latency, resp.latency_without_coordinated_reads, resp.read_latency_without_coordinated_reads):
        for name in ("p50", "p99", "p9999"):
            lo, mid, hi = (getattr(s, name).ToNanoseconds() for s in (summary.low, summary, summary.high))
            assert 0 < lo <= mid <= hi, (name, lo, mid, hi)
    # light load: the reads that would wait behind a program are read around; the read p99 falls
    # by more than a quarter (model at 10 s: 1.18 -> 0.65 ms), beyond both intervals
    with_p99, without_p99 = resp.read_latency.high.p99.ToNanoseconds(), resp.read_latency_without_coordinated_reads.low.p99.ToNanoseconds()
    assert with_p99 < 0.75 * without_p99
    # about 2.7 % of reads (tests/engine/test_coordinated_reads.py), within 1 to 5 %
    assert 0.01 < resp.reconstructed_read_fraction < 0.05
    # the plain array's figures are the run without the option on the same seeds, exactly
    plain = stub.SimulateArray(_request(replications=4), timeout=300)
    assert not plain.coordinated_reads and not plain.HasField("latency_without_coordinated_reads")
    assert plain.read_latency.p99 == resp.read_latency_without_coordinated_reads.p99
    assert plain.latency.p9999 == resp.latency_without_coordinated_reads.p9999
    assert plain.latency.high.p9999 == resp.latency_without_coordinated_reads.high.p9999


@pytest.mark.parametrize(("fields", "field", "reason"), [
    ({"coordinated_reads": True, "layout": "raid10"}, "coordinated_reads", "parity layouts"),
    ({"replications": 13}, "replications", "[1, 12]"),
])
def test_simulate_array_rpc_refuses_bad_options(stub, fields: dict[str, object], field: str, reason: str) -> None:  # type: ignore[no-untyped-def]
    layout = fields.pop("layout", None)
    req = _request(**fields)
    if layout:
        req.layout, req.group_width = str(layout), 4
    with pytest.raises(grpc.RpcError) as err:
        stub.SimulateArray(req, timeout=60)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details() and reason in err.value.details(), err.value.details()


def test_simulate_cli_coordinated_reads_and_intervals(server: ServerProcess) -> None:
    args = ("simulate", "--drive", "intel-dc-s3500-480gb", "--drives", "24", "--layout", "raid6", "--group-width", "12",
            "--read-fraction", "0.7", "--io-bytes", "8k", "--target-iops", "25000", "--duration-s", "3", "--seed", "1",
            "--server", server.address)
    out = run_cli(*args, "--coordinated-reads", "--format", "json")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    # the keys of old, as they were, and the intervals beside them
    assert body["achieved_iops"] == pytest.approx(25_000, rel=0.02)
    assert body["achieved_iops_low"] < body["achieved_iops"] < body["achieved_iops_high"]
    assert body["replications"] == 3 and body["coordinated_reads"] is True
    assert body["latency"]["low"]["p99_s"] <= body["latency"]["p99_s"] <= body["latency"]["high"]["p99_s"]
    assert body["read_latency"]["p99_s"] < body["read_latency_without_coordinated_reads"]["p99_s"]
    assert 0.01 < body["reconstructed_read_fraction"] < 0.05
    text = run_cli(*args, "--coordinated-reads")
    assert text.returncode == 0, text.stderr
    assert "(95 %:" in text.stdout and "read_latency_without_coordinated_reads.p99" in text.stdout
    one = json.loads(run_cli(*args, "--replications", "1", "--format", "json").stdout)
    assert one["replications"] == 1 and one["latency"]["low"]["p99_s"] is None and one["achieved_iops_low"] == 0
    bad = run_cli(*args, "--coordinated-reads", "--layout", "raid10", "--group-width", "4")
    assert bad.returncode == 2 and "coordinated_reads" in bad.stderr and "parity" in bad.stderr
    # an option only the in-process run takes is refused against a server, naming it
    local_only = run_cli(*args, "--coordinated-reads", "--parts", "2")
    assert local_only.returncode == 2 and "--parts" in local_only.stderr and "--local" in local_only.stderr


def test_plan_files_and_capacity_plans_carry_the_option() -> None:
    """A plan file (and a CapacityPlan spec, the same parser) sets it; the CRD's structural schema
    declares it, or the API server would prune it."""
    import yaml

    from arrayplan_services.api.planfile import plan_spec_from_text
    from arrayplan_services.controller.resource import plan_spec_to_spec, spec_to_plan_spec
    from conftest import ROOT

    text = ("workload:\n  read_fraction: 0.7\nconstraints:\n  usable_capacity_bytes: 2 TB\n"
            "candidate_space:\n  layouts: [raid6]\ncoordinated_reads: true\n")
    spec, _ = plan_spec_from_text(text, "plan.yaml")
    assert spec.coordinated_reads
    assert spec_to_plan_spec(plan_spec_to_spec(spec)).coordinated_reads
    crd = yaml.safe_load((ROOT / "helm/arrayplan/crds/capacityplans.yaml").read_text())
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert props["coordinated_reads"]["type"] == "boolean"


def test_plan_cli_flag(tmp_path: Path) -> None:
    """``arrayplan plan --coordinated-reads`` (the plan file's coordinated_reads: true): the JSON
    carries each recommendation's tail without the policy where it applied, the table its columns."""
    args = ("plan", small_plan(tmp_path), "--local", "--executor", "local", "--data-dir", str(tmp_path / "d"), "--coordinated-reads")
    out = run_cli(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert body["spec"]["coordinated_reads"] is True
    recs = body["result"]["recommendations"]
    assert {r["layout"] for r in recs} >= {"raid6", "raid10"}, {r["layout"] for r in recs}
    for r in recs:
        applied = r["layout"] == "raid6"
        assert r["coordinated_reads_applied"] is applied
        without = r["latency_at_percentile_without_coordinated_reads_s"]
        if applied:
            assert r["latency_at_percentile_without_coordinated_reads_low_s"] <= without
            assert without <= r["latency_at_percentile_without_coordinated_reads_high_s"]
            assert 0 < r["reconstructed_read_fraction"] < 0.1
        else:
            assert without is None and r["reconstructed_read_fraction"] == 0
    table = run_cli(*args, "--data-dir", str(tmp_path / "d2"))
    assert table.returncode == 0, table.stderr
    assert "without coord. reads" in table.stdout and "n/a (no parity)" in table.stdout
