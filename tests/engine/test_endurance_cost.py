"""Endurance years, cost and durability against worked examples (arithmetic written out)."""

from __future__ import annotations

import math

import pytest

from arrayplan_engine import cost, endurance, reliability
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import TB, YEAR_HOURS, KiB
from arrayplan_engine.workload import Workload


def test_drive_writes_and_endurance_years_raid6() -> None:
    # 1 TB/day of 4 KiB random host writes on 12 drives in RAID 6: each host byte writes 3 bytes
    # (data + P + Q), spread over 12 drives -> 0.25 TB per drive per day.
    w = Workload(read_fraction=0.7, daily_write_bytes=1 * TB, io_size_mix=((4 * KiB, 1.0),))
    per_drive = endurance.drive_write_bytes_per_day(make_layout("raid6", 12), 12, w)
    assert per_drive == pytest.approx(0.25 * TB)
    # S3500 480GB rated 275 TBW (seed 001's endurance table): 275 / (0.25 x 365) = 3.014 years.
    assert endurance.endurance_years(275 * TB, per_drive) == pytest.approx(275 / (0.25 * 365), rel=1e-12)
    assert endurance.endurance_years(275 * TB, per_drive) == pytest.approx(3.014, abs=1e-3)


def test_life_used_with_growth_and_wear_out_year() -> None:
    # Year 1 uses 20 % of life; growth 50 %/year: 0.2, 0.3, 0.45, 0.675 -> cumulative 0.2, 0.5,
    # 0.95, 1.625: wears out in year 4; over 3 years 95 % used.
    per_day = 0.2 * 100 * TB / 365
    assert endurance.life_used_fraction(100 * TB, per_day, years=3, growth_per_year=0.5) == pytest.approx(0.95)
    assert endurance.wear_out_year(100 * TB, per_day, years=5, growth_per_year=0.5) == 4
    assert endurance.wear_out_year(100 * TB, per_day, years=3, growth_per_year=0.5) is None


def test_mirror_writes_every_copy() -> None:
    w = Workload(read_fraction=0.0, daily_write_bytes=2 * TB)
    # RAID 10 of 8: 2 TB x 2 copies / 8 drives = 0.5 TB per drive per day.
    assert endurance.drive_write_bytes_per_day(make_layout("raid10", 8), 8, w) == pytest.approx(0.5 * TB)


def test_daily_writes_derived_from_rate() -> None:
    # 1,000 IOPS, 30 % writes, 8 KiB: 300 x 8192 x 86400 = 212,336,640,000 bytes/day.
    w = Workload(read_fraction=0.7, target_iops=1000, io_size_mix=((8 * KiB, 1.0),))
    assert w.daily_write_bytes_effective() == pytest.approx(300 * 8192 * 86_400)


def test_cost_worked_example() -> None:
    # 12 drives at $600 = $7,200. Power: idle 0.6 W, active 5 W, 50 % busy -> 12 x 2.8 = 33.6 W;
    # 5 years at $0.12/kWh: 33.6 / 1000 x 8760 x 5 x 0.12 = $176.60.
    assert cost.purchase_cost_usd(600, 12) == 7200
    p = cost.average_power_w(idle_power_w=0.6, active_power_w=5.0, drive_count=12, utilization=0.5)
    assert p == pytest.approx(33.6)
    assert cost.energy_cost_usd(p, years=5, usd_per_kwh=0.12) == pytest.approx(33.6 / 1000 * 8760 * 5 * 0.12)
    # Drives lasting 2 years in a 5-year life: each slot buys ceil(5/2) - 1 = 2 more drives.
    assert cost.wear_out_replacements(12, endurance_years=2.0, service_life_years=5) == 24
    assert cost.wear_out_replacements(12, endurance_years=6.0, service_life_years=5) == 0
    # 12 drives, AFR 0.6 % (seed 000: "~0.6% per year"), 5 years: 0.36 expected failures.
    assert cost.expected_failure_replacements(12, annual_failure_rate=0.006, service_life_years=5) == pytest.approx(0.36)


def test_mttdl_classic_formulas() -> None:
    # RAID 5: MTTF^2 / (G (G-1) MTTR); 8 drives, MTTF 1.2M h, MTTR 24 h:
    # 1.44e12 / (8 x 7 x 24) = 1.0714e9 h.
    m5 = reliability.mttdl_hours(group_width=8, failures_tolerated=1, group_count=1, mttf_hours=1.2e6, mttr_hours=24)
    assert m5 == pytest.approx(1.2e6**2 / (8 * 7 * 24))
    # RAID 6: MTTF^3 / (G (G-1) (G-2) MTTR^2) = 1.728e18 / (336 x 576) = 8.929e12 h.
    m6 = reliability.mttdl_hours(group_width=8, failures_tolerated=2, group_count=1, mttf_hours=1.2e6, mttr_hours=24)
    assert m6 == pytest.approx(1.2e6**3 / (8 * 7 * 6 * 24**2))
    # Two groups lose data twice as often.
    assert reliability.mttdl_hours(group_width=8, failures_tolerated=1, group_count=2, mttf_hours=1.2e6, mttr_hours=24) == pytest.approx(m5 / 2)
    # AFR 0.6 % -> MTTF = 8760 / -ln(0.994) = 1.4556e6 h.
    assert reliability.mttf_hours_from_afr(0.006) == pytest.approx(8760 / -math.log(0.994))
    # P(loss in 5 y) = 1 - exp(-43800 / MTTDL).
    assert reliability.loss_probability(m5, 5 * YEAR_HOURS) == pytest.approx(1 - math.exp(-5 * 8760 / m5))


# -- service life with the FTL's write amplification ----------------------------------------------

from arrayplan_engine.catalog import get_drive  # noqa: E402


def test_conversion_reproduces_the_s3700_ratings() -> None:
    """host-write endurance = raw NAND x P/E / WA: at the rating workload's WA (JESD219) the S3700's
    raw NAND and 30K-cycle HET-MLC give its rated Total Drive Writes (001 seed's table: 1.825 /
    3.65 / 7.3 / 14.6 PB for 100 / 200 / 400 / 800 GB) within 10 %."""
    for name, rated_pb in (("intel-dc-s3700-100gb", 1.825), ("intel-dc-s3700-200gb", 3.65),
                           ("intel-dc-s3700-400gb", 7.3), ("intel-dc-s3700-800gb", 14.6)):
        d = get_drive(name)
        assert d.endurance_bytes_written == pytest.approx(rated_pb * 1e15)
        model = endurance.host_write_endurance_bytes(d, endurance.rated_write_amplification(d))
        assert model == pytest.approx(rated_pb * 1e15, rel=0.10), name


def test_year_by_year_wear_follows_fill_and_growth() -> None:
    # 12 x S3500 480GB RAID 6 (4.8 TB usable), 2.4 TB of data growing 20 %/year, 1 TB/day of
    # 4 KiB random writes: each member takes 1e12 x 3 / 12 = 0.25 TB/day in year 1.
    d = get_drive("intel-dc-s3500-480gb")
    w = Workload(read_fraction=0.7, daily_write_bytes=1e12, growth_per_year=0.2)
    wear = endurance.service_life_wear(d, make_layout("raid6", 12), 12, w, years=5, data_bytes_year1=2.4e12,
                                       usable_capacity_bytes=4.8e12)
    ys = wear.years
    assert [y.fill_fraction for y in ys] == pytest.approx([0.5, 0.6, 0.72, 0.864, 1.0])
    assert ys[0].host_bytes_per_drive == pytest.approx(0.25e12 * 365)
    assert ys[4].host_bytes_per_drive == pytest.approx(0.25e12 * 365 * 1.2**4)
    # A fuller drive has less effective spare: write amplification rises every year.
    was = [y.write_amplification for y in ys]
    assert was == sorted(was) and was[0] > 1.0
    # Life used per year = bytes x WA / (WA_rated x TBW), 275 TB rated (001 seed).
    for y in ys:
        assert y.life_used_fraction == pytest.approx(y.host_bytes_per_drive * y.write_amplification
                                                     / (wear.rated_write_amplification * 275e12))
    assert wear.life_used_fraction == pytest.approx(sum(y.life_used_fraction for y in ys))
    first_over = next(y.year for y in ys if y.cumulative_life_used_fraction >= 1.0)
    assert wear.wear_out_year == first_over
    # Worn out inside the life: every slot buys ceil(5 / endurance_years) - 1 more drives.
    assert wear.wear_out_replacements == 12 * (math.ceil(5 / wear.endurance_years) - 1)


def test_sequential_writes_wear_less_than_random() -> None:
    d = get_drive("intel-dc-s3500-480gb")
    kw = dict(years=3, data_bytes_year1=4.8e12, usable_capacity_bytes=4.8e12)
    rnd = endurance.service_life_wear(d, make_layout("raid10", 12), 12, Workload(read_fraction=0.0, daily_write_bytes=1e12), **kw)
    seq = endurance.service_life_wear(d, make_layout("raid10", 12), 12,
                                      Workload(read_fraction=0.0, random_fraction=0.0, daily_write_bytes=1e12), **kw)
    assert seq.years[0].write_amplification == 1.0
    assert seq.life_used_fraction < rnd.life_used_fraction


def test_hdds_do_not_wear_out() -> None:
    d = get_drive("hdd-15k-sas-300gb")
    wear = endurance.service_life_wear(d, make_layout("raid10", 8), 8, Workload(read_fraction=0.5, daily_write_bytes=1e12),
                                       years=5, data_bytes_year1=1e12, usable_capacity_bytes=1.2e12)
    assert wear.life_used_fraction == 0 and wear.wear_out_year is None and wear.wear_out_replacements == 0
