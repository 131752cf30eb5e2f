"""The search's default space (every drive, SSDs and disks), what each cheap bound removed, the
nearest misses, and the examples that exercise them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from arrayplan_engine import candidates, evaluation, plan_request, ranking, recommend
from arrayplan_engine.catalog import all_drives
from arrayplan_engine.units import TB, KiB
from arrayplan_engine.workload import Workload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _from_example(name: str) -> plan_request.PlanRequest:
    from arrayplan_services.api.convert import plan_request_from_proto
    from arrayplan_services.api.planfile import load_plan_file

    spec, _ = load_plan_file(EXAMPLES / name)
    return plan_request_from_proto(spec)


def test_default_space_is_every_drive_ssds_and_disks() -> None:
    req = plan_request.PlanRequest(workload=Workload(read_fraction=0.5), constraints=plan_request.Constraints(usable_capacity_bytes=10 * TB),
                         candidate_space=plan_request.CandidateSpace(layouts=("raid6",), group_widths=(8,), max_drive_count=16))
    names = {c.drive_model for c in candidates.enumerate_candidates(req)}
    assert names == {d.name for d in all_drives()}
    assert {"hdd-7k2-nearline-8tb", "wd-ultrastar-hc570-22tb", "kioxia-cm6-r-30720gb"} <= names


def test_impossible_plan_counts_every_bound_and_names_the_nearest_misses() -> None:
    req = _from_example("impossible.yaml")  # 1 PB in 8 drive slots
    cands = candidates.enumerate_candidates(req)
    report = candidates.prune_report(req, cands)
    counts = dict(report.removed_by_bound)
    assert list(counts) == list(candidates.BOUNDS)
    assert not report.kept and counts["capacity"] == len(cands) == report.pruned
    # The nearest miss is the largest drive: 8 x 61.44 TB in RAID 5 of 8 = 7 x 61.44 = 430 TB.
    best = report.nearest_misses[0]
    assert best.candidate.drive_model == "solidigm-d5-p5336-61440gb" and best.candidate.drive_count == 8
    assert best.failed[0].bound_value == pytest.approx(7 * 61.44e12)
    out = ranking.rank(req, [], candidates_total=len(cands), candidates_pruned=report.pruned, pruning=report)
    assert f"capacity {len(cands):,}" in out.summary and "budget 0" in out.summary and "latency 0" in out.summary
    # 1 PB at the default 80 % fill target needs 1,250 TB usable
    assert "Nearest misses: 8 x Solidigm D5-P5336 61.44TB" in out.summary and "430.1 TB short of 1,250.0 TB" in out.summary
    from arrayplan_services.api.convert import outcome_to_proto

    result = outcome_to_proto(out)
    assert [(b.bound, b.candidate_count) for b in result.removed_by_bound] == list(report.removed_by_bound)
    assert result.nearest_misses[0].failed_bounds == ["capacity"] and result.nearest_misses[0].drive_count == 8


def test_drive_slot_bound_counts_the_arrays_over_the_limit() -> None:
    space = plan_request.CandidateSpace(drive_models=("intel-dc-s3500-480gb", "hdd-7k2-nearline-8tb"), layouts=("raid6",),
                              group_widths=(6,), max_drive_count=24, over_provisioning_fractions=(0.0, 0.25))
    req = plan_request.PlanRequest(workload=Workload(read_fraction=0.5), constraints=plan_request.Constraints(usable_capacity_bytes=1 * TB, max_drive_count=12),
                         candidate_space=space)
    # 6, 12 drives are enumerated; 18, 24 are over the 12 slots: 2 shapes x (2 OP values for the
    # SSD + 1 for the disk) = 6 arrays the drive-slot bound removed.
    assert len(candidates.enumerate_candidates(req)) == 6
    assert dict(candidates.prune_report(req, candidates.enumerate_candidates(req)).removed_by_bound)["drive_slots"] == 6


def test_latency_bound_drops_disks_that_evaluation_would_fail() -> None:
    """A 4 KiB random-read database at p99 < 5 ms: half a revolution of a 7,200 rpm disk is
    4.17 ms and 99 % of reads wait at least ~0.99 of one, so every disk array falls to the
    latency bound; evaluating one confirms it misses."""
    w = Workload(read_fraction=0.9, random_fraction=1.0, io_size_mix=((4 * KiB, 1.0),), target_iops=500.0)
    req = plan_request.PlanRequest(
        workload=w, constraints=plan_request.Constraints(usable_capacity_bytes=10 * TB, latency_percentile=99.0, latency_target_s=0.005),
        candidate_space=plan_request.CandidateSpace(drive_models=("hdd-7k2-nearline-8tb", "intel-d7-p5600-6400gb"),
                                                    layouts=("raid10",), max_drive_count=8), service_life_years=1)
    report = candidates.prune_report(req, candidates.enumerate_candidates(req))
    assert dict(report.removed_by_bound)["latency"] > 0
    assert {c.drive_model for c in report.kept} == {"intel-d7-p5600-6400gb"}
    hdd = next(m.candidate for m in report.nearest_misses if m.candidate.drive_model.startswith("hdd"))
    floor = next(k for m in report.nearest_misses for k in m.failed if k.bound == "latency")
    assert floor.bound_value == pytest.approx(60 / 7200 * (0.99 - 0.1) / 0.9, rel=1e-9)
    e = evaluation.evaluate(req, hdd)
    assert not e.meets_constraints and e.latency_at_percentile_s.value > floor.bound_value


def test_host_managed_smr_takes_no_random_writes() -> None:
    req = _from_example("archive-budget.yaml")  # 10 % random IO, 90 % writes
    req = dataclasses.replace(req, candidate_space=dataclasses.replace(req.candidate_space, drive_models=("wd-ultrastar-hc670-26tb",)))
    report = candidates.prune_report(req, candidates.enumerate_candidates(req))
    assert not report.kept
    assert all(any(k.bound == "iops" and k.bound_value == 0 for k in m.failed) for m in report.nearest_misses)


@pytest.mark.slow
def test_archive_budget_example_finds_an_answer() -> None:
    out = recommend.plan(_from_example("archive-budget.yaml"))
    assert out.constraints_met, out.summary
    best = out.recommendations[0].evaluation
    assert best.purchase_cost_usd <= 150_000 and best.usable_capacity_bytes >= 40e12 * 1.3**4
