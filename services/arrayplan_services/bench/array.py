"""Array simulation benchmark figures for ``make bench``.

* ``array_host_ios_per_s_per_core``: simulated host IOs per CPU second (``time.process_time``)
  of ``arrayplan_engine.array.simulate`` for a 24-drive RAID 6 (one 22+2 group) of DC S3500 480GB
  under a 70/30 4 KiB random mix, closed loop at QD32, with each drive's cleaning active
  (``ssd.service_model``: every member carries its own free-space state, preconditioned to its
  used state; writes consume free pages and cleaning reclaims them as back-end work). Best of
  five 20 s simulated windows (the minimum CPU time, as timeit advises: other tenants of a
  shared host only ever add time) after a warm-up run (numba compiled or loaded from its cache
  first).
* ``array_member_ios_per_s_per_core``: the member (drive) IOs behind them (2.5 per host IO here:
  a read costs 1, a small RAID 6 write 6).
* ``array_s3500_raid6_24_iops`` and ``array_s3500_raid6_24_p99_latency_s``: what the benchmarked
  array achieves, so a speed-up that changes the answer shows up.
* ``array_light_load_write_p99_s``: write p99 of one Intel SSD 320 300GB offered 100 IOPS of
  4 KiB random writes for 60 s (a replayed saturated cleaning profile once gave seconds here; a
  lightly loaded drive should see its fresh-drive latency).
* ``array_s3500_qd1_read_p999_s`` / ``array_s3500_qd1_write_p999_s``: one DC S3500 480GB in its
  used state, 4 KiB random reads (writes) at QD1 for 10 s: the figure Intel's QoS specification
  bounds (500 µs / 5 ms at 99.9 %); a drive that only reads meets no NAND program on its die.
* ``array_s3500_raid6_24_p9999_over_p50`` (and its p50, p99.99): 24 DC S3500 in RAID 6 (two
  groups of 12), 8 KiB 70/30 random at 100K IOPS offered (about 40 % load) for 10 s: the tail
  reads get behind NAND programs and erases (docs/ssd-model.md, "NAND operations").
* ``array_p320h_512b_qd1_read_p50_s``: one Micron P320h 700GB, 512 B random reads at QD1 for
  5 s: the read's fixed time raised to SLC's array read (tR 25 us) plus its transfer; the 004
  seed's "Read Latency: <42us (512 bytes)".
* ``array_tlc_7400pro_qd1_read_p50_s`` / ``..._p999_s`` and ``array_qlc_p4320_qd1_read_p50_s`` /
  ``..._p999_s``: one Micron 7400 PRO 7.68TB (TLC) and one Intel D5-P4320 7.68TB (QLC) at 70/30
  4 KiB random, QD1, 10 s: the median read is tR plus the data path, the p99.9 a read behind a
  program on its die (TLC's one-shot 1.72 ms, QLC's by page type up to 9 ms before calibration).
* ``array_memory_bytes``: bytes of the result's arrays (histograms and per-second series) for the
  20 s window: memory is bounded by histograms, not by the number of IOs.
"""

from __future__ import annotations

import time

from arrayplan_engine import array as arr
from arrayplan_engine import simulation
from arrayplan_engine.catalog import get_drive
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import KiB
from arrayplan_engine.workload import Workload

DRIVE = "intel-dc-s3500-480gb"


def _spec(duration_s: float) -> arr.ArraySpec:
    drive = get_drive(DRIVE)
    workload = Workload(name="oltp-4k-70-30-qd32", read_fraction=0.7, random_fraction=1.0,
                        io_size_mix=((4 * KiB, 1.0),), queue_depth=32)
    models = simulation.array_service_models(drive, 1, workload=workload, seed=0)
    return arr.ArraySpec(layout=make_layout("raid6", 24), drive_count=24, service_models=models, workload=workload,
                         duration_s=duration_s, warmup_s=0.5, seed=1, drive_capacity_bytes=float(drive.capacity_bytes))


def _light_load() -> arr.ArrayResult:
    drive = get_drive("intel-ssd-320-300gb")
    workload = Workload(name="light-4k-random-write", read_fraction=0.0, random_fraction=1.0,
                        io_size_mix=((4 * KiB, 1.0),), queue_depth=32, target_iops=100.0)
    models = simulation.array_service_models(drive, 1, workload=workload, seed=0)
    return arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=models,
                                      workload=workload, duration_s=60.0, seed=1,
                                      drive_capacity_bytes=float(drive.capacity_bytes)))


def _tails() -> dict[str, float]:
    drive = get_drive(DRIVE)
    out: dict[str, float] = {}
    for name, rf in (("read", 1.0), ("write", 0.0)):
        wl = Workload(name=f"qd1-4k-random-{name}", read_fraction=rf, io_size_mix=((4 * KiB, 1.0),), queue_depth=1)
        r = arr.simulate(simulation.array_spec(drive, make_layout("raid0", 1), 1, wl, duration_s=10.0, seed=1))
        out[f"array_s3500_qd1_{name}_p999_s"] = r.latency_percentile_s(0.999, name)
    wl = Workload(name="qd1-512b-random-read", read_fraction=1.0, io_size_mix=((512, 1.0),), queue_depth=1)
    r = arr.simulate(simulation.array_spec(get_drive("micron-p320h-700gb"), make_layout("raid0", 1), 1, wl, duration_s=5.0, seed=1))
    out["array_p320h_512b_qd1_read_p50_s"] = r.latency_percentile_s(0.5, "read")
    for key, name in (("tlc_7400pro", "micron-7400-pro-7680gb"), ("qlc_p4320", "intel-d5-p4320-7680gb")):
        wl = Workload(name="qd1-4k-70-30", read_fraction=0.7, io_size_mix=((4 * KiB, 1.0),), queue_depth=1)
        r = arr.simulate(simulation.array_spec(get_drive(name), make_layout("raid0", 1), 1, wl, duration_s=10.0, seed=1))
        out[f"array_{key}_qd1_read_p50_s"] = r.latency_percentile_s(0.5, "read")
        out[f"array_{key}_qd1_read_p999_s"] = r.latency_percentile_s(0.999, "read")
    wl = Workload(name="oltp-8k-70-30-100k", read_fraction=0.7, io_size_mix=((8 * KiB, 1.0),), queue_depth=32, target_iops=100_000.0)
    r = arr.simulate(simulation.array_spec(drive, make_layout("raid6", 12), 24, wl, duration_s=10.0, seed=1))
    out["array_s3500_raid6_24_40pct_p50_s"] = r.latency_percentile_s(0.5)
    out["array_s3500_raid6_24_40pct_p9999_s"] = r.latency_percentile_s(0.9999)
    out["array_s3500_raid6_24_p9999_over_p50"] = r.latency_percentile_s(0.9999) / r.latency_percentile_s(0.5)
    return out


def run() -> dict[str, float]:
    arr.simulate(_spec(1.0))  # compile or load the kernel from numba's cache
    spec = _spec(20.0)
    best = float("inf")
    result = None
    for _ in range(5):
        t0 = time.process_time()
        result = arr.simulate(spec)
        best = min(best, time.process_time() - t0)
    assert result is not None
    host = result.host_ios
    members = result.member_reads + result.member_writes
    nbytes = sum(a.nbytes for a in (result.latency_histograms, result.iops_per_second, result.second_max_latency_s,
                                    result.second_histograms, result.drive_busy_s, result.counters))
    light = _light_load()
    return {
        "array_host_ios_per_s_per_core": host / best,
        "array_light_load_write_p99_s": light.latency_percentile_s(0.99, "write"),
        "array_member_ios_per_s_per_core": members / best,
        "array_s3500_raid6_24_iops": result.achieved_iops,
        "array_s3500_raid6_24_p99_latency_s": result.latency_percentile_s(0.99),
        "array_memory_bytes": float(nbytes),
        **_tails(),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
