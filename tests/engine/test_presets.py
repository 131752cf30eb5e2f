"""Workload presets: every number traced to a seed quote (checked verbatim) or marked assumed."""

from __future__ import annotations

import re

import pytest

from arrayplan_engine.errors import InvalidInputError, UnknownNameError
from arrayplan_engine.presets import (
    all_presets,
    get_preset,
    get_preset_info,
    preset_names,
)
from arrayplan_engine.units import KiB
from conftest import SEEDS, data_path, needs_seeds

REQUIRED = {
    "anandtech-2010-typical", "anandtech-2010-heavy", "anandtech-2010-gaming", "oracle-swingbench",
    "sql-updatedailystats", "sql-weeklymaintenance", "consistency-4k-randwrite",
}


def test_required_presets_exist_and_aliases_resolve() -> None:
    names = {p.name for p in all_presets()}
    assert REQUIRED <= names
    assert get_preset("anandtech-2010-light") is get_preset("anandtech-2010-typical")
    assert set(preset_names()) >= names | {"anandtech-2010-light"}


@pytest.mark.parametrize("preset", all_presets(), ids=lambda p: p.name)
def test_every_quote_occurs_verbatim_in_its_file(preset) -> None:  # type: ignore[no-untyped-def]
    assert preset.provenance, "a preset needs provenance"
    for p in preset.provenance:
        if p.assumed:
            assert not p.quote, f"{p}: an assumed value carries a reason, not a quote"
            assert len(p.reason) > 15, f"{p}: the reason must say why"
            continue
        path = data_path(p.source)
        if not path.is_file() and not p.source.startswith("data/") and not SEEDS.is_dir():
            pytest.skip(needs_seeds.kwargs["reason"])
        assert path.is_file(), f"{p.source} does not exist ({path})"
        assert p.quote and p.quote in path.read_text(), f"quote not found verbatim in {p.source}: {p.quote!r}"
    # The workload carries the provenance for reports.
    assert preset.workload.source
    assert len(preset.workload.notes) >= len(preset.provenance)
    assert all(str(p) in preset.workload.notes for p in preset.provenance)


@needs_seeds
def test_anandtech_numbers_follow_their_quotes() -> None:
    seed = (SEEDS / "000_d5886dd2adcf9a04.txt").read_text()
    typical = get_preset("anandtech-2010-typical")
    # Counts from the seed, recomputed here from the text itself.
    r, w = (int(x.replace(",", "")) for x in re.search(r"light workload is composed of ([\d,]+) reads and ([\d,]+) writes", seed).groups())
    assert (r, w) == (37_501, 20_268)
    assert typical.read_fraction == pytest.approx(r / (r + w))
    assert typical.queue_depth == round(6.09)
    assert typical.random_fraction == pytest.approx(1 - 0.30)
    mix = dict(typical.io_size_mix)
    stated = {4: 30, 16: 11, 32: 22, 64: 13}
    for kb, pct in stated.items():
        assert mix[kb * KiB] == pytest.approx(pct / sum(stated.values()))

    heavy = get_preset("anandtech-2010-heavy")
    r, w = (int(x.replace(",", "")) for x in re.search(r"consists of ([\d,]+) read operations and ([\d,]+) write operations", seed).groups())
    assert heavy.read_fraction == pytest.approx(r / (r + w))
    assert heavy.random_fraction == pytest.approx(0.56)
    assert heavy.queue_depth == 4  # 3.59
    assert dict(heavy.io_size_mix)[64 * KiB] == pytest.approx(20 / 76)

    gaming = get_preset("anandtech-2010-gaming")
    r, w = (int(x.replace(",", "")) for x in re.search(r"made up of ([\d,]+) read operations and only ([\d,]+) write", seed).groups())
    assert gaming.read_fraction == pytest.approx(r / (r + w)) and gaming.read_fraction > 0.94
    assert gaming.random_fraction == pytest.approx(0.31)
    assert gaming.queue_depth == 8  # 7.76
    assert dict(gaming.io_size_mix)[64 * KiB] == pytest.approx(40 / 80)


def test_enterprise_presets() -> None:
    sw = get_preset("oracle-swingbench")
    assert sw.read_fraction == pytest.approx(1.28 / (1.28 + 3.55))
    assert sw.queue_depth == 1
    assert sw.working_set_bytes == 10e9
    # 88% of the operations are 8KB or smaller.
    assert sum(wt for s, wt in sw.io_size_mix if s <= 8 * KiB) == pytest.approx(0.88)
    # The assumed large-read size keeps bytes read ~ bytes written ("nearly 1:1").
    reads, writes = 1.28e6, 3.55e6
    small_reads = 0.88 * (reads + writes) - writes
    read_bytes = small_reads * 8 * KiB + (reads - small_reads) * 40 * KiB
    assert read_bytes / (writes * 8 * KiB) == pytest.approx(1.0, abs=0.05)

    daily = get_preset("sql-updatedailystats")
    assert daily.read_fraction == pytest.approx(431 / 610)
    assert daily.queue_depth == 4
    assert dict(daily.io_size_mix) == pytest.approx({8 * KiB: 21 / 91, 64 * KiB: 35 / 91, 128 * KiB: 35 / 91})
    weekly = get_preset("sql-weeklymaintenance")
    assert weekly.read_fraction == pytest.approx(1.8 / 2.8)
    assert weekly.queue_depth == 5
    assert weekly.working_set_bytes == 30e9
    assert "io_size_mix" in get_preset_info("sql-weeklymaintenance").assumed_fields


def test_consistency_test_preset() -> None:
    c = get_preset("consistency-4k-randwrite")
    assert (c.read_fraction, c.random_fraction, c.io_size_mix, c.queue_depth) == (0.0, 1.0, ((4 * KiB, 1.0),), 32)
    assert c.working_set_fraction == 1.0
    assert not get_preset_info("consistency-4k-randwrite").assumed_fields


def test_generic_presets_are_labelled_assumed() -> None:
    for name in ("oltp-8k-70-30", "vdi", "backup-seq-write"):
        info = get_preset_info(name)
        assert info.provenance and all(p.assumed for p in info.provenance)
        assert info.workload.source.startswith("assumed")
        assert all("assumed" in n for n in info.workload.notes)
    assert get_preset("oltp-8k-70-30").read_fraction == 0.70


def test_unknown_preset_names_the_field_and_known_names() -> None:
    with pytest.raises(UnknownNameError) as exc:
        get_preset("anandtech-2011-heavy")
    v = exc.value.violations[0]
    assert v.field == "workload.preset"
    assert "anandtech-2010-heavy" in v.reason and "oracle-swingbench" in v.reason
    assert isinstance(exc.value, InvalidInputError)
