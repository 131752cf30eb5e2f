"""Endurance over the service life.

Bytes written to each drive per day = host bytes written per day x the layout's write factor
(member bytes written per host byte: mirror copies, parity updates) / the drives that share them
(data and parity rotate over every member of every group). Against the drive's rated endurance
(host writes the vendor guarantees, e.g. "450 TBW" or "7-14 PB") this gives years to wear-out
and the share of life used over the service life, with the workload growing each year.
"""

from __future__ import annotations

import math

from .layout import Layout, group_count
from .units import YEAR_DAYS
from .workload import Workload


def drive_write_bytes_per_day(layout: Layout, drive_count: int, workload: Workload) -> float:
    """Bytes written to each member drive per day in year 1."""
    members = group_count(layout, drive_count) * layout.group_width
    if members == 0:
        return math.inf
    factor = layout.write_bytes_factor(workload.mean_io_bytes, workload.random_fraction)
    return workload.daily_write_bytes_effective() * factor / members


def endurance_years(endurance_bytes_written: float, drive_bytes_per_day: float) -> float:
    """Years until ``endurance_bytes_written`` is used at a constant daily rate."""
    if drive_bytes_per_day <= 0:
        return math.inf
    return endurance_bytes_written / (drive_bytes_per_day * YEAR_DAYS)


def yearly_life_used(endurance_bytes_written: float, drive_bytes_per_day: float, *, years: int,
                     growth_per_year: float) -> list[float]:
    """Share of rated endurance used in each year 1..years; year y writes (1+g)^(y-1) x year 1."""
    if endurance_bytes_written <= 0:
        return [math.inf] * years
    year1 = drive_bytes_per_day * YEAR_DAYS / endurance_bytes_written
    return [year1 * (1.0 + growth_per_year) ** y for y in range(years)]


def life_used_fraction(endurance_bytes_written: float, drive_bytes_per_day: float, *, years: int,
                       growth_per_year: float) -> float:
    """Share of rated endurance used over ``years`` (above 1 means the drives wear out)."""
    return sum(yearly_life_used(endurance_bytes_written, drive_bytes_per_day, years=years,
                                growth_per_year=growth_per_year))


def wear_out_year(endurance_bytes_written: float, drive_bytes_per_day: float, *, years: int,
                  growth_per_year: float) -> int | None:
    """First year (1-based) in which cumulative wear reaches 100 %, or None within ``years``."""
    total = 0.0
    for y, used in enumerate(yearly_life_used(endurance_bytes_written, drive_bytes_per_day, years=years,
                                              growth_per_year=growth_per_year), start=1):
        total += used
        if total >= 1.0:
            return y
    return None
