"""Cost of ownership: purchase, electricity, wear-out and failure replacements."""

from __future__ import annotations

import math

from .units import YEAR_HOURS


def purchase_cost_usd(price_usd: float, drive_count: int) -> float:
    return price_usd * drive_count


def hot_spare_count(drive_count: int, *, drives_per_spare: int) -> int:
    """Hot spares kept powered in the enclosure: one per ``drives_per_spare`` drives, rounded up."""
    if drives_per_spare <= 0:
        return 0
    return math.ceil(drive_count / drives_per_spare)


def average_power_w(*, idle_power_w: float, active_power_w: float, drive_count: int, utilization: float) -> float:
    """Array power: each drive draws idle power plus (active - idle) for the busy share of time."""
    u = min(max(utilization, 0.0), 1.0)
    return drive_count * (idle_power_w + (active_power_w - idle_power_w) * u)


def energy_cost_usd(power_w: float, *, years: float, usd_per_kwh: float) -> float:
    """Electricity for ``power_w`` drawn around the clock for ``years``."""
    return power_w / 1_000.0 * YEAR_HOURS * years * usd_per_kwh


def wear_out_replacements(drive_count: int, *, endurance_years: float, service_life_years: float) -> int:
    """Drives bought again because they wore out: each slot needs ceil(L / E) - 1 replacements."""
    if not math.isfinite(endurance_years) or endurance_years >= service_life_years:
        return 0
    if endurance_years <= 0:
        raise ValueError("endurance_years must be > 0")
    return drive_count * (math.ceil(service_life_years / endurance_years) - 1)


def expected_failure_replacements(drive_count: int, *, annual_failure_rate: float, service_life_years: float) -> float:
    """Expected drives replaced after failures: count x AFR x years (constant failure rate)."""
    return drive_count * annual_failure_rate * service_life_years
