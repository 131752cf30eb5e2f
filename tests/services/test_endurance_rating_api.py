"""A plan's custom drive may say its endurance was rated for sequential writes (DriveSpec
endurance_rating_workload); the wear model then reads it as its random-workload equivalent, and
ListDrives-style conversion carries the catalog's rating workload."""

from __future__ import annotations

from pathlib import Path

import pytest

from arrayplan_engine import endurance
from arrayplan_engine.catalog import get_drive
from arrayplan_engine.errors import InvalidInputError
from arrayplan_services.api.convert import drive_to_proto, plan_request_from_proto
from arrayplan_services.api.planfile import plan_spec_from_text

PLAN = """
workload: {read_fraction: 0.7, random_fraction: 1.0, io_size_mix: [{io_bytes: 4 KiB, weight: 1}], target_iops: 20000}
constraints: {usable_capacity_bytes: 4 TB}
candidate_space: {drive_models: [site-qlc-7680gb], layouts: [raid10], max_drive_count: 8}
custom_drives:
  - name: site-qlc-7680gb
    kind: ssd
    interface: pcie-gen4-x4
    capacity_bytes: 7.68 TB
    nand_type: qlc
    random_read_iops: 500000
    steady_random_write_iops: 20000
    seq_read_bytes_per_s: 6e9
    seq_write_bytes_per_s: 2e9
    endurance_bytes_written: 12.6 PB
    RATING
    price_usd: 900
    active_power_w: 15
    idle_power_w: 5
"""


def _drive(rating: str):  # type: ignore[no-untyped-def]
    spec, _ = plan_spec_from_text(PLAN.replace("RATING", rating), "plan.yaml", Path("."))
    return plan_request_from_proto(spec, "plan.spec").custom_drives[0]


def test_a_custom_drive_rated_for_sequential_writes_is_read_as_its_random_equivalent() -> None:
    seq = _drive("endurance_rating_workload: sequential")
    assert seq.endurance_rating_workload == "sequential"
    assert endurance.random_equivalent_endurance_bytes(seq) == pytest.approx(12.6e15 / endurance.jesd219_write_amplification(seq), rel=1e-12)
    unsaid = _drive("")
    assert unsaid.endurance_rating_workload is None
    assert endurance.random_equivalent_endurance_bytes(unsaid) == pytest.approx(12.6e15, rel=1e-12)


def test_a_bad_rating_workload_is_refused_by_field() -> None:
    spec, _ = plan_spec_from_text(PLAN.replace("RATING", "endurance_rating_workload: streaming"), "plan.yaml", Path("."))
    with pytest.raises(InvalidInputError) as err:
        plan_request_from_proto(spec, "plan.spec")
    (v,) = [v for v in err.value.violations if v.field.endswith("endurance_rating_workload")]
    assert v.field == "plan.spec.custom_drives[0].endurance_rating_workload" and "jesd219-random, sequential" in v.reason


def test_the_catalog_rating_workload_reaches_the_api() -> None:
    assert drive_to_proto(get_drive("intel-d5-p4320-7680gb")).endurance_rating_workload == "sequential"
    assert drive_to_proto(get_drive("intel-d7-p5500-7680gb")).endurance_rating_workload == "jesd219-random"
    assert drive_to_proto(get_drive("hdd-7k2-nearline-8tb")).endurance_rating_workload == ""
