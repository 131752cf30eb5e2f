"""Validation: the seed reviews' measured figures against the model (docs/validation.md).

Calibration inputs (spec-sheet FOB IOPS, sequential MB/s, capacities, endurance) are checked in
test_ssd.py (``calibration_report``, 2 %); every figure here is a model *output* -- steady state,
used state, latencies, controller scaling -- posed the way the review measured it. Each test
states the measured value, its source, the model's value when the test was written and the tolerance; where
the model cannot reach a figure, the tolerance brackets the documented error so a change in
either direction is seen (docs/validation.md says why it misses).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from arrayplan_engine import array as arr
from arrayplan_engine import catalog, hdd, ssd
from arrayplan_engine.layout import make_layout
from arrayplan_engine.workload import Workload

MB = 1e6  # the reviews' MB/s are decimal


def _run(drive: str, *, queue_depth: int = 32, io_bytes: int = 4096, duration_s: float = 20.0,
         working_set_fraction: float = 1.0, controllers: int | None = None, **model_kw) -> arr.ArrayResult:
    """4 KiB (or ``io_bytes``) random writes, closed loop at ``queue_depth``, on the drive as the
    reviews see it: one drive, or a multi-controller card as a RAID 0 of its controllers
    (``controllers`` = 1: a single partition of it)."""
    d = catalog.get_drive(drive)
    t = ssd.calibrate(d)
    n = t.controllers if controllers is None else controllers
    m = ssd.service_model(d, per_controller=t.controllers > 1, **model_kw)
    wl = Workload(read_fraction=0.0, io_size_mix=((io_bytes, 1.0),), queue_depth=queue_depth,
                  working_set_fraction=working_set_fraction)
    return arr.simulate(arr.ArraySpec(layout=make_layout("raid0", n), drive_count=n, service_models=(m,), workload=wl,
                                      duration_s=duration_s, seed=1, drive_capacity_bytes=float(t.user_bytes)))


@pytest.fixture(scope="module")
def steady() -> dict[str, float]:
    """Steady-state (used drive) 4 KiB random write IOPS at QD32: 20 s, or 200 s for a lazy drive
    (the used SSD 320 starts with part of its idle-time refill, up to 0.2 % of the flash, still
    free: ~45 s of host writes at its steady rate, which a 20 s window would mostly see)."""
    names = ("intel-dc-s3500-480gb", "intel-dc-s3700-200gb", "intel-ssd-320-300gb", "intel-ssd-910-800gb",
             "intel-ssd-910-400gb")
    return {n: _run(n, duration_s=200.0 if catalog.get_drive(n).gc_policy == "lazy" else 20.0).achieved_iops
            for n in names}


def test_s3500_steady_4k_random_write(steady: dict[str, float]) -> None:
    # 001 seed: "At 47MB/s, the S3500 isn't bad" (QD32, steady state); table: 11.5K IOPS.
    # Model 13.6K (+18 %; +61 % before the bad-block reserve, ssd.BAD_BLOCK_RESERVE): a miss,
    # bracketed at +5..+30 % (docs/validation.md, row 1).
    assert 1.05 * 11_500 <= steady["intel-dc-s3500-480gb"] <= 1.30 * 11_500


def test_s3700_steady_4k_random_write(steady: dict[str, float]) -> None:
    # 001 seed table: S3700 "76K / 36K" random read / write IOPS (sustained). Model 34.6K, 15 %.
    assert steady["intel-dc-s3700-200gb"] == pytest.approx(36_000, rel=0.15)


def test_s3700_over_s3500_sustained_write(steady: dict[str, float]) -> None:
    # 001 seed: "Intel's specs list the S3500 at roughly 1/3 of the sustained 4KB random write
    # performance of the S3700" (36K / 11.5K = 3.1). Model 2.55 (-19 %), tolerance 35 %.
    ratio = steady["intel-dc-s3700-200gb"] / steady["intel-dc-s3500-480gb"]
    assert ratio == pytest.approx(36_000 / 11_500, rel=0.35)


def test_ssd_320_sustained_4k_random_write(steady: dict[str, float]) -> None:
    # 001 seed table: SSD 320 "39.5K / 600 IOPS". Model 1.43K: a miss (x2.4; x5.8 before the
    # bad-block reserve), bracketed at 1.8-3.5x.
    assert 1.8 * 600 <= steady["intel-ssd-320-300gb"] <= 3.5 * 600


def test_ssd_910_is_its_controllers_in_raid0(steady: dict[str, float]) -> None:
    # 002 seed table: 910 800GB "180K / 75K IOPS"; the card is 4 controllers behind a bridge in
    # software RAID 0 at QD32. Model 70.6K (-6 %), tolerance 10 %.
    assert steady["intel-ssd-910-800gb"] == pytest.approx(75_000, rel=0.10)
    # "roughly a doubling of performance between the two drives": at QD32 the 400GB's two
    # controllers see 16 IOs each, the 800GB's four 8 each, so the model gives 1.58 (-21 %), 25 %.
    assert steady["intel-ssd-910-800gb"] / steady["intel-ssd-910-400gb"] == pytest.approx(2.0, rel=0.25)


def test_ssd_910_row_is_posed_with_its_cleaning_active() -> None:
    """Row 6 is measured on the used card (three span writes of preconditioning), where every
    controller cleans: the simulated write amplification over the window is the FTL's steady
    state for its 57 % spare (wa.py, greedy: 1.16), within 5 %, not the 1.0 of a fresh card whose
    spare is not yet used up (a freshly filled 910 takes ~3,600 s to get there)."""
    r = _run("intel-ssd-910-800gb", duration_s=20.0)
    m = ssd.service_model("intel-ssd-910-800gb", per_controller=True)
    assert r.write_amplification > 1.1
    assert r.write_amplification == pytest.approx(m.write_amplification, rel=0.05)


def test_ssd_910_small_block_low_queue_depth_writes() -> None:
    # 002 seed: "At 0.5KB a single 910 partition can only write at 413KB/s" (ATTO; its queue
    # depth is not given: 4 assumed). One controller, 512 B writes, read-modify-write of each
    # 4 KiB page: a miss (model 3.1 MB/s, x7.5), bracketed at 5-10x; the weakness itself (512 B
    # far slower than 4 KiB per byte) holds.
    small = _run("intel-ssd-910-800gb", queue_depth=4, io_bytes=512, duration_s=5.0, controllers=1,
                 fill_fraction=0.5)
    full = _run("intel-ssd-910-800gb", queue_depth=4, io_bytes=4096, duration_s=5.0, controllers=1, fill_fraction=0.5)
    small_bps = small.achieved_iops * 512
    assert 5 * 413e3 <= small_bps <= 10 * 413e3
    assert small_bps < 0.2 * full.achieved_iops * 4096


def test_p320h_latencies() -> None:
    # 004 seed: "Read Latency: <42us (512 bytes) posted", "Write Latency: <9us posted".
    m = ssd.service_model("micron-p320h-700gb")
    # A 512 B read at QD1, simulated: its fixed time raised to SLC's tR (25 us, Micron's SLC
    # datasheet) plus its transfer, model 30.1 us (5.1 us before reads paid the die's array read)
    rd = arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), seed=1,
                                    workload=Workload(read_fraction=1.0, io_size_mix=((512, 1.0),), queue_depth=1),
                                    duration_s=1.0, drive_capacity_bytes=700e9))
    assert ssd.NAND_OPS["slc"].read_s <= rd.latency_percentile_s(0.5, "read") < 42e-6
    assert rd.latency_percentile_s(0.5, "read") == pytest.approx(m.unloaded_read_s(512), rel=0.01)
    # Writes are posted to the power-loss-protected buffer (catalog write_buffer_bytes) and
    # drained to flash behind the acknowledgement: simulated 4 KiB writes at a light load
    # (1,000 IOPS, open loop) complete on the posted path, model 5.9 us (156 us without the
    # buffer, the flash write); every write under 9 us.
    wl = Workload(read_fraction=0.0, io_size_mix=((4096, 1.0),), queue_depth=1, target_iops=1000.0)
    spec = arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), workload=wl, duration_s=5.0,
                         seed=1, drive_capacity_bytes=700e9)
    r = arr.simulate(spec)
    assert r.latency_percentile_s(1.0, "write") < 9e-6
    # the sustained rate is the drain's: with IOs enough in flight to keep the flash busy (QD128
    # closed loop) within 1 % of the same drive without the buffer (model 127,769 against 127,775
    # IOPS). At QD32 the buffer's depth reaches that rate (127,778) where 32 unbuffered writes
    # in flight, each holding its unit through its flash write, leave the drive at 97,770.
    sat = replace(wl, target_iops=0.0, queue_depth=128)
    bare = replace(m, write_buffer_pages=0.0, write_buffer_s=0.0, posted_write_fixed_s=0.0, posted_write_per_byte_s=0.0)
    with_buffer = arr.simulate(replace(spec, workload=sat)).achieved_iops
    without = arr.simulate(replace(spec, workload=sat, service_models=(bare,))).achieved_iops
    assert with_buffer == pytest.approx(without, rel=0.01)


def test_x25m_new_versus_used_random_writes() -> None:
    # 003 seed: 4 KB random writes over an 8 GB span, 3 concurrent IOs, 3 minutes: G1 40.8 MB/s
    # new -> 26.3 used; G2 36.1 -> 35.8. The controller posts writes to its 256 KiB SRAM (000 seed;
    # catalog write_buffer_bytes), so three IOs in flight keep the drive at its FOB rate: G2 35.2
    # MB/s (-2.5 %; its FOB is Intel's 8.6K spec), G1 40.8 (its FOB *is* this figure: calibration,
    # not a check). Used: the hot 10 % of a full drive (wa.py's greedy hot/cold figure, 2.25) drains
    # the buffer at the cleaning-bound rate: G1 14.7, G2 16.2 MB/s, a miss (x0.56 / x0.45),
    # bracketed 0.35-0.7x (docs/validation.md, rows 11-13).
    got = {}
    for name in ("intel-x25-m-g1-80gb", "intel-x25-m-g2-80gb"):
        new = _run(name, queue_depth=3, duration_s=30.0, working_set_fraction=0.1, precondition_drive_writes=0.0)
        used = _run(name, queue_depth=3, duration_s=30.0, working_set_fraction=0.1,
                    hot_write_fraction=1.0, hot_space_fraction=0.1)
        got[name] = (new.achieved_iops * 4096 / MB, used.achieved_iops * 4096 / MB)
        assert used.achieved_iops <= new.achieved_iops
    assert got["intel-x25-m-g2-80gb"][0] == pytest.approx(36.1, rel=0.10)
    assert got["intel-x25-m-g1-80gb"][0] == pytest.approx(40.8, rel=0.05)
    assert 0.35 * 26.3 <= got["intel-x25-m-g1-80gb"][1] <= 0.7 * 26.3
    assert 0.35 * 35.8 <= got["intel-x25-m-g2-80gb"][1] <= 0.7 * 35.8


def test_ssd_320_and_x25m_low_queue_depth_write_latency() -> None:
    # Intel's spec sheets (not the seeds): SSD 320 "Latency (average sequential) ... Write: 90 us
    # (TYP)" (https://pdf.datasheet.directory/ac90b190/intel.com/SSDSA2CW080G3K5.html). A write
    # at QD1 is posted to the controller's SRAM: its command time (one over the FOB rate) plus the
    # 3 Gb/s link: 57 us (-37 %), asserted 0.5-1.2x; without the buffer it waited for a unit of the
    # back end, 435 us (x4.8). The same controller on the X25-M G2 (FOB 8.6K): 130 us.
    r = _run("intel-ssd-320-300gb", queue_depth=1, duration_s=2.0, precondition_drive_writes=0.0)
    assert 0.5 * 90e-6 <= r.latency_mean_s() <= 1.2 * 90e-6
    g2 = _run("intel-x25-m-g2-80gb", queue_depth=1, duration_s=2.0, precondition_drive_writes=0.0)
    d = catalog.get_drive("intel-x25-m-g2-80gb")
    posted_s = 1 / float(d.random_write_iops or 0) + 4096 / catalog.INTERFACE_BYTES_PER_S[d.interface]
    assert g2.latency_mean_s() == pytest.approx(posted_s, rel=0.05)


def test_twelve_s3500_against_15k_disks_per_drive_rates(steady: dict[str, float]) -> None:
    # 001 seed: "a good high-end HDD will provide somewhere around 1 - 2MB/s in 4KB random write
    # performance. The S3500 by comparison is good for about 40MB/s." and "12 S3500s will deliver
    # roughly the same random IO as 500 15K RPM hard drives". Per-drive rates: the 15K disk's QD1
    # 4 KB random write in MB/s must land in the quoted 1-2 MB/s (0.5 MB/s slack); the full
    # 500-disk search is tests/engine/test_hdd.py (333-750 disks).
    disk = hdd.service_model("hdd-15k-sas-300gb")
    disk_mbps = hdd.random_iops(disk, 4096, write=True) * 4096 / MB
    assert 0.5 <= disk_mbps <= 2.5
    ssd_mbps = steady["intel-dc-s3500-480gb"] * 4096 / MB
    assert ssd_mbps == pytest.approx(40, rel=0.95)


@pytest.mark.slow
def test_s3500_consistency_curve() -> None:
    # 001 seed: the consistency plot zooms "to the beginning of steady state operation for the
    # drive (t=1400s)"; steady 4 KB random write 47 MB/s (11.5K IOPS). The model is still
    # climbing out of the trough the sequential fill leaves (as the page-level greedy FTL does,
    # docs/ssd-model.md "Victim blocks") at 2000 s: mean IOPS over 1400-2000 s 14.3K (+25 %),
    # bracketed at +10..+45 %; the cliff comes after the spare is used (model 138 s).
    r = ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=2000, seed=1)
    late = float(r.iops[1400:2000].mean())
    assert 1.10 * 11_500 <= late <= 1.45 * 11_500
    cliff = int((r.iops < 0.5 * r.fob_iops).argmax())
    assert 100 <= cliff <= 300


@pytest.mark.slow
def test_s3700_performance_consistency_within_intels_bound() -> None:
    # Intel DC S3700 product specification: "Performance Consistency ... Read/Write: Up to
    # 90%/90% (99.9%)" -- the slowest 0.1 % of 1-second intervals' IOPS over the mean, 4 KB random
    # at QD32 in steady state (https://docslib.org/doc/12283368/intel%C2%AE-solid-state-drive-dc-s3700-series).
    # A bound, not a fit: the model's writes from the PTS steady start (660 s) give 0.95 (0.99
    # over 1,400-2,000 s, after the overshoot that follows the fill; docs/ssd-model.md section 4).
    r = ssd.consistency_experiment("intel-dc-s3700-200gb", duration_s=2000, seed=0)
    assert math.isfinite(r.steady_start_s)
    steady = np.asarray(r.iops[int(r.steady_start_s):], dtype=float)
    assert float(np.quantile(steady, 0.001)) / float(steady.mean()) >= 0.90


def test_ssd_910_card_in_an_array_is_its_controllers(steady: dict[str, float]) -> None:
    # A 910 member of an array is simulated as its controllers in RAID 0 (64 KiB
    # chunks, ServiceModel.controllers): one card in a one-drive array carries what the RAID 0 of
    # its four controllers does (10 %: chunking differs from the layout's stripe unit).
    d = catalog.get_drive("intel-ssd-910-800gb")
    m = ssd.service_model(d)
    assert m.controllers == 4
    wl = Workload(read_fraction=0.0, io_size_mix=((4096, 1.0),), queue_depth=32)
    r = arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), workload=wl,
                                   duration_s=10.0, seed=1, drive_capacity_bytes=float(d.capacity_bytes)))
    assert r.achieved_iops == pytest.approx(steady["intel-ssd-910-800gb"], rel=0.10)
    assert r.drive_busy_s.shape == (1,) and r.drive_parallel_units[0] == 4 * m.parallel_units


# Today's drives: each catalog steady random-write figure posed as the vendor measures it (4 KiB
# random writes over the full span, in steady state -- the used drive after three span writes --
# at QD32; QD128 gives the same figure, the back end binds). MQSim's 6-18 % budget, or a stated
# miss bracketed around the model (docs/validation.md, rows 24-32, say why each misses).
_TODAY = [
    ("kioxia-cm6-v-12800gb", 0.82, 1.18),      # model 328,263 of 350K: -6 %
    ("intel-d7-p5500-7680gb", 0.82, 1.18),     # 139,928 of 130K: +8 %
    ("intel-d5-p4320-7680gb", 0.82, 1.18),     # 32,585 of 36K: -9 %
    ("kioxia-pm6-r-30720gb", 0.82, 1.18),      # 78,219 of 85K: -8 %
    ("kioxia-cm6-r-30720gb", 0.70, 0.85),      # miss: 136,847 of 170K, -20 %
    ("micron-7400-pro-7680gb", 0.65, 0.85),    # miss: 143,174 of 190K (the family's maximum), -25 %
    ("intel-d7-p5600-6400gb", 1.15, 1.45),     # miss: 335,706 of 260K, +29 %
    ("kioxia-cd6-r-15360gb", 1.30, 1.80),      # miss: 130,289 of 85K, +53 %
    ("solidigm-d5-p5336-61440gb", 2.0, 4.0),   # miss: 107,550 of 38K, x2.8 (its 16 KiB indirection unit)
]


@pytest.mark.parametrize(("drive", "lo", "hi"), _TODAY)
def test_todays_drives_steady_random_write_as_the_vendor_measures_it(drive: str, lo: float, hi: float) -> None:
    spec = catalog.get_drive(drive).steady_random_write_iops
    assert spec is not None
    r = _run(drive, duration_s=10.0)
    assert lo * spec <= r.achieved_iops <= hi * spec
