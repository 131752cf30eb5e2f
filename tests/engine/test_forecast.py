"""Forecasts of an array in service.

The round trip: telemetry generated from the engine's own endurance model (``endurance.
service_life_wear``) for a known array and workload over 24 months -- each drive's host bytes per
month are the model's bytes for that year with day-to-day variation (lognormal, 10 % CV per month,
mean-preserving, seeded), its wear indicator the model's cumulative life in whole percent, the
array's used capacity the model's fill (data x (1+g)^years) -- then a forecast from the first 12
months only. The model's truth is the date its cumulative life reaches 100 % (linear within the
crossing year, as the model's rate is constant within a year). Check: the forecast is within
10 % of the truth (in time from the array's start) and the truth lies inside the 90 % interval.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from arrayplan_engine import endurance, forecast, smart
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.layout import make_layout, usable_capacity_bytes
from arrayplan_engine.units import DAY_S, TB, YEAR_DAYS
from arrayplan_engine.workload import Workload

START_S = 1_700_000_000.0          # 2023-11-14, the array's first day
MONTH_DAYS = YEAR_DAYS / 12
DRIVE = "intel-dc-s3500-480gb"
MODEL_STRING = "INTEL SSDSC2BB480G4"    # drivedb: B*4 = S3500
LAYOUT = make_layout("raid5", 6)
DRIVE_COUNT = 12
# A write-heavy OLTP-like mix that wears these drives out in year 4: 70 % reads, 4 KiB random,
# 80 % of writes to 20 % of the space, 20 % growth a year, 2 TB of host writes a day.
WORKLOAD = Workload(name="oltp-rt", read_fraction=0.7, random_fraction=1.0, daily_write_bytes=2 * TB,
                    hot_write_fraction=0.8, hot_space_fraction=0.2, growth_per_year=0.2)
DATA_YEAR1_FRACTION = 0.5


def _truth() -> tuple[endurance.ServiceLifeWear, float, float]:
    drive = builtin_catalog().get(DRIVE)
    usable = usable_capacity_bytes(LAYOUT, DRIVE_COUNT, drive.capacity_bytes)
    wear = endurance.service_life_wear(drive, LAYOUT, DRIVE_COUNT, WORKLOAD, years=10, data_bytes_year1=DATA_YEAR1_FRACTION * usable,
                                       usable_capacity_bytes=usable)
    total = 0.0
    for y in wear.years:
        if total + y.life_used_fraction >= 1.0:
            return wear, usable, (y.year - 1 + (1.0 - total) / y.life_used_fraction) * YEAR_DAYS
        total += y.life_used_fraction
    raise AssertionError("the round-trip workload must wear the drives out within 10 years")


def _telemetry(wear: endurance.ServiceLifeWear, usable: float, months: int, rng: np.random.Generator):
    """Monthly smartctl-like snapshots of every drive and the array's used capacity."""
    cv = 0.10
    sigma = math.sqrt(math.log1p(cv**2))
    snaps: list[smart.DriveSnapshot] = []
    serials = [f"BTWL{i:04d}0480BGN" for i in range(DRIVE_COUNT)]
    for serial in serials:
        host = 0.0
        life = 0.0
        for m in range(months + 1):
            if m > 0:
                y = wear.years[(m - 1) // 12]
                month_bytes = y.host_bytes_per_drive / 12 * float(rng.lognormal(-sigma**2 / 2, sigma))
                host += month_bytes
                life += month_bytes * y.life_used_fraction / y.host_bytes_per_drive
            t = START_S + m * MONTH_DAYS * DAY_S
            snaps.append(smart.DriveSnapshot(
                source=f"{serial}-{m:02d}.json", model=MODEL_STRING, serial=serial, protocol="ata", model_family="Intel 730 and DC S35x0/3610/3700 Series SSDs",
                capacity_bytes=480_103_981_056, rotational=False, time_s=t, power_on_hours=m * MONTH_DAYS * 24,
                host_written_bytes=math.floor(host / 2**25) * 2**25, percentage_used=float(min(math.floor(life * 100), 99)), smart_passed=True))
    # The model's fill: year y holds data_year1 x (1+g)^(y-1) for the whole year.
    capacity = [forecast.CapacityPoint(time_s=START_S + m * MONTH_DAYS * DAY_S,
                                       used_bytes=DATA_YEAR1_FRACTION * usable * (1 + WORKLOAD.growth_per_year) ** (m // 12))
                for m in range(months + 1)]
    return serials, snaps, capacity


def _spec(serials: list[str]) -> forecast.ArrayInService:
    return forecast.ArrayInService(name="rt", layout="raid5", start_time_s=START_S, workload=WORKLOAD,
                              groups=(forecast.GroupSpec(name="g1", serials=tuple(serials[:6])),
                                      forecast.GroupSpec(name="g2", serials=tuple(serials[6:]))))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_round_trip_forecast_from_12_months_finds_the_models_wear_out(seed: int) -> None:
    wear, usable, truth_days = _truth()
    assert 3 * YEAR_DAYS < truth_days < 5 * YEAR_DAYS      # the workload wears out in year 4
    serials, snaps, capacity = _telemetry(wear, usable, 24, np.random.default_rng(seed))
    first_year = [s for s in snaps if s.time_s is not None and s.time_s <= START_S + 12 * MONTH_DAYS * DAY_S + 1]
    series = smart.series_from_snapshots(first_year)
    assert len(series) == DRIVE_COUNT and all(len(s.snapshots) == 13 for s in series)
    cap12 = [c for c in capacity if c.time_s <= START_S + 12 * MONTH_DAYS * DAY_S + 1]
    fc = forecast.forecast_array(_spec(serials), series, cap12, builtin_catalog())
    assert not fc.problems
    truth_s = START_S + truth_days * DAY_S
    missed = []
    for d in fc.drives:
        assert d.basis == "catalog rating" and d.catalog_drive == DRIVE
        w = d.wear_out
        assert w.time_s is not None and w.earliest_s is not None and w.latest_s is not None
        predicted_days = (w.time_s - START_S) / DAY_S
        assert predicted_days == pytest.approx(truth_days, rel=0.10), d.serial
        if not w.earliest_s <= truth_s <= w.latest_s:
            missed.append((d.serial, predicted_days, truth_days, (w.earliest_s - START_S) / DAY_S, (w.latest_s - START_S) / DAY_S))
    # A 90 % interval (forecast.DEFAULT_CONFIDENCE) on each drive's own noisy year: at most one of the
    # 12 drives may miss the truth (seed 3 has one drive whose month-to-month noise puts its upper
    # bound 7 days short of a 1,473-day truth).
    assert len(missed) <= 1, missed
    # Evenly worn parity groups: every member wears out together -> lockstep.
    assert all(g.lockstep and g.lockstep_members == 6 for g in fc.groups)


def test_round_trip_life_used_at_month_24_is_inside_the_12_month_projection() -> None:
    """The forecast's own life-used after 24 months agrees with the model's telemetry there."""
    wear, usable, _ = _truth()
    serials, snaps, capacity = _telemetry(wear, usable, 24, np.random.default_rng(7))
    model_24 = sum(y.life_used_fraction for y in wear.years[:2])
    first = [s for s in snaps if s.serial == serials[0]]
    assert first[-1].percentage_used == pytest.approx(100 * model_24, abs=3)


def test_one_snapshot_gives_the_lifetime_average_and_says_so() -> None:
    s = smart.DriveSnapshot(source="x.json", model="Micron_7300_MTFDHBE960TDF", serial="MSN1", protocol="nvme", capacity_bytes=960_197_124_096,
                                time_s=START_S, power_on_hours=26686, host_written_bytes=1297577305 * 512000, percentage_used=10, smart_passed=True)
    [series] = smart.series_from_snapshots([s])
    d = forecast.forecast_drive(series, group="g", serial="MSN1", catalog_drive=None, workload=None, layout=LAYOUT, fill_now=None,
                                fill_at=None, confidence=0.9, worn_threshold_fraction=0.1)
    assert d.basis == "wear indicator" and d.rate_basis.startswith("lifetime average")
    # 10 % in 26,686 h -> 90 % more at the same rate: 240,174 h after the snapshot.
    assert (d.wear_out.time_s - START_S) / 3600 == pytest.approx(26686 * 9, rel=1e-6)
    # Resolution 1 %: the true lifetime rate is between 9 % and 11 % per 26,686 h.
    assert (d.wear_out.earliest_s - START_S) / 3600 == pytest.approx(26686 * 90 / 11, rel=1e-6)
    # 9 % per 26,686 h: 266,860 h = 30.5 years, past the 30-year horizon -> no latest date.
    assert d.wear_out.latest_s is None and 26686 * 90 / 9 / 8760 > forecast.HORIZON_DAYS / 365
    assert any("lifetime average" in n for n in d.notes)


def test_passed_but_worn_flag_and_missing_serial_problem() -> None:
    worn = smart.DriveSnapshot(source="w.json", model="X", serial="S1", protocol="nvme", capacity_bytes=10**12, time_s=START_S,
                                   power_on_hours=40000, percentage_used=95, smart_passed=True)
    ok = smart.DriveSnapshot(source="o.json", model="X", serial="S2", protocol="nvme", capacity_bytes=10**12, time_s=START_S,
                                 power_on_hours=40000, percentage_used=40, smart_passed=True)
    spec = forecast.ArrayInService(name="a", layout="raid1", start_time_s=START_S,
                              groups=(forecast.GroupSpec(name="m", serials=("S1", "S2", "S3")),))
    fc = forecast.forecast_array(spec, smart.series_from_snapshots([worn, ok]), [], builtin_catalog())
    assert fc.problems == ("group m, drive S3: no snapshot in the telemetry has this serial",)
    flagged = {d.serial: d.passed_but_worn for d in fc.drives}
    assert flagged == {"S1": True, "S2": False}
    assert any("S1: SMART says PASSED but only 5%" in w for w in fc.warnings)


def test_catalog_match_by_model_string() -> None:
    cat = builtin_catalog()
    assert forecast.match_catalog("INTEL SSDSC2BB480G4", cat).name == "intel-dc-s3500-480gb"
    assert forecast.match_catalog("INTEL SSDSC2BA400G3", cat).name == "intel-dc-s3700-400gb"
    assert forecast.match_catalog("INTEL SSDSA2CW300G3", cat).name == "intel-ssd-320-300gb"
    assert forecast.match_catalog("INTEL SSDSC2BB480G7", cat) is None     # S3520: not in the catalog
    assert forecast.match_catalog("Intel SSD DC S3500 480GB", cat).name == "intel-dc-s3500-480gb"


def test_rate_interval_widens_with_scatter() -> None:
    days = [0, 30, 60, 90, 120]
    steady = forecast.estimate_rate(days, [0, 3, 6, 9, 12])
    noisy = forecast.estimate_rate(days, [0, 1, 6, 7, 12])
    assert steady.per_day == noisy.per_day == pytest.approx(0.1)
    assert steady.sd_daily == 0 and noisy.sd_daily > 0


def test_fill_forecast_fits_growth_when_none_is_stated() -> None:
    """Used capacity growing 30 %/year with 2 % sample noise: the fitted growth and the full date
    (when 10 TB of usable is 90 % full) come back, the true date inside the interval."""
    rng = np.random.default_rng(5)
    used0, g = 4e12, 0.3
    pts = [forecast.CapacityPoint(time_s=START_S + d * DAY_S, used_bytes=used0 * (1 + g) ** (d / YEAR_DAYS) * float(rng.normal(1, 0.02)))
           for d in range(0, 365, 7)]
    fill = forecast.forecast_fill(pts, usable_capacity_bytes=10e12, full_fraction=0.9, growth_per_year=None, confidence=0.9)
    assert fill.growth_per_year == pytest.approx(g, abs=0.03) and fill.growth_source == "fitted to the capacity samples"
    true_s = START_S + math.log(9e12 / used0) / math.log1p(g) * YEAR_DAYS * DAY_S
    assert fill.full.earliest_s <= true_s <= fill.full.latest_s
    assert fill.full.time_s == pytest.approx(true_s, abs=0.1 * (true_s - pts[-1].time_s))
    flat = forecast.forecast_fill([pts[0], forecast.CapacityPoint(time_s=pts[0].time_s + 86400 * 30, used_bytes=pts[0].used_bytes * 0.99)],
                                  usable_capacity_bytes=10e12, full_fraction=0.9, growth_per_year=None, confidence=0.9)
    assert flat.full.time_s is None and any("not growing" in n for n in flat.notes)


def test_lockstep_only_when_members_wear_out_together() -> None:
    def snaps(serial: str, pct_per_year: float) -> list[smart.DriveSnapshot]:
        return [smart.DriveSnapshot(source=f"{serial}-{m}.json", model="NVME-X", serial=serial, protocol="nvme", capacity_bytes=10**12,
                                        time_s=START_S + m * MONTH_DAYS * DAY_S, power_on_hours=m * MONTH_DAYS * 24,
                                        percentage_used=float(math.floor(pct_per_year * m / 12)), smart_passed=True) for m in range(25)]
    even = [s for i in range(4) for s in snaps(f"E{i}", 20.0)]
    spread = [s for i, r in enumerate((40.0, 25.0, 15.0, 10.0)) for s in snaps(f"S{i}", r)]
    spec = forecast.ArrayInService(name="a", layout="raid6", start_time_s=START_S,
                              groups=(forecast.GroupSpec(name="even", serials=("E0", "E1", "E2", "E3")),
                                      forecast.GroupSpec(name="spread", serials=("S0", "S1", "S2", "S3"))))
    fc = forecast.forecast_array(spec, smart.series_from_snapshots(even + spread), [], builtin_catalog())
    g = {x.name: x for x in fc.groups}
    assert g["even"].lockstep and g["even"].lockstep_members == 4 and g["even"].failures_tolerated == 2
    assert not g["spread"].lockstep and g["spread"].lockstep_members == 1
    d = {x.serial: x for x in fc.drives}
    # 20 %/year from whole-percent readings: 100 % after about 5 years from the start.
    assert (d["E0"].wear_out.time_s - START_S) / DAY_S / YEAR_DAYS == pytest.approx(5.0, rel=0.05)
    assert d["E0"].basis == "wear indicator" and d["E0"].rate_basis == "intervals"


def test_catalog_drive_without_a_workload_takes_the_rated_tbw_at_face_value() -> None:
    wear, usable, _ = _truth()
    serials, snaps, _ = _telemetry(wear, usable, 12, np.random.default_rng(1))
    spec = forecast.ArrayInService(name="rt", layout="raid5", start_time_s=START_S,
                              groups=(forecast.GroupSpec(name="g1", serials=tuple(serials[:6])),))
    fc = forecast.forecast_array(spec, smart.series_from_snapshots(snaps), [], builtin_catalog())
    d = fc.drives[0]
    assert d.basis == "catalog rating" and any("taken at face value" in n for n in d.notes)
    # Life used = host bytes / TBW (WA_workload = WA_rated).
    host = [s for s in snaps if s.serial == d.serial][-1].host_written_bytes
    assert d.life_used_fraction == pytest.approx(host / 275e12, rel=1e-9)
