"""Cost of ownership: purchase, electricity, wear-out and failure replacements."""

from __future__ import annotations

import math

from .units import YEAR_HOURS

# -- a drive bay is never free ---------------------------------------------------------------------
# Every drive sits in a bay that was bought with its enclosure (chassis, backplane, expander, power
# supplies, fans) and that draws power whether the drive works or not. One definition serves the
# single box (``evaluation.evaluate``, ``candidates.objective_bounds``) and the cluster's default
# server (``cluster_plan``): a box of N drives (hot spares included) pays N bays.
#
# Cost: a bare Backblaze Storage Pod 6.0 (4U, 60 bays, with its motherboard, CPU, RAM, SATA cards and
# power supply; no drives) sold for 5,950 USD: 5,950 / 60 = 99.17 USD a bay. Sources: the pod's
# design and bill of materials, https://www.backblaze.com/blog/open-source-data-storage-server/ ;
# the bare-pod price, https://segmentfault.com/p/1210000047105747 ("At least one company sells
# bare, disk-free Pods for $5,950").
ENCLOSURE_USD_PER_BAY = 5_950.0 / 60
# Power: IBM's 4657-12G 2U 12-bay SAS expansion enclosure draws 158 W with 12 7.2K nearline SAS
# drives (https://www.ibm.com/docs/en/flashsystem-7x00/8.5.0?topic=planning-sas-expansion-enclosure-requirements,
# Table 2); less 12 drives at an assumed 8 W each (a 7.2K nearline disk working: 7-9 W on the
# catalog's disks) leaves (158 - 96) / 12 = 5.17 W a bay for the enclosure's expander, fans and
# power-supply loss.
ENCLOSURE_POWER_W_PER_BAY = (158.0 - 12 * 8.0) / 12
ENCLOSURE_ASSUMPTION = (
    f"each drive bay costs {ENCLOSURE_USD_PER_BAY:,.2f} USD and draws {ENCLOSURE_POWER_W_PER_BAY:.2f} W "
    "(its enclosure's share: a bare 60-bay Backblaze Storage Pod 6.0 at 5,950 USD; IBM 4657-12G 12-bay "
    "enclosure at 158 W with 12 nearline disks less 8 W a disk); candidate_space.bay_cost_usd and "
    "bay_power_w override them")
MAX_BAY_COST_USD = 100_000.0
MAX_BAY_POWER_W = 1_000.0


def bay_cost_usd(bay_count: int, *, usd_per_bay: float = ENCLOSURE_USD_PER_BAY) -> float:
    """What ``bay_count`` drive bays cost with their enclosure (drives not included)."""
    return bay_count * usd_per_bay


def bay_power_w(bay_count: int, *, w_per_bay: float = ENCLOSURE_POWER_W_PER_BAY) -> float:
    """What ``bay_count`` drive bays' enclosure draws, filled or not (drives not included)."""
    return bay_count * w_per_bay


def purchase_cost_usd(price_usd: float, drive_count: int, *, usd_per_bay: float = 0.0) -> float:
    """Drives and, at ``usd_per_bay``, the bays they sit in."""
    return price_usd * drive_count + bay_cost_usd(drive_count, usd_per_bay=usd_per_bay)


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
