"""Durability worked examples (engine/arrayplan_engine/reliability.py), each with its arithmetic.

Notation: G drives per group, t failures tolerated, lambda = 1/MTTF, mu = 1/MTTR, h the
probability that a rebuild with no redundancy left hits an unrecoverable read error.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from arrayplan_engine import reliability as r
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import YEAR_HOURS

SURVIVAL_CSV = Path(__file__).resolve().parents[1] / "data" / "reliability" / "survival.csv"  # vendored, tests/data/README.md


def _spec(g: int, t: int, mttf: float, mttr: float, **kw: object) -> r.GroupSpec:
    return r.GroupSpec(group_width=g, failures_tolerated=t, mttf_hours=mttf, mttr_hours=mttr, **kw)  # type: ignore[arg-type]


def _birth_death_mttdl(g: int, t: int, mttf: float, mttr: float, parallel: bool = False) -> float:
    """Independent check of the fundamental matrix: T_i, the mean time from i failed to i+1 failed,
    obeys T_0 = 1/(G lambda), T_i = (1 + mu_i T_{i-1}) / ((G-i) lambda); MTTDL = sum T_i (positive
    terms only, so exact to rounding)."""
    lam, mu = 1.0 / mttf, 1.0 / mttr
    total, prev = 0.0, 0.0
    for i in range(t + 1):
        mu_i = (i * mu if parallel else mu) if i else 0.0
        prev = (1.0 + mu_i * prev) / ((g - i) * lam)
        total += prev
    return total


# -- classic closed forms vs the exact chain ----------------------------------------------------------

def test_raid5_closed_form_and_markov() -> None:
    # RAID 5, G = 8, MTTF = 1e6 h, MTTR = 24 h.
    # Closed form: MTTF^2 / (G (G-1) MTTR) = 1e12 / (8 * 7 * 24) = 1e12 / 1344 = 744 047 619 h.
    # Exact (two transient states): ((2G-1) lambda + mu) / (G (G-1) lambda^2)
    #   = (15e-6 + 1/24) / 56e-12 = 744 315 476 h; they differ by (2G-1) MTTR / MTTF = 3.6e-4.
    spec = _spec(8, 1, 1e6, 24.0)
    assert r.closed_form_mttdl_hours(spec) == pytest.approx(744_047_619.05, rel=1e-10)
    assert r.markov_mttdl(spec).mttdl_hours == pytest.approx(744_315_476.19, rel=1e-10)
    assert r.closed_form_mttdl_hours(spec) / r.markov_mttdl(spec).mttdl_hours - 1 == pytest.approx(-15 * 24 / 1e6, rel=0.01)
    # The array form, N = 24 drives in 3 groups: MTTF^2 / (N (G-1) MTTR) = 1e12 / (24 * 7 * 24)
    # = 248 015 873 h, which is v1's mttdl_hours (the planner's) too.
    assert r.mttdl_hours(group_width=8, failures_tolerated=1, group_count=3, mttf_hours=1e6, mttr_hours=24.0) == \
        pytest.approx(1e12 / 4032, rel=1e-12)
    a = r.array_reliability(make_layout("raid5", 8), 24, annual_failure_rate=YEAR_HOURS / 1e6, repair_hours=24.0,
                            method="closed-form")
    assert a.group_count == 3 and a.mttdl_hours == pytest.approx(1e12 / 4032, rel=1e-12)


def test_raid6_closed_form_and_markov() -> None:
    # RAID 6, G = 12, MTTF = 1e6 h, MTTR = 24 h, one repair at a time.
    # Closed form: MTTF^3 / (G (G-1) (G-2) MTTR^2) = 1e18 / (12 * 11 * 10 * 576) = 1e18 / 760 320
    #   = 1.315 235 690e12 h. The chain agrees within O(G MTTR / MTTF) = 12 * 24 / 1e6 ~ 3e-4: 5.3e-4.
    spec = _spec(12, 2, 1e6, 24.0)
    closed = r.closed_form_mttdl_hours(spec)
    exact = r.markov_mttdl(spec).mttdl_hours
    assert closed == pytest.approx(1e18 / 760_320, rel=1e-12)
    assert closed == pytest.approx(1.315_235_690e12, rel=1e-9)
    assert abs(closed / exact - 1) < 1e-3
    assert exact == pytest.approx(_birth_death_mttdl(12, 2, 1e6, 24.0), rel=1e-13)
    # Parallel rebuilds (rate 2/MTTR with two failed) double it: the closed form gains t! = 2.
    par = _spec(12, 2, 1e6, 24.0, repair_policy="parallel")
    assert r.closed_form_mttdl_hours(par) == pytest.approx(2 * closed, rel=1e-12)
    assert r.markov_mttdl(par).mttdl_hours == pytest.approx(2 * exact, rel=1e-3)


@pytest.mark.parametrize(("g", "t", "mttf", "mttr", "parallel"), [
    (20, 3, 1e6, 156.0, False),  # Backblaze-like 17+3, 6.5-day rebuilds
    (20, 3, 2e6, 1.0, True),  # MTTDL 8e20 h: plain LU loses 12% here
    (64, 8, 1e7, 0.5, False),  # MTTDL 2.6e49 h: plain LU loses every digit
    (5, 4, 1e7, 0.1, True),  # 5-way mirror, 2e38 h
])
def test_fundamental_matrix_keeps_precision(g: int, t: int, mttf: float, mttr: float, parallel: bool) -> None:
    spec = _spec(g, t, mttf, mttr, repair_policy="parallel" if parallel else "single")
    assert r.markov_mttdl(spec).mttdl_hours == pytest.approx(_birth_death_mttdl(g, t, mttf, mttr, parallel), rel=1e-12)
    assert r.markov_mttdl(spec).mttdl_hours == pytest.approx(r.closed_form_mttdl_hours(spec), rel=1e-2)


def test_time_in_states_sums_to_mttdl() -> None:
    sol = r.markov_mttdl(_spec(8, 1, 1e6, 24.0))
    assert sum(sol.time_in_state_hours) == pytest.approx(sol.mttdl_hours, rel=1e-15)
    # Time with one drive down / time healthy = G lambda / mu (quasi-stationary) = 8 * 24 / 1e6.
    assert sol.time_in_state_hours[1] / sol.time_in_state_hours[0] == pytest.approx(8 * 24 / 1e6, rel=1e-3)


# -- transient loss probability --------------------------------------------------------------------------

def test_raid0_loss_probability_is_exact() -> None:
    # RAID 0 of 4: the first failure loses data; P(T) = 1 - exp(-4 T / MTTF) = 1 - exp(-4 * 8760 / 1e6).
    spec = _spec(4, 0, 1e6, 24.0)
    assert r.markov_loss_probability(spec, YEAR_HOURS) == pytest.approx(-math.expm1(-4 * 8760 / 1e6), rel=1e-12)
    assert r.markov_mttdl(spec).mttdl_hours == pytest.approx(250_000.0, rel=1e-14)


@pytest.mark.parametrize(("g", "t", "mttr"), [(8, 1, 24.0), (12, 2, 24.0), (20, 3, 156.0), (64, 8, 0.5)])
def test_transient_matches_exponential_when_repairs_are_fast(g: int, t: int, mttr: float) -> None:
    # With MTTR << MTTF the time to loss is nearly exponential, but the chain starts with every
    # drive healthy and needs ~one repair time per stage to fill its degraded states (p_1 ramps as
    # 1 - e^-mu s, p_2 one stage later, ...), so P(T) ~ (T - t MTTR) / MTTDL for T << MTTDL.
    # RAID 6 (12), MTTR 24 h, 5 years: the exact transient is 3.3248e-8, 1 - exp(-T / MTTDL) is
    # 3.3284e-8, and 2 * 24 / 43 800 = 1.10e-3 is the gap. The 64-wide group's P is 1.7e-45.
    spec = _spec(g, t, 1e6 if g < 64 else 1e7, mttr)
    life = 5 * YEAR_HOURS
    exact = r.markov_loss_probability(spec, life)
    approx = r.loss_probability(r.markov_mttdl(spec).mttdl_hours, life)
    assert exact == pytest.approx(approx * (1 - t * mttr / life), rel=2e-4)
    if g == 12:
        assert exact == pytest.approx(3.3248e-8, rel=1e-4)


# -- unrecoverable read errors ---------------------------------------------------------------------------

def test_ure_raid5_of_16tb_nearline_disks() -> None:
    # RAID 5 of 8 x 16 TB (WDC WUH721816ALE6L4 in survival.csv: 102 failures in 11 616 742 drive-days,
    # AFR = 102 / (11 616 742 / 365) = 0.32%/yr, MTTF = 11 616 742 * 24 / 102 = 2 733 351 h), UBER 1e-14.
    # Rebuild: 16e12 B at 100 MB/s = 160 000 s = 44.4 h; it reads the k = 7 survivors:
    # 7 * 16e12 B * 8 = 8.96e14 bits, 8.96 expected errors, h = 1 - (1 - 1e-14)^8.96e14 = 1 - e^-8.96
    # = 0.999 872.
    afr = r.annual_failure_rate_from_drive_days(failure_count=102, drive_days=11_616_742)
    mttf = r.mttf_hours_from_failure_rate(afr)
    assert mttf == pytest.approx(11_616_742 * 24 / 102, rel=1e-12)
    mttr = r.rebuild_hours(drive_capacity_bytes=16e12, rebuild_rate_bytes_per_second=100e6)
    assert mttr == pytest.approx(44.444, abs=1e-3)
    spec = _spec(8, 1, mttf, mttr, uber=1e-14, drive_capacity_bytes=16e12)
    assert spec.rebuild_read_bytes == 7 * 16e12
    assert spec.rebuild_failure_probability == pytest.approx(1 - math.exp(-8.96), rel=1e-9)
    assert spec.rebuild_failure_probability == pytest.approx(0.999_872, abs=1e-6)
    # MTTDL: 1/MTTDL = G lambda ((G-1) lambda / mu + h) = 8 / 2 733 351 * (7 * 44.4 / 2 733 351 + 0.999 872)
    #   -> 341 674 h (39 years): nearly every first failure loses data. Without UREs: MTTF^2 / (8 * 7 * 44.4)
    #   = 3.00e9 h, 8 800 times longer.
    assert r.closed_form_mttdl_hours(spec) == pytest.approx(341_674, rel=1e-5)
    assert r.markov_mttdl(spec).mttdl_hours == pytest.approx(r.closed_form_mttdl_hours(spec), rel=1e-3)
    no_ure = _spec(8, 1, mttf, mttr)
    assert r.closed_form_mttdl_hours(no_ure) == pytest.approx(mttf**2 / (8 * 7 * mttr), rel=1e-12)
    assert r.markov_mttdl(no_ure).mttdl_hours / r.markov_mttdl(spec).mttdl_hours == pytest.approx(8_785, rel=1e-3)
    # Over 5 years: 1 - exp(-43 800 / 341 757) = 12.0%.
    assert r.markov_loss_probability(spec, 5 * YEAR_HOURS) == pytest.approx(0.1202, abs=2e-4)


def test_ure_probability_small_and_zero() -> None:
    # 1 TB at 1e-15: 8e12 bits -> 1 - e^-0.008 = 0.007 968.
    assert r.ure_probability(uber=1e-15, read_bytes=1e12) == pytest.approx(-math.expm1(-0.008), rel=1e-9)
    assert r.ure_probability(uber=0.0, read_bytes=1e12) == 0.0
    # A mirror's last-level rebuild reads one survivor; RAID 0 has no rebuild at all.
    assert _spec(2, 1, 1e6, 10.0, uber=1e-15, drive_capacity_bytes=1e12).rebuild_read_bytes == 1e12
    assert _spec(4, 0, 1e6, 10.0, uber=1e-15, drive_capacity_bytes=1e12).rebuild_failure_probability == 0.0


# -- Monte Carlo vs Markov ---------------------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["single", "parallel"])
@pytest.mark.parametrize("uber", [0.0, 5e-13])
def test_monte_carlo_agrees_with_markov(policy: str, uber: float) -> None:
    # Fast failures so groups die within a few hundred hours: RAID 6 of 6, MTTF 100 h, MTTR 5 h
    # (MTTR / MTTF = 5%, far from the closed forms' regime, which is the point). With uber 5e-13 and
    # 1e11 B drives, a last-level rebuild reads 4e11 B = 3.2e12 bits: h = 1 - e^-1.6 = 0.798.
    spec = _spec(6, 2, 100.0, 5.0, repair_policy=policy, uber=uber, drive_capacity_bytes=1e11)
    exact = r.markov_mttdl(spec).mttdl_hours
    mc = r.monte_carlo_group(spec, trials=20_000, rng=np.random.default_rng(np.random.SeedSequence(7)))
    assert mc.loss_count == 20_000
    assert abs(mc.mttdl_hours - exact) < 4 * mc.mttdl_stderr_hours
    assert mc.mttdl_stderr_hours < 0.01 * exact
    # Loss within 100 h: the exact transient vs the simulated share.
    horizon = 100.0
    mc_h = r.monte_carlo_group(spec, trials=20_000, horizon_hours=horizon, rng=np.random.default_rng(8))
    p = r.markov_loss_probability(spec, horizon)
    assert abs(mc_h.loss_fraction(horizon) - p) < 4 * mc_h.loss_fraction_stderr(horizon)


def test_monte_carlo_is_reproducible() -> None:
    spec = _spec(5, 1, 50.0, 2.0)

    def run(seed: int) -> np.ndarray:
        rng = np.random.default_rng(np.random.SeedSequence(seed))
        return r.monte_carlo_group(spec, trials=500, horizon_hours=200.0, rng=rng).loss_times_hours

    assert np.array_equal(run(3), run(3))
    assert not np.array_equal(run(3), run(4))
    a = r.array_reliability(make_layout("raid5", 5), 10, annual_failure_rate=YEAR_HOURS / 50.0, repair_hours=2.0,
                            service_life_years=0.02, method="monte-carlo", trials=1_000, seed=11)
    b = r.array_reliability(make_layout("raid5", 5), 10, annual_failure_rate=YEAR_HOURS / 50.0, repair_hours=2.0,
                            service_life_years=0.02, method="monte-carlo", trials=1_000, seed=11)
    assert a == b


def test_monte_carlo_refuses_runs_to_loss_with_real_drives() -> None:
    # RAID 6 with MTTF 1e6 h: ~1e12 h to loss, ~1e8 events per trial. Simulate a horizon instead.
    with pytest.raises(InvalidInputError) as e:
        r.monte_carlo_group(_spec(12, 2, 1e6, 24.0), trials=1_000, rng=np.random.default_rng(0))
    assert e.value.violations[0].field == "trials"


# -- Backblaze's binomial model ------------------------------------------------------------------------------

def test_backblaze_binomial_reproduces_their_published_table() -> None:
    # github.com/Backblaze/erasure-coding-durability README.md: `python durability.py 4 2 0.10 1`
    # (4 data + 2 parity shards, annual shard failure rate 0.10, 1-day replacement) prints, per
    # failure threshold, the cumulative period probability, the annual loss rate and the durability.
    # By hand for threshold 3: F = 0.10 / 365 = 2.7397e-4, P = 1 - e^-F = 2.7394e-4,
    # q ~ C(6,3) P^3 (1-P)^3 = 20 * 2.0556e-11 * 0.99918 = 4.108e-10 (+ 8e-14 for 4+ failures),
    # annual = 1 - (1 - q)^365 ~ 365 q = 1.500e-07: 6 nines.
    published = {  # failures in one period that lose data: (cumulative_prob, annual_loss_rate, durability)
        6: ("4.226e-22", "1.542e-19", "1.000000000000000"),
        5: ("9.253e-18", "3.377e-15", "0.999999999999997"),
        4: ("8.443e-14", "3.082e-11", "0.999999999969183"),
        3: ("4.109e-10", "1.500e-07", "0.999999850032187"),
        2: ("1.125e-06", "4.105e-04", "0.999589537729299"),
        1: ("1.642e-03", "4.512e-01", None),  # 0.548811636094018: their 1 - (1-q)^n rounds differently at 1e-14
    }
    for threshold, (cumulative, annual, durability) in published.items():
        b = r.backblaze_binomial(group_width=6, failures_tolerated=threshold - 1, annual_failure_rate=0.10, repair_hours=24.0)
        assert b.periods_per_year == 365.0
        assert f"{b.period_loss_probability:.3e}" == cumulative
        assert f"{b.annual_loss_probability:.3e}" == annual
        if durability is not None:
            assert f"{1 - b.annual_loss_probability:.15f}" == durability
    b = r.backblaze_binomial(group_width=6, failures_tolerated=2, annual_failure_rate=0.10, repair_hours=24.0)
    assert b.period_failure_probability == pytest.approx(-math.expm1(-0.10 / 365), rel=1e-15)
    assert b.mttdl_hours == pytest.approx(24.0 / b.period_loss_probability, rel=1e-15)


def test_binomial_ure_extension_and_array() -> None:
    # RAID 5 of 4, AFR 0.05, 48 h repairs, h = 0.5: P = 1 - exp(-0.05 * 48 / 8760) = 2.7397e-4 (to 1e-4),
    # q = P(>= 2 of 4 fail) + 0.5 * P(exactly 1) ~ 6 P^2 + 0.5 * 4 P (1-P)^3.
    p = -math.expm1(-0.05 * 48 / YEAR_HOURS)
    base = sum(math.comb(4, i) * p**i * (1 - p) ** (4 - i) for i in range(2, 5))
    with_ure = base + 0.5 * 4 * p * (1 - p) ** 3
    b = r.backblaze_binomial(group_width=4, failures_tolerated=1, annual_failure_rate=0.05, repair_hours=48.0,
                             rebuild_failure_probability=0.5)
    assert b.period_loss_probability == pytest.approx(with_ure, rel=1e-13)
    assert b.annual_loss_probability == pytest.approx(1 - (1 - with_ure) ** (YEAR_HOURS / 48), rel=1e-9)
    # An array of 3 such groups over 5 years: 1 - (1 - annual)^(3 * 5).
    a = r.array_reliability(make_layout("raid5", 4), 12, annual_failure_rate=0.05, repair_hours=48.0, method="binomial")
    g = r.backblaze_binomial(group_width=4, failures_tolerated=1, annual_failure_rate=0.05, repair_hours=48.0)
    assert a.service_life_loss_probability == pytest.approx(1 - (1 - g.annual_loss_probability) ** 15, rel=1e-9)


# -- the array --------------------------------------------------------------------------------------------------

def test_raid10_is_a_set_of_mirror_pairs() -> None:
    # 8 drives of RAID 10 = 4 two-way mirrors; a pair's MTTDL = MTTF^2 / (2 * 1 * MTTR);
    # the array's = that / 4 = (876 000)^2 / (2 * 12) / 4 (AFR 1%: MTTF = 8760 / 0.01 = 876 000 h).
    groups = r.redundancy_groups(make_layout("raid10", 8), 8)
    assert (groups.group_width, groups.failures_tolerated, groups.group_count) == (2, 1, 4)
    a = r.array_reliability(make_layout("raid10", 8), 8, annual_failure_rate=0.01, repair_hours=12.0, method="closed-form")
    assert a.mttdl_hours == pytest.approx(876_000.0**2 / 24 / 4, rel=1e-12)
    m = r.array_reliability(make_layout("raid10", 8), 8, annual_failure_rate=0.01, repair_hours=12.0, method="markov")
    assert m.mttdl_hours == pytest.approx(a.mttdl_hours, rel=1e-3)
    # Array loss over the life from the group's: 1 - (1 - p)^4.
    p = r.group_loss_probability(_spec(2, 1, 876_000.0, 12.0), 5 * YEAR_HOURS)
    assert m.service_life_loss_probability == pytest.approx(1 - (1 - p) ** 4, rel=1e-12)
    assert r.array_loss_probability(make_layout("raid10", 8), 8, annual_failure_rate=0.01, repair_hours=12.0) == \
        m.service_life_loss_probability


def test_methods_agree_on_a_realistic_raid6() -> None:
    # 24 drives, RAID 6 (12), AFR 1%, 24 h rebuilds. Markov and closed form agree within 1e-3.
    # Backblaze's binomial loses data only when t+1 failures land in the same fixed R-long window:
    # C(G, t+1) (lambda R)^(t+1) per window, R^t G (G-1) ... (G-t) lambda^(t+1) / (t+1)! per hour,
    # while the chain (one crew) loses data at G (G-1) ... (G-t) lambda^(t+1) R^t per hour: the
    # binomial figure is (t+1)! = 6 times lower here (docs/reliability.md).
    layout = make_layout("raid6", 12)
    res = {m: r.array_reliability(layout, 24, annual_failure_rate=0.01, repair_hours=24.0, method=m)
           for m in ("markov", "closed-form", "binomial")}
    assert res["closed-form"].mttdl_hours == pytest.approx(res["markov"].mttdl_hours, rel=1e-3)
    assert res["closed-form"].annual_loss_probability == pytest.approx(res["markov"].annual_loss_probability, rel=1e-2)
    assert res["binomial"].annual_loss_probability / res["markov"].annual_loss_probability == pytest.approx(1 / 6, rel=0.02)


# -- Backblaze data ---------------------------------------------------------------------------------------------

def test_afr_from_survival_csv() -> None:
    with SURVIVAL_CSV.open(newline="") as f:
        rows = {row["model"]: row for row in csv.DictReader(f)}
    assert len(rows) == 81

    def afr(model: str) -> float:
        row = rows[model]
        return r.annual_failure_rate_from_drive_days(failure_count=int(row["failed"]), drive_days=float(row["drive_days"]))

    # st4000dm000: 5770 failures / (81 347 421 drive-days / 365 = 222 869.6 drive-years) = 2.589%.
    assert afr("st4000dm000") == pytest.approx(5770 / (81_347_421 / 365), rel=1e-15)
    assert afr("st4000dm000") == pytest.approx(0.025_890, abs=1e-6)
    # wdc wuh721816ale6l4: 102 / (11 616 742 / 365 = 31 826.7) = 0.3205%.
    assert afr("wdc wuh721816ale6l4") == pytest.approx(0.003_205, abs=1e-6)
    # Models with at least a million drive-days (30 of the 81): from 0.32% to st3000dm001's 25.3%.
    big = {m: afr(m) for m, row in rows.items() if float(row["drive_days"]) >= 1e6}
    assert len(big) == 30
    assert min(big, key=big.__getitem__) == "wdc wuh721816ale6l4"
    assert max(big, key=big.__getitem__) == "st3000dm001" and big["st3000dm001"] == pytest.approx(0.253, abs=5e-4)
    # A small sample can say anything: st2000dl003, 8 failures in 1 278 drive-days, is 228% a year.
    assert afr("st2000dl003") == pytest.approx(8 / (1278 / 365), rel=1e-15)


# -- helpers and v1 -----------------------------------------------------------------------------------------------

def test_rebuild_hours() -> None:
    # 16 TB at 100 MB/s: 16e12 / 1e8 = 160 000 s = 44.44 h; plus a 24-h wait for the replacement.
    assert r.rebuild_hours(drive_capacity_bytes=16e12, rebuild_rate_bytes_per_second=100e6, replacement_delay_hours=24.0) == \
        pytest.approx(68.444, abs=1e-3)


def test_v1_functions_unchanged() -> None:
    assert r.mttf_hours_from_afr(0.01) == pytest.approx(8760 / -math.log(0.99), rel=1e-14)
    assert r.loss_probability(1e6, 8760) == pytest.approx(-math.expm1(-0.00876), rel=1e-14)
    assert r.loss_probability(0.0, 1.0) == 1.0
    assert r.mttdl_hours(group_width=12, failures_tolerated=2, group_count=0, mttf_hours=1e6, mttr_hours=24) == 0.0
    with pytest.raises(ValueError):
        r.mttf_hours_from_afr(1.5)


# -- bad input names its field ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "field"), [
    ({"annual_failure_rate": -0.1}, "annual_failure_rate"),
    ({"annual_failure_rate": float("nan")}, "annual_failure_rate"),
    ({"repair_hours": 0.0}, "repair_hours"),
    ({"repair_hours": 10_000.0}, "repair_hours"),
    ({"uber": 1e-3, "drive_capacity_bytes": 1e12}, "uber"),
    ({"uber": 1e-15}, "drive_capacity_bytes"),
    ({"service_life_years": 0.0}, "service_life_years"),
    ({"method": "weibull"}, "method"),
    ({"repair_policy": "lazy"}, "repair_policy"),
    ({"method": "monte-carlo", "trials": 10}, "trials"),
    ({"drive_count": 5}, "drive_count"),
])
def test_array_reliability_bad_input(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"annual_failure_rate": 0.01, "repair_hours": 24.0}
    drive_count = kwargs.pop("drive_count", 12)
    args.update(kwargs)
    with pytest.raises(InvalidInputError) as e:
        r.array_reliability(make_layout("raid6", 12), drive_count, **args)  # type: ignore[arg-type]
    assert field in [v.field for v in e.value.violations]
    assert any("got" in v.reason or "must" in v.reason for v in e.value.violations)


def test_every_violation_is_reported_at_once() -> None:
    with pytest.raises(InvalidInputError) as e:
        r.array_reliability(make_layout("raid5", 8), 8, annual_failure_rate=0.0, repair_hours=-1.0, service_life_years=-2.0)
    assert {v.field for v in e.value.violations} == {"annual_failure_rate", "repair_hours", "service_life_years"}


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"failures_tolerated": 8}, "failures_tolerated"),
    ({"group_width": 0}, "group_width"),
    ({"mttf_hours": 0.0}, "mttf_hours"),
    ({"mttr_hours": float("inf")}, "mttr_hours"),
    ({"uber": -1.0}, "uber"),
    ({"repair_policy": "lazy"}, "repair_policy"),
])
def test_group_spec_bad_input(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"group_width": 8, "failures_tolerated": 1, "mttf_hours": 1e6, "mttr_hours": 24.0}
    args.update(kwargs)
    with pytest.raises(InvalidInputError) as e:
        r.GroupSpec(**args)  # type: ignore[arg-type]
    assert field in [v.field for v in e.value.violations]


def test_helpers_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="rebuild_rate_bytes_per_second"):
        r.rebuild_hours(drive_capacity_bytes=1e12, rebuild_rate_bytes_per_second=0.0)
    with pytest.raises(InvalidInputError, match="drive_days"):
        r.annual_failure_rate_from_drive_days(failure_count=3, drive_days=0.0)
    with pytest.raises(InvalidInputError, match="failures_tolerated"):
        r.backblaze_binomial(group_width=6, failures_tolerated=6, annual_failure_rate=0.1, repair_hours=24.0)
    with pytest.raises(InvalidInputError, match="period_hours"):
        r.markov_loss_probability(_spec(8, 1, 1e6, 24.0), -1.0)
    with pytest.raises(InvalidInputError, match="rng"):
        r.monte_carlo_group(_spec(8, 1, 10.0, 1.0), trials=10, rng=0)  # type: ignore[arg-type]
