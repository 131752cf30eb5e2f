"""Array simulation checks. Each check names its source and its tolerance.

Sampling tolerances are 4 standard deviations of the estimator (a false failure about once in
16,000 runs, and the seeds are fixed, so a run is reproducible); model tolerances are stated
where they are not sampling error.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from arrayplan_engine import array as arr
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.service_time import ServiceModel
from arrayplan_engine.units import GB, MB, KiB
from arrayplan_engine.workload import Workload


def ssd_model(units: int = 4, read_s: float = 50e-6, write_s: float = 100e-6, **kw) -> ServiceModel:
    """A hand-made SSD: fixed service times, no per-byte cost unless given."""
    return ServiceModel(drive_name="test-ssd", parallel_units=units, read_fixed_s=read_s, read_per_byte_s=kw.pop("rpb", 0.0),
                        write_fixed_s=write_s, write_per_byte_s=kw.pop("wpb", 0.0), **kw)


def spec_for(layout: str, width: int, workload: Workload, *, model: ServiceModel | None = None, drives: int | None = None,
             **kw) -> arr.ArraySpec:
    lay = make_layout(layout, width)
    return arr.ArraySpec(layout=lay, drive_count=drives or lay.group_width, service_models=(model or ssd_model(),),
                         workload=workload, **kw)


def binomial_tol(p: float, n: int) -> float:
    return 4.0 * math.sqrt(max(p * (1.0 - p), 1e-12) / n)


# -- write penalties -------------------------------------------------------------------------------
# Source: the textbook RAID small-write penalties (RAID 1/10: 2, RAID 5: 4, RAID 6: 6) and the
# full-stripe cost (k+m)/k, as layout.py states them. Here they must *emerge* from the simulated
# member IOs, exactly (integer counts per host IO), for random 4 KiB writes.
@pytest.mark.parametrize(("layout", "width", "penalty"), [
    ("raid1", 2, 2), ("raid10", 8, 2), ("raid5", 8, 4), ("raid6", 8, 6), ("raid0", 4, 1), ("ec:8+3", None, 8),
])
def test_small_write_penalty_emerges(layout: str, width: int | None, penalty: int) -> None:
    wl = Workload(read_fraction=0.0, io_size_mix=((4 * KiB, 1.0),), queue_depth=8)
    r = arr.simulate(spec_for(layout, width, wl, duration_s=0.2))
    assert r.host_writes > 1000
    assert r.member_ios_per_host_write == penalty  # exact: every 4 KiB random write costs the same
    assert penalty == make_layout(layout, width).small_write_penalty()


@pytest.mark.parametrize(("layout", "width"), [("raid5", 8), ("raid6", 8), ("raid6", 24), ("ec:8+3", None), ("ec:4+2", None)])
def test_full_stripe_and_sequential_writes_cost_k_plus_m_over_k(layout: str, width: int | None) -> None:
    lay = make_layout(layout, width)
    k, m = lay.data_drives, lay.parity_units
    # stripe-aligned writes of one full stripe: k + m member writes, no reads
    wl = Workload(read_fraction=0.0, io_size_mix=((lay.stripe_data_bytes, 1.0),), queue_depth=4)
    r = arr.simulate(spec_for(layout, width, wl, duration_s=0.2))
    assert r.member_ios_per_host_write == k + m
    assert r.member_reads == 0
    assert r.member_write_bytes_per_host_write_byte == pytest.approx((k + m) / k, rel=1e-12)
    # sequential 4 KiB writes coalesce into full stripes: member bytes / host bytes -> (k+m)/k
    # (within one partial stripe at the window edges: < 1 %)
    wl_seq = Workload(read_fraction=0.0, random_fraction=0.0, io_size_mix=((4 * KiB, 1.0),), queue_depth=4)
    rs = arr.simulate(spec_for(layout, width, wl_seq, duration_s=0.2))
    assert rs.member_reads == 0
    assert rs.member_write_bytes_per_host_write_byte == pytest.approx((k + m) / k, rel=0.01)


def test_small_raid5_uses_reconstruct_write_when_cheaper() -> None:
    # Linux md raid5.c handle_stripe_dirtying: rcw when it reads fewer blocks. RAID 5 of 3: rmw
    # reads 2 (data + parity), rcw reads 1 (the other data unit): 1 read + 2 writes = 3.
    wl = Workload(read_fraction=0.0, queue_depth=4)
    r = arr.simulate(spec_for("raid5", 3, wl, duration_s=0.2))
    assert r.member_ios_per_host_write == 3 == make_layout("raid5", 3).small_write_penalty()


def test_reads_cost_one_member_read_and_mirrors_read_one_copy() -> None:
    wl = Workload(read_fraction=1.0, queue_depth=16)
    for layout, width in (("raid1", 3), ("raid10", 8), ("raid6", 12)):
        r = arr.simulate(spec_for(layout, width, wl, duration_s=0.2))
        assert r.member_ios_per_host_read == 1.0
    # join-the-shortest-queue spreads a 3-way mirror's reads over all copies (within 5 %)
    r = arr.simulate(spec_for("raid1", 3, wl, duration_s=0.5))
    u = r.drive_utilisation
    assert u.max() - u.min() < 0.05 * u.mean()


def test_histogram_buckets_hold_the_latency() -> None:
    # deterministic service, QD1: every host IO takes exactly the service time; its bucket must
    # contain it (edges from latency_bucket_edges_s, the kernel computes buckets from float bits)
    for s in (50.5e-9, 3.33e-6, 100.1e-6, 7.51e-3, 2.001):  # away from bucket edges (float rounding)
        wl = Workload(read_fraction=1.0, queue_depth=1)
        r = arr.simulate(spec_for("raid0", 1, wl, model=ssd_model(units=1, read_s=s), duration_s=max(0.01, 5 * s)))
        idx = np.nonzero(r.latency_histograms[0])[0]
        edges = arr.latency_bucket_edges_s()
        assert idx.size == 1 and edges[idx[0]] <= s * (1 + 1e-9) and s < edges[idx[0] + 1]
        assert r.latency_percentile_s(0.5) == pytest.approx(s, rel=0.004)


# -- queueing sanity ---------------------------------------------------------------------------------
def test_closed_loop_obeys_littles_law() -> None:
    # Little's law: outstanding IOs = throughput x mean latency; a closed loop keeps QD outstanding.
    # Tolerance 1 %: the window edges (IOs in flight at the ends) are a ~QD/N effect.
    wl = Workload(read_fraction=0.7, queue_depth=32)
    r = arr.simulate(spec_for("raid6", 12, wl, duration_s=2.0))
    assert r.achieved_iops * r.latency_mean_s() == pytest.approx(32, rel=0.01)


def test_open_loop_single_server_matches_pollaczek_khinchine() -> None:
    # M/D/1 (Pollaczek-Khinchine): mean wait = rho s / (2 (1 - rho)); deterministic service s.
    # One drive, one unit, s = 100 us, Poisson arrivals at rho = 0.6. Tolerance 3 % of the mean
    # latency (sampling: ~120k IOs; the M/D/1 wait has a coefficient of variation ~1.3).
    s = 100e-6
    lam = 6000.0
    wl = Workload(read_fraction=1.0, queue_depth=1, target_iops=lam)
    r = arr.simulate(spec_for("raid0", 1, wl, model=ssd_model(units=1, read_s=s), duration_s=20.0))
    rho = lam * s
    expected = s + rho * s / (2 * (1 - rho))
    assert r.achieved_iops == pytest.approx(lam, rel=4 / math.sqrt(lam * 20))
    assert r.latency_mean_s() == pytest.approx(expected, rel=0.03)


# -- fork-join law -----------------------------------------------------------------------------------
# Source: order statistics: the maximum of k independent latencies with distributions F_d has
# P(max <= t) = prod_d F_d(t) (= F(t)^k for one F), so P(latency > t) = 1 - F(t)^k. Members here
# are SSDs whose read service time is 100 us times a per-drive random multiplier (log-normal,
# sigma 0.5, a fresh value every 50 us, independent between drives); 64 parallel units per drive
# so no IO ever queues, and Poisson arrivals so host IOs sample time uniformly (PASTA). A full-
# stripe read of RAID 0 over k drives forks into k member reads and ends with the last one.
def _lognormal_drives(k: int, slots: int, seed: int) -> tuple[tuple[ServiceModel, ...], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    models, profiles = [], []
    for _ in range(k):
        prof = np.exp(rng.normal(0.0, 0.5, slots))
        profiles.append(np.sort(prof))
        models.append(ServiceModel(drive_name="lognormal", parallel_units=64, read_fixed_s=100e-6, read_per_byte_s=0.0,
                                   write_fixed_s=100e-6, write_per_byte_s=0.0, profile_slot_s=50e-6,
                                   read_multiplier_profile=prof))
    return tuple(models), profiles


def _fork_join_quantile(profiles: list[np.ndarray], q: float, base_s: float) -> float:
    """t with prod_d F_d(t) = q, F_d the empirical CDF of drive d's multipliers."""
    lo, hi = 0.0, max(p[-1] for p in profiles) * base_s
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        f = np.prod([np.searchsorted(p, mid / base_s, side="right") / p.size for p in profiles])
        lo, hi = (mid, hi) if f < q else (lo, mid)
    return hi


def test_fork_join_tail_matches_order_statistics() -> None:
    k, slots = 8, 200_000
    models, profiles = _lognormal_drives(k, slots, 11)
    lay = make_layout("raid0", k)
    wl = Workload(read_fraction=1.0, io_size_mix=((lay.stripe_data_bytes, 1.0),), target_iops=20_000.0)
    r = arr.simulate(arr.ArraySpec(layout=lay, drive_count=k, service_models=models, workload=wl, duration_s=100.0))
    n = r.host_reads
    assert n > 1_900_000
    for q in (0.99, 0.999):
        t_q = _fork_join_quantile(profiles, q, 100e-6)
        frac = r.latency_fraction_above(t_q)
        # sampling error of the host IOs plus that of the finite profiles (slots per drive)
        tol = 4 * math.sqrt(q * (1 - q) * (1 / n + 1 / slots))
        assert abs(frac - (1 - q)) <= tol, (q, frac, tol)
        # the simulated quantile: within one histogram bucket (0.8 %) plus its sampling error
        # (the quantile moves by tol / density; 3 % covers it at both q here)
        assert r.latency_percentile_s(q) == pytest.approx(t_q, rel=0.03)
        # and it is the law of the maximum, not of one member: one drive's quantile is lower
        single_t = _fork_join_quantile(profiles[:1], q, 100e-6)
        assert r.latency_percentile_s(q) > 1.2 * single_t


# -- slow-drive group fraction ---------------------------------------------------------------------
# Source: with each drive independently slow a fraction x of the time, a group of N has at least
# one slow drive a fraction 1 - (1 - x)^N of the time (the shape reported by the "Tail at Store"
# field study of slow drives, Hao et al., FAST 2016). Poisson arrivals see time averages (PASTA),
# so the fraction of full-stripe host reads that hit a slow member estimates it.
def _slow_profiles(n_drives: int, x: float, slots: int, seed: int) -> tuple[ServiceModel, ...]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_drives):
        prof = np.ones(slots)
        prof[rng.permutation(slots)[: round(x * slots)]] = 20.0  # slow: 20x the service time
        out.append(ServiceModel(drive_name="slow-sometimes", parallel_units=1, read_fixed_s=10e-6, read_per_byte_s=0.0,
                                write_fixed_s=10e-6, write_per_byte_s=0.0, profile_slot_s=0.01,
                                read_multiplier_profile=prof))
    return tuple(out)


@pytest.mark.parametrize("n_drives", [1, 4, 16])
def test_group_slow_fraction(n_drives: int) -> None:
    x, slots = 0.1, 4000
    lay = make_layout("raid0", n_drives)
    wl = Workload(read_fraction=1.0, io_size_mix=((lay.stripe_data_bytes, 1.0),), target_iops=2000.0)
    r = arr.simulate(arr.ArraySpec(layout=lay, drive_count=n_drives, service_models=_slow_profiles(n_drives, x, slots, 7),
                                   workload=wl, duration_s=40.0))
    frac = r.latency_fraction_above(100e-6)  # fast member: 10 us, slow: 200 us
    expected = 1 - (1 - x) ** n_drives
    # tolerance: 4 sigma of the Poisson sample plus 4 sigma of the finite profile (slot pattern of
    # 4000 slots per drive, ~sqrt(p(1-p)/4000))
    tol = 4 * math.sqrt(expected * (1 - expected) * (1 / r.host_reads + 1 / slots))
    assert abs(frac - expected) <= tol, (frac, expected, tol)
    if n_drives > 1:
        assert abs(frac - min(1.0, n_drives * x)) > tol  # not the naive N x


# -- degraded mode and rebuild ---------------------------------------------------------------------
def test_degraded_raid5_read_of_missing_unit_costs_k_reads() -> None:
    # Source: RAID 5 reconstructs a missing unit from the k surviving units of its stripe. With
    # rotating parity a random 4 KiB read hits the failed member with probability 1/w, so member
    # reads per host read = (1 - 1/w) * 1 + (1/w) * k. Tolerance: 4 sigma of the hit fraction.
    w = 5
    k = w - 1
    wl = Workload(read_fraction=1.0, queue_depth=8)
    r = arr.simulate(spec_for("raid5", w, wl, duration_s=1.0, failed_drives=1))
    n = r.host_reads
    expected = (1 - 1 / w) + k / w
    assert abs(r.member_ios_per_host_read - expected) <= (k - 1) * binomial_tol(1 / w, n)
    # a wrong policy (read all w - 1 survivors plus parity, or only one) would be far off
    healthy = arr.simulate(spec_for("raid5", w, wl, duration_s=0.2))
    assert healthy.member_ios_per_host_read == 1.0


def test_degraded_raid6_reconstructs_from_k_not_all_survivors() -> None:
    # RAID 6 (w = 6, k = 4) with one failed member: a read of the missing unit reads k = 4 units,
    # not the 5 survivors: (5/6) * 1 + (1/6) * 4 = 1.5 member reads per host read.
    wl = Workload(read_fraction=1.0, queue_depth=8)
    r = arr.simulate(spec_for("raid6", 6, wl, duration_s=1.0, failed_drives=1))
    assert abs(r.member_ios_per_host_read - 1.5) <= 3 * binomial_tol(1 / 6, r.host_reads)


def test_rebuild_time_is_capacity_over_rate_when_idle() -> None:
    # Source: an idle array rebuilds a member of C bytes at rate R in C / R. Tolerance 0.5 %:
    # the last chunk's service time (~ms) on a 20 s rebuild.
    cap, rate = 2 * GB, 100 * MB
    wl = Workload(read_fraction=1.0, queue_depth=1, target_iops=1.0)  # a trickle of host IO
    r = arr.simulate(spec_for("raid5", 6, wl, duration_s=30.0, failed_drives=1, rebuild_rate_bytes_per_s=rate,
                              drive_capacity_bytes=cap, model=ssd_model(rpb=2e-9, wpb=2e-9)))
    assert r.rebuild_done
    assert r.rebuild_duration_s == pytest.approx(cap / rate, rel=0.005)
    # RAID 5 rebuild reads k survivors and writes the replacement per chunk
    assert r.counters[arr._C_REBUILD_WRITES] == r.rebuild_chunks
    assert r.counters[arr._C_REBUILD_READS] == 5 * r.rebuild_chunks


def test_rebuild_under_load_takes_longer_and_slows_host_io() -> None:
    # Rebuild traffic shares the members' FCFS queues with host IO: with the rate cap out of
    # reach (4 GB/s) the rebuild runs as fast as the drives allow when idle and slower when the
    # host keeps them busy; host IO during the rebuild is slower than degraded without one.
    cap = 1 * GB
    model = ssd_model(units=2, read_s=50e-6, write_s=100e-6, rpb=4e-9, wpb=4e-9)
    busy = Workload(read_fraction=0.7, queue_depth=64)
    base = dict(duration_s=20.0, failed_drives=1, drive_capacity_bytes=cap, model=model, rebuild_io_bytes=64 * KiB)
    idle = arr.simulate(spec_for("raid6", 8, replace(busy, queue_depth=1, target_iops=1.0), rebuild_rate_bytes_per_s=4e9, **base))
    loaded = arr.simulate(spec_for("raid6", 8, busy, rebuild_rate_bytes_per_s=4e9, **base))
    degraded = arr.simulate(spec_for("raid6", 8, busy, **base))
    assert idle.rebuild_done and loaded.rebuild_done
    assert idle.rebuild_duration_s < cap / 4e9 * 20  # drive-limited, not rate-limited
    assert loaded.rebuild_duration_s > 1.2 * idle.rebuild_duration_s
    assert loaded.latency_count("rebuild") > 0
    assert loaded.latency_percentile_s(0.99, "rebuild") > 1.2 * degraded.latency_percentile_s(0.99)


# -- reproducibility and fan-out ---------------------------------------------------------------------
def _gc_model() -> ServiceModel:
    prof = np.array([3.0] * 8 + [6.0, 9.0])  # steady-state GC with periodic dips
    return ssd_model(units=8, read_s=100e-6, write_s=200e-6, write_multiplier_profile=prof, profile_slot_s=0.25)


def test_same_seed_same_result_and_different_seed_differs() -> None:
    wl = Workload(read_fraction=0.7, queue_depth=32)
    s = spec_for("raid6", 12, wl, model=_gc_model(), duration_s=2.0, seed=42)
    a, b = arr.simulate(s), arr.simulate(s)
    assert np.array_equal(a.latency_histograms, b.latency_histograms)
    assert np.array_equal(a.iops_per_second, b.iops_per_second)
    assert np.array_equal(a.drive_busy_s, b.drive_busy_s)
    assert a.summary() == b.summary()
    c = arr.simulate(replace(s, seed=43))
    assert not np.array_equal(a.latency_histograms, c.latency_histograms)


def test_split_and_merge_are_exact_and_consistent() -> None:
    wl = Workload(read_fraction=0.7, queue_depth=32)
    s = spec_for("raid6", 12, wl, model=_gc_model(), duration_s=8.0, seed=5)
    parts = arr.split_simulation(s, 4)
    assert [p.window_start_s for p in parts] == [0.0, 2.0, 4.0, 6.0]
    assert [p.spawn_key for p in parts] == [(i,) for i in range(4)]
    # the spawn keys are those of SeedSequence(seed).spawn(n)
    assert [c.spawn_key for c in np.random.SeedSequence(5).spawn(4)] == [p.spawn_key for p in parts]
    results = [arr.simulate(p) for p in parts]
    merged = arr.merge_results(results)
    again = arr.merge_results([arr.simulate(p) for p in arr.split_simulation(s, 4)])
    # exact: counts add, per-second series line up, identical for the same seed
    assert np.array_equal(merged.latency_histograms, sum(r.latency_histograms for r in results))
    assert merged.iops_per_second.size == 8
    assert np.array_equal(merged.iops_per_second[2:4], results[1].iops_per_second)
    assert merged.host_ios == sum(r.host_ios for r in results)
    assert np.array_equal(merged.latency_histograms, again.latency_histograms)
    assert merged.summary() == again.summary()
    # consistent with the unsplit run: IOPS within 1 %, p50/p99 within 5 % (different random
    # streams, same drives and GC phases)
    whole = arr.simulate(s)
    assert merged.achieved_iops == pytest.approx(whole.achieved_iops, rel=0.01)
    for q in (0.5, 0.99):
        assert merged.latency_percentile_s(q) == pytest.approx(whole.latency_percentile_s(q), rel=0.05)
    # one part is the spec itself; rebuild runs are not split
    assert arr.split_simulation(s, 1) == [s]
    rb = replace(s, failed_drives=1, rebuild_rate_bytes_per_s=1e8, drive_capacity_bytes=1e9)
    assert arr.split_simulation(rb, 4) == [rb]


def test_per_second_series_and_worst_second() -> None:
    wl = Workload(read_fraction=0.7, queue_depth=32)
    r = arr.simulate(spec_for("raid6", 12, wl, model=_gc_model(), duration_s=5.0))
    assert r.iops_per_second.size == 5
    assert r.iops_per_second.sum() == pytest.approx(r.achieved_iops * 5)
    assert r.worst_second_max_latency_s == pytest.approx(r.latency_percentile_s(1.0), rel=1e-9)
    assert r.worst_second_p99_latency_s >= r.latency_percentile_s(0.99) * 0.85  # per-second buckets are 12.5 % wide
    assert np.all(r.drive_utilisation > 0) and np.all(r.drive_utilisation <= 1.0 + 1e-9)
    s = r.summary()
    for key in ("latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_p999_s", "latency_p9999_s", "latency_max_s",
                "read_latency_p99_s", "write_latency_p99_s", "worst_second_p99_latency_s", "member_ios_per_host_io"):
        assert s[key] is not None and s[key] > 0


def test_gc_dips_of_one_drive_set_the_array_tail() -> None:
    # "With many drives in a RAID array, overall performance is determined by the slowest
    # performing drive" (DC S3500 review, seeds/001): the same drives with GC dips give a worse
    # write tail in a wide stripe than with a flat profile of the same mean.
    wl = Workload(read_fraction=0.0, queue_depth=32)
    dips = _gc_model()
    flat = replace(dips, write_multiplier_profile=np.full(10, dips.write_multiplier_profile.mean()))
    r_dips = arr.simulate(spec_for("raid6", 24, wl, model=dips, duration_s=5.0))
    r_flat = arr.simulate(spec_for("raid6", 24, wl, model=flat, duration_s=5.0))
    assert r_dips.latency_percentile_s(0.999) > 1.3 * r_flat.latency_percentile_s(0.999)


# -- errors name the field and the allowed range ----------------------------------------------------
@pytest.mark.parametrize(("change", "field", "text"), [
    ({"failed_drives": 3}, "spec.failed_drives", "[0, 2]"),
    ({"duration_s": 0.0}, "spec.duration_s", "[0.001"),
    ({"drive_count": 5}, "spec.drive_count", "[8"),
    ({"rebuild_rate_bytes_per_s": 1e8, "failed_drives": 1}, "spec.drive_capacity_bytes", "> 0"),
    ({"reorder_window": 0}, "spec.reorder_window", "[1, 256]"),
])
def test_invalid_spec_names_field_and_range(change: dict, field: str, text: str) -> None:
    wl = Workload(read_fraction=0.5)
    base = dict(layout=make_layout("raid6", 8), drive_count=8, service_models=(ssd_model(),), workload=wl)
    base.update(change)
    with pytest.raises(InvalidInputError) as info:
        arr.ArraySpec(**base)
    v = next(v for v in info.value.violations if v.field == field)
    assert text in v.reason


def test_invalid_service_model_is_named() -> None:
    bad = ssd_model(units=0)
    with pytest.raises(InvalidInputError) as info:
        spec_for("raid0", 2, Workload(read_fraction=1.0), model=bad)
    assert any(v.field == "spec.service_models[0].parallel_units" and "[1, 256]" in v.reason for v in info.value.violations)


# -- cleaning as work ----------------------------------------------------------------------------
# Each SSD member carries its own free-space state: writes take free pages, cleaning reclaims them
# at wa.py's write amplification. Light load must see fresh-drive latencies (plus a little
# background-cleaning interference), saturation the steady state.
def _one_ssd(drive: str, *, iops: float, io_bytes: int = 4096, duration_s: float = 30.0, seed: int = 1,
             read_fraction: float = 0.0, **model_kw) -> tuple[arr.ArrayResult, ServiceModel]:
    from arrayplan_engine import catalog, ssd

    d = catalog.get_drive(drive)
    wl = Workload(read_fraction=read_fraction, io_size_mix=((io_bytes, 1.0),), queue_depth=32, target_iops=iops)
    m = ssd.service_model(d, **model_kw)
    r = arr.simulate(arr.ArraySpec(layout=make_layout("raid0", 1), drive_count=1, service_models=(m,), workload=wl,
                                   duration_s=duration_s, seed=seed, drive_capacity_bytes=float(d.capacity_bytes)))
    return r, m


@pytest.mark.parametrize(("drive", "load"), [("intel-ssd-320-300gb", None), ("intel-ssd-320-300gb", 0.5),
                                             ("intel-dc-s3500-480gb", 0.1), ("intel-dc-s3500-480gb", 0.5),
                                             ("micron-p320h-700gb", 0.3)])
def test_light_load_sees_fresh_latencies(drive: str, load: float | None) -> None:
    # One SSD 320 at 100 IOPS of 4 KiB random writes once got p50 16 s from a replayed
    # saturated profile. Below saturation (10-50 % of the steady-state rate) every offered IO is
    # carried (4 sigma of the Poisson count) and the write p99 stays within 2x the fresh-drive
    # service time (the command and data path; background cleaning only adds its small steps).
    from arrayplan_engine import ssd

    rate = 100.0 if load is None else load * ssd.steady_state_random_write_iops(drive)
    duration = 60.0 if rate < 1000 else 10.0
    r, m = _one_ssd(drive, iops=rate, duration_s=duration)
    expected = rate * duration
    assert not r.saturated
    assert abs(r.host_writes - expected) <= 4 * math.sqrt(expected) + 1
    fresh = m.write_fixed_s + 4096 * m.write_per_byte_s
    assert r.latency_percentile_s(0.5, "write") <= 1.01 * fresh
    assert r.latency_percentile_s(0.99, "write") <= 2.0 * fresh


def test_saturated_used_drive_reaches_its_steady_state() -> None:
    # Closed loop at QD32 on a used (preconditioned) eager drive: the cleaning work is wa.py's
    # write amplification (10 %: the victim histogram's steps and a 20 s window), so the drive runs
    # at the steady-state rate of the timing model (ssd.DriveTiming.write_iops_at_wa, 10 %).
    from arrayplan_engine import ssd

    r, m = _one_ssd("intel-dc-s3500-480gb", iops=0.0, duration_s=20.0)
    assert r.write_amplification == pytest.approx(m.write_amplification, rel=0.10)
    from arrayplan_engine import catalog

    t = ssd.calibrate(catalog.get_drive("intel-dc-s3500-480gb"))
    assert r.achieved_iops == pytest.approx(t.write_iops_at_wa(m.write_amplification), rel=0.10)
    # the same drive at a tenth of that rate does the same cleaning work per write
    light, _ = _one_ssd("intel-dc-s3500-480gb", iops=0.1 * r.achieved_iops, duration_s=20.0)
    assert light.write_amplification == pytest.approx(m.write_amplification, rel=0.10)


def test_sub_page_writes_cost_a_read_modify_write() -> None:
    # 512 B writes once came out 8x cheaper than 4 KiB ones. A write that does not cover
    # whole 4 KiB mapping units reads the unit first and programs all of it: never cheaper.
    small, m = _one_ssd("intel-dc-s3700-200gb", iops=0.0, io_bytes=512, duration_s=5.0, fill_fraction=0.1)
    full, _ = _one_ssd("intel-dc-s3700-200gb", iops=0.0, io_bytes=4096, duration_s=5.0, fill_fraction=0.1)
    assert small.achieved_iops < full.achieved_iops
    light, _ = _one_ssd("intel-dc-s3700-200gb", iops=100.0, io_bytes=512, duration_s=20.0)
    # the page's read pays its die's array read (tR) like any read
    rmw = m.unloaded_read_s(4096) + m.write_fixed_s + 4096 * m.write_per_byte_s
    assert light.latency_percentile_s(0.5, "write") == pytest.approx(rmw, rel=0.01)


@pytest.mark.parametrize("kind", ["deterministic", "queueing", "ssd"])
def test_worst_second_p99_is_never_below_the_overall_median(kind: str) -> None:
    # Per-second latency resolution must be fine enough that the worst second's p99
    # is not below the overall p50 (impossible for true quantiles: if every second had 99 % of
    # its IOs below the median, so would the whole run). Near-equal latencies are the hard case
    # for coarse per-second buckets.
    if kind == "ssd":
        r, _ = _one_ssd("intel-ssd-320-300gb", iops=100.0, duration_s=5.0)
    else:
        wl = Workload(read_fraction=1.0, queue_depth=1, target_iops=1000.0 if kind == "deterministic" else 6000.0)
        det = kind == "deterministic"
        model = ssd_model(units=64, read_s=434.8e-6) if det else ssd_model(units=1, read_s=100e-6)
        r = arr.simulate(spec_for("raid0", 1, wl, model=model, duration_s=5.0))
    assert r.worst_second_p99_latency_s >= r.latency_percentile_s(0.5)


@pytest.mark.parametrize(("layout", "width", "copies"), [("raid0", 4, 1), ("raid10", 4, 2), ("raid1", 3, 3)])
def test_mapping_conserves_bytes(layout: str, width: int, copies: int) -> None:
    # Through the kernel's counters: host bytes map onto member bytes exactly.
    # Reads of RAID 0 and mirrors read each byte once; writes write each byte once per copy.
    # Mixed sizes, random and sequential IOs, some spanning stripe units.
    wl = Workload(read_fraction=0.5, random_fraction=0.5, io_size_mix=((4 * KiB, 1.0), (24 * KiB, 1.0), (256 * KiB, 0.5)),
                  queue_depth=8)
    r = arr.simulate(spec_for(layout, width, wl, duration_s=0.2))
    c = r.counters
    assert r.host_ios > 1000
    assert c[arr._C_MEMBER_READ_BYTES] == c[arr._C_HOST_READ_BYTES]
    assert c[arr._C_MEMBER_WRITE_BYTES] == copies * c[arr._C_HOST_WRITE_BYTES]


@pytest.mark.parametrize(("layout", "width", "failed"), [("raid5", 5, 1), ("raid6", 6, 2), ("raid10", 4, 1)])
def test_no_member_io_reaches_a_failed_drive(layout: str, width: int, failed: int) -> None:
    # In degraded mode (no rebuild) the failed members (the first of group 0)
    # get no member IO at all: zero busy time, while every survivor works.
    wl = Workload(read_fraction=0.5, random_fraction=0.5, io_size_mix=((4 * KiB, 1.0), (64 * KiB, 1.0)), queue_depth=8)
    r = arr.simulate(spec_for(layout, width, wl, duration_s=0.2, failed_drives=failed))
    assert np.all(r.drive_busy_s[:failed] == 0.0)
    assert np.all(r.drive_busy_s[failed:] > 0.0)
