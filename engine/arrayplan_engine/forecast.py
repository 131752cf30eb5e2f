"""Forecasts for an array in service: when each drive reaches its rated endurance, when the array
is full, each with an interval; lockstep wear-out in a redundancy group; drives whose SMART says
PASSED while little life is left.

Pure: inputs are ``telemetry.DriveSeries`` (a drive's snapshots over time), capacity samples,
catalog drives and an optional workload; outputs are frozen records. Dates are Unix seconds.

Rates and their intervals. A counter (life used, bytes used) observed at times t_0 < ... < t_n
gives interval rates r_i = dv_i / dt_i. The rate is the total change over the total time,
r = (v_n - v_0) / T. If the daily rate varies independently from day to day with variance s^2,
an interval of length dt has rate variance s^2 / dt, so s^2 is estimated as
sum dt_i (r_i - r)^2 / (n - 1). The future average rate over a horizon H then lies in
r +- t_(n-1) s sqrt(1/T + 1/H) (the error of the estimated mean plus the scatter of H more days),
with the counter's resolution q (1 % for wear indicators) adding q^2/6 / T^2 to the variance
(both end readings rounded). One snapshot gives only the lifetime average rate (value / power-on
time); its interval is from the resolution alone, and the forecast says so.

Growth. The observed mean rate is the rate at the middle of the observed window; the workload's
growth per year (if given) compounds it continuously from there: r(t) = r (1+g)^((t - t_mid)/year).
Write amplification rises with fill: when the drive is a catalog drive and the workload is known,
the wear rate is further scaled by WA(fill(t)) / WA(fill now) from the engine's FTL model.

Wear basis. A drive whose model string matches a catalog drive (``MODEL_PATTERNS``) wears against
its rating: life used = host bytes x WA_workload / (WA_rated x TBW) (``endurance``), WA_workload
measured when the drive reports NAND writes, else the model's at the array's fill. Any other
drive wears by its own wear indicator (NVMe percentage used, ATA media wearout). Hard disks have
no write-endurance limit here (their failures are ``reliability``'s).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

import numpy as np

from . import endurance
from .catalog import Catalog, Drive
from .errors import InvalidInputError, Range
from .layout import Layout, make_layout
from .smart import DriveSeries, DriveSnapshot, snapshot_hours
from .units import DAY_S, YEAR_DAYS
from .workload import Workload

DEFAULT_CONFIDENCE: Final = 0.9
DEFAULT_LOCKSTEP_WINDOW_DAYS: Final = 90.0
DEFAULT_WORN_THRESHOLD_FRACTION: Final = 0.1
#: Telemetry whose latest snapshot is older than this (before the time the forecast is asked at)
#: is stale, and the forecast says so (assumed: a monthly collection missed once is still fresh).
DEFAULT_STALE_AFTER_DAYS: Final = 30.0
#: Projections stop here: a date further out is reported as None ("not within the horizon").
HORIZON_DAYS: Final = 30 * YEAR_DAYS
PERCENT_RESOLUTION: Final = 0.01   # wear indicators are whole percents

# Two-sided Student t quantiles t_(0.95, dof) for a 90 % interval (dof 1..30; above: normal 1.645).
_T95: Final = (6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753,
               1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697)
# t_(0.975, dof) for 95 %.
_T975: Final = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile(confidence: float, dof: int) -> float:
    """Two-sided Student t quantile for 0.9 or 0.95 confidence (tables above)."""
    if confidence not in (0.9, 0.95):
        raise ValueError(f"confidence must be 0.9 or 0.95, got {confidence}")
    table, normal = (_T95, 1.6449) if confidence == 0.9 else (_T975, 1.9600)
    return table[dof - 1] if 1 <= dof <= len(table) else normal


# -- catalog match by model string ----------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPattern:
    """Drive model strings (as smartctl prints them) of a catalog family; ``capacity`` is the
    regex group holding the capacity in GB, ``template`` the catalog name with ``{gb}``."""

    regex: str
    template: str
    source: str
    quote: str


_DRIVEDB: Final = "smartmontools drivedb.h"
MODEL_PATTERNS: Final[tuple[ModelPattern, ...]] = (
    ModelPattern(regex=r"INTEL SSDSC(?:1N|2B)B(?P<gb>080|120|160|240|300|400|480|600|800)G4T?", template="intel-dc-s3500-{gb}gb",
                 source=_DRIVEDB, quote="// A = S3700, B*4 = S3500, B*6 = S3510, P = 730, X = S3610"),
    ModelPattern(regex=r"INTEL SSDSC(?:1N|2B)A(?P<gb>100|200|400|800)G3T?", template="intel-dc-s3700-{gb}gb",
                 source=_DRIVEDB, quote="// A = S3700, B*4 = S3500, B*6 = S3510, P = 730, X = S3610"),
    ModelPattern(regex=r"INTEL SSDSA[12][BCN][WT](?P<gb>040|080|120|160|300|600)G3[ADL]?", template="intel-ssd-320-{gb}gb",
                 source=_DRIVEDB, quote='{ "Intel 320 Series SSDs", ... "INTEL SSDSA[12][BCN][WT](040|080|120|160|300|600)G3[ADL]?"'),
    ModelPattern(regex=r"INTEL SSDSA2BZ(?P<gb>100|200|300)G3", template="intel-ssd-710-{gb}gb",
                 source=_DRIVEDB, quote='{ "Intel 710 Series SSDs", // tested with INTEL SSDSA2BZ[12]00G3/6PB10362 "INTEL SSDSA2BZ(100|200|300)G3"'),
    ModelPattern(regex=r"(?:INTEL ?)?SSDSA2SH(?P<gb>032|064)G1.*", template="intel-x25-e-{gb}gb",
                 source=_DRIVEDB, quote='{ "Intel X25-E SSDs", "SSDSA2SH(032|064)G1.* INTEL", // G1 = first generation'),
)


def match_catalog(model: str | None, catalog: Catalog) -> Drive | None:
    """The catalog drive a smartctl model string is, or None (match by model string only)."""
    if not model:
        return None
    text = " ".join(model.split())
    if text in catalog:
        return catalog.get(text)
    for p in MODEL_PATTERNS:
        m = re.fullmatch(p.regex, text, flags=re.I)
        if m:
            name = p.template.format(gb=int(m.group("gb")))
            if name in catalog:
                return catalog.get(name)
    return None


# -- rates ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class Rate:
    """A counter's rate of change per day, at ``anchor_day`` (the middle of the observed window,
    days on the series' own clock), with its standard deviation parts."""

    per_day: float
    sd_daily: float            # s: day-to-day scatter of the rate (0 with fewer than 2 intervals)
    span_days: float           # T: observed time
    resolution: float          # q: counter resolution
    dof: int
    anchor_day: float
    last_day: float
    last_value: float
    basis: Literal["intervals", "lifetime average (single snapshot)"]

    def sd_of_future_mean(self, horizon_days: float) -> float:
        """Standard deviation of the average rate over the next ``horizon_days``."""
        var = 0.0
        if self.span_days > 0:
            var += self.sd_daily**2 * (1.0 / self.span_days + 1.0 / max(horizon_days, 1.0))
            var += self.resolution**2 / 6.0 / self.span_days**2
        return math.sqrt(var)


def estimate_rate(days: Sequence[float], values: Sequence[float], *, resolution: float = 0.0,
                  power_on_days: float | None = None) -> Rate:
    """The rate of a non-decreasing counter observed at ``days``. With one observation the
    lifetime average ``value / power_on_days`` (the counter starts at 0 at power-on)."""
    if len(days) != len(values) or not days:
        raise ValueError("days and values must be non-empty and of equal length")
    if len(days) == 1 or days[-1] <= days[0]:
        if not power_on_days or power_on_days <= 0:
            raise ValueError("one snapshot needs the power-on time for a lifetime-average rate")
        v = float(values[-1])
        return Rate(per_day=v / power_on_days, sd_daily=0.0, span_days=power_on_days, resolution=resolution, dof=0,
                    anchor_day=float(days[-1]) - power_on_days / 2.0, last_day=float(days[-1]), last_value=v,
                    basis="lifetime average (single snapshot)")
    d = np.asarray(days, dtype=np.float64)
    va = np.asarray(values, dtype=np.float64)
    dt = np.diff(d)
    keep = dt > 0
    dt, dv = dt[keep], np.diff(va)[keep]
    total_t = float(dt.sum())
    rate = float(dv.sum()) / total_t
    n = len(dt)
    sd = 0.0
    if n >= 2:
        r_i = dv / dt
        sd = math.sqrt(float((dt * (r_i - rate) ** 2).sum()) / (n - 1))
    return Rate(per_day=rate, sd_daily=sd, span_days=total_t, resolution=resolution, dof=max(n - 1, 1),
                anchor_day=(float(d[0]) + float(d[-1])) / 2.0, last_day=float(d[-1]), last_value=float(va[-1]), basis="intervals")


Multiplier = Callable[[np.ndarray], np.ndarray]


def days_to_reach(remaining: float, rate_per_day: float, *, from_day: float, anchor_day: float, growth_per_year: float = 0.0,
                  multiplier: Multiplier | None = None, horizon_days: float = HORIZON_DAYS) -> float | None:
    """Days after ``from_day`` until a counter growing at ``rate_per_day`` (at ``anchor_day``,
    compounding by ``growth_per_year``, times ``multiplier(days after from_day)``) has grown by
    ``remaining``; None beyond the horizon."""
    if remaining <= 0:
        return 0.0
    if rate_per_day <= 0:
        return None
    k = math.log1p(growth_per_year) / YEAR_DAYS if growth_per_year else 0.0
    r0 = rate_per_day * math.exp(k * (from_day - anchor_day))
    if multiplier is None:
        if k == 0:
            t = remaining / r0
        else:
            arg = 1.0 + remaining * k / r0
            t = math.log(arg) / k if arg > 0 else math.inf
        return t if t <= horizon_days else None
    step = 1.0
    grid = np.arange(0.0, horizon_days + step, step)
    rates = r0 * np.exp(k * grid) * multiplier(grid)
    cum = np.concatenate(([0.0], np.cumsum(0.5 * (rates[1:] + rates[:-1]) * step)))
    i = int(np.searchsorted(cum, remaining))
    if i >= len(cum):
        return None
    if i == 0:
        return 0.0
    frac = (remaining - cum[i - 1]) / (cum[i] - cum[i - 1])
    return float(grid[i - 1] + frac * step)


@dataclass(frozen=True, slots=True, kw_only=True)
class DateInterval:
    """A forecast date (Unix s) with its interval; None = not within the horizon."""

    time_s: float | None
    earliest_s: float | None
    latest_s: float | None


def _date_interval(remaining: float, rate: Rate, *, origin_s: float, growth_per_year: float,
                   multipliers: tuple[Multiplier, Multiplier, Multiplier] | None, confidence: float) -> DateInterval:
    """Point date and interval of reaching ``remaining`` more, from the rate's last observation.
    ``multipliers``: the rate's scaling over time (point, fastest, slowest), e.g. WA with fill."""
    def reach(r: float, which: int = 0) -> float | None:
        return days_to_reach(remaining, r, from_day=rate.last_day, anchor_day=rate.anchor_day, growth_per_year=growth_per_year,
                             multiplier=multipliers[which] if multipliers else None)

    point = reach(rate.per_day)
    horizon = point if point is not None else HORIZON_DAYS
    tq = t_quantile(confidence, rate.dof) if rate.basis == "intervals" else 1.0
    sd = rate.sd_of_future_mean(horizon)
    hi_rate, lo_rate = rate.per_day + tq * sd, rate.per_day - tq * sd
    if rate.basis != "intervals":
        # One snapshot: only the counter's resolution bounds the true lifetime rate.
        hi_rate = (rate.last_value + rate.resolution) / rate.span_days
        lo_rate = max(rate.last_value - rate.resolution, 0.0) / rate.span_days
    earliest = reach(hi_rate, 1)
    latest = reach(lo_rate, 2) if lo_rate > 0 else None

    def at(d: float | None) -> float | None:
        return None if d is None else origin_s + d * DAY_S
    return DateInterval(time_s=at(point), earliest_s=at(earliest), latest_s=at(latest))


# -- the array in service -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSpec:
    """One redundancy group: its members by serial (optionally with model, to tell apart drives
    that share a serial)."""

    name: str
    serials: tuple[str, ...]
    models: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayInService:
    name: str
    layout: str                                   # raid5, raid6, raid10, raid1, ec:K+M
    groups: tuple[GroupSpec, ...]
    start_time_s: float
    usable_capacity_bytes: float | None = None    # None: from the layout and the drives' capacity
    full_fraction: float = 1.0                    # "full" = this share of usable capacity
    workload: Workload | None = None
    catalog_drive: str | None = None              # pin the catalog drive (else matched by model string)
    lockstep_window_days: float = DEFAULT_LOCKSTEP_WINDOW_DAYS
    worn_threshold_fraction: float = DEFAULT_WORN_THRESHOLD_FRACTION
    confidence: float = DEFAULT_CONFIDENCE


@dataclass(frozen=True, slots=True, kw_only=True)
class CapacityPoint:
    time_s: float
    used_bytes: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DriveForecast:
    group: str
    serial: str
    model: str | None
    sources: tuple[str, ...]
    catalog_drive: str | None
    basis: Literal["catalog rating", "wear indicator", "none"]
    rate_basis: str
    snapshot_count: int
    life_used_fraction: float | None
    life_rate_per_day: float | None
    host_write_bytes_per_day: float | None
    write_amplification: float | None
    write_amplification_source: str
    wear_out: DateInterval
    smart_passed: bool | None
    passed_but_worn: bool
    history: tuple[tuple[float, float], ...]      # (time s, life used fraction)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupForecast:
    name: str
    layout: str
    members: int
    failures_tolerated: int
    wear_out: DateInterval                        # the first member to wear out
    lockstep: bool
    lockstep_members: int                         # members wearing out within the window of the first
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FillForecast:
    usable_capacity_bytes: float
    full_bytes: float
    used_bytes: float | None                      # fitted, at the last sample
    used_rate_bytes_per_day: float | None         # now
    growth_per_year: float | None
    growth_source: str
    rate_basis: str
    full: DateInterval
    history: tuple[tuple[float, float], ...]      # (time s, used bytes)
    level_log_bytes: float | None                 # ln(used bytes) at origin_s
    slope_per_day: float | None                   # d ln(used) / d day
    origin_s: float | None
    level_halfwidth: float = 0.0                  # interval half-widths of the level (at the sample mean time) and slope
    slope_halfwidth: float = 0.0
    mean_day: float = 0.0                         # the samples' mean time, days from origin_s
    notes: tuple[str, ...] = ()
    # The noise the full date's interval carries (``fill_noise``): sample scatter around the
    # growth (sd of ln used) and day-to-day wander of the growth itself (sd of ln used per sqrt day)
    measurement_sd: float = 0.0
    wander_sd_per_sqrt_day: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayForecast:
    name: str
    as_of_s: float
    drives: tuple[DriveForecast, ...]
    groups: tuple[GroupForecast, ...]
    fill: FillForecast | None
    wear_out: DateInterval                        # the first group whose first member wears out
    warnings: tuple[str, ...]
    problems: tuple[str, ...]                     # drives that could not be forecast, naming file/serial
    growth_per_year: float
    models: tuple[str, ...] = field(default=())
    # days from the latest snapshot ("as of") to the time the forecast was asked at, and whether
    # that is beyond the staleness threshold (``stale_telemetry``; None/False until it is applied)
    as_of_age_days: float | None = None
    stale: bool = False


def _series_days(series: DriveSeries) -> tuple[list[float], float]:
    """Days on the series clock and the Unix time of its last snapshot."""
    hours = snapshot_hours(series)
    last = series.latest
    origin = last.time_s if last.time_s is not None else math.nan
    return [h / 24.0 for h in hours], origin


class _WaModel:
    """WA of the workload's writes at a fill level on a catalog drive (the engine's FTL model via
    ``endurance.service_life_wear``), cached by fill."""

    def __init__(self, drive: Drive, layout: Layout, workload: Workload) -> None:
        self.drive, self.layout, self.workload = drive, layout, workload
        self._cache: dict[int, float] = {}

    def __call__(self, fill: float) -> float:
        key = int(round(min(max(fill, 1e-3), 1.0) * 200))   # 0.5 % steps of fill
        if key not in self._cache:
            usable = 1.0
            wear = endurance.service_life_wear(self.drive, self.layout, self.layout.group_width, self.workload, years=1,
                                               data_bytes_year1=max(key, 1) / 200.0 * usable, usable_capacity_bytes=usable)
            self._cache[key] = wear.years[0].write_amplification
        return self._cache[key]


def _life_per_host_byte(drive: Drive, wa_workload: float, rated_wa: float) -> float:
    """Share of rated life one host byte uses at a workload write amplification (``rated_wa``:
    ``endurance.rated_write_amplification(drive)``, the rating workload's)."""
    if drive.endurance_bytes_written:
        return wa_workload / (rated_wa * float(drive.endurance_bytes_written))
    return 1.0 / endurance.host_write_endurance_bytes(drive, wa_workload)


_Basis = Literal["catalog rating", "wear indicator", "none"]


@dataclass(frozen=True, slots=True)
class _Wear:
    """A drive's life used over time and its rate, on one basis (``forecast_drive``'s middle step)."""

    basis: _Basis
    life: list[tuple[float, float]]               # (series day, life used fraction)
    rate: Rate
    multipliers: tuple[Multiplier, Multiplier, Multiplier] | None
    write_amplification: float | None
    write_amplification_source: str
    host_per_day: float | None


def forecast_drive(series: DriveSeries, *, group: str, serial: str, catalog_drive: Drive | None, workload: Workload | None,
                   layout: Layout, fill_now: float | None, fill_at: tuple[FillAt, FillAt, FillAt] | None,
                   confidence: float, worn_threshold_fraction: float,
                   fill_history: Callable[[float], float] | None = None, wa_model: _WaModel | None = None) -> DriveForecast:
    """One drive's wear-out date with interval (see the module doc for the method). Steps: the
    drive's life used over time, from its catalog rating (``_rated_wear``) or its own wear
    indicator (``_indicator_wear``); then the date it reaches the end of its life."""
    snaps: Sequence[DriveSnapshot] = series.snapshots
    last = series.latest
    notes: list[str] = list(series.notes)
    days, origin = _series_days(series)
    if series.clock == "power_on_hours":
        notes.append("snapshots ordered by power-on hours (the files carry no distinct capture times): the drive is taken to be powered all the time")
    growth = workload.growth_per_year if workload else 0.0
    poh_days = (last.power_on_hours or 0.0) / 24.0
    if wa_model is None or (catalog_drive is not None and wa_model.drive.name != catalog_drive.name):
        wa_model = _WaModel(catalog_drive, layout, workload) if (catalog_drive and workload and catalog_drive.is_ssd) else None
    base: dict[str, Any] = dict(group=group, serial=serial, model=last.model, sources=tuple(s.source for s in snaps),
                catalog_drive=catalog_drive.name if catalog_drive else None, snapshot_count=len(snaps), smart_passed=last.smart_passed)
    none = DateInterval(time_s=None, earliest_s=None, latest_s=None)
    if last.rotational or (catalog_drive is not None and not catalog_drive.is_ssd):
        return DriveForecast(**base, basis="none", rate_basis="", life_used_fraction=None, life_rate_per_day=None,
                             host_write_bytes_per_day=None, write_amplification=None, write_amplification_source="",
                             wear_out=none, passed_but_worn=False, history=(),
                             notes=(*notes, "a spinning disk: no write-endurance limit (its failures are the reliability model's)"))
    host_days = [(d, s.host_written_bytes) for d, s in zip(days, snaps) if s.host_written_bytes is not None]
    use_rating = catalog_drive is not None and catalog_drive.is_ssd and bool(host_days) and (
        catalog_drive.endurance_bytes_written or (catalog_drive.raw_nand_bytes and catalog_drive.pe_cycles))
    host_rate: Rate | None = None
    if len(host_days) >= 2 or (host_days and poh_days > 0):
        host_rate = estimate_rate([d for d, _ in host_days], [float(v or 0.0) for _, v in host_days], power_on_days=poh_days or None)
    w: _Wear | DriveForecast
    if use_rating and catalog_drive is not None and host_rate is not None:
        w = _rated_wear(catalog_drive, host_days, host_rate, days=days, origin=origin, wa_measured=last.write_amplification,
                        wa_model=wa_model, fill_now=fill_now, fill_at=fill_at, fill_history=fill_history, notes=notes)
    else:
        w = _indicator_wear(series, days, host_days, host_rate, catalog_drive=catalog_drive, base=base, notes=notes,
                            worn_threshold_fraction=worn_threshold_fraction)
        if isinstance(w, DriveForecast):
            return w
    rate = w.rate
    if rate.basis != "intervals":
        notes.append("one snapshot: the rate is the lifetime average (value / power-on time), its interval only the counter's resolution")
    used_now = w.life[-1][1]
    remaining = 1.0 - used_now
    figures: dict[str, Any] = dict(basis=w.basis, rate_basis=rate.basis, life_used_fraction=used_now, life_rate_per_day=rate.per_day,
                                   host_write_bytes_per_day=w.host_per_day, write_amplification=w.write_amplification,
                                   write_amplification_source=w.write_amplification_source)
    if math.isnan(origin):
        return DriveForecast(**base, **figures, wear_out=none,
                             passed_but_worn=bool(last.smart_passed and remaining < worn_threshold_fraction),
                             history=(), notes=(*notes, f"{last.source}: no capture time (local_time.time_t): no dates"))
    wear = _date_interval(remaining, rate, origin_s=origin, growth_per_year=growth, multipliers=w.multipliers, confidence=confidence)
    history = tuple((origin + (d - days[-1]) * DAY_S, v) for d, v in w.life)
    if rate.per_day <= 0:
        notes.append("no wear measured yet: the wear-out date needs a later snapshot with more wear")
    worn = bool(last.smart_passed) and remaining < worn_threshold_fraction
    if worn:
        notes.append(f"SMART says PASSED with {max(remaining, 0.0):.0%} of rated life left")
    return DriveForecast(**base, **figures, wear_out=wear, passed_but_worn=worn, history=history, notes=tuple(notes))


def _rated_wear(cat: Drive, host_days: list[tuple[float, Any]], host_rate: Rate, *, days: list[float], origin: float,
                wa_measured: float | None, wa_model: _WaModel | None, fill_now: float | None,
                fill_at: tuple[FillAt, FillAt, FillAt] | None, fill_history: Callable[[float], float] | None,
                notes: list[str]) -> _Wear:
    """Life used from the host writes and the catalog drive's rated endurance, at the write
    amplification measured, modelled at the fill (each interval's bytes at that interval's fill
    when the fill history is known), or the rating workload's."""
    rated_wa = endurance.rated_write_amplification(cat)
    if wa_measured is not None:
        wa, wa_src = wa_measured, "measured (NAND / host writes, lifetime)"
    elif wa_model is not None and fill_now is not None:
        wa, wa_src = wa_model(fill_now), f"model ({cat.name} FTL at {fill_now:.0%} fill, the workload's mix and skew)"
    else:
        wa = rated_wa
        wa_src = "the rating workload's (no workload given: the rated TBW taken at face value)"
    per_byte_now = _life_per_host_byte(cat, wa, rated_wa)
    by_fill = wa_model is not None and wa_measured is None and fill_now is not None
    per_byte_cache: dict[float, float] = {}

    def per_byte(fill: float) -> float:
        if not (by_fill and wa_model is not None):
            return per_byte_now
        if fill not in per_byte_cache:
            per_byte_cache[fill] = _life_per_host_byte(cat, wa_model(fill), rated_wa)
        return per_byte_cache[fill]

    if by_fill and fill_history is not None and not math.isnan(origin):
        # Each interval's host bytes wear at the WA of that interval's fill.
        abs_t = [origin + (d - days[-1]) * DAY_S for d, _ in host_days]
        cum = float(host_days[0][1] or 0.0) * per_byte(fill_history(abs_t[0]))
        life = [(host_days[0][0], cum)]
        for i in range(1, len(host_days)):
            dh = float(host_days[i][1] or 0.0) - float(host_days[i - 1][1] or 0.0)
            cum += dh * per_byte(fill_history((abs_t[i - 1] + abs_t[i]) / 2.0))
            life.append((host_days[i][0], cum))
    else:
        life = [(d, float(v or 0.0) * per_byte_now) for d, v in host_days]
    rate = Rate(per_day=host_rate.per_day * per_byte_now, sd_daily=host_rate.sd_daily * per_byte_now, span_days=host_rate.span_days,
                resolution=host_rate.resolution * per_byte_now, dof=host_rate.dof, anchor_day=host_rate.anchor_day,
                last_day=host_rate.last_day, last_value=life[-1][1], basis=host_rate.basis)
    multipliers: tuple[Multiplier, Multiplier, Multiplier] | None = None
    if by_fill and fill_at is not None:
        def scaled(f: FillAt, _p: float = per_byte_now) -> Multiplier:
            def m(t: np.ndarray) -> np.ndarray:
                fills = np.round(np.clip(f(t), 1e-3, 1.0) * 200) / 200
                table = {float(u): per_byte(float(u)) for u in np.unique(fills)}
                return np.array([table[float(x)] for x in fills]) / _p
            return m
        multipliers = (scaled(fill_at[0]), scaled(fill_at[1]), scaled(fill_at[2]))
    notes.append(f"rated endurance of catalog drive {cat.name}; write amplification {wa:.2f}: {wa_src}")
    return _Wear("catalog rating", life, rate, multipliers, wa, wa_src, host_rate.per_day)


def _indicator_wear(series: DriveSeries, days: list[float], host_days: list[tuple[float, Any]], host_rate: Rate | None, *,
                    catalog_drive: Drive | None, base: dict[str, Any], notes: list[str],
                    worn_threshold_fraction: float) -> _Wear | DriveForecast:
    """Life used from the drive's own wear indicator (percentage used); a forecast with no date
    when the drive has none, or one snapshot and no power-on time."""
    snaps, last = series.snapshots, series.latest
    poh_days = (last.power_on_hours or 0.0) / 24.0
    wa_measured = last.write_amplification
    none = DateInterval(time_s=None, earliest_s=None, latest_s=None)
    used = [(d, s.percentage_used / 100.0) for d, s in zip(days, snaps) if s.percentage_used is not None]
    if not used:
        why = "no wear counters (percentage used / wear indicator) and no catalog rating" if not host_days else \
            "host writes but no wear indicator, and the model matches no catalog drive with a rating"
        return DriveForecast(**base, basis="none", rate_basis="", life_used_fraction=None, life_rate_per_day=None,
                             host_write_bytes_per_day=host_rate.per_day if host_rate else None,
                             write_amplification=wa_measured, write_amplification_source="measured" if wa_measured else "",
                             wear_out=none, passed_but_worn=False, history=(), notes=(*notes, f"wear unknown: {why}"))
    if len(used) == 1 and poh_days <= 0:
        return DriveForecast(**base, basis="none", rate_basis="", life_used_fraction=used[-1][1], life_rate_per_day=None,
                             host_write_bytes_per_day=None, write_amplification=wa_measured, write_amplification_source="",
                             wear_out=none, passed_but_worn=bool(last.smart_passed and 1 - used[-1][1] < worn_threshold_fraction),
                             history=(), notes=(*notes, "one snapshot without power-on time: no wear rate"))
    rate = estimate_rate([d for d, _ in used], [v for _, v in used], resolution=PERCENT_RESOLUTION, power_on_days=poh_days or None)
    why = "no catalog drive matches the model string" if catalog_drive is None else f"{catalog_drive.name} has no host-write counter here"
    notes.append(f"the drive's own wear indicator ({why})")
    return _Wear("wear indicator", used, rate, None, wa_measured, "measured (NAND / host writes, lifetime)" if wa_measured else "",
                 host_rate.per_day if host_rate else None)


def forecast_fill(points: Sequence[CapacityPoint], *, usable_capacity_bytes: float, full_fraction: float, growth_per_year: float | None,
                  confidence: float) -> FillForecast:
    """When the used capacity reaches ``full_fraction`` of usable, with an interval.

    Capacity grows multiplicatively (the planner's growth per year): log(used) is a line in time.
    With ``growth_per_year`` (the workload's, when it states one) the slope is fixed and only the
    level is fitted; otherwise both are fitted by least squares. The interval comes from the
    scatter of the samples around the line (Student t; the slope's and the level's errors)."""
    full_bytes = usable_capacity_bytes * full_fraction
    none = DateInterval(time_s=None, earliest_s=None, latest_s=None)
    pts = sorted((p for p in points if p.used_bytes > 0), key=lambda p: p.time_s)
    history = tuple((p.time_s, p.used_bytes) for p in sorted(points, key=lambda p: p.time_s))

    def out(**kw: object) -> FillForecast:
        base: dict[str, object] = dict(usable_capacity_bytes=usable_capacity_bytes, full_bytes=full_bytes, used_bytes=None,
                                       used_rate_bytes_per_day=None, growth_per_year=None, growth_source="", rate_basis="", full=none,
                                       history=history, level_log_bytes=None, slope_per_day=None, origin_s=None, notes=())
        base.update(kw)
        return FillForecast(**base)  # type: ignore[arg-type]

    if not pts:
        return out(notes=("no capacity samples: no full date",))
    t_now = pts[-1].time_s
    t = np.array([(p.time_s - t_now) / DAY_S for p in pts])
    y = np.log(np.array([p.used_bytes for p in pts]))
    n = len(pts)
    if growth_per_year is not None and growth_per_year > 0:
        b = math.log1p(growth_per_year) / YEAR_DAYS
        source = "the workload's growth per year"
        tbar, ybar = float(t.mean()), float((y - b * t).mean() + b * t.mean())
        dof = n - 1
        s = math.sqrt(float(((y - ybar - b * (t - tbar)) ** 2).sum()) / dof) if dof > 0 else 0.0
        se_b = 0.0
    elif n >= 2 and t[-1] > t[0]:
        tbar, ybar = float(t.mean()), float(y.mean())
        sxx = float(((t - tbar) ** 2).sum())
        b = float(((t - tbar) * (y - ybar)).sum()) / sxx
        source = "fitted to the capacity samples"
        dof = n - 2
        s = math.sqrt(float(((y - ybar - b * (t - tbar)) ** 2).sum()) / dof) if dof > 0 else 0.0
        se_b = s / math.sqrt(sxx) if dof > 0 else 0.0
    else:
        return out(used_bytes=pts[-1].used_bytes, notes=("one capacity sample and no stated growth: no fill rate (give the used capacity over time)",))
    level_now = ybar + b * (0.0 - tbar)
    used_now = math.exp(level_now)
    growth = math.expm1(b * YEAR_DAYS)
    notes: list[str] = []
    tq = t_quantile(confidence, max(dof, 1)) if dof > 0 else 0.0
    se_level = s / math.sqrt(n) if dof > 0 else 0.0
    target = math.log(full_bytes)

    def date(level: float, slope: float) -> float | None:
        if level >= target:
            return t_now
        if slope <= 0:
            return None
        days = tbar + (target - level) / slope
        return t_now + days * DAY_S if days <= HORIZON_DAYS else None

    if b <= 0:
        notes.append("used capacity is not growing: no full date")
    sd_e, sd_w = fill_noise(t, y) if dof > 0 else (0.0, 0.0)
    if dof > 0 and n >= 3 and b > 0 and level_now < target:
        # A stated growth is the point's slope, but the interval keeps what the samples say about
        # the growth (the fitted slope's error): the statement is an assumption, not a measurement.
        alpha, beta, gamma = _prediction_variance(t, sd_e=sd_e, sd_w=sd_w, fixed_slope=not t[-1] > t[0])
        full = _crossing_interval(level_now, b, target, alpha, beta, gamma, tq, t_now, sd_w=sd_w, confidence=confidence)
    else:
        full = DateInterval(time_s=date(ybar, b), earliest_s=date(ybar + tq * se_level, b + tq * se_b),
                            latest_s=date(ybar - tq * se_level, b - tq * se_b))
    if dof <= 0:
        notes.append("too few capacity samples for an interval")
    return out(used_bytes=used_now, used_rate_bytes_per_day=used_now * b, growth_per_year=growth, growth_source=source,
               rate_basis=f"log-linear fit over {n} samples", full=full, level_log_bytes=level_now, slope_per_day=b, origin_s=t_now,
               level_halfwidth=tq * se_level, slope_halfwidth=tq * se_b, mean_day=tbar, notes=tuple(notes),
               measurement_sd=sd_e, wander_sd_per_sqrt_day=sd_w)


def fill_noise(t: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The two noises of ln(used capacity) around its growth, by moments of the successive
    differences d_i = y_(i+1) - y_i over L_i days, less the mean growth (the drift from the end
    points): independent scatter of each sample, sd_e (measurement; a dip undone by the next
    sample), makes neighbouring differences anticorrelated, Cov(d_i, d_(i+1)) = -sd_e^2; wander of
    the level that persists, sd_w per sqrt day (a random walk: what was written stays written),
    adds to their variance, Var(d_i) = sd_w^2 L_i + 2 sd_e^2. Each is solved from the unclipped
    moments, then clipped at 0."""
    if len(t) < 3 or t[-1] <= t[0]:
        return 0.0, 0.0
    lag = np.diff(t)
    drift = (y[-1] - y[0]) / (t[-1] - t[0])
    d = np.diff(y) - drift * lag
    cov = -float(np.mean(d[1:] * d[:-1]))
    # each from the unclipped moments (clipping the scatter first would bias the wander low)
    var_w = max(float(np.mean(d * d) - 2.0 * cov) / float(np.mean(lag)), 0.0)
    return math.sqrt(max(cov, 0.0)), math.sqrt(var_w)


def _prediction_variance(t: np.ndarray, *, sd_e: float, sd_w: float, fixed_slope: bool) -> tuple[float, float, float]:
    """Variance of ln(used) h days after the last sample about the fitted line, as
    ``alpha + beta h + gamma h^2``: the fit's parameter error (the level and, when fitted, the
    trend) under both noises, plus the wander still to come (``sd_w^2 h``). With independent
    scatter alone it is the textbook prediction variance of a regression line (without the new
    sample's own scatter: the date is when the level, not one noisy reading, reaches full); with
    wander, the fit's errors are computed exactly for these sample times from the random walk's
    covariance min(t_i, t_j)."""
    t0 = t - t[0]
    x = np.ones((len(t), 1)) if fixed_slope else np.column_stack((np.ones(len(t)), t0))
    xtx_inv = np.linalg.inv(x.T @ x)
    proj = x @ xtx_inv                                 # the fit's weights: params = proj.T @ y
    k_w = np.minimum.outer(t0, t0)                     # the random walk's covariance per unit sd_w^2
    last = np.array([1.0] if fixed_slope else [1.0, t0[-1]])
    # error of the fitted level at the last sample: a'y with a = proj @ last - e_n (truth minus fit)
    a = -proj @ last
    a[-1] += 1.0
    c = proj[:, 1] if not fixed_slope else np.zeros(len(t))   # the slope's weights
    alpha = sd_e**2 * float(last @ xtx_inv @ last) + sd_w**2 * float(a @ k_w @ a)
    beta = sd_w**2 * (1.0 - 2.0 * float(a @ k_w @ c))
    gamma = (sd_e**2 * float(xtx_inv[1, 1]) + sd_w**2 * float(c @ k_w @ c)) if not fixed_slope else 0.0
    if not fixed_slope:
        alpha_e_cross = 2.0 * sd_e**2 * float(last @ xtx_inv[:, 1])
        beta += alpha_e_cross
    return alpha, beta, gamma


def _crossing_interval(level_now: float, slope: float, target: float, alpha: float, beta: float, gamma: float, tq: float,
                       t_now: float, *, sd_w: float = 0.0, confidence: float = DEFAULT_CONFIDENCE) -> DateInterval:
    """The full date (the line reaches ``target``) and its interval. Latest: the first day the
    lower prediction band ``line - tq sd(h)`` reaches the target. Earliest: the first day the
    chance that the level has reached it reaches the lower tail (1 - confidence) / 2; that chance
    is the upper band's (``line + tq sd(h)``, as a normal tail at the same distance) plus, with
    wander, the chance that the walk touched the target earlier and came back (the first passage
    of a Brownian motion with drift: exp(2 b gap / sd_w^2) Phi((-b h - gap) / (sd_w sqrt h)),
    gap = target - level now), since "full" is the first day the array fills, not a day it is full."""
    h = np.arange(0.0, HORIZON_DAYS + 1.0, 1.0)
    line = level_now + slope * h
    sd = np.sqrt(np.maximum(alpha + beta * h + gamma * h * h, 0.0))
    tail = (1.0 - confidence) / 2.0
    z = _NORMAL_Z[confidence]
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.where(sd > 0, (line - target) / sd * (z / tq), np.where(line >= target, np.inf, -np.inf))
    hit = 0.5 * _erfc(-dist / math.sqrt(2.0))
    gap = target - level_now
    if sd_w > 0 and gap > 0 and slope > 0:
        root = sd_w * np.sqrt(np.maximum(h, 1e-9))
        x = (-slope * h - gap) / root
        log_term = 2.0 * slope * gap / sd_w**2 + np.log(np.maximum(0.5 * _erfc(-x / math.sqrt(2.0)), 1e-300))
        hit = hit + np.where(x > -37.0, np.exp(np.minimum(log_term, 0.0)), 0.0)

    def first(reached: np.ndarray) -> float | None:
        idx = np.flatnonzero(reached)
        return t_now + float(h[idx[0]]) * DAY_S if len(idx) else None
    point_days = (target - level_now) / slope
    point = t_now + point_days * DAY_S if point_days <= HORIZON_DAYS else None
    return DateInterval(time_s=point, earliest_s=first(hit >= tail), latest_s=first(line - tq * sd >= target))


_NORMAL_Z: Final = {0.9: 1.6449, 0.95: 1.9600}
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


FillAt = Callable[[np.ndarray], np.ndarray]


def _fill_projection(fill: FillForecast | None) -> tuple[float | None, tuple[FillAt, FillAt, FillAt] | None]:
    """Fill fraction now (at the last capacity sample), and as functions of days from then: the
    fit, and its upper and lower bounds (level and slope at their interval ends, pivoting on the
    samples' mean time)."""
    if fill is None or fill.level_log_bytes is None or fill.slope_per_day is None or fill.usable_capacity_bytes <= 0:
        return None, None
    level, slope, usable = fill.level_log_bytes, fill.slope_per_day, fill.usable_capacity_bytes
    ybar, tbar = level + slope * fill.mean_day, fill.mean_day

    def make(dl: float, ds: float) -> FillAt:
        def at(t: np.ndarray) -> np.ndarray:
            return np.clip(np.exp(ybar + dl + (slope + ds) * (t - tbar)) / usable, 1e-3, 1.0)
        return at
    mid = make(0.0, 0.0)
    return float(mid(np.zeros(1))[0]), (mid, make(fill.level_halfwidth, fill.slope_halfwidth), make(-fill.level_halfwidth, -fill.slope_halfwidth))


def _earliest(intervals: Sequence[DateInterval]) -> DateInterval:
    def first(xs: list[float | None]) -> float | None:
        vals = [x for x in xs if x is not None]
        return min(vals) if vals else None
    return DateInterval(time_s=first([i.time_s for i in intervals]), earliest_s=first([i.earliest_s for i in intervals]),
                        latest_s=first([i.latest_s for i in intervals]))


def _pick_series(serial: str, model: str | None, series: Sequence[DriveSeries]) -> tuple[DriveSeries | None, str | None]:
    hits = [s for s in series if s.identity[1] == serial and (model is None or s.identity[0] == model)]
    if not hits:
        return None, "no snapshot in the telemetry has this serial" + (f" and model {model!r}" if model else "")
    if len(hits) > 1:
        models = sorted({f"{s.identity[0]} ({s.identity[2] / 1e9:.0f} GB)" for s in hits})
        return None, (f"{len(hits)} drives share this serial ({', '.join(models)}); give the model in the array file"
                      if len(models) > 1 else f"{len(hits)} drives share this serial with counters that contradict each other")
    return hits[0], None


def forecast_array(spec: ArrayInService, series: Sequence[DriveSeries], capacity: Sequence[CapacityPoint], catalog: Catalog) -> ArrayForecast:
    """Per drive, per group and for the array: wear-out and full dates with intervals, lockstep
    warnings, PASSED-but-worn flags. A serial without telemetry is a problem naming it; the rest
    are forecast."""
    problems: list[str] = []
    warnings: list[str] = []
    growth = spec.workload.growth_per_year if spec.workload else 0.0
    width = max((len(g.serials) for g in spec.groups), default=1)
    layout = make_layout(spec.layout, width)
    pinned = catalog.get(spec.catalog_drive, "catalog_drive") if spec.catalog_drive else None
    picked: list[tuple[GroupSpec, str, DriveSeries]] = []
    for g in spec.groups:
        models = g.models or (None,) * len(g.serials)
        for serial, model in zip(g.serials, models):
            s, why = _pick_series(serial, model, series)
            if s is None:
                problems.append(f"group {g.name}, drive {serial}: {why}")
            else:
                picked.append((g, serial, s))
    usable = spec.usable_capacity_bytes
    if usable is None and picked:
        caps = [s.latest.capacity_bytes for _, _, s in picked if s.latest.capacity_bytes]
        if caps:
            drive_count = sum(len(g.serials) for g in spec.groups)
            usable = min(caps) * drive_count * layout.usable_fraction
    fill = None
    if usable:
        fill = forecast_fill([p for p in capacity], usable_capacity_bytes=usable, full_fraction=spec.full_fraction,
                             growth_per_year=growth if growth > 0 else None, confidence=spec.confidence)
    fill_now, fill_at = _fill_projection(fill)
    fill_history = None
    if fill is not None and fill.history and usable:
        ts = np.array([t for t, _ in fill.history])
        us = np.array([u for _, u in fill.history]) / usable

        def fill_history(t: float, _ts: np.ndarray = ts, _us: np.ndarray = us) -> float:
            return float(np.interp(t, _ts, _us))
    if fill_now is None and spec.workload is not None:
        fill_now = spec.workload.working_set_fraction
    drives: list[DriveForecast] = []
    wa_models: dict[str, _WaModel] = {}
    for g, serial, s in picked:
        cat = pinned or match_catalog(s.latest.model, catalog)
        wam = None
        if cat is not None and cat.is_ssd and spec.workload is not None:
            wam = wa_models.setdefault(cat.name, _WaModel(cat, layout, spec.workload))
        drives.append(forecast_drive(s, group=g.name, serial=serial, catalog_drive=cat, workload=spec.workload, layout=layout,
                                     fill_now=fill_now, fill_at=fill_at, confidence=spec.confidence,
                                     worn_threshold_fraction=spec.worn_threshold_fraction, fill_history=fill_history, wa_model=wam))
    groups: list[GroupForecast] = []
    for g in spec.groups:
        members = [d for d in drives if d.group == g.name]
        first = _earliest([d.wear_out for d in members])
        try:
            tol = make_layout(spec.layout, len(g.serials)).failures_tolerated
        except InvalidInputError as exc:
            tol = layout.failures_tolerated
            problems.append(f"group {g.name}: {len(g.serials)} members do not make a {spec.layout} group ({exc}); "
                            f"taken to survive {tol} failures like the widest group")
        close = 0
        if first.time_s is not None:
            window = spec.lockstep_window_days * DAY_S
            close = sum(1 for d in members if d.wear_out.time_s is not None and d.wear_out.time_s - first.time_s <= window)
        lockstep = close > tol
        gnotes = []
        if lockstep:
            msg = (f"group {g.name}: {close} of {len(g.serials)} members reach their rated endurance within {spec.lockstep_window_days:.0f} days "
                   f"of each other, more than the {tol} the layout survives: replace them in stages, not together")
            warnings.append(msg)
            gnotes.append(msg)
        groups.append(GroupForecast(name=g.name, layout=spec.layout, members=len(g.serials), failures_tolerated=tol, wear_out=first,
                                    lockstep=lockstep, lockstep_members=close, notes=tuple(gnotes)))
    for d in drives:
        if d.basis == "none" and not any("spinning disk" in n for n in d.notes):
            why = next((n for n in d.notes if "wear unknown" in n or "no wear rate" in n or "no dates" in n), "no forecast")
            problems.append(f"group {d.group}, drive {d.serial} ({', '.join(d.sources[-1:])}): {why}")
        if d.passed_but_worn:
            warnings.append(f"group {d.group}, drive {d.serial}: SMART says PASSED but only "
                            f"{max(1 - (d.life_used_fraction or 0), 0):.0%} of rated life is left")
    as_of = max((s.latest.time_s for _, _, s in picked if s.latest.time_s is not None), default=spec.start_time_s)
    return ArrayForecast(name=spec.name, as_of_s=as_of, drives=tuple(drives), groups=tuple(groups), fill=fill,
                         wear_out=_earliest([g.wear_out for g in groups]), warnings=tuple(warnings), problems=tuple(problems),
                         growth_per_year=growth, models=("telemetry", "forecast", "endurance", "ssd FTL write amplification"))


def snapshot_catalog_matches(snapshots: Sequence[DriveSnapshot], catalog: Catalog) -> Mapping[str, str | None]:
    """Model string -> catalog drive name (None when none matches), for display."""
    return {s.model or "": (d.name if (d := match_catalog(s.model, catalog)) else None) for s in snapshots}


_STALE_AFTER = Range(lo=0, lo_open=True, hi=100 * YEAR_DAYS, unit="days")


def _day(time_s: float) -> str:
    return datetime.fromtimestamp(time_s, tz=UTC).strftime("%Y-%m-%d")


def stale_telemetry(f: ArrayForecast, *, now_s: float, stale_after_days: float = DEFAULT_STALE_AFTER_DAYS) -> ArrayForecast:
    """The forecast judged at ``now_s`` (Unix s; the caller's clock or the request's time): its
    ``as_of_age_days``, and when the latest snapshot is more than ``stale_after_days`` older, a
    first warning that says so with both dates (the dates are projected from the snapshots; what
    happened since is not in them) and ``stale``. Pure: the caller passes the time."""
    _STALE_AFTER.require("stale_after_days", stale_after_days)
    Range(lo=0).require("now_s", now_s)
    age_days = (now_s - f.as_of_s) / DAY_S
    if not age_days > stale_after_days:
        return replace(f, as_of_age_days=age_days, stale=False)
    msg = (f"stale telemetry: the latest snapshot is from {_day(f.as_of_s)}, {age_days:,.0f} days ({age_days / (YEAR_DAYS / 12):,.1f} "
           f"months) before {_day(now_s)} (stale after {stale_after_days:g} days); the dates are projected from the snapshots, and "
           "the wear and growth since are not in them: collect fresh telemetry")
    return replace(f, warnings=(msg, *f.warnings), as_of_age_days=age_days, stale=True)
