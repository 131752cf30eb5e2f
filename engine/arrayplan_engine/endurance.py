"""Endurance over the service life.

Bytes written to each drive per day = host bytes written per day x the layout's write factor
(member bytes written per host byte: mirror copies, parity updates) / the drives that share them
(data and parity rotate over every member of every group). Against the drive's rated endurance
(host writes the vendor guarantees, e.g. "450 TBW" or "7-14 PB") this gives years to wear-out
and the share of life used over the service life, with the workload growing each year.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import ssd
from .catalog import Drive
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


# -- service life with the FTL's write amplification ----------------------------------------------

# JEDEC JESD218 rates SSD endurance (TBW) under the JESD219 enterprise workload; its address
# distribution zoned:50/5:30/15:20/80 (data/fio/jesd219.fio) reduces to 80 % of writes on 20 %
# of the space (fio.skew_from_distribution), all random, over the full user capacity.
JESD219_HOT_WRITE_FRACTION = 0.8
JESD219_HOT_SPACE_FRACTION = 0.2


@dataclass(frozen=True, slots=True, kw_only=True)
class YearWear:
    """One year of one drive's wear."""

    year: int
    fill_fraction: float                 # share of the array's usable capacity holding data
    host_bytes_per_drive: float          # bytes the layout writes to each member this year
    write_amplification: float           # FTL NAND programs per host page (workload mix, this fill)
    life_used_fraction: float            # share of rated endurance used this year
    cumulative_life_used_fraction: float
    # share of each member's LBAs its FTL holds mapped (``discards``): the fill when discards
    # reach the members, 1 when the span stays mapped after the array's initialisation
    mapped_fraction: float = math.nan


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceLifeWear:
    years: tuple[YearWear, ...]
    life_used_fraction: float            # over the whole service life (above 1: worn out)
    wear_out_year: int | None
    endurance_years: float               # years to 100 % at the service life's average rate
    rated_write_amplification: float     # the FTL's WA under the rating's workload (JESD219 random, or 1 sequential)
    wear_out_replacements: int
    # the rating read as JESD219 random: TBW x WA(rating workload) / WA(JESD219); the rated TBW
    # itself for a drive rated under JESD219 (inf for a hard disk, NaN for a P/E-only SSD)
    random_equivalent_endurance_bytes: float = math.nan
    rating_workload: str = "jesd219-random"


def _workload_wa(drive: Drive, workload: Workload, *, fill_fraction: float, extra_spare_fraction: float) -> float:
    """FTL write amplification of the workload's writes: random writes at the workload's skew
    and the drive's effective spare factor, sequential writes (whole blocks invalidated) at 1."""
    if workload.random_fraction <= 0:
        return 1.0
    random_wa = ssd.steady_state_write_amplification(
        drive, fill_fraction=max(fill_fraction, 1e-3), extra_spare_fraction=extra_spare_fraction,
        hot_write_fraction=workload.hot_write_fraction, hot_space_fraction=workload.hot_space_fraction)
    return workload.random_fraction * random_wa + (1.0 - workload.random_fraction)


def jesd219_write_amplification(drive: Drive) -> float:
    """The FTL's WA under JESD219's random workload over the full drive (the JESD218 rating)."""
    return ssd.steady_state_write_amplification(drive, fill_fraction=1.0, hot_write_fraction=JESD219_HOT_WRITE_FRACTION,
                                                hot_space_fraction=JESD219_HOT_SPACE_FRACTION)


# Write amplification of a sequential write stream: each erase block is filled by consecutive
# writes and invalidated whole when it is overwritten, so garbage collection copies nothing.
SEQUENTIAL_WRITE_AMPLIFICATION = 1.0


def rated_write_amplification(drive: Drive) -> float:
    """The FTL's WA under the workload the drive's endurance was rated under
    (``drive.endurance_rating_workload``): JESD219 random over the full drive (the default), or
    sequential writes (1) where the drive's source says the rating is for sequential writing."""
    if drive.endurance_rating_workload == "sequential":
        return SEQUENTIAL_WRITE_AMPLIFICATION
    return jesd219_write_amplification(drive)


def random_equivalent_endurance_bytes(drive: Drive) -> float:
    """The rated host writes read against JESD219's random workload: the NAND programs the rating
    allows (TBW x the rating workload's WA) divided by the random workload's WA. A sequential
    rating of TBW is worth TBW x 1 / WA(JESD219) random host writes; a JESD219 rating is itself.
    NaN when the drive has no TBW rating."""
    if not drive.endurance_bytes_written:
        return math.nan
    return float(drive.endurance_bytes_written) * rated_write_amplification(drive) / jesd219_write_amplification(drive)


def nand_endurance_bytes(drive: Drive) -> float:
    """Physical NAND program budget: raw NAND x P/E cycles."""
    if not (drive.raw_nand_bytes and drive.pe_cycles):
        return math.inf
    return float(drive.raw_nand_bytes) * float(drive.pe_cycles)


def host_write_endurance_bytes(drive: Drive, write_amplification: float) -> float:
    """Host bytes the NAND can take at a write amplification: raw NAND x P/E cycles / WA, with the
    drive's internal parity (SSD 320, P320h) programming its share on top."""
    parity = ssd.nand_write_factor(drive) / ssd.steady_state_write_amplification(drive)
    return nand_endurance_bytes(drive) / (write_amplification * parity)


#: How the members' free space is kept (docs/array-model.md, "The array as built"): ``none``,
#: no discards reach the members, so once the array is initialised (a RAID 5/6 create resyncs
#: every member; hardware RAID initialises every block) every LBA stays mapped; ``passed``,
#: discards reach them (fstrim through RAID 0/1/10, or a stack that passes them), so the FTL
#: holds only the data; ``auto``: ``none`` for parity layouts (Linux md raid456 passes no
#: discards unless devices_handle_discard_safely is set), ``passed`` for RAID 0/1/10.
DISCARDS = ("auto", "none", "passed")


def effective_discards(layout: Layout, discards: str = "auto") -> str:
    """``none`` or ``passed``: ``discards`` with ``auto`` resolved for the layout."""
    if discards != "auto":
        return discards
    return "none" if layout.parity_units > 0 and not layout.is_mirror else "passed"


def service_life_wear(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, years: int,
                      data_bytes_year1: float, usable_capacity_bytes: float, extra_spare_fraction: float = 0.0,
                      discards: str = "passed") -> ServiceLifeWear:
    """Wear year by year: host bytes per member (layout write factor, growth) x the FTL's write
    amplification at that year's mapped share of the members (the fill level with ``discards``
    passed, the whole span with ``none``; ``effective_discards``) and the workload's skew,
    against the rated endurance.

    The rated host writes (TBW) were measured at the rating workload's write amplification. A
    sequential rating is first read as its JESD219 random equivalent
    (``random_equivalent_endurance_bytes``: TBW x 1 / WA_JESD219), so a year's share of life is
    ``bytes x WA_workload / (WA_JESD219 x TBW_random)``, which is ``bytes x WA_workload /
    (WA_rated x TBW)`` for either rating workload; a drive rated only in P/E
    cycles uses ``raw NAND x P/E`` as the budget of NAND programs. HDDs have no write-endurance
    limit here (their failures are in ``reliability``).
    """
    per_day = drive_write_bytes_per_day(layout, drive_count, workload)
    g = workload.growth_per_year
    ssd_drive = drive.kind == "ssd"
    rated_wa = rated_write_amplification(drive) if ssd_drive else 1.0
    random_wa = jesd219_write_amplification(drive) if ssd_drive else 1.0
    tbw_random = random_equivalent_endurance_bytes(drive) if ssd_drive else math.inf
    out: list[YearWear] = []
    total = 0.0
    wear_out: int | None = None
    for y in range(1, years + 1):
        grow = (1.0 + g) ** (y - 1)
        fill = min(1.0, data_bytes_year1 * grow / usable_capacity_bytes) if usable_capacity_bytes > 0 else 1.0
        host = per_day * grow * YEAR_DAYS
        # (a disk has no FTL: its data stays where the fill puts it)
        mapped = 1.0 if ssd_drive and effective_discards(layout, discards) == "none" else fill
        if ssd_drive:
            wa = _workload_wa(drive, workload, fill_fraction=mapped, extra_spare_fraction=extra_spare_fraction)
            if drive.endurance_bytes_written:
                used = host * wa / (random_wa * tbw_random)
            else:
                used = host / host_write_endurance_bytes(drive, wa)
        else:
            wa, used = 1.0, 0.0
        total += used
        if wear_out is None and total >= 1.0:
            wear_out = y
        out.append(YearWear(year=y, fill_fraction=fill, host_bytes_per_drive=host, write_amplification=wa,
                            life_used_fraction=used, cumulative_life_used_fraction=total, mapped_fraction=mapped))
    endurance_years_ = years / total if total > 0 else math.inf
    replacements = 0
    if math.isfinite(endurance_years_) and endurance_years_ < years:
        replacements = drive_count * (math.ceil(years / endurance_years_) - 1)
    return ServiceLifeWear(years=tuple(out), life_used_fraction=total, wear_out_year=wear_out, endurance_years=endurance_years_,
                           rated_write_amplification=rated_wa, wear_out_replacements=replacements,
                           random_equivalent_endurance_bytes=tbw_random,
                           rating_workload=(drive.endurance_rating_workload or "jesd219-random") if ssd_drive else "")
