"""A drive against the models' own bounds (drive_checks): every violation says which kind of rule
it broke by its code, so the API maps it without reading the reason's words; and the interval
type the simulated figures are carried in."""

from __future__ import annotations

import math

import pytest

from arrayplan_engine import drive_checks, errors
from arrayplan_engine.catalog import USER_PROVENANCE, drive_from_fields
from arrayplan_engine.interval import NOT_ESTIMATED, Interval

# A 480 GB SATA MLC SSD as a plan's custom drive would give it (the fuzz tests' good drive).
_SSD = dict(name="check-ssd-480gb", kind="ssd", interface="sata-6g", capacity_bytes=480_000_000_000, nand_type="mlc",
            random_read_iops=90_000.0, random_write_iops=30_000.0, seq_read_bytes_per_s=540e6, seq_write_bytes_per_s=500e6,
            endurance_bytes_written=3_500_000_000_000_000, price_usd=400.0)
_HDD = dict(name="check-hdd-4tb", kind="hdd", interface="sas-12g", capacity_bytes=4 * 10**12, rpm=7200, average_seek_s=0.008,
            price_usd=100.0)


def _violations(base: dict[str, object], **changes: object) -> list[errors.Violation]:
    fields = {k: v for k, v in {**base, **changes}.items() if v is not None}
    drive = drive_from_fields(fields, "d", bare=USER_PROVENANCE)
    return drive_checks.drive_model_violations(drive, "d", supplied=set(fields))


def test_a_good_drive_passes() -> None:
    assert _violations(_SSD) == []


def test_a_spare_factor_outside_the_ftl_models_range_gives_the_raw_bytes_allowed() -> None:
    """Raw NAND equal to the capacity leaves the FTL no spare. The allowed raw bytes for this
    capacity, solved from ssd.calibrate's spare factor 1 - user / (raw x (1 - reserve)) in
    (0.005, 0.95) with MLC's bad-block reserve (1 - 3936 / 4096 of the blocks, the NAND datasheets'
    minimum valid blocks; docs/ssd-model.md): raw in (480e9 / (0.995 x 3936 / 4096),
    480e9 / (0.05 x 3936 / 4096)) = (502.02e9, 9990.2e9) bytes, whole bytes a hair inside."""
    (v,) = _violations(_SSD, raw_nand_bytes=480_000_000_000)
    assert (v.field, v.code) == ("d.raw_nand_bytes", errors.SPARE_FACTOR_OUT_OF_RANGE)
    lo, hi = (float(x) for x in v.allowed.strip("[]").split(", "))
    assert lo == pytest.approx(480e9 / (0.995 * 3936 / 4096), rel=1e-8)
    assert hi == pytest.approx(480e9 / (0.05 * 3936 / 4096), rel=1e-8)
    assert v.reason.startswith(f"must be in {v.allowed} for capacity_bytes 480000000000")


@pytest.mark.parametrize(("changes", "field", "code", "allowed"), [
    ({"seq_write_bytes_per_s": None}, "d.seq_write_bytes_per_s", errors.REQUIRED, "> 0"),
    ({"capacity_bytes": 1}, "d.capacity_bytes", errors.OUT_OF_RANGE, ">= 655360"),
    ({"seq_write_bytes_per_s": 1e-9}, "d.seq_write_bytes_per_s", errors.MODEL_OUT_OF_RANGE, ""),
])
def test_each_violation_names_its_field_and_its_kind(changes: dict[str, object], field: str, code: str, allowed: str) -> None:
    v = next(x for x in _violations(_SSD, **changes) if x.field == field)
    assert (v.code, v.allowed) == (code, allowed), v
    assert v.code in errors.CODES and v.reason


def test_a_disk_without_a_media_rate_is_told_it_is_required() -> None:
    (v,) = _violations(_HDD)
    assert (v.field, v.code) == ("d.seq_read_bytes_per_s", errors.REQUIRED)
    assert v.reason.startswith("is required for kind 'hdd' (the disk model's media rate): must be")


def test_a_renamed_violation_keeps_its_code() -> None:
    v = errors.Violation(field="workload.read_fraction", reason="must be in [0, 1], got 2", code=errors.OUT_OF_RANGE, allowed="[0, 1]")
    moved = v.at("plan.spec.workload.read_fraction")
    assert (moved.field, moved.reason, moved.code, moved.allowed) == ("plan.spec.workload.read_fraction", v.reason, v.code, v.allowed)


def test_an_interval_reads_its_ends() -> None:
    iv = Interval(value=2.0, low=1.0, high=4.0)
    assert iv.known and iv.relative_half_width == 0.75 and (iv.low_or_value, iv.high_or_value) == (1.0, 4.0)
    point = Interval(value=2.0)  # one replication: no interval, the point stands in for its ends
    assert not point.known and point.relative_half_width == math.inf and (point.low_or_value, point.high_or_value) == (2.0, 2.0)
    overloaded = Interval(value=math.inf, low=math.inf, high=math.inf)  # did not keep up: infinite, not unknown
    assert not overloaded.known and overloaded.high_or_value == math.inf
    assert math.isnan(NOT_ESTIMATED.value) and not NOT_ESTIMATED.known
