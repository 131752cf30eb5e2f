"""RAID 5 over large drives is flagged, from the durability model's own P(unreadable data after a
rebuild), with the numbers, in the recommendation's explanation and its ``warnings``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from arrayplan_engine import durability_flags, plan_request, recommend
from arrayplan_engine.catalog import get_drive
from arrayplan_engine.reliability import ure_probability
from arrayplan_engine.units import TB, MiB
from arrayplan_engine.workload import Workload

ARCHIVE = Workload(read_fraction=0.05, random_fraction=0.05, io_size_mix=((1 * MiB, 1.0),), queue_depth=8, target_iops=300)


def _plan(layout: str, width: int, count: int, drive: str = "hdd-7k2-nearline-8tb", capacity_tb: float = 90.0,
          years: int = 5) -> recommend.PlanOutcome:
    req = plan_request.PlanRequest(workload=ARCHIVE, service_life_years=years,
                                   constraints=plan_request.Constraints(usable_capacity_bytes=capacity_tb * TB),
                                   candidate_space=plan_request.CandidateSpace(drive_models=(drive,), layouts=(layout,), group_widths=(width,),
                                                                               min_drive_count=count, max_drive_count=count))
    return recommend.plan(req)


def test_raid5_of_8tb_nearline_disks_is_flagged_with_its_numbers() -> None:
    """The archive answer the issue questioned: RAID 5 of 20 x 8 TB in groups of 4 (90 TB at the 80 % fill
    target: 112.5 TB of the 120 TB it holds). A rebuild reads
    3 x 8 TB = 24 TB; at 1e-15 per bit that meets a URE in 1 - exp(-24e12 x 8 x 1e-15) = 17.5 % of
    rebuilds; P(unreadable after a rebuild) over 5 years is far above the 1e-3 flag."""
    rec = _plan("raid5", 4, 20).recommendations[0]
    e = rec.evaluation
    assert e.unreadable_after_rebuild_probability >= durability_flags.RAID5_UNREADABLE_FLAG_PROBABILITY
    (w,) = rec.warnings
    disk = get_drive("hdd-7k2-nearline-8tb")
    per_rebuild = ure_probability(uber=disk.uber or 0.0, read_bytes=3 * disk.capacity_bytes)
    assert per_rebuild == pytest.approx(0.175, abs=0.005)
    assert w.startswith("RAID 5 over 8 TB drives: a rebuild reads the 3 surviving members (24 TB)")
    assert f"{per_rebuild:.1%} of rebuilds meet one" in w
    assert f"after a rebuild over 5 years) is {e.unreadable_after_rebuild_probability:.2g}" in w
    assert f"P(losing the array) {e.array_loss_probability:.2g}" in w
    assert rec.explanation.endswith(w)


def test_raid6_and_small_raid5_are_not_flagged() -> None:
    """RAID 6 of the same disks keeps a second parity for the rebuild (its URE term is not a RAID 5
    flag); RAID 5 of 300 GB disks over one year reads 0.9 TB per rebuild and stays below 1e-3."""
    six = _plan("raid6", 6, 24).recommendations[0]
    assert six.warnings == () and "RAID 5 over" not in six.explanation
    small = _plan("raid5", 4, 12, drive="hdd-15k-sas-300gb", capacity_tb=2.0, years=1).recommendations[0]
    assert small.evaluation.unreadable_after_rebuild_probability < durability_flags.RAID5_UNREADABLE_FLAG_PROBABILITY
    assert small.warnings == ()


def test_the_flag_follows_the_model_not_the_size() -> None:
    """The same 8 TB RAID 5 evaluation is flagged or not by its unreadable-data probability against
    the threshold alone, and a drive with no UBER is never flagged."""
    e = _plan("raid5", 4, 20).recommendations[0].evaluation
    disk = get_drive("hdd-7k2-nearline-8tb")
    p = e.unreadable_after_rebuild_probability
    assert durability_flags.raid5_large_drive_warning(e, disk, service_life_years=5, threshold=p) is not None
    assert durability_flags.raid5_large_drive_warning(e, disk, service_life_years=5, threshold=p * 1.01) is None
    assert durability_flags.raid5_large_drive_warning(e, replace(disk, uber=None), service_life_years=5) is None
