"""SSD timing, calibration, steady state, the consistency experiment, the PTS detector, TRIM and
the service model (engine/arrayplan_engine/ssd.py)."""

from __future__ import annotations

import numpy as np
import pytest

from arrayplan_engine import catalog, ssd
from arrayplan_engine.errors import InvalidInputError, UnknownNameError
from arrayplan_engine.service_time import ServiceModel

SSDS = [d for d in catalog.all_drives() if d.kind == "ssd"]
# Representative eager (Intel "clean early and often", 001 seed) and lazy ("cleaning up as late
# as possible", 000 seed) drives.
EAGER = ["intel-dc-s3500-480gb", "intel-dc-s3700-200gb"]
LAZY = ["intel-ssd-320-300gb", "micron-p320h-700gb", "intel-x25-m-g2-80gb"]


@pytest.mark.parametrize("drive", SSDS, ids=lambda d: d.name)
def test_calibration_hits_fob_spec_within_2_percent(drive: catalog.Drive) -> None:
    # FOB 4 KB random read / write IOPS and sequential MB/s within 2% of the catalog.
    # The write figure is measured by running the timed FTL kernel on a secure-erased drive.
    for row in ssd.calibration_report(drive):
        assert abs(row.error) <= 0.02, (row.quantity, row.spec, row.model)


@pytest.mark.parametrize("drive", SSDS, ids=lambda d: d.name)
def test_steady_state_below_fob_for_every_drive(drive: catalog.Drive) -> None:
    t = ssd.calibrate(drive)
    steady = ssd.steady_state_random_write_iops(drive)
    assert steady < t.fob_random_write_iops
    assert ssd.steady_state_write_amplification(drive) > 1.0


@pytest.fixture(scope="module")
def runs() -> dict[str, ssd.ConsistencyResult]:
    # each run is the array simulation of one freshly filled drive at QD32 for 2000 s
    return {name: ssd.consistency_experiment(name, duration_s=2000, seed=1) for name in EAGER + LAZY}


@pytest.mark.slow
def test_consistency_steady_below_fob_and_eager_dips_shallower(runs: dict[str, ssd.ConsistencyResult]) -> None:
    for r in runs.values():
        assert r.iops.size == 2000
        assert r.iops[:5].mean() == pytest.approx(r.fob_iops, rel=0.02)  # starts at FOB
        assert r.steady_iops_mean < 0.75 * r.fob_iops  # the cliff (001 seed: "sharp dropoff")
    # Eager drives: shallow dips; lazy drives: deep drops (001, 000 seeds). Order, not values.
    worst_eager = min(runs[n].p1_over_mean for n in EAGER)
    best_lazy = max(runs[n].p1_over_mean for n in LAZY)
    assert worst_eager > best_lazy
    assert max(runs[n].dip_depth for n in EAGER) < min(runs[n].dip_depth for n in LAZY)
    # The cleaner's step (docs/ssd-model.md, "Cleaning steps"): one victim erase unit's cleaning
    # (its valid pages at the steady write amplification relocated, then erased) is longer than
    # an eager drive's longest IO (it interleaves a flash page at a time), and a lazy drive's
    # longest IO waits for at least one (half of it as the bound: a posted write buffer hides up
    # to its drain time, and the log's tail is not at its steady valid share all run long).
    # Model, seed 0: S3500 4.5 ms / victim 14.9 ms, S3700 1.6 / 9.6; SSD 320 77 / 39, P320h 0.78 / 0.63.
    def victim_s(n: str) -> float:
        m = ssd.service_model(n, precondition_drive_writes=0.0)
        valid = 1.0 - 1.0 / m.write_amplification
        return m.nand_erase_pages * (valid * m.relocation_page_s + m.erase_page_s)
    for n in EAGER:
        assert runs[n].max_latency_s < victim_s(n)
    for n in LAZY:
        assert runs[n].max_latency_s >= 0.5 * victim_s(n)


@pytest.mark.slow
def test_consistency_reaches_pts_steady_state(runs: dict[str, ssd.ConsistencyResult]) -> None:
    # The S3700's large spare settles within the run; the S3500 is still climbing out of the
    # trough its fill leaves at 2000 s (docs/validation.md row 2: the review saw steady state
    # from ~1400 s), so if its PTS test passes, the window it passes on is within the bounds.
    for name in ("intel-dc-s3700-200gb", "intel-x25-m-g2-80gb"):
        r = runs[name]
        assert r.steady is not None and r.steady_start_s < 2000
        assert r.steady.excursion <= 0.20 and r.steady.slope_excursion <= 0.10
    s3500 = runs["intel-dc-s3500-480gb"]
    rounds = s3500.iops[:1980].reshape(-1, 60).mean(axis=1)
    if s3500.steady is None:
        assert rounds[-1] > 1.1 * rounds[-6]  # it is still climbing > 10 % over the last window
    else:
        w = rounds[s3500.steady.start_round:s3500.steady.end_round + 1]
        assert (w.max() - w.min()) / w.mean() <= 0.20


@pytest.mark.slow
def test_consistency_run_emerges_from_the_array_kernel(runs: dict[str, ssd.ConsistencyResult]) -> None:
    # The consistency run is an array simulation (nothing recorded is fed in),
    # and its steady state is what a used drive in an array reaches at the same load.
    from arrayplan_engine import array as arr
    from arrayplan_engine.layout import make_layout
    from arrayplan_engine.workload import Workload

    r = runs["intel-dc-s3700-200gb"]
    assert isinstance(r.array_result, arr.ArrayResult) and r.array_result.host_writes > 0
    d = catalog.get_drive("intel-dc-s3700-200gb")
    wl = Workload(read_fraction=0.0, io_size_mix=((4096, 1.0),), queue_depth=32)
    used = arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1,
                                      service_models=(ssd.service_model(d),), workload=wl, duration_s=60.0,
                                      drive_capacity_bytes=float(d.capacity_bytes)))
    # 10 %: the consistency run's steady window vs a 60 s window of the preconditioned drive
    assert r.steady_iops_mean == pytest.approx(used.achieved_iops, rel=0.10)


@pytest.mark.slow
def test_s3700_beats_s3500_at_steady_state(runs: dict[str, ssd.ConsistencyResult]) -> None:
    # 001 seed: "Intel's specs list the S3500 at roughly 1/3 of the sustained 4KB random write
    # performance of the S3700". The model gets the order and a ratio above 1.5 from spare area
    # at the end of the 2000 s run (1.93; the S3500 is still converging, docs/validation.md rows
    # 2 and 4: 2.13 between the used states).
    ratio = runs["intel-dc-s3700-200gb"].steady_iops_mean / runs["intel-dc-s3500-480gb"].steady_iops_mean
    assert ratio > 1.5


def test_seed_comparison_errors_are_as_documented() -> None:
    # docs/ssd-model.md table: S3700 within 15% of 36K; S3500 within 70% of 11.5K (the model
    # over-predicts: FOB assumed at the sequential-write pace). Guards against silent drift.
    s3700 = ssd.steady_state_random_write_iops("intel-dc-s3700-200gb")
    s3500 = ssd.steady_state_random_write_iops("intel-dc-s3500-480gb")
    assert s3700 == pytest.approx(36_000, rel=0.15)
    assert s3500 == pytest.approx(11_500, rel=0.70)


def test_short_stroking_raises_steady_state() -> None:
    # 001 seed: spare area enlarged by leaving part of the drive unused.
    base = ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=1200, seed=2, model_pages=1 << 18)
    op = ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=1200, op=0.25, seed=2, model_pages=1 << 18)
    assert op.spare_factor > base.spare_factor
    assert op.iops[-300:].mean() > 1.3 * base.iops[-300:].mean()


def test_trim_restores_performance() -> None:
    # 000 seed: tortured 20 minutes, "Minimum performance drops pretty low"; then "The format
    # command in Windows 7 triggers TRIM ... performance is nearly fully restored".
    r = ssd.trim_experiment("intel-ssd-320-300gb", torture_s=1200, measure_s=30, seed=0)
    assert r.tortured_iops < 0.5 * r.fresh_iops
    assert r.after_trim_iops > 0.9 * r.fresh_iops


def test_ssd_910_is_controllers_in_raid0() -> None:
    t400 = ssd.calibrate(catalog.get_drive("intel-ssd-910-400gb"))
    t800 = ssd.calibrate(catalog.get_drive("intel-ssd-910-800gb"))
    assert (t400.controllers, t800.controllers) == (2, 4)
    assert t800.user_bytes == pytest.approx(200e9)  # 002 seed: "Each controller manages a 200GB partition"
    # "roughly a doubling of performance between the two drives" (002 seed).
    assert ssd.steady_state_random_write_iops("intel-ssd-910-800gb") == pytest.approx(
        2 * ssd.steady_state_random_write_iops("intel-ssd-910-400gb"), rel=0.01)


def test_internal_parity_takes_spare_and_adds_writes() -> None:
    s320 = ssd.calibrate(catalog.get_drive("intel-ssd-320-300gb"))
    spare_raw = 1 - 300e9 / (320 * 2**30)
    assert s320.parity_fraction == pytest.approx(spare_raw / 2)  # 000 seed: half the spare
    # the cleaner's spare is what the parity and the bad-block reserve (MLC NVB 3,936 of 4,096
    # blocks, ssd.BAD_BLOCK_RESERVE) leave
    assert s320.reserve_fraction == pytest.approx(160 / 4096)
    assert s320.spare_factor == pytest.approx(1 - 300e9 / (320 * 2**30 * (1 - spare_raw / 2 - 160 / 4096)))
    p320 = ssd.calibrate(catalog.get_drive("micron-p320h-700gb"))
    assert p320.parity_fraction == pytest.approx(1 / 8)  # 004 seed: RAIN 7+1
    assert ssd.nand_write_factor("micron-p320h-700gb") == pytest.approx(
        ssd.steady_state_write_amplification("micron-p320h-700gb") * 8 / 7)


def _series(kind: str, rng: np.random.Generator) -> np.ndarray:
    n = 30
    if kind == "steady":
        return 10_000 * (1 + 0.03 * rng.standard_normal(n))
    if kind == "drifting":
        return 10_000 * 1.05 ** np.arange(n)                 # +5% per round, compounding
    if kind == "oscillating":
        return 10_000 * (1 + 0.15 * (-1.0) ** np.arange(n))  # 30% peak to peak
    return np.concatenate([np.full(8, 40_000.0), 10_000 * (1 + 0.02 * rng.standard_normal(n - 8))])


def test_pts_detector_on_constructed_series() -> None:
    rng = np.random.default_rng(0)
    s = ssd.pts_steady_state(_series("steady", rng))
    assert s is not None and s.start_round == 0
    assert ssd.pts_steady_state(_series("drifting", rng)) is None   # slope excursion ~20% > 10%
    assert ssd.pts_steady_state(_series("oscillating", rng)) is None  # excursion 30% > 20%
    cliff_series = _series("cliff", rng)
    # A long fresh plateau passes the test by itself (PTS assumes preconditioning) ...
    assert ssd.pts_steady_state(cliff_series).start_round == 0  # type: ignore[union-attr]
    # ... so the search starts after the cliff; a 3-round plateau spoils windows that hold it.
    cliff = ssd.pts_steady_state(cliff_series, first_round=8)
    assert cliff is not None and cliff.start_round == 8
    short = ssd.pts_steady_state(cliff_series[5:])
    assert short is not None and short.start_round == 3
    # Slow drift within the limits passes: 1%/round -> 4% across a 5-round window.
    assert ssd.pts_steady_state(10_000 * (1 + 0.01 * np.arange(10))) is not None


def test_service_model_contract() -> None:
    d = catalog.get_drive("intel-dc-s3700-200gb")
    sm = ssd.service_model(d)
    assert isinstance(sm, ServiceModel) and not sm.mechanical and sm.cleaning and sm.gc_eager
    # 4 KB reads on parallel_units servers give the FOB random-read spec (1e-9).
    assert sm.parallel_units / (sm.read_fixed_s + 4096 * sm.read_per_byte_s) == pytest.approx(76_000, rel=1e-9)
    # the cleaning cost is set for wa.py's steady-state write amplification
    assert sm.write_amplification == pytest.approx(ssd.steady_state_write_amplification(d), rel=1e-9)
    t = ssd.calibrate(d)
    assert sm.raw_pages - sm.span_pages == pytest.approx(t.spare_factor * sm.raw_pages, rel=1e-9)
    assert sm.low_free_pages < sm.high_free_pages < sm.raw_pages - sm.span_pages
    # uniform greedy writes: the kernel's victim histogram is greedy already (no scale)
    assert sm.relocation_scale == pytest.approx(1.0, abs=1e-9)
    # an almost empty drive cleans almost nothing; skew and sequential writes cost less
    assert ssd.service_model(d, fill_fraction=0.05).write_amplification < 1.1
    assert ssd.service_model(d, random_fraction=0.0).write_amplification == 1.0
    lazy = ssd.service_model("intel-ssd-320-300gb")
    assert not lazy.gc_eager and lazy.high_free_pages - lazy.low_free_pages > 100 * t.map_pages_per_block


def test_bad_inputs_raise_typed_errors() -> None:
    with pytest.raises(UnknownNameError) as err:
        ssd.consistency_experiment("no-such-drive")
    assert err.value.violations[0].field == "drive_model"
    with pytest.raises(InvalidInputError) as err2:
        ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=-5)
    assert err2.value.violations[0].field == "duration_s"
    with pytest.raises(InvalidInputError) as err3:
        ssd.consistency_experiment("intel-dc-s3500-480gb", op=1.5)
    assert err3.value.violations[0].field == "op"
    with pytest.raises(InvalidInputError) as err4:
        ssd.service_model("intel-dc-s3500-480gb", fill_fraction=0.0)
    assert err4.value.violations[0].field == "fill_fraction"
    with pytest.raises(InvalidInputError) as err5:
        ssd.calibrate(catalog.get_drive("seagate-15k") if "seagate-15k" in catalog.builtin_catalog()
                      else next(d for d in catalog.all_drives() if d.kind == "hdd"))
    assert err5.value.violations[0].field == "drive.kind"
    with pytest.raises(InvalidInputError):
        ssd.pts_steady_state(np.ones(10), window=1)


@pytest.mark.parametrize("drive", ["intel-ssd-320-300gb", "intel-dc-s3500-480gb", "micron-p320h-700gb"])
def test_used_state_starts_past_the_transient(drive: str) -> None:
    # The planner's drives must be past the fill-to-steady transient. A used drive
    # (three span writes of preconditioning) cleans greedy victims at wa.py's steady greedy write
    # amplification (Desnoyers' greedy correction); a freshly filled one has every block fully
    # valid (the consistency run's plateau and cliff).
    import math

    from arrayplan_engine import array as arr
    from arrayplan_engine import wa
    from arrayplan_engine.layout import make_layout
    from arrayplan_engine.workload import Workload

    t = ssd.calibrate(catalog.get_drive(drive))
    wl = Workload(read_fraction=0.0)
    for pre, expect in ((3.0, 1.0), (0.0, math.inf)):
        m = ssd.service_model(drive, precondition_drive_writes=pre)
        spec = arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), workload=wl)
        cl, vic = arr._cleaning_arrays(spec, 0.0, np.random.default_rng(0))
        npg = int(cl[0, arr._K_NP])
        assert npg == t.map_pages_per_block
        # every valid page is in a block of the histogram or the open block: the span
        valid = float((np.arange(vic.shape[1]) * vic[0]).sum()) + cl[0, arr._K_OPEN]
        if math.isinf(expect):
            assert cl[0, arr._K_BLO] == npg and cl[0, arr._K_FREE] == pytest.approx(m.raw_pages - m.span_pages)
            assert valid == pytest.approx(m.span_pages, rel=1e-9)
        else:
            assert m.low_free_pages <= cl[0, arr._K_FREE] <= m.high_free_pages + 1
            # no block is lost: the valid pages are the span within the pages written during one
            # preconditioning aging step (4 steps of span / (16 Np) at the steady WA), whose
            # blocks join the histogram at the step's start and take its overwrites
            assert abs(valid - m.span_pages) <= m.span_pages * 4.0 * m.write_amplification / (16.0 * npg)
            # half a span write more: the greedy victims' write amplification is wa.py's greedy
            # figure at the spare left beside the pool the cleaner holds free (its high mark) (5 %)
            arr._precondition(cl, vic, 0, 0.5 * m.span_pages, 0.0, False)
            a = 1.0 + cl[0, arr._K_RELOCS] / m.relocation_scale / (0.5 * m.span_pages)
            sf_held = (m.raw_pages - m.span_pages - m.high_free_pages) / m.raw_pages
            assert a == pytest.approx(wa.wa_greedy(sf_held, t.map_pages_per_block), rel=0.05)


def test_bad_block_reserve_is_the_nand_datasheets_worst_case() -> None:
    # docs/ssd-model.md "Bad-block reserve": 1 - NVB / blocks of the planar NAND datasheets (SLC
    # 4,016 of 4,096; MLC and eMLC 3,936 of 4,096), none where no NVB is public (3D TLC/QLC). The
    # reserve comes out of the cleaner's spare, so the same NAND and capacity clean with less.
    p320 = ssd.calibrate(catalog.get_drive("micron-p320h-700gb"))
    s3700 = ssd.calibrate(catalog.get_drive("intel-dc-s3700-200gb"))
    tlc = next(ssd.calibrate(d) for d in catalog.all_drives() if d.kind == "ssd" and d.nand_type == "tlc")
    assert (p320.reserve_fraction, s3700.reserve_fraction, tlc.reserve_fraction) == (80 / 4096, 160 / 4096, 0.0)
    assert s3700.spare_factor == pytest.approx(1 - s3700.user_bytes / (s3700.raw_nand_bytes * (1 - 160 / 4096)), rel=1e-12)
    assert tlc.spare_factor == pytest.approx(1 - tlc.user_bytes / tlc.raw_nand_bytes, rel=1e-12)


@pytest.mark.slow
def test_lazy_drives_wait_for_victims_not_whole_seconds(runs: dict[str, ssd.ConsistencyResult]) -> None:
    # docs/ssd-model.md, "Cleaning steps": when a lazy drive's pool is empty a write waits for
    # whole victim erase units until it fits, not for a fixed batch of the flash. So no second of
    # the late run (1,400-2,000 s, where the review's plots zoom in) delivers 0 IOPS and no IO
    # waits a large part of a second (model, seed 0: SSD 320 77 ms, P320h 0.8 ms, X25-M G2 76 ms).
    for n in LAZY:
        late = runs[n].iops[1400:2000]
        assert (late > 0).all(), n
        assert runs[n].max_latency_s < 0.5, n


@pytest.mark.parametrize(("drive", "k"), [("micron-p320h-700gb", 32), ("intel-dc-s3700-400gb", 4)])
def test_similar_drive_runs_the_same_consistency_curve(drive: str, k: int) -> None:
    # docs/ssd-model.md, "Similar drives": the drive k times smaller (units, flash, marks, steps /k,
    # back-end seconds per page x k) at QD 32/k writes its span in the same seconds, so its IOPS
    # times k are the drive's second by second. 400 s covers the FOB plateau, the cliff (P320h
    # 261 s, S3700 309 s) and the first steady seconds. The P320h at k 32 is the floor: one unit,
    # QD 1. Measured, seed 3: every second within 0.06 % (P320h) and 0.02 % (S3700); mean write
    # latency within 1e-6 relative; the longest IO 0.687 vs 0.751 ms (P320h), equal (S3700).
    full = ssd.consistency_experiment(drive, duration_s=400, seed=3, scale=1)
    small = ssd.consistency_experiment(drive, duration_s=400, seed=3, scale=k)
    assert full.scale == 1 and small.scale == k
    assert small.array_result.host_writes * k == pytest.approx(full.array_result.host_writes, rel=0.005)
    np.testing.assert_allclose(small.iops, full.iops, rtol=0.01)  # every second within 1 %

    def cliff(r: ssd.ConsistencyResult) -> int:  # the first second 20 % below the plateau
        below = np.flatnonzero(r.iops < 0.8 * r.fob_iops)
        return int(below[0]) if below.size else -1

    assert 200 < cliff(full) < 350
    assert abs(cliff(small) - cliff(full)) <= 1
    late_full, late_small = full.iops[300:], small.iops[300:]
    assert late_small.mean() == pytest.approx(late_full.mean(), rel=0.005)
    p1 = [float(np.percentile(x, 1) / x.mean()) for x in (late_full, late_small)]
    assert p1[1] == pytest.approx(p1[0], abs=0.01)
    # latency: the mean is the drive's (Little: QD/k over IOPS/k); the longest IO within 5 %
    assert small.array_result.latency_mean_s("write") == pytest.approx(full.array_result.latency_mean_s("write"), rel=0.01)
    # the longest IO within 10 %: at the floor (P320h, one unit at QD 1) a write that meets a
    # victim stall waits behind no other unit's writes; measured 0.687 vs 0.751 ms (-8.5 %)
    assert small.max_latency_s == pytest.approx(full.max_latency_s, rel=0.10)
    assert small.write_amplification == pytest.approx(full.write_amplification, rel=0.005)


def test_similar_model_scales_sizes_and_page_times() -> None:
    m = ssd.service_model("micron-p320h-700gb", precondition_drive_writes=0.0)
    s = ssd.similar_model(m, 8)
    assert s.parallel_units * 8 == m.parallel_units
    for name in ("span_pages", "raw_pages", "low_free_pages", "high_free_pages", "step_pages", "nand_erase_pages"):
        assert getattr(s, name) * 8 == pytest.approx(getattr(m, name), rel=1e-12), name
    for name in ("host_page_s", "relocation_page_s", "erase_page_s"):
        assert getattr(s, name) == pytest.approx(8 * getattr(m, name), rel=1e-12), name
    # per-IO times and the spare fraction are the drive's
    assert (s.write_fixed_s, s.write_per_byte_s, s.nand_program_s) == (m.write_fixed_s, m.write_per_byte_s, m.nand_program_s)
    assert s.raw_pages / s.span_pages == pytest.approx(m.raw_pages / m.span_pages, rel=1e-12)
    assert ssd.similar_model(m, 1) is m
    # k not dividing the units: ceil(units / k) units, each that much slower, serve 1/k of the IOPS
    odd = ssd.similar_model(m, 5)
    assert odd.parallel_units == 7
    assert odd.parallel_units / odd.write_fixed_s == pytest.approx(m.parallel_units / m.write_fixed_s / 5, rel=1e-12)


def test_consistency_scale_keeps_the_budget_and_the_floor() -> None:
    # 2000 s at the FOB rate: P320h 410 M IOs -> k 8; S3500 220 M -> 4; an X25-M's 17 M fit as they
    # are; a 1 M IOPS NVMe drive 32 (QD 1); past that the floor holds k at 32
    assert ssd.consistency_scale(2000 * 205_000.0) == 8
    assert ssd.consistency_scale(2000 * 110_000.0) == 4
    assert ssd.consistency_scale(2000 * 8_600.0) == 1
    assert ssd.consistency_scale(2000 * 1_050_000.0) == 32
    assert ssd.consistency_scale(1e12) == 32
    with pytest.raises(InvalidInputError, match="scale"):
        ssd.consistency_experiment("intel-dc-s3500-480gb", duration_s=60, scale=3)


@pytest.mark.slow
@pytest.mark.parametrize(("drive", "duration_s"), [("intel-dc-s3700-400gb", 3000), ("intel-dc-s3500-480gb", 5000)])
def test_consistency_transient_follows_the_page_level_greedy_ftl(drive: str, duration_s: int) -> None:
    # docs/ssd-model.md, "Victim blocks": the kernel's victims come from a mean-field histogram of
    # blocks by valid pages, cleaned greedily. From a sequential fill the page-level greedy FTL
    # (ftl.py: real blocks with real valid counts, 2^18 pages, the drive's spare and pages per
    # block) gives the same cliff, trough, overshoot and steady level. Compared in 100 s means
    # on the drive-write axis (both start with the same FOB plateau, so their clocks agree to a
    # few %). Model vs FTL, seed 0: S3700 trough 23.7K / 24.2K, peak 38.7K / 38.9K, steady 34.8K /
    # 34.8K; S3500 9.1K / 9.8K, 15.4K / 15.8K, 13.6K / 13.8K (the fluid FIFO log gave 21.3K and
    # 7.5K troughs, 40.2K and 17.1K peaks). Tolerances: trough and peak 10 % (the FTL's seed and
    # scale move them 2-4 %), steady level 5 % (the WA tolerance of wa.py vs ftl.py), the
    # overshoot's place in drive writes 15 %.
    t = ssd.calibrate(catalog.get_drive(drive))
    r = ssd.consistency_experiment(drive, duration_s=duration_s, seed=0)
    out, _ = ssd._unit_run(t, span=1.0, duration_s=duration_s, seed=np.random.default_rng(0), model_pages=1 << 18)
    curves = []
    for iops in (r.iops, t.controllers * out[:duration_s, 0]):
        m = iops.reshape(-1, 100).mean(axis=1)
        dw = np.cumsum(iops)[99::100] * ssd.MAP_BYTES / (t.user_bytes * t.controllers)
        cliff = int(np.flatnonzero(m < 0.7 * m[0])[0])
        trough = cliff + int(np.argmin(m[cliff:]))
        peak = trough + int(np.argmax(m[trough:]))
        curves.append((m[trough], m[peak], m[-5:].mean(), dw[peak]))
    (k_lo, k_hi, k_end, k_dw), (f_lo, f_hi, f_end, f_dw) = curves
    assert k_lo == pytest.approx(f_lo, rel=0.10)
    assert k_hi == pytest.approx(f_hi, rel=0.10)
    assert k_end == pytest.approx(f_end, rel=0.05)
    assert k_dw == pytest.approx(f_dw, rel=0.15)
    # the trough is physics, not a defect: the fill's blocks all meet the cliff with
    # exp(-sf / (1 - sf)) of their pages valid (the spare's worth of random writes since the
    # fill), more than the steady victims' 1 - 1 / A, so both models dip below the steady level
    assert f_lo < 0.85 * f_end and k_lo < 0.85 * k_end
