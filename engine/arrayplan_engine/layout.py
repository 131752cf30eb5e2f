"""Array layouts: RAID 0, 1 (n-way mirror), 10, 5, 6 and general k+m erasure coding.

A layout is a *group* of ``group_width`` drives, repeated; an array of ``drive_count`` drives holds
``drive_count // group_width`` groups (striped together, as RAID 50/60 or an EC pool does). Per
group, ``data_drives`` hold data and ``redundancy_drives`` hold parity or copies.

Host IO to member IO (the counts the array simulation reproduces IO by IO):

* read of one stripe unit: 1 member read (any copy of a mirror);
* small (sub-stripe) write: mirror -> one write per copy; parity (m parity units) -> the cheaper
  of read-modify-write (read old data + m parities, write data + m parities: 2(m+1) IOs) and
  reconstruct-write (read the k-1 other data units, write data + m parities: k+m IOs), as Linux md
  chooses;
* full-stripe write: k data + m parity writes for k units of host data, (k+m)/k per unit.

The classic write penalties follow: RAID 1/10: 2, RAID 5: 4, RAID 6: 6 (for groups wide enough
that read-modify-write is the cheaper choice).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .errors import InvalidInputError, Violation, check_range, did_you_mean
from .units import KiB, MiB


class LayoutKind(StrEnum):
    RAID0 = "raid0"
    RAID1 = "raid1"
    RAID10 = "raid10"
    RAID5 = "raid5"
    RAID6 = "raid6"
    EC = "ec"


DEFAULT_STRIPE_UNIT_BYTES = 64 * KiB
MAX_GROUP_WIDTH = 64
# RAID 0 and RAID 10 stripe across the whole array (RAID 10's redundancy is per mirror pair).
MAX_STRIPE_WIDTH = 1_024


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """One redundancy group's shape. ``group_width = data_drives + redundancy_drives``."""

    kind: LayoutKind
    group_width: int
    data_drives: int
    redundancy_drives: int
    stripe_unit_bytes: int = DEFAULT_STRIPE_UNIT_BYTES

    @property
    def name(self) -> str:
        if self.kind is LayoutKind.EC:
            return f"ec:{self.data_drives}+{self.redundancy_drives}"
        if self.kind is LayoutKind.RAID1:
            return f"raid1x{self.group_width}"
        return f"{self.kind.value}({self.group_width})"

    @property
    def is_mirror(self) -> bool:
        return self.kind in (LayoutKind.RAID1, LayoutKind.RAID10)

    @property
    def mirror_copies(self) -> int:
        """Copies of each block for mirrors (RAID 10 groups are 2-way mirror pairs)."""
        if self.kind is LayoutKind.RAID1:
            return self.group_width
        if self.kind is LayoutKind.RAID10:
            return 2
        return 1

    @property
    def parity_units(self) -> int:
        """m: parity units per stripe (0 for RAID 0 and mirrors)."""
        return 0 if self.is_mirror or self.kind is LayoutKind.RAID0 else self.redundancy_drives

    @property
    def failures_tolerated(self) -> int:
        """Drive failures a group survives in the worst case."""
        if self.kind is LayoutKind.RAID10:
            return 1  # a second failure can hit the surviving half of a pair
        return self.redundancy_drives

    @property
    def usable_fraction(self) -> float:
        return self.data_drives / self.group_width

    @property
    def stripe_data_bytes(self) -> int:
        """Host data in one full stripe."""
        return self.data_drives * self.stripe_unit_bytes

    # -- member IOs per host IO -------------------------------------------------------------
    def small_write_member_ios(self) -> tuple[int, int]:
        """(member reads, member writes) for a write of one stripe unit or less."""
        if self.kind is LayoutKind.RAID0:
            return (0, 1)
        if self.is_mirror:
            return (0, self.mirror_copies)
        k, m = self.data_drives, self.parity_units
        rmw = (1 + m, 1 + m)
        reconstruct = (k - 1, 1 + m)
        return rmw if sum(rmw) <= sum(reconstruct) else reconstruct

    def small_write_penalty(self) -> int:
        """Member IOs per small random host write (the textbook 'write penalty')."""
        return sum(self.small_write_member_ios())

    def full_stripe_write_factor(self) -> float:
        """Member bytes written per host byte for full-stripe (sequential) writes."""
        if self.is_mirror:
            return float(self.mirror_copies)
        return (self.data_drives + self.parity_units) / self.data_drives

    def write_bytes_factor(self, io_bytes: float, random_fraction: float) -> float:
        """Member bytes written per host byte written, for an IO size and random share.

        Random writes smaller than a full stripe rewrite their data plus every parity unit
        covering it (m+1 for one unit); sequential streams coalesce into full stripes.
        """
        if self.is_mirror:
            return float(self.mirror_copies)
        if self.kind is LayoutKind.RAID0:
            return 1.0
        k, m, u = self.data_drives, self.parity_units, self.stripe_unit_bytes
        full = self.full_stripe_write_factor()
        if io_bytes >= k * u:
            random_factor = full
        else:
            units_touched = max(1.0, min(float(k), io_bytes / u))
            random_factor = (units_touched + m * min(1.0, units_touched)) / units_touched
            random_factor = min(random_factor, 1.0 + m)
        return random_fraction * random_factor + (1.0 - random_fraction) * full


_EC_RE = re.compile(r"ec:([0-9]{1,6})\+([0-9]{1,6})", re.ASCII)
_LAYOUT_NAMES = ("raid0", "raid1", "raid10", "raid5", "raid6", "ec:K+M")


def make_layout(name: str, group_width: int | None = None, *, stripe_unit_bytes: int = DEFAULT_STRIPE_UNIT_BYTES,
                field: str = "layout") -> Layout:
    """Parse ``raid0|raid1|raid10|raid5|raid6|ec:K+M`` with a group width.

    ``group_width`` is required for RAID 0/5/6/10 and RAID 1 (copies); for ``ec:K+M`` it is
    K+M and may be omitted.
    """
    key = name.strip().lower()
    violations: list[Violation] = []
    if not isinstance(stripe_unit_bytes, int) or not (4 * KiB <= stripe_unit_bytes <= 16 * MiB) or stripe_unit_bytes % (4 * KiB):
        violations.append(Violation(field=f"{field}.stripe_unit_bytes",
                                    reason=f"must be a multiple of 4096 in [4 KiB, 16 MiB], got {stripe_unit_bytes!r}"))
    m = _EC_RE.fullmatch(key)
    if m:
        k, p = int(m.group(1)), int(m.group(2))
        if k < 1 or p < 1 or k + p > MAX_GROUP_WIDTH:
            violations.append(Violation(field=field, reason=f"ec:K+M needs K >= 1, M >= 1, K+M <= {MAX_GROUP_WIDTH}, got {name!r}"))
        if group_width not in (None, 0, k + p):
            violations.append(Violation(field=f"{field}.group_width", reason=f"must equal K+M = {k + p} for {name}, got {group_width}"))
        if violations:
            raise InvalidInputError(violations)
        return Layout(kind=LayoutKind.EC, group_width=k + p, data_drives=k, redundancy_drives=p, stripe_unit_bytes=stripe_unit_bytes)
    try:
        kind = LayoutKind(key)
    except ValueError:
        hint = did_you_mean(name[:200], _LAYOUT_NAMES)
        raise InvalidInputError.one(field, f"unknown layout {name[:200]!r}{hint}; known: {', '.join(_LAYOUT_NAMES)}") from None
    if kind is LayoutKind.EC:
        raise InvalidInputError.one(field, "erasure coding is written ec:K+M, e.g. ec:8+3")
    minimum = {LayoutKind.RAID0: 1, LayoutKind.RAID1: 2, LayoutKind.RAID10: 4, LayoutKind.RAID5: 3, LayoutKind.RAID6: 4}[kind]
    maximum = MAX_STRIPE_WIDTH if kind in (LayoutKind.RAID0, LayoutKind.RAID10) else MAX_GROUP_WIDTH
    if (check_range(violations, f"{field}.group_width", group_width, minimum, maximum, integer=True, note=f"for {kind.value}")
            and kind is LayoutKind.RAID10 and group_width is not None and group_width % 2):
        violations.append(Violation(field=f"{field}.group_width", reason=f"raid10 needs an even group width, got {group_width}"))
    if violations:
        raise InvalidInputError(violations)
    assert group_width is not None
    redundancy = {
        LayoutKind.RAID0: 0,
        LayoutKind.RAID1: group_width - 1,
        LayoutKind.RAID10: group_width // 2,
        LayoutKind.RAID5: 1,
        LayoutKind.RAID6: 2,
    }[kind]
    return Layout(kind=kind, group_width=group_width, data_drives=group_width - redundancy,
                  redundancy_drives=redundancy, stripe_unit_bytes=stripe_unit_bytes)


def group_count(layout: Layout, drive_count: int) -> int:
    """Whole groups in ``drive_count`` drives (left-over drives are hot spares)."""
    return drive_count // layout.group_width


def usable_capacity_bytes(layout: Layout, drive_count: int, drive_capacity_bytes: float) -> float:
    """Host-visible capacity: data drives of every whole group times the drive's capacity."""
    return group_count(layout, drive_count) * layout.data_drives * drive_capacity_bytes


def random_iops_bound(layout: Layout, drive_count: int, *, drive_read_iops: float, drive_write_iops: float,
                      read_fraction: float) -> float:
    """Host random small-IO rate the array can carry if every member runs at its rated IOPS.

    Each host read costs one member read (1/R drive-seconds); each host write costs its member
    reads and writes (r_w/R + w_w/W). ``drive_count`` drives supply ``drive_count``
    drive-seconds per second, shared by reads and writes (harmonic mix).
    """
    members = group_count(layout, drive_count) * layout.group_width
    if members == 0:
        return 0.0
    reads, writes = layout.small_write_member_ios()
    cost_read = 1.0 / drive_read_iops
    cost_write = reads / drive_read_iops + writes / drive_write_iops
    return members / (read_fraction * cost_read + (1.0 - read_fraction) * cost_write)
