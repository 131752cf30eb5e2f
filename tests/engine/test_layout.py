"""Layouts: usable capacity and host-to-member IO multiplication, against worked examples.

Sources: Patterson, Gibson & Katz, "A Case for Redundant Arrays of Inexpensive Disks (RAID)",
SIGMOD 1988 (capacity and small-write cost per level); the Linux md driver's choice between
read-modify-write and reconstruct-write (drivers/md/raid5.c, handle_stripe_dirtying), which picks
whichever needs fewer reads.
"""

from __future__ import annotations

import pytest

from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout, random_iops_bound, usable_capacity_bytes
from arrayplan_engine.units import TB, KiB


def test_usable_capacity_worked_examples() -> None:
    # 12 x 0.48 TB in RAID 6 groups of 12: 10 data drives x 0.48 TB = 4.8 TB.
    assert usable_capacity_bytes(make_layout("raid6", 12), 12, 0.48 * TB) == pytest.approx(4.8 * TB, rel=1e-12)
    # 24 drives in RAID 6 groups of 12 (RAID 60): 2 groups x 10 x 0.48 TB = 9.6 TB.
    assert usable_capacity_bytes(make_layout("raid6", 12), 24, 0.48 * TB) == pytest.approx(9.6 * TB, rel=1e-12)
    # 8 drives RAID 10: half of 8 x 1 TB = 4 TB.
    assert usable_capacity_bytes(make_layout("raid10", 8), 8, 1 * TB) == pytest.approx(4 * TB)
    # RAID 5 of 5: 4 x 1 TB.  RAID 0 of 3: 3 TB.  3-way mirror: 1 TB.
    assert usable_capacity_bytes(make_layout("raid5", 5), 5, 1 * TB) == pytest.approx(4 * TB)
    assert usable_capacity_bytes(make_layout("raid0", 3), 3, 1 * TB) == pytest.approx(3 * TB)
    assert usable_capacity_bytes(make_layout("raid1", 3), 3, 1 * TB) == pytest.approx(1 * TB)
    # EC 8+3 on 22 drives: 2 groups x 8 x 1 TB = 16 TB; 23rd drive would be a spare.
    assert usable_capacity_bytes(make_layout("ec:8+3"), 23, 1 * TB) == pytest.approx(16 * TB)
    # Fewer drives than one group: nothing usable.
    assert usable_capacity_bytes(make_layout("raid6", 12), 11, 1 * TB) == 0


@pytest.mark.parametrize(
    ("name", "width", "reads", "writes"),
    [
        ("raid0", 4, 0, 1),   # no redundancy
        ("raid1", 2, 0, 2),   # write both copies
        ("raid10", 8, 0, 2),  # write both halves of the pair
        ("raid5", 6, 2, 2),   # RMW: read old data + parity, write both -> penalty 4
        ("raid6", 8, 3, 3),   # RMW: read data + P + Q, write all three -> penalty 6
        ("raid5", 3, 1, 2),   # 2+1: reconstruct-write reads the 1 other data unit -> 3 < 4
        ("raid6", 4, 1, 3),   # 2+2: reconstruct-write 1 read + 3 writes = 4 < 6
    ],
)
def test_small_write_member_ios(name: str, width: int, reads: int, writes: int) -> None:
    layout = make_layout(name, width)
    assert layout.small_write_member_ios() == (reads, writes)


def test_ec_small_write_and_full_stripe_factor() -> None:
    ec = make_layout("ec:8+3")
    # RMW: read data + 3 parities (4), write 4 = 8; reconstruct: read 7 others + write 4 = 11.
    assert ec.small_write_member_ios() == (4, 4)
    # Full stripe: 11 units written per 8 units of data.
    assert ec.full_stripe_write_factor() == pytest.approx(11 / 8)
    assert make_layout("raid6", 12).full_stripe_write_factor() == pytest.approx(12 / 10)


def test_write_bytes_factor_random_vs_sequential() -> None:
    r6 = make_layout("raid6", 12)
    # One 4 KiB random write rewrites its data and both parities: 3 x the host bytes.
    assert r6.write_bytes_factor(4 * KiB, 1.0) == pytest.approx(3.0)
    # Sequential: full stripes, 12/10.
    assert r6.write_bytes_factor(4 * KiB, 0.0) == pytest.approx(1.2)
    # Half and half: the average.
    assert r6.write_bytes_factor(4 * KiB, 0.5) == pytest.approx(2.1)
    assert make_layout("raid10", 4).write_bytes_factor(64 * KiB, 1.0) == 2.0


def test_random_iops_bound_worked_example() -> None:
    # 12 drives RAID 6, each 75,000 read / 11,500 write IOPS (DC S3500 480GB spec, seed 001),
    # 70 % reads. Host read costs 1/75000 drive-s; host write costs 3/75000 + 3/11500.
    # 0.7/75000 = 9.333e-6; 0.3 x (4.0e-5 + 2.6087e-4) = 9.026e-5; sum 9.9594e-5.
    # Array = 12 / 9.9594e-5 = 120,489 host IOPS.
    bound = random_iops_bound(make_layout("raid6", 12), 12, drive_read_iops=75_000, drive_write_iops=11_500, read_fraction=0.7)
    expected = 12 / (0.7 / 75_000 + 0.3 * (3 / 75_000 + 3 / 11_500))
    assert bound == pytest.approx(expected, rel=1e-12)
    assert bound == pytest.approx(120_489, rel=1e-5)


@pytest.mark.parametrize(
    ("name", "width", "field"),
    [
        ("raid7", 4, "layout"),
        ("raid6", 3, "layout.group_width"),
        ("raid10", 5, "layout.group_width"),
        ("ec:0+2", None, "layout"),
        ("ec:8+3", 12, "layout.group_width"),
        ("raid5", 100, "layout.group_width"),
    ],
)
def test_bad_layouts_name_the_field(name: str, width: int | None, field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        make_layout(name, width)
    assert [v.field for v in err.value.violations] == [field]
