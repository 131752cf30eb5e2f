"""Tests of the drive catalog (engine/arrayplan_engine/catalog.py).

Every number checked here comes from the seed reviews in ../shared/seeds (file named in the
comment next to it; copyrighted, so the checks that read them skip when they are absent) or from
the Backblaze tables vendored in tests/data/reliability.
"""

from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from arrayplan_engine import catalog, units
from arrayplan_engine.catalog import (
    PROVENANCED_FIELDS,
    Catalog,
    Drive,
    Provenance,
    all_drives,
    drive_from_mapping,
    drive_violations,
    get_drive,
    with_user_drives,
)
from arrayplan_engine.catalog_table import catalog_markdown
from arrayplan_engine.errors import InvalidInputError, UnknownNameError
from conftest import DATA, data_path, needs_seeds

REPO = Path(__file__).resolve().parents[2]

GB, GiB, TB, PB, MB = units.GB, units.GiB, units.TB, units.PB, units.MB


def _norm(text: str) -> str:
    return " ".join(text.split())


def _source_path(source: str) -> Path:
    return data_path(source)


_TEXT_CACHE: dict[str, str] = {}


def _source_text(source: str) -> str:
    if source not in _TEXT_CACHE:
        _TEXT_CACHE[source] = _norm(_source_path(source).read_text(encoding="utf-8"))
    return _TEXT_CACHE[source]


DRIVES = all_drives()
SSDS = [d for d in DRIVES if d.is_ssd]
HDDS = [d for d in DRIVES if not d.is_ssd]


# ---------------------------------------------------------------------------------------------
# Provenance


@pytest.mark.parametrize("source", [pytest.param(s, marks=() if s.startswith("data/") else needs_seeds) for s in catalog.SEED_FILES])
def test_every_source_file_exists(source: str) -> None:
    assert _source_path(source).is_file(), source


@needs_seeds
def test_every_quote_occurs_verbatim_in_its_file() -> None:
    """Each quote (assumed or not) is a substring of its source file, whitespace normalised."""
    missing = []
    checked = 0
    for d in DRIVES:
        for f, p in d.provenance.items():
            if not p.quote or p.source.startswith(("https://", "http://")):
                continue  # a public page: test_web_sources_name_an_address_and_a_sentence
            assert p.source in catalog.SEED_FILES, (d.name, f, p.source)
            checked += 1
            if _norm(p.quote) not in _source_text(p.source):
                missing.append((d.name, f, p.source, p.quote))
    assert not missing, missing
    assert checked > 500  # 37 drives, most fields quoted


def test_every_value_has_provenance_and_nothing_else_does() -> None:
    for d in DRIVES:
        for f in PROVENANCED_FIELDS:
            value = getattr(d, f)
            if value is None:
                assert f not in d.provenance, (d.name, f)
            else:
                assert f in d.provenance, (d.name, f)
        assert set(d.provenance) <= set(PROVENANCED_FIELDS), d.name


def test_sourced_values_quote_and_assumed_values_explain() -> None:
    for d in DRIVES:
        for f, p in d.provenance.items():
            if p.assumed:
                assert len(p.reason) > 15, (d.name, f)
            else:
                assert p.source and len(p.quote) > 10, (d.name, f)


def test_web_sources_name_an_address_and_a_sentence() -> None:
    """Today's drives quote public pages (datasheets, reviews): the address is the source and the
    quote a whole sentence or table row; prices are assumed with the year they stand for."""
    web = [(d, f, p) for d in DRIVES for f, p in d.provenance.items() if p.source.startswith(("https://", "http://"))]
    assert len({d.name for d, _, _ in web}) >= 12
    for d, f, p in web:
        assert re.fullmatch(r"https?://[^\s]+\.[a-z]{2,}/\S*", p.source), (d.name, f, p.source)
        assert len(p.quote) >= 10, (d.name, f, p.quote)
    for name in (*TODAY_SSD_NAMES, *TODAY_HDD_NAMES):
        d = get_drive(name)
        assert d.price_year is not None and (d.provenance["price_usd"].assumed or d.provenance["price_usd"].quote)
        quoted = [f for f, p in d.provenance.items() if not p.assumed]
        assert "capacity_bytes" in quoted, name


def test_todays_drives_cover_the_classes_a_planner_needs() -> None:
    ssds = [get_drive(n) for n in TODAY_SSD_NAMES]
    assert len(ssds) >= 8 and all(d.capacity_bytes >= 3.84e12 for d in ssds)
    dwpd = {round(d.endurance_bytes_written / (d.capacity_bytes * 365 * 5), 2) for d in ssds if d.nand_type == "tlc"}
    assert {1.0, 3.0} <= dwpd
    assert any(d.nand_type == "qlc" for d in ssds) and any(d.interface.startswith("sas") for d in ssds)
    assert any(d.interface.startswith("pcie-gen4") and (d.channels or 0) >= 16 for d in ssds)
    hdds = [get_drive(n) for n in TODAY_HDD_NAMES]
    assert len(hdds) >= 2 and all(d.capacity_bytes >= 16e12 for d in hdds)
    assert {d.recording for d in hdds} == {"cmr", "smr-host-managed"}


def test_provenance_refuses_assumed_without_reason_and_sourced_without_quote() -> None:
    with pytest.raises(ValueError):
        Provenance(source="", quote="", assumed=True)
    with pytest.raises(ValueError):
        Provenance(source="001_4993870e060cd6fa.txt", quote="")


def test_provenance_mapping_is_read_only() -> None:
    d = get_drive("intel-dc-s3500-480gb")
    with pytest.raises(TypeError):
        d.provenance["capacity_bytes"] = Provenance(source="x", quote="y")  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.capacity_bytes = 1  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Coverage and shape of the catalog


EXPECTED_NAMES = [
    "intel-x25-m-g1-80gb",
    "intel-x25-m-g2-80gb",
    "intel-x25-m-g2-160gb",
    # 000 seed spec table: SSD 320 40/80/120/160/300/600GB.
    *[f"intel-ssd-320-{c}gb" for c in (40, 80, 120, 160, 300, 600)],
    "intel-ssd-510-120gb",
    "intel-ssd-510-250gb",
    # 001 seed: 710 100/200/300GB, X25-E 32/64GB.
    *[f"intel-ssd-710-{c}gb" for c in (100, 200, 300)],
    "intel-x25-e-32gb",
    "intel-x25-e-64gb",
    # 001 seed: "80 / 120 / 160 / 240 / 300 / 400 / 480 / 600 / 800GB".
    *[f"intel-dc-s3500-{c}gb" for c in (80, 120, 160, 240, 300, 400, 480, 600, 800)],
    *[f"intel-dc-s3700-{c}gb" for c in (100, 200, 400, 800)],
    "intel-ssd-910-400gb",
    "intel-ssd-910-800gb",
    "micron-p320h-350gb",
    "micron-p320h-700gb",
    "hdd-15k-sas-300gb",
    "hdd-10k-sas-900gb",
    "hdd-7k2-nearline-8tb",
    "wd-velociraptor-300gb",
]
#: Today's drives (catalog files 101-199, 951-999; quotes from public pages, see docs/catalog.md).
TODAY_SSD_NAMES = [
    "kioxia-cm6-r-30720gb", "kioxia-cm6-v-12800gb", "kioxia-cd6-r-15360gb", "micron-7400-pro-7680gb",
    "intel-d7-p5500-7680gb", "intel-d7-p5600-6400gb", "solidigm-d5-p5336-61440gb", "intel-d5-p4320-7680gb",
    "kioxia-pm6-r-30720gb",
]
TODAY_HDD_NAMES = ["wd-ultrastar-hc560-20tb", "wd-ultrastar-hc570-22tb", "wd-ultrastar-hc670-26tb"]
SEED_NAMES = EXPECTED_NAMES
EXPECTED_NAMES = [*SEED_NAMES[:-4], *TODAY_SSD_NAMES, *SEED_NAMES[-4:], *TODAY_HDD_NAMES]


def test_catalog_holds_every_seed_drive_in_a_stable_order() -> None:
    assert [d.name for d in all_drives()] == EXPECTED_NAMES
    assert all_drives() == all_drives()


def test_names_are_unique_lowercase_hyphen() -> None:
    names = [d.name for d in DRIVES]
    assert len(set(names)) == len(names)
    for n in names:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n), n
    assert len({d.display_name.casefold() for d in DRIVES}) == len(DRIVES)


def test_drive_field_names_are_exactly_the_specified_ones() -> None:
    assert [f.name for f in dataclasses.fields(Drive)] == [
        "name", "display_name", "vendor", "family", "kind", "interface", "form_factor",
        "capacity_bytes", "raw_nand_bytes", "nand_type", "page_bytes", "pages_per_block",
        "channels", "controllers", "internal_parity", "gc_policy", "random_read_iops",
        "random_write_iops", "steady_random_write_iops", "seq_read_bytes_per_s",
        "seq_write_bytes_per_s", "slc_cache_bytes", "slc_write_bytes_per_s", "write_buffer_bytes", "read_latency_s", "write_latency_s",
        "endurance_bytes_written", "endurance_rating_workload",
        "pe_cycles", "rpm", "average_seek_s", "full_stroke_seek_s", "recording", "active_power_w",
        "idle_power_w", "price_usd", "price_year", "annual_failure_rate", "uber", "provenance",
    ]  # fmt: skip


@pytest.mark.parametrize("drive", SSDS, ids=lambda d: d.name)
def test_every_ssd_has_what_a_planner_needs(drive: Drive) -> None:
    assert drive.capacity_bytes > 0
    assert drive.raw_nand_bytes is not None and drive.raw_nand_bytes > drive.capacity_bytes
    assert drive.random_read_iops is not None and drive.random_read_iops > 0
    assert (drive.random_write_iops or drive.steady_random_write_iops or 0) > 0
    assert drive.endurance_bytes_written is not None or drive.pe_cycles is not None
    assert drive.pe_cycles is not None  # the FTL model wears blocks out
    assert drive.active_power_w is not None and drive.idle_power_w is not None
    assert drive.price_usd is not None and drive.price_usd > 0
    assert drive.gc_policy in ("eager", "lazy")
    assert drive.nand_type in ("slc", "mlc", "emlc", "tlc", "qlc")
    assert drive.page_bytes is not None and drive.pages_per_block is not None
    assert drive.channels is not None and drive.controllers is not None
    assert drive.internal_parity in ("none", "raid4-dies", "rain-7+1")
    assert drive.annual_failure_rate is not None and drive.uber is not None
    assert drive.rpm is None and drive.average_seek_s is None


@pytest.mark.parametrize("drive", HDDS, ids=lambda d: d.name)
def test_every_hdd_has_mechanics_and_no_flash(drive: Drive) -> None:
    assert drive.kind == "hdd" and drive.nand_type == "hdd"
    assert drive.rpm is not None and drive.average_seek_s is not None
    assert drive.full_stroke_seek_s is not None
    assert drive.full_stroke_seek_s > drive.average_seek_s
    assert drive.raw_nand_bytes is None and drive.gc_policy is None and drive.pe_cycles is None
    assert drive.spare_bytes_per_user_byte is None
    # Derived IOPS agree with the mechanics: 1 / (seek + half a rotation).
    assert drive.random_read_iops == pytest.approx(1 / (drive.average_seek_s + 30 / drive.rpm))


@pytest.mark.parametrize("drive", DRIVES, ids=lambda d: d.name)
def test_builtin_drives_pass_the_user_drive_rules(drive: Drive) -> None:
    """The built-ins obey the same ranges and relations drive_from_mapping enforces (raw NAND
    >= capacity, idle <= active power, sequential rate within the interface, ...)."""
    assert drive_violations(drive) == []


@pytest.mark.parametrize("drive", SSDS, ids=lambda d: d.name)
def test_rated_endurance_fits_in_the_nand(drive: Drive) -> None:
    """Rated host writes cannot exceed P/E cycles x raw NAND (write amplification >= 1)."""
    assert drive.pe_cycles is not None and drive.raw_nand_bytes is not None
    if drive.endurance_bytes_written is not None:
        assert drive.endurance_bytes_written <= drive.pe_cycles * drive.raw_nand_bytes


# ---------------------------------------------------------------------------------------------
# Spot checks by hand arithmetic against the seeds


def test_s3500_240gb_raw_vs_user_capacity() -> None:
    # 001: "Intel SSD DC S3500 | 240GB | 264GB | 223GB | ~$320 |"
    d = get_drive("intel-dc-s3500-240gb")
    assert d.raw_nand_bytes == 264 * 1024**3 == 283_467_841_536
    # User-accessible 223GB in the table is GiB: 240e9 / 2^30 = 223.5.
    assert d.capacity_bytes / GiB == pytest.approx(223.5, abs=0.1)
    assert d.spare_bytes_per_user_byte == pytest.approx((283_467_841_536 - 240e9) / 240e9)
    assert d.spare_bytes_per_user_byte == pytest.approx(0.1811, abs=1e-4)
    assert d.price_usd == 320.0 and d.price_year == 2013


def test_s3500_480gb_spare_factor() -> None:
    # Same NAND ratio as the 240GB (264 GiB per 240 GB): 528 GiB = 566,935,683,072 B.
    d = get_drive("intel-dc-s3500-480gb")
    assert d.raw_nand_bytes == 566_935_683_072
    assert d.spare_bytes_per_user_byte == pytest.approx(566_935_683_072 / 480e9 - 1) == pytest.approx(0.18112, abs=1e-5)
    assert d.provenance["raw_nand_bytes"].assumed
    assert d.spare_fraction_of_raw == pytest.approx(1 - 480e9 / 566_935_683_072)


def test_s3500_480gb_headline_numbers() -> None:
    d = get_drive("intel-dc-s3500-480gb")
    assert d.random_read_iops == 75_000  # 001: "75K / 11.5K"
    assert d.steady_random_write_iops == 11_500
    assert d.random_write_iops is None  # the seeds give only the sustained spec
    assert d.seq_read_bytes_per_s == 500e6
    assert d.endurance_bytes_written == 275 * TB  # 001 endurance row
    assert d.active_power_w == 5.2 and d.idle_power_w == 0.6  # "5.2W"; "600mW"
    assert d.gc_policy == "eager" and d.interface == "sata-6g" and d.nand_type == "mlc"
    assert not d.provenance["steady_random_write_iops"].assumed


def test_s3500_per_capacity_endurance_and_power() -> None:
    # 001: endurance 45/70/100/140/170/225/275/330/450 TB; power 2.0/2.4/2.7/3.2/3.9/-/5.2/5.5/7.3 W
    caps = (80, 120, 160, 240, 300, 400, 480, 600, 800)
    tb = (45, 70, 100, 140, 170, 225, 275, 330, 450)
    for cap, t in zip(caps, tb, strict=True):
        assert get_drive(f"intel-dc-s3500-{cap}gb").endurance_bytes_written == t * TB
    watts = {80: 2.0, 120: 2.4, 160: 2.7, 240: 3.2, 300: 3.9, 480: 5.2, 600: 5.5, 800: 7.3}
    for cap, w in watts.items():
        d = get_drive(f"intel-dc-s3500-{cap}gb")
        assert d.active_power_w == w and not d.provenance["active_power_w"].assumed
    # 400GB: "-" in the seed; interpolated 3.9 + 1.3 x 100/180 = 4.62 W and marked assumed.
    d400 = get_drive("intel-dc-s3500-400gb")
    assert d400.active_power_w == pytest.approx(4.62)
    assert d400.provenance["active_power_w"].assumed
    # MSRPs "$115 for an 80GB drive and $979 for an 800GB drive": $1.43 and $1.22 per GB.
    assert get_drive("intel-dc-s3500-80gb").price_usd == 115
    assert get_drive("intel-dc-s3500-800gb").price_usd == 979
    # "It's not until you get down to the 160GB version that performance will drop below 500MB/s."
    assert get_drive("intel-dc-s3500-240gb").seq_read_bytes_per_s == 500e6
    assert get_drive("intel-dc-s3500-160gb").seq_read_bytes_per_s is None


def test_s3500_steady_spec_agrees_with_the_measured_47_mb_s() -> None:
    # 001: "At 47MB/s, the S3500 isn't bad" (4 KB steady QD32, 480GB): 47e6 / 4096 = 11,475.
    measured_iops = 47e6 / 4096
    assert measured_iops == pytest.approx(11_475, abs=1)
    steady = get_drive("intel-dc-s3500-480gb").steady_random_write_iops
    assert steady is not None and abs(steady - measured_iops) / steady < 0.01
    # 001: "Intel's specs list the S3500 at roughly 1/3 of the sustained ... S3700": 11.5K/36K.
    s3700 = get_drive("intel-dc-s3700-800gb").steady_random_write_iops
    assert s3700 is not None and steady / s3700 == pytest.approx(1 / 3, abs=0.02)


def test_twelve_s3500s_match_five_hundred_15k_disks_within_the_seeds_hdd_range() -> None:
    # 001: "12 S3500s will deliver roughly the same random IO as 500 15K RPM hard drives" and "a
    # good high-end HDD will provide somewhere around 1 - 2MB/s in 4KB random write".
    steady = get_drive("intel-dc-s3500-480gb").steady_random_write_iops
    assert steady is not None
    per_hdd_iops = 12 * steady / 500  # 276 IOPS
    assert 1e6 / 4096 <= per_hdd_iops <= 2e6 / 4096  # 244 .. 488 IOPS


def test_ssd_320_300gb_nand_vs_rated_capacity() -> None:
    # 000: "That works out to be 320GB of NAND for a drive whose rated capacity is 300GB. In
    # Windows you'll see ~279GB of free space, which leaves 12.8% of the total NAND capacity as
    # spare area." 20 devices x 2 dies x 64 Gbit = 320 GiB = 343,597,383,680 B.
    d = get_drive("intel-ssd-320-300gb")
    assert d.raw_nand_bytes == 20 * 2 * 64 * 1024**3 // 8 == 343_597_383_680
    assert d.capacity_bytes / GiB == pytest.approx(279.4, abs=0.1)  # "~279GB"
    assert d.spare_fraction_of_raw == pytest.approx(0.128, abs=0.002)  # "12.8%"
    assert d.spare_bytes_per_user_byte == pytest.approx(343_597_383_680 / 300e9 - 1) == pytest.approx(0.1453, abs=1e-4)
    assert d.internal_parity == "raid4-dies" and d.page_bytes == 8192 and d.channels == 10
    assert d.interface == "sata-3g"


def test_ssd_320_spec_table_columns() -> None:
    # 000 table: read 30/38/38/39/39.5/39.5K, write 3.7/10/14/21/23/23K,
    # seq write 45/90/130/165/205/220 MB/s, price $89/$159/$209/$289/$529/$1069.
    rows = {
        40: (30_000, 3_700, 200, 45, 89),
        80: (38_000, 10_000, 270, 90, 159),
        120: (38_000, 14_000, 270, 130, 209),
        160: (39_000, 21_000, 270, 165, 289),
        300: (39_500, 23_000, 270, 205, 529),
        600: (39_500, 23_000, 270, 220, 1069),
    }
    for cap, (rr, rw, sr, sw, usd) in rows.items():
        d = get_drive(f"intel-ssd-320-{cap}gb")
        assert d.capacity_bytes == cap * GB
        assert (d.random_read_iops, d.random_write_iops) == (rr, rw)
        assert (d.seq_read_bytes_per_s, d.seq_write_bytes_per_s) == (sr * MB, sw * MB)
        assert d.price_usd == usd and d.price_year == 2011
        # 001: "39.5K / 600 IOPS": the sustained figure sits far below the fresh one.
        assert d.steady_random_write_iops == 600
    # 001: "5 - 60TB".
    assert get_drive("intel-ssd-320-80gb").endurance_bytes_written == 5 * TB
    assert get_drive("intel-ssd-320-600gb").endurance_bytes_written == 60 * TB


def test_x25m_and_510_values() -> None:
    g2 = get_drive("intel-x25-m-g2-160gb")
    # 000: G2 160GB 35K / 8.6K IOPS, 250 / 100 MB/s, $404; "~0.6% per year".
    assert (g2.random_read_iops, g2.random_write_iops) == (35_000, 8_600)
    assert (g2.seq_read_bytes_per_s, g2.seq_write_bytes_per_s) == (250e6, 100e6)
    assert g2.price_usd == 404 and g2.annual_failure_rate == 0.006
    assert g2.gc_policy == "lazy"  # 000: "Intel prefers cleaning up as late as possible"
    g1 = get_drive("intel-x25-m-g1-80gb")
    # 003: "drops from 40.8MB/s when new": 40.8e6 / 4096 = 9961 IOPS, marked assumed (QD3).
    assert g1.random_write_iops == pytest.approx(9_960.9, abs=0.1)
    assert g1.provenance["random_write_iops"].assumed
    ssd510 = get_drive("intel-ssd-510-250gb")
    assert ssd510.interface == "sata-6g" and ssd510.seq_read_bytes_per_s == 500e6
    assert ssd510.seq_write_bytes_per_s == 315e6 and ssd510.price_usd == 584


def test_ssd_910_values() -> None:
    # 002: "1792GB of NAND on a 800GB drive"; "two controllers ... four"; "Up to 5PB | Up to 7PB";
    # "25W max TDP"; "$2000", "$4000"; "180K / 75K IOPS"; "2000 / 1000 MBps".
    big, small = get_drive("intel-ssd-910-800gb"), get_drive("intel-ssd-910-400gb")
    assert big.raw_nand_bytes == 56 * 32 * GiB == 1792 * GiB
    assert small.raw_nand_bytes == 28 * 32 * GiB
    assert big.spare_bytes_per_user_byte == pytest.approx(1792 * GiB / 800e9 - 1) == pytest.approx(1.405, abs=1e-3)
    assert (small.controllers, big.controllers) == (2, 4)
    assert (small.endurance_bytes_written, big.endurance_bytes_written) == (5 * PB, 7 * PB)
    assert small.active_power_w == big.active_power_w == 25
    assert (small.price_usd, big.price_usd) == (2000, 4000)
    assert big.random_read_iops == 180_000 and big.steady_random_write_iops == 75_000
    assert big.seq_read_bytes_per_s == 2e9 and big.seq_write_bytes_per_s == 1e9
    assert small.random_read_iops == 90_000 and small.provenance["random_read_iops"].assumed
    assert big.interface == "pcie-gen2-x8"


def test_p320h_values() -> None:
    # 004: 785K / 205K IOPS, 3.2 / 1.9 GB/s, <42 us / <9 us, 25 / 50 PB, 25 W, $6,995, RAIN 7+1,
    # "four 250GiB SSD memory modules", 32-channel controller.
    d = get_drive("micron-p320h-700gb")
    assert (d.random_read_iops, d.random_write_iops) == (785_000, 205_000)
    assert (d.seq_read_bytes_per_s, d.seq_write_bytes_per_s) == (3.2e9, 1.9e9)
    assert (d.read_latency_s, d.write_latency_s) == (42e-6, 9e-6)
    assert d.endurance_bytes_written == 50 * PB
    assert get_drive("micron-p320h-350gb").endurance_bytes_written == 25 * PB
    assert d.raw_nand_bytes == 4 * 250 * GiB
    assert d.spare_bytes_per_user_byte == pytest.approx(1000 * GiB / 700e9 - 1) == pytest.approx(0.5339, abs=1e-4)
    assert d.internal_parity == "rain-7+1" and d.nand_type == "slc" and d.channels == 32
    assert d.price_usd == 6995 and d.active_power_w == 25


def test_enterprise_table_endurance_ranges() -> None:
    # 001: S3700 "1.825 PB ... 14.6 PB"; 710 "500TB - 1.5PB"; X25-E "1 - 2PB".
    assert get_drive("intel-dc-s3700-100gb").endurance_bytes_written == int(1.825 * PB)
    assert get_drive("intel-dc-s3700-800gb").endurance_bytes_written == int(14.6 * PB)
    assert get_drive("intel-ssd-710-100gb").endurance_bytes_written == 500 * TB
    assert get_drive("intel-ssd-710-300gb").endurance_bytes_written == int(1.5 * PB)
    assert get_drive("intel-x25-e-32gb").endurance_bytes_written == 1 * PB
    assert get_drive("intel-x25-e-64gb").endurance_bytes_written == 2 * PB
    # 001: "Intel SSD 710 | 200GB | 320GB |" and "Intel SSD DC S3700 | 200GB | 264GB |".
    assert get_drive("intel-ssd-710-200gb").raw_nand_bytes == 320 * GiB
    assert get_drive("intel-dc-s3700-200gb").raw_nand_bytes == 264 * GiB


def test_15k_disk_lands_near_the_design_range() -> None:
    # DESIGN: random IOPS of a 15K RPM disk land near 180-200. 1 / (3.4 ms + 2.0 ms) = 185.
    d = get_drive("hdd-15k-sas-300gb")
    assert d.rpm == 15_000 and not d.provenance["rpm"].assumed  # 001: "500 15K RPM hard drives"
    assert d.random_read_iops == pytest.approx(185.2, abs=0.1)
    assert 180 <= d.random_read_iops <= 200
    assert d.provenance["average_seek_s"].assumed


def test_nearline_afr_is_computed_from_the_backblaze_row() -> None:
    # data/reliability/survival.csv: AFR = failed / (drive_days / 365).
    with (DATA / "reliability/survival.csv").open(newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["model"] == "st8000nm0055")
    afr = int(row["failed"]) / (int(row["drive_days"]) / 365)
    d = get_drive("hdd-7k2-nearline-8tb")
    assert d.annual_failure_rate == pytest.approx(afr)
    assert d.annual_failure_rate == pytest.approx(0.01886, abs=1e-5)
    assert d.capacity_bytes == int(row["capacity_tb"]) * TB
    p = d.provenance["annual_failure_rate"]
    assert p.source == "data/reliability/survival.csv" and not p.assumed
    with (DATA / "reliability/prices.csv").open(newline="") as fh:
        price = next(r for r in csv.DictReader(fh) if r["model"] == "st8000nm0055")
    assert d.price_usd == float(price["price"])
    assert d.price_year is None  # prices.csv carries no date


def test_gc_policy_follows_the_seeds() -> None:
    # 001: the S3500's "periodic dips ... at regular (and frequent) intervals" -> eager.
    # 000: the 320 / X25-M G2 "prefers cleaning up as late as possible" -> lazy.
    assert get_drive("intel-dc-s3500-480gb").gc_policy == "eager"
    assert get_drive("intel-dc-s3700-200gb").gc_policy == "eager"
    assert get_drive("intel-ssd-320-300gb").gc_policy == "lazy"
    assert not get_drive("intel-ssd-320-300gb").provenance["gc_policy"].assumed
    assert get_drive("micron-p320h-700gb").provenance["gc_policy"].assumed


# ---------------------------------------------------------------------------------------------
# Look-up


def test_get_drive_by_name_case_and_display_name() -> None:
    d = get_drive("intel-dc-s3500-480gb")
    assert d.display_name == "Intel SSD DC S3500 480GB" and d.family == "DC S3500"
    assert get_drive("INTEL-DC-S3500-480GB") is d
    assert get_drive("Intel SSD DC S3500 480GB") is d
    assert get_drive("  intel ssd dc s3500  480gb ") is d


def test_unknown_drive_names_the_field_and_lists_known_names() -> None:
    with pytest.raises(UnknownNameError) as e:
        get_drive("intel-ssd-999")
    err = e.value
    assert err.violations[0].field == "drive_model"
    assert "intel-ssd-999" in err.violations[0].reason
    # At most 10 names in the reason (it travels in a gRPC trailer), the closest first; all in .known.
    assert "did you mean intel-ssd-910-800gb" in err.violations[0].reason
    assert err.violations[0].reason.count("gb") + err.violations[0].reason.count("tb") <= 10
    assert set(err.known) == set(EXPECTED_NAMES)
    assert isinstance(err, InvalidInputError)


def test_catalog_is_immutable_and_iterable() -> None:
    cat = catalog.builtin_catalog()
    assert cat is catalog.builtin_catalog()
    assert len(cat) == len(EXPECTED_NAMES) and list(cat) == list(DRIVES)
    assert cat.names() == tuple(EXPECTED_NAMES)
    assert "intel-ssd-910-800gb" in cat and "nope" not in cat
    with pytest.raises(AttributeError):
        cat._drives = ()  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# User drives


def _user_ssd(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "acme-fast-960gb",
        "display_name": "Acme Fast 960GB",
        "kind": "ssd",
        "interface": "sata-6g",
        "capacity_bytes": 960_000_000_000,
        "raw_nand_bytes": 1024 * GiB,
        "nand_type": "mlc",
        "gc_policy": "eager",
        "random_read_iops": 90_000,
        "random_write_iops": 40_000,
        "steady_random_write_iops": 12_000,
        "seq_read_bytes_per_s": 520e6,
        "seq_write_bytes_per_s": 480e6,
        "endurance_bytes_written": 1.75e15,
        "active_power_w": 5.0,
        "idle_power_w": 0.7,
        "price_usd": 900,
        "annual_failure_rate": 0.005,
    }
    d.update(over)
    return d


def _user_hdd(**over: Any) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": "acme-spin-4tb",
        "kind": "hdd",
        "interface": "sata-6g",
        "capacity_bytes": 4e12,
        "rpm": 7200,
        "average_seek_s": 0.0085,
        "full_stroke_seek_s": 0.018,
    }
    d.update(over)
    return d


def test_valid_user_ssd_and_hdd() -> None:
    s = drive_from_mapping(_user_ssd())
    assert s.capacity_bytes == 960_000_000_000 and isinstance(s.capacity_bytes, int)
    assert s.endurance_bytes_written == 1_750_000_000_000_000
    assert s.random_read_iops == 90_000.0 and isinstance(s.random_read_iops, float)
    assert s.controllers == 1 and s.internal_parity == "none" and s.vendor == "user"
    assert s.spare_bytes_per_user_byte == pytest.approx(1024 * GiB / 960e9 - 1)
    for f in PROVENANCED_FIELDS:
        if getattr(s, f) is not None:
            assert s.provenance[f] == Provenance(source="user", quote="supplied by user")
    h = drive_from_mapping(_user_hdd())
    assert h.display_name == "acme-spin-4tb" and h.nand_type == "hdd" and h.rpm == 7200
    assert isinstance(h.provenance, MappingProxyType)


def test_numeric_strings_from_yaml_are_accepted() -> None:
    # PyYAML (YAML 1.1) reads 960e9 as the string "960e9".
    s = drive_from_mapping(_user_ssd(capacity_bytes="960e9", random_read_iops="90_000"))
    assert s.capacity_bytes == 960_000_000_000 and s.random_read_iops == 90_000


BAD_INPUTS = [
    # (override, field, words in the reason)
    ({"capacity_bytes": -5}, "capacity_bytes", "must be an integer in (0, 1e15], got -5"),
    ({"capacity_bytes": 1.5}, "capacity_bytes", "got 1.5"),
    ({"capacity_bytes": True}, "capacity_bytes", "got True (bool)"),
    ({"random_read_iops": float("nan")}, "random_read_iops", "got nan"),
    ({"random_read_iops": "fast"}, "random_read_iops", "must be in (0, 1e8]"),
    ({"annual_failure_rate": 1.5}, "annual_failure_rate", "must be in [0, 1], got 1.5"),
    ({"interface": "usb"}, "interface", "must be one of sata-1.5g, sata-3g"),
    ({"gc_policy": "sometimes"}, "gc_policy", "must be one of eager, lazy; got 'sometimes'"),
    ({"kind": "tape"}, "kind", "must be one of ssd, hdd"),
    ({"name": "Acme Fast"}, "name", "lowercase letters, digits and hyphens"),
    ({"page_bytes": 100}, "page_bytes", "must be an integer in [512, 65536], got 100"),
    ({"price_year": 1900}, "price_year", "[1956, 2100]"),
    ({"raw_nand_bytes": 900e9}, "raw_nand_bytes", "must be >= capacity_bytes (960000000000)"),
    ({"steady_random_write_iops": 50_000}, "steady_random_write_iops", "must be <= random_write_iops"),
    ({"idle_power_w": 9.0}, "idle_power_w", "must be <= active_power_w (5)"),
    ({"seq_read_bytes_per_s": 700e6}, "seq_read_bytes_per_s", "the sata-6g interface"),
    ({"rpm": 7200}, "rpm", "applies only to kind 'hdd'"),
    ({"flux_capacitor": 1}, "flux_capacitor", "unknown field; allowed: name, display_name"),
    ({"provenance": {}}, "provenance", "unknown field"),
    ({"gc_policy": None}, "gc_policy", "is required for kind 'ssd'"),
    ({"random_write_iops": None, "steady_random_write_iops": None}, "random_write_iops", "is required"),
    ({"endurance_bytes_written": None}, "endurance_bytes_written", "(or pe_cycles)"),
    ({"nand_type": "hdd"}, "nand_type", "must be one of slc, mlc, emlc, tlc, qlc for kind 'ssd'"),
]


@pytest.mark.parametrize(("override", "field", "words"), BAD_INPUTS, ids=[b[1] + "-" + str(i) for i, b in enumerate(BAD_INPUTS)])
def test_bad_user_ssd_names_the_field(override: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        drive_from_mapping(_user_ssd(**override), field_prefix="drives[3]")
    fields_named = [v.field for v in e.value.violations]
    assert f"drives[3].{field}" in fields_named, e.value.violations
    reason = next(v.reason for v in e.value.violations if v.field == f"drives[3].{field}")
    assert words in reason
    assert f"drives[3].{field}: " in str(e.value)


@pytest.mark.parametrize(
    ("override", "field", "words"),
    [
        ({"gc_policy": "eager"}, "gc_policy", "applies only to kind 'ssd'"),
        ({"raw_nand_bytes": 5e12}, "raw_nand_bytes", "applies only to kind 'ssd'"),
        ({"rpm": 100_000}, "rpm", "must be an integer in [3600, 20000], got 100000"),
        ({"average_seek_s": None}, "average_seek_s", "is required for kind 'hdd'"),
        ({"full_stroke_seek_s": 0.004}, "full_stroke_seek_s", "must be >= average_seek_s"),
        ({"nand_type": "mlc"}, "nand_type", "must be 'hdd'"),
    ],
)
def test_bad_user_hdd_names_the_field(override: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        drive_from_mapping(_user_hdd(**override))
    reason = next(v.reason for v in e.value.violations if v.field == f"drives[0].{field}")
    assert words in reason


def test_all_bad_fields_are_reported_at_once() -> None:
    bad = _user_ssd(capacity_bytes=-5, interface="usb", uber=2.0, colour="red")
    with pytest.raises(InvalidInputError) as e:
        drive_from_mapping(bad)
    assert {v.field for v in e.value.violations} == {
        "drives[0].capacity_bytes",
        "drives[0].interface",
        "drives[0].uber",
        "drives[0].colour",
    }
    assert "drives[0].capacity_bytes: must be an integer in (0, 1e15], got -5" in str(e.value)


def test_missing_required_and_not_a_mapping() -> None:
    with pytest.raises(InvalidInputError) as e:
        drive_from_mapping({})
    assert {v.field for v in e.value.violations} == {
        "drives[0].name",
        "drives[0].kind",
        "drives[0].interface",
        "drives[0].capacity_bytes",
    }
    with pytest.raises(InvalidInputError) as e2:
        drive_from_mapping(["not", "a", "mapping"])  # type: ignore[arg-type]
    assert e2.value.violations[0].field == "drives[0]"


def test_with_user_drives_searches_the_union() -> None:
    cat = with_user_drives([_user_ssd(), _user_hdd()])
    assert isinstance(cat, Catalog)
    assert len(cat) == len(EXPECTED_NAMES) + 2
    assert cat.names()[-2:] == ("acme-fast-960gb", "acme-spin-4tb")
    assert cat.get("Acme Fast 960GB").provenance["capacity_bytes"].source == "user"
    assert cat.get("intel-dc-s3500-480gb") is get_drive("intel-dc-s3500-480gb")
    # The built-in catalog is untouched.
    assert "acme-fast-960gb" not in catalog.builtin_catalog()
    with pytest.raises(UnknownNameError):
        get_drive("acme-fast-960gb")


def test_with_user_drives_collects_violations_and_name_clashes() -> None:
    with pytest.raises(InvalidInputError) as e:
        with_user_drives(
            [
                _user_ssd(name="intel-dc-s3500-480gb", display_name="Mine"),
                _user_hdd(capacity_bytes=0),
                _user_hdd(name="acme-fast-960gb"),
                _user_ssd(display_name="Acme Spin"),
            ]
        )
    fields_named = [v.field for v in e.value.violations]
    assert "drives[0].name" in fields_named  # clashes with a built-in drive
    assert "drives[1].capacity_bytes" in fields_named
    assert "drives[3].name" in fields_named  # 'acme-fast-960gb' was taken by drives[2]
    assert "drives[2].name" not in fields_named


# ---------------------------------------------------------------------------------------------
# docs/catalog.md


def test_docs_catalog_holds_the_generated_tables() -> None:
    doc = (REPO / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert catalog_markdown() in doc, "regenerate docs/catalog.md from catalog_markdown()"


def test_markdown_rows_match_the_drives() -> None:
    md = catalog_markdown()
    for d in DRIVES:
        assert f"## `{d.name}` — {d.display_name}" in md
    assert md.count("**assumed**") == sum(len(d.assumed_fields) for d in DRIVES)
