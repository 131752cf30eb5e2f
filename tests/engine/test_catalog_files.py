"""Catalog files (engine/arrayplan_engine/data/drives/*.toml): the built-in drives as data, read
back unchanged, and bad files named by file, line and field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from arrayplan_engine import catalog
from arrayplan_engine.catalog import (
    CatalogFileError,
    all_drives,
    builtin_catalog,
    drive_from_toml,
    drive_to_toml,
    get_drive,
    load_catalog_files,
)

DATA = Path(catalog.__file__).parent / "data" / "drives"


def _same(a: catalog.Drive, b: catalog.Drive) -> bool:
    fa = {f.name: getattr(a, f.name) for f in dataclasses.fields(a) if f.name != "provenance"}
    fb = {f.name: getattr(b, f.name) for f in dataclasses.fields(b) if f.name != "provenance"}
    types = all(type(fa[k]) is type(fb[k]) for k in fa)
    return fa == fb and types and dict(a.provenance) == dict(b.provenance)


def test_every_builtin_drive_comes_from_one_file_and_round_trips() -> None:
    files = sorted(DATA.glob("*.toml"))
    assert len(files) == len(all_drives())
    for path, drive in zip(files, all_drives(), strict=True):
        assert path.stem.split("-", 1)[1] == drive.name
        text = drive_to_toml(drive)
        assert text.splitlines()[3] == f'name = "{drive.name}"'
        assert _same(drive_from_toml(text, str(path)), drive), drive.name
        assert text == path.read_text(encoding="utf-8"), f"{path.name} is not in canonical form (scripts/export_catalog.py)"


def test_seed_drives_keep_their_values() -> None:
    # Spot checks against the seeds (the full before/after comparison was made when the
    # constructor calls became files; test_catalog.py checks every seed figure).
    d = get_drive("intel-ssd-320-300gb")
    assert d.capacity_bytes == 300_000_000_000 and d.raw_nand_bytes == 320 * 1024**3
    assert d.spare_bytes_per_user_byte == pytest.approx(0.1453, abs=1e-4)  # 000 seed: 320 GiB for 300 GB
    assert d.provenance["raw_nand_bytes"].quote.startswith("That works out to be 320GB of NAND")


GOOD = """name = "acme-x1-3840gb"
kind = "ssd"
[interface]
value = "sata-6g"
assumed = true
reason = "a test drive"
[capacity_bytes]
value = 3840000000000
source = "https://example.org/acme-x1.pdf"
quote = "Capacity 3.84TB"
[raw_nand_bytes]
value = 4398046511104
assumed = true
reason = "4 TiB of NAND behind 3.84 TB"
[nand_type]
value = "mlc"
assumed = true
reason = "a test drive"
[gc_policy]
value = "eager"
assumed = true
reason = "a test drive"
[random_read_iops]
value = 90000
assumed = true
reason = "a test drive"
[random_write_iops]
value = 30000
assumed = true
reason = "a test drive"
[seq_write_bytes_per_s]
value = 500000000
assumed = true
reason = "a test drive"
[endurance_bytes_written]
value = 7000000000000000
assumed = true
reason = "a test drive"
"""


def test_a_site_file_loads_after_the_builtin_drives() -> None:
    cat = load_catalog_files([("site/acme.toml", GOOD)], base=builtin_catalog())
    d = cat.get("acme-x1-3840gb")
    assert list(cat)[-1] is d and len(cat) == len(builtin_catalog()) + 1
    assert d.provenance["capacity_bytes"].source == "https://example.org/acme-x1.pdf"
    assert d.controllers == 1 and d.provenance["controllers"].assumed  # the model's default, marked


@pytest.mark.parametrize(
    ("text", "line", "field", "words"),
    [
        (GOOD.replace("value = 3840000000000", "value = -1"), 8, "capacity_bytes", "must be an integer in (0, 1e15]"),
        (GOOD.replace('source = "https://example.org/acme-x1.pdf"\n', ""), 7, "capacity_bytes.source", "is required"),
        (GOOD.replace("value = 30000\n", "value = 30000\nunit = 1\n"), 29, "random_write_iops.unit", "unknown key"),
        (GOOD.replace('reason = "4 TiB of NAND behind 3.84 TB"', 'reason = ""'), 14, "raw_nand_bytes.reason", "is required"),
        (GOOD.replace("[capacity_bytes]\nvalue", "[capacity_bytes]\nvalue = 1\nvalue"), 9, "", "not valid TOML"),
        (GOOD.replace('kind = "ssd"', 'kind = "tape"'), 2, "kind", "must be one of ssd, hdd"),
        (GOOD.replace("value = 7000000000000000", "value = 7000"), 36, "endurance_bytes_written", "bytes"),
    ],
)
def test_bad_files_name_file_line_and_field(text: str, line: int, field: str, words: str) -> None:
    with pytest.raises(CatalogFileError) as exc:
        load_catalog_files([("site/acme.toml", text)], base=builtin_catalog())
    msg = str(exc.value)
    assert f"site/acme.toml:{line}: " in msg, msg
    assert field in msg and words in msg, msg


def test_a_site_file_may_not_shadow_a_catalog_drive() -> None:
    text = GOOD.replace("acme-x1-3840gb", "intel-dc-s3500-480gb")
    with pytest.raises(CatalogFileError, match=r"site/acme.toml:1: name: 'intel-dc-s3500-480gb' is already in the catalog"):
        load_catalog_files([("site/acme.toml", text)], base=builtin_catalog())
