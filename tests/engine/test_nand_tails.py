"""Reads behind NAND programs and erases (docs/ssd-model.md, "NAND operations").

Inputs are the NAND datasheets' typical times (ssd.NAND_OPS: MLC tPROG 1.3 ms, tBERS 3 ms, 2
planes, Micron MT29F64G08CBAB family); every figure below is an output, checked against:

* Intel's published QoS, 99.9 % latency of 4 KiB random IO at QD1 in steady state, as bounds:
  DC S3500 "Read/Write: 500 µs / 5 ms (99.9%)" (Intel DC S3500 M.2 product specification,
  https://manualmachine.com/intel/ssdsckhb080g401/8143970-user-manual); DC S3700 "Read/Write:
  500 µs (99.9%)" (https://docslib.org/doc/12283368/intel%C2%AE-solid-state-drive-dc-s3700-series);
* Tiny-Tail Flash (Yan et al., FAST'17): garbage collection slows p99-p99.99 by 5-138x on SSDs
  without mitigation;
* queueing: a read arriving at a random time finds its die busy with the probability the die is
  busy (PASTA), which the run's own write rate and write amplification give.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import simulation, ssd
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.layout import make_layout
from arrayplan_engine.workload import Workload

CATALOG = builtin_catalog()
S3500 = "intel-dc-s3500-480gb"
S3700 = "intel-dc-s3700-200gb"


def _run(drive: str, *, read_fraction: float, queue_depth: int = 1, iops: float = 0.0, count: int = 1, layout: str = "raid0",
         width: int = 1, io_bytes: int = 4096, duration_s: float = 10.0, suspend_s: float = 0.0) -> arr.ArrayResult:
    wl = Workload(read_fraction=read_fraction, io_size_mix=((io_bytes, 1.0),), queue_depth=queue_depth, target_iops=iops)
    spec = simulation.array_spec(CATALOG.get(drive), make_layout(layout, width), count, wl, fill_fraction=1.0, duration_s=duration_s,
                         seed=1)
    if suspend_s:
        spec = replace(spec, service_models=tuple(replace(m, nand_suspend_s=suspend_s) for m in spec.service_models))
    return arr.simulate(spec)


def test_datasheet_times_and_dies() -> None:
    m = ssd.service_model(S3500)
    assert (m.nand_program_s, m.nand_erase_s) == (1.3e-3, 3.0e-3)
    # 16 KiB (8 KiB x 2 planes) per program, 2 x 256 x 8 KiB per erase, over up to 64 laid-out dies
    assert m.nand_dies == 64
    assert m.nand_program_pages == pytest.approx(4 * ssd.nand_dies(CATALOG.get(S3500), ssd.calibrate(CATALOG.get(S3500))) / 64)
    assert 0.3 < ssd.nand_busy_fraction(S3500) <= 1.0
    assert ssd.service_model("intel-x25-e-64gb").nand_program_s == 300e-6  # SLC


@pytest.mark.parametrize(("drive", "read_bound_s", "write_bound_s"), [(S3500, 500e-6, 5e-3), (S3700, 500e-6, 500e-6)])
def test_qd1_qos_within_intels_bounds(drive: str, read_bound_s: float, write_bound_s: float) -> None:
    """Pure reads meet no program and pure writes wait for no die: both tails are the typical
    latency, inside Intel's 99.9 % bounds (a bound, not a fit: the drives beat them)."""
    reads = _run(drive, read_fraction=1.0)
    writes = _run(drive, read_fraction=0.0)
    assert reads.latency_percentile_s(0.999) <= read_bound_s
    assert reads.latency_percentile_s(0.999) == pytest.approx(reads.latency_percentile_s(0.5), rel=0.01)
    assert writes.latency_percentile_s(0.999) <= write_bound_s


def test_mixed_reads_wait_for_the_operation_on_their_die() -> None:
    """One S3500, 70/30 4 KiB random at 5,000 IOPS offered (Poisson arrivals, below saturation):
    the median read is the unloaded read; a read arriving at a random time finds its die busy
    with the probability the die is busy (PASTA), which the run's own programs and erases give:
    ``pages/s x (tPROG / pages per program + tBERS / pages per erase) / dies``. The reads that
    waited longer than the unloaded read are that share x the chance the operation has more than
    that left (within 15 %); the waits are a program's (p99 between half a tPROG and tPROG + 2
    tR) and the longest an erase's."""
    m = ssd.service_model(S3500)
    r = _run(S3500, read_fraction=0.7, queue_depth=32, iops=5_000, duration_s=20.0)
    unloaded = m.unloaded_read_s(4096)  # the fixed time raised to MLC's tR (50 us)
    assert r.latency_percentile_s(0.5, "read") == pytest.approx(unloaded, rel=0.02)
    waited = r.latency_fraction_above(2 * unloaded, "read")
    pages_per_s = float(r.drive_host_pages.sum() + r.drive_relocated_pages.sum()) / r.duration_s
    prog = pages_per_s * m.nand_program_s / m.nand_program_pages / m.nand_dies
    erase = pages_per_s * m.nand_erase_s / m.nand_erase_pages / m.nand_dies
    expected = prog * (1 - unloaded / m.nand_program_s) + erase * (1 - unloaded / m.nand_erase_s)
    assert 0.01 < expected < 0.5
    assert waited == pytest.approx(expected, rel=0.15)
    assert 0.5 * m.nand_program_s <= r.latency_percentile_s(0.99, "read") <= m.nand_program_s + 2 * unloaded
    assert r.latency_percentile_s(1.0, "read") <= m.nand_erase_s + 3 * unloaded


def test_suspend_caps_the_wait() -> None:
    """A drive that suspends programs and erases for reads (50 µs to suspend) loses the tail."""
    plain = _run(S3500, read_fraction=0.7)
    susp = _run(S3500, read_fraction=0.7, suspend_s=50e-6)
    assert susp.latency_percentile_s(0.999, "read") < 0.25 * plain.latency_percentile_s(0.999, "read")


@pytest.mark.parametrize("iops", [25_000, 100_000])
def test_raid6_tail_over_median_within_tiny_tail_flash(iops: float) -> None:
    """24 S3500 in RAID 6 (two groups of 12), 8 KiB 70/30 at 10 % and 40 % load: the p99.99 / p50
    ratio is inside Tiny-Tail Flash's 5-138x at both loads, and the lighter load's tail is not
    longer than the heavier one's."""
    r = _run(S3500, read_fraction=0.7, queue_depth=32, iops=iops, count=24, layout="raid6", width=12, io_bytes=8192, duration_s=5.0)
    assert r.achieved_iops == pytest.approx(iops, rel=0.03)
    ratio = r.latency_percentile_s(0.9999) / r.latency_percentile_s(0.5)
    assert 5.0 <= ratio <= 138.0


def test_lighter_load_has_fewer_slow_reads() -> None:
    light = _run(S3500, read_fraction=0.7, queue_depth=32, iops=25_000, count=24, layout="raid6", width=12, io_bytes=8192,
                 duration_s=5.0)
    heavy = _run(S3500, read_fraction=0.7, queue_depth=32, iops=100_000, count=24, layout="raid6", width=12, io_bytes=8192,
                 duration_s=5.0)
    assert light.latency_fraction_above(1e-3, "read") < heavy.latency_fraction_above(1e-3, "read")


def test_tlc_and_qlc_run_on_their_own_clock() -> None:
    """TLC: the BiCS4 96L die of AnandTech's ISSCC table (tR 58 us, 2 planes, 18 MB block, 57 MB/s
    one-shot program: 2 x 3 x 16 KiB in 1.72 ms); QLC: FEMU's FMS'19 extrapolation (tR 110 us over
    its four page types, programs 0.86-9.17 ms by page type, mean 4.84 ms) on IMFT's 4 planes."""
    tlc, qlc = ssd.NAND_OPS["tlc"], ssd.NAND_OPS["qlc"]
    assert (tlc.read_s, tlc.planes, tlc.pages_per_program, tlc.block_bytes) == (58e-6, 2, 3, 18e6)
    assert tlc.program_s == pytest.approx(98_304 / 57e6, rel=1e-12)
    assert qlc.read_s == pytest.approx(110.34e-6, rel=1e-3)
    assert qlc.program_s == pytest.approx(4.841e-3, rel=1e-3) and qlc.planes == 4
    assert sum(qlc.program_spread) / len(qlc.program_spread) == pytest.approx(1.0, rel=1e-12)
    assert max(qlc.program_spread) * qlc.program_s == pytest.approx(9.174e-3, rel=1e-3)
    # the service model carries the spread; the calibration may shorten the mean (never the ratios)
    m = ssd.service_model("intel-d5-p4320-7680gb")
    assert m.nand_program_spread == qlc.program_spread and m.read_array_s == qlc.read_s
    assert ssd.service_model("micron-7400-pro-7680gb").nand_program_pages * 4096 * 64 \
        == pytest.approx(2 * 3 * 16384 * ssd.nand_dies(CATALOG.get("micron-7400-pro-7680gb"),
                                                      ssd.calibrate(CATALOG.get("micron-7400-pro-7680gb"))), rel=1e-12)


@pytest.mark.parametrize("drive", ["micron-p320h-700gb", S3500, "micron-7400-pro-7680gb", "intel-d5-p4320-7680gb"])
def test_every_read_pays_its_dies_array_read(drive: str) -> None:
    """At QD1 with no writes, every read (512 B or 4 KiB) takes at least its NAND's tR and is the
    fixed time raised to tR plus its transfer (1 %: the latency buckets)."""
    m = ssd.service_model(drive)
    for io in (512, 4096):
        r = _run(drive, read_fraction=1.0, io_bytes=io, duration_s=1.0)
        p50 = r.latency_percentile_s(0.5, "read")
        assert p50 >= m.read_array_s
        assert p50 == pytest.approx(m.unloaded_read_s(io), rel=0.01)


def test_a_qlc_read_waits_for_a_qlc_program() -> None:
    """70/30 4 KiB at QD1 for 10 s: the reads' p99.9 is a program in flight on the read's die; QLC's
    programs (up to 1.9x their mean by page type) make a longer tail than TLC's one-shot ones,
    and both tails are far above the reads' median (the typical read)."""
    tlc = _run("micron-7400-pro-7680gb", read_fraction=0.7, duration_s=10.0)
    qlc = _run("intel-d5-p4320-7680gb", read_fraction=0.7, duration_s=10.0)
    for r in (tlc, qlc):
        assert r.latency_percentile_s(0.999, "read") > 5 * r.latency_percentile_s(0.5, "read")
    assert qlc.latency_percentile_s(0.999, "read") > tlc.latency_percentile_s(0.999, "read")
