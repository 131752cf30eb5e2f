"""The SLC write cache of a QLC drive (docs/ssd-model.md, "SLC write cache").

The cached drive is a Samsung 870 QVO 4TB as a custom drive. Its cache figures from
https://kitguru.net/components/ssd-drives/simon-crisp/samsung-ssd-870-qvo-4tb-review/12: "By
default the fixed part of this buffer is 6GB" (a full drive keeps only the fixed part) and "The
official Sequential write performance figure for the default buffer is up to 530MB/s but out of
the buffer, this figure drops to 160MB/s". Its other figures are the data sheet's as recalled
(98K / 88K random IOPS, 560 MB/s sequential read); they only set the front end.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import catalog, ssd
from arrayplan_engine.catalog import Drive, drive_from_mapping
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.workload import Workload

IO_BYTES = 128 * 1024
CACHE_BYTES = 6_000_000_000
FAST_BPS = 530e6    # cached (SLC) sequential write, kitguru's quote above
DIRECT_BPS = 160e6  # direct-to-QLC sequential write, the same quote

_QVO: dict[str, Any] = dict(
    name="qvo-4tb", kind="ssd", interface="sata-6g", capacity_bytes=4_000_000_000_000,
    raw_nand_bytes=4096 * 2**30, nand_type="qlc", gc_policy="eager", random_read_iops=98_000.0,
    random_write_iops=88_000.0, seq_read_bytes_per_s=560e6, seq_write_bytes_per_s=DIRECT_BPS,
    endurance_bytes_written=1_440_000_000_000_000,
)


def _drive(cache_bytes: int | None) -> Drive:
    extra = {} if cache_bytes is None else {"slc_cache_bytes": cache_bytes, "slc_write_bytes_per_s": FAST_BPS}
    return drive_from_mapping({**_QVO, **extra})


def _run(d: Drive, duration_s: float, target_iops: float = 0.0) -> arr.ArrayResult:
    wl = Workload(read_fraction=0.0, random_fraction=0.0, io_size_mix=((IO_BYTES, 1.0),), queue_depth=32,
                  target_iops=target_iops)
    m = ssd.service_model(d, random_fraction=0.0)
    return arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), workload=wl,
                                      duration_s=duration_s, drive_capacity_bytes=float(d.capacity_bytes)))


@pytest.fixture(scope="module")
def saturated() -> np.ndarray:
    """Bytes written per second by a closed-loop sequential write (QD 32) on the cached drive."""
    r = _run(_drive(CACHE_BYTES), 20.0)
    return r.iops_per_second * float(IO_BYTES)


def test_a_burst_smaller_than_the_cache_writes_at_the_cached_rate(saturated: np.ndarray) -> None:
    # the first 10 s write 5.2 GB < the 6 GB cache: every second at the cached 530 MB/s (5 %: the
    # front end and the back end queue in series, 522 MB/s)
    assert saturated[:10] == pytest.approx(FAST_BPS, rel=0.05)
    # ... and the cache lasts cache / cached rate: it runs out in the 12th second (6 GB / 522 MB/s = 11.5 s)
    fill_s = CACHE_BYTES / float(saturated[:10].mean())
    first_slow = int(np.argmax(saturated < 0.9 * FAST_BPS))
    assert first_slow == int(fill_s)


def test_a_sustained_write_falls_to_the_direct_to_qlc_rate(saturated: np.ndarray) -> None:
    # once the cache is full the drive writes direct to QLC: 160 MB/s within 3 % (no idle time,
    # so nothing is folded and the cache stays full)
    assert saturated[13:] == pytest.approx(DIRECT_BPS, rel=0.03)
    # without the cache figures the drive writes at the direct rate from the start
    plain = _run(_drive(None), 5.0).iops_per_second * float(IO_BYTES)
    assert plain == pytest.approx(DIRECT_BPS, rel=0.03)


def test_a_light_load_keeps_the_cached_latency() -> None:
    # 30 % of the direct rate (48 MB/s) for 40 s writes 1.9 GB: a 1 GB cache (a test size, so the
    # run is short) would fill after 21 s without folding; folding in idle time keeps it empty,
    # so every second's p99 write latency stays at the first second's (an empty cache) and well
    # under the same drive's latency without the cache (every page at the direct QLC rate)
    rate = 0.3 * DIRECT_BPS / IO_BYTES
    cached = _run(_drive(1_000_000_000), 40.0, target_iops=rate)
    plain = _run(_drive(None), 40.0, target_iops=rate)
    assert cached.achieved_iops == pytest.approx(rate, rel=0.02)
    p99 = cached.second_p99_latency_s
    assert p99.size == 40
    # 10 %: the latency buckets are ~4.4 % wide, and a write that arrives while a fold step (one
    # 16 KiB flash page, 4 x 25.6 us) runs waits for it
    assert p99.max() <= 1.10 * p99[0]
    # the seconds after the cache would have filled without folding are still the cached ones
    assert p99[21:].max() < 0.75 * float(plain.second_p99_latency_s.min())
    # the back end's share of a 128 KiB write: 32 pages at the cached vs the direct page time
    # (1.0 ms vs 1.5 ms end to end)
    assert cached.latency_percentile_s(0.99, "write") < 0.75 * plain.latency_percentile_s(0.99, "write")


def test_a_drive_without_a_cache_is_unchanged() -> None:
    # figures of this run from the kernel before the SLC cache existed (commit e9552eb), bit for
    # bit, as moved by cleaning on the units (a 30 % read mix loses the units' time
    # the cleaning takes: 10,392.7 -> 9,698.7 IOPS) and by the bad-block reserve with the finer
    # flash log (the S3700's cleaner spare 29.4 % -> 26.6 %, WA 1.89 -> 2.10: 8,630.0 IOPS;
    # the cache-free path itself untouched) and by victims from the greedy histogram of blocks
    # (18,166 -> 18,152 writes, 8,630.0 -> 8,623.7 IOPS) -- a cache of none changes nothing. Those figures
    # are without the reads' waits for NAND programs and erases (nand_dies = 0; with them the
    # 30 % of reads wait behind the 70 % of writes' programs: 17,648 writes, 8,386.7 IOPS), and
    # by reads paying MLC's array read (tR 50 us): a slot's next IO follows its read later, the
    # same writes and IOPS, the mean write latency 1.854244 -> 1.851580 ms
    d = catalog.get_drive("intel-dc-s3700-200gb")
    assert d.slc_cache_bytes is None and d.slc_write_bytes_per_s is None
    m = ssd.service_model(d)
    assert m.slc_cache_pages == 0.0
    wl = Workload(read_fraction=0.3, io_size_mix=((4096, 0.7), (65536, 0.3)), queue_depth=16)
    r = arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(replace(m, nand_dies=0),),
                                   workload=wl, duration_s=3.0, seed=7))
    assert r.host_writes == 18152
    assert r.achieved_iops == pytest.approx(8623.666666666666, rel=1e-12)
    assert r.latency_mean_s("write") == 0.0018515799675110297
    assert r.write_amplification == 2.0970034705786307


@pytest.mark.parametrize("name", ["intel-d5-p4320-7680gb", "solidigm-d5-p5336-61440gb"])
def test_the_catalogs_enterprise_qlc_drives_write_direct(name: str) -> None:
    # both reviews read the rated write as the direct-to-QLC rate (no pseudo-SLC cache): a
    # sourced 0, and the model keeps no cache for them
    d = catalog.get_drive(name)
    assert d.nand_type == "qlc" and d.slc_cache_bytes == 0
    p = d.provenance["slc_cache_bytes"]
    assert p.source.startswith("https://") and p.quote and not p.assumed
    assert ssd.service_model(d).slc_cache_pages == 0.0


@pytest.mark.parametrize(("extra", "field", "words"), [
    ({"slc_cache_bytes": 1_000_000_000}, "slc_write_bytes_per_s", "is required"),
    ({"slc_cache_bytes": 1_000_000_000, "slc_write_bytes_per_s": 100e6}, "slc_write_bytes_per_s", ">= seq_write_bytes_per_s"),
    ({"slc_cache_bytes": -1}, "slc_cache_bytes", "must be"),
    ({"slc_cache_bytes": 5_000_000_000_000, "slc_write_bytes_per_s": FAST_BPS}, "slc_cache_bytes", "< capacity_bytes"),
])  # fmt: skip
def test_bad_cache_figures_name_the_field(extra: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(InvalidInputError) as e:
        drive_from_mapping({**_QVO, **extra})
    assert any(v.field == f"drives[0].{field}" and words in v.reason for v in e.value.violations), e.value.violations


def test_cache_fields_round_trip_through_a_catalog_file() -> None:
    # `arrayplan drives export` writes them and the loader reads them back unchanged
    d = _drive(CACHE_BYTES)
    back = catalog.drive_from_toml(catalog.drive_to_toml(d), "qvo.toml")
    assert (back.slc_cache_bytes, back.slc_write_bytes_per_s) == (CACHE_BYTES, FAST_BPS)
    assert isinstance(back.slc_cache_bytes, int)
    assert back.provenance["slc_cache_bytes"] == d.provenance["slc_cache_bytes"]
