"""Each drive's endurance is read against the workload it was rated under: JESD219 random by
default, sequential where the drive's own source says so (the Intel D5-P4320); a sequential rating
is converted to its random-workload equivalent by the FTL model's write amplification."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from arrayplan_engine import catalog, endurance
from arrayplan_engine.catalog import JESD219_DEFAULT_REASON, CatalogFileError, drive_from_mapping, drive_from_toml, drive_to_toml
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import KiB, MiB
from arrayplan_engine.workload import Workload

P4320 = catalog.get_drive("intel-d5-p4320-7680gb")


def test_only_the_drive_whose_source_says_sequential_is_rated_sequential() -> None:
    rated = {d.name: d.endurance_rating_workload for d in catalog.all_drives()}
    assert [n for n, w in rated.items() if w == "sequential"] == ["intel-d5-p4320-7680gb"]
    p = P4320.provenance["endurance_rating_workload"]
    assert not p.assumed and "sequenziellen Schreiben" in p.quote and p.quote == P4320.provenance["endurance_bytes_written"].quote
    for d in catalog.all_drives():
        if d.kind == "hdd":
            assert d.endurance_rating_workload is None, d.name
        elif d.endurance_bytes_written and d.name != P4320.name:
            assert d.endurance_rating_workload == "jesd219-random", d.name
            p = d.provenance["endurance_rating_workload"]
            # the SSD 910's source gives a 4 KB random-write rating; the others name no workload
            if d.family == "SSD 910":
                assert not p.assumed and "4KB Random Write" in p.quote, d.name
            else:
                assert p.assumed and p.reason == JESD219_DEFAULT_REASON, d.name


def test_a_sequential_rating_is_worth_tbw_over_the_random_write_amplification() -> None:
    """The FTL model's WA under JESD219 (full drive, 80/20 skew) is well above 1 for this QLC drive;
    a sequential rating's random equivalent is TBW / that WA; a JESD219 rating is itself."""
    wa = endurance.jesd219_write_amplification(P4320)
    assert 2.0 < wa < 8.0
    assert endurance.rated_write_amplification(P4320) == endurance.SEQUENTIAL_WRITE_AMPLIFICATION == 1.0
    tbw = float(P4320.endurance_bytes_written or 0)
    assert endurance.random_equivalent_endurance_bytes(P4320) == pytest.approx(tbw / wa, rel=1e-12)
    as_random = replace(P4320, endurance_rating_workload="jesd219-random")
    assert endurance.rated_write_amplification(as_random) == pytest.approx(wa, rel=1e-12)
    assert endurance.random_equivalent_endurance_bytes(as_random) == pytest.approx(tbw, rel=1e-12)


def _wear(drive: catalog.Drive, workload: Workload, fill: float = 1.0) -> endurance.ServiceLifeWear:
    layout = make_layout("raid0", 1)
    return endurance.service_life_wear(drive, layout, 1, workload, years=1, data_bytes_year1=fill, usable_capacity_bytes=1.0)


def test_writing_the_rated_tbw_under_the_rating_workload_uses_all_of_life() -> None:
    """A year that writes exactly the rated TBW under the workload the rating was measured with
    uses 100 % of life: sequential writes on the sequentially rated P4320, JESD219's random 80/20
    writes on a full drive rated under JESD219 (the same drive relabelled, and a TLC drive)."""
    tbw = float(P4320.endurance_bytes_written or 0)
    per_day = tbw / 365.0
    seq = Workload(read_fraction=0.0, random_fraction=0.0, io_size_mix=((1 * MiB, 1.0),), daily_write_bytes=per_day)
    assert _wear(P4320, seq).life_used_fraction == pytest.approx(1.0, rel=1e-9)
    jesd = Workload(read_fraction=0.0, random_fraction=1.0, io_size_mix=((4 * KiB, 1.0),), daily_write_bytes=per_day,
                    hot_write_fraction=endurance.JESD219_HOT_WRITE_FRACTION, hot_space_fraction=endurance.JESD219_HOT_SPACE_FRACTION)
    as_random = replace(P4320, endurance_rating_workload="jesd219-random")
    assert _wear(as_random, jesd).life_used_fraction == pytest.approx(1.0, rel=1e-9)
    tlc = catalog.get_drive("intel-d7-p5500-7680gb")
    tlc_day = float(tlc.endurance_bytes_written or 0) / 365.0
    assert _wear(tlc, replace(jesd, daily_write_bytes=tlc_day)).life_used_fraction == pytest.approx(1.0, rel=1e-9)


def test_random_writes_wear_a_sequentially_rated_drive_by_the_random_write_amplification() -> None:
    """The same random workload uses WA(JESD219) times more of the sequentially rated drive's life
    than of the same drive read as JESD219-rated (the bug: both were credited the same TBW), and
    the wear record says which reading it used."""
    wl = Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=((8 * KiB, 1.0),), daily_write_bytes=5e12)
    seq = _wear(P4320, wl, fill=0.8)
    rnd = _wear(replace(P4320, endurance_rating_workload="jesd219-random"), wl, fill=0.8)
    wa = endurance.jesd219_write_amplification(P4320)
    assert seq.life_used_fraction / rnd.life_used_fraction == pytest.approx(wa, rel=1e-9)
    assert seq.years[0].write_amplification == rnd.years[0].write_amplification > 1.0
    assert seq.rating_workload == "sequential" and rnd.rating_workload == "jesd219-random"
    assert seq.random_equivalent_endurance_bytes == pytest.approx(float(P4320.endurance_bytes_written or 0) / wa, rel=1e-12)


def test_catalog_files_round_trip_the_rating_workload_and_refuse_bad_ones() -> None:
    assert drive_from_toml(drive_to_toml(P4320)) == P4320
    text = drive_to_toml(P4320).replace('value = "sequential"', 'value = "streaming"', 1)
    with pytest.raises(CatalogFileError) as err:
        drive_from_toml(text, "p4320.toml")
    (line, field, reason), = err.value.problems
    assert field == "endurance_rating_workload" and "jesd219-random, sequential" in reason and "'streaming'" in reason
    assert text.splitlines()[(line or 0) - 1] == 'value = "streaming"'


def test_user_drives_are_read_as_jesd219_unless_they_say_and_are_checked() -> None:
    base = dict(name="site-qlc-15tb", kind="ssd", interface="pcie-gen4-x4", capacity_bytes=15_360_000_000_000,
                raw_nand_bytes=17_592_186_044_416, nand_type="qlc", gc_policy="eager", random_read_iops=500_000.0,
                steady_random_write_iops=20_000.0, seq_read_bytes_per_s=6e9, seq_write_bytes_per_s=3e9, endurance_bytes_written=10**16)
    d = drive_from_mapping(base)
    assert d.endurance_rating_workload is None  # unsaid: read as JESD219 random
    assert endurance.rated_write_amplification(d) == pytest.approx(endurance.jesd219_write_amplification(d), rel=1e-12)
    assert endurance.random_equivalent_endurance_bytes(d) == pytest.approx(1e16, rel=1e-12)
    assert drive_from_mapping({**base, "endurance_rating_workload": "sequential"}).endurance_rating_workload == "sequential"
    with pytest.raises(InvalidInputError) as err:
        drive_from_mapping({**base, "endurance_rating_workload": "random"})
    assert [v.field for v in err.value.violations] == ["drives[0].endurance_rating_workload"]
    no_tbw = {k: v for k, v in base.items() if k != "endurance_bytes_written"} | {"pe_cycles": 1000,
                                                                                  "endurance_rating_workload": "sequential"}
    with pytest.raises(InvalidInputError) as err:
        drive_from_mapping(no_tbw)
    assert [v.field for v in err.value.violations] == ["drives[0].endurance_rating_workload"]
    assert "endurance_bytes_written" in err.value.violations[0].reason
    assert math.isnan(endurance.random_equivalent_endurance_bytes(drive_from_mapping({**no_tbw, "endurance_rating_workload": None})))
