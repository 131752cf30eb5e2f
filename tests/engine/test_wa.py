"""Analytic write amplification (engine/arrayplan_engine/wa.py): Lambert W0, Desnoyers' LRW/FIFO
formula, the greedy correction and the hot/cold / Zipf class formula."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arrayplan_engine import wa
from arrayplan_engine.errors import InvalidInputError, UnknownNameError


def test_lambert_w0_solves_its_definition() -> None:
    x = np.concatenate([np.linspace(-1 / math.e, 0.0, 400), np.geomspace(1e-6, 1e6, 200)])
    w = wa.lambert_w0(x)
    # Definition w e^w = x; tolerance: 1e-12 relative (double precision after Halley's iteration).
    assert np.allclose(w * np.exp(w), x, rtol=1e-12, atol=1e-14)
    assert np.all(w >= -1.0)
    # Known values: W0(0) = 0, W0(-1/e) = -1, W0(e) = 1 (exact).
    assert wa.lambert_w0(0.0) == 0.0
    assert wa.lambert_w0(-1 / math.e) == pytest.approx(-1.0, abs=1e-7)
    assert wa.lambert_w0(math.e) == pytest.approx(1.0, rel=1e-13)


def test_lambert_w0_rejects_below_branch_point() -> None:
    with pytest.raises(InvalidInputError) as err:
        wa.lambert_w0(-0.5)
    assert "x" in str(err.value)


def test_lrw_formula_matches_its_fixed_point_and_published_value() -> None:
    for sf in (0.02, 0.05, 0.1, 0.25, 0.5):
        a = 1 / (1 - sf)
        u = 1 - 1 / wa.wa_lrw(sf)
        # Desnoyers 2012: the cleaned block's valid fraction solves u = exp(-alpha (1 - u)); 1e-10.
        assert u == pytest.approx(math.exp(-a * (1 - u)), abs=1e-10)
    # Xiang & Kurkoski 2012 (arXiv:1110.4245): over-provisioning (T-U)/U = 0.3 -> A = 2.36
    # (simulation 2.35). Same Lambert-W expression; tolerance 0.005 (their 2-decimal rounding).
    assert wa.wa_lrw(1 - 1 / 1.3) == pytest.approx(2.36, abs=0.005)


def test_greedy_correction_below_lrw_and_tends_to_it() -> None:
    for sf in (0.05, 0.2):
        lrw = wa.wa_lrw(sf)
        g64, g256, g_big = wa.wa_greedy(sf, 64), wa.wa_greedy(sf, 256), wa.wa_greedy(sf, 1 << 20)
        assert g64 < g256 < lrw  # greedy beats LRW, less so with bigger blocks (Desnoyers 2012)
        assert g_big == pytest.approx(lrw, rel=1e-4)  # k -> 1 as Np -> infinity
    assert wa.greedy_k(64) == 1 + 1 / 128


def test_hotcold_reduces_to_uniform_and_skew_raises_lrw_wa() -> None:
    # r = f is uniform traffic: the class formula must give the LRW value (1e-6, bisection).
    assert wa.wa_hotcold_lrw(0.1, 0.3, 0.3) == pytest.approx(wa.wa_lrw(0.1), rel=1e-6)
    # Under LRW, skew without hot/cold separation costs: 90/10 is worse than uniform.
    assert wa.wa_hotcold_lrw(0.1, 0.9, 0.1) > wa.wa_lrw(0.1)


def test_short_stroking_and_sequential() -> None:
    # A quarter of the space never written: sf' = 1 - 0.75 (1 - sf).
    assert wa.write_amplification(spare_factor=0.1, span_fraction=0.75, policy="fifo") == pytest.approx(wa.wa_lrw(1 - 0.75 * 0.9))
    assert wa.write_amplification(spare_factor=0.1, sequential=True) == 1.0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"spare_factor": -0.1}, "spare_factor"),
        ({"spare_factor": 1.2}, "spare_factor"),
        ({"spare_factor": 0.1, "pages_per_block": 0}, "pages_per_block"),
        ({"spare_factor": 0.1, "span_fraction": 0.0}, "span_fraction"),
    ],
)
def test_bad_inputs_name_the_field(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InvalidInputError) as err:
        wa.write_amplification(**kwargs)  # type: ignore[arg-type]
    assert err.value.violations[0].field == field


def test_unknown_policy() -> None:
    with pytest.raises(UnknownNameError) as err:
        wa.write_amplification(spare_factor=0.1, policy="random")
    assert err.value.violations[0].field == "policy"
    assert "greedy" in str(err.value)


def test_deprecated_spare_factor_keyword_is_the_same_quantity() -> None:
    # spare_factor (old name) and spare_fraction_of_raw are both (raw - user) / raw: same answer.
    new = wa.write_amplification(spare_fraction_of_raw=0.1, pages_per_block=64)
    assert wa.write_amplification(spare_factor=0.1, pages_per_block=64) == new == wa.wa_greedy(0.1, 64)
    with pytest.raises(InvalidInputError) as err:
        wa.write_amplification(spare_fraction_of_raw=0.1, spare_factor=0.2)
    assert err.value.violations[0].field == "spare_factor"
    with pytest.raises(InvalidInputError) as err:
        wa.write_amplification(pages_per_block=64)
    assert err.value.violations[0].field == "spare_fraction_of_raw"


def test_static_region_is_excluded_from_greedy_cleaning() -> None:
    # r = 1: the cold 1 - f of the space is never rewritten; its full blocks hold no spare, and the
    # hot region sees (T - U) / (T - U_cold) = sf / (sf + f (1 - sf)) (exact algebra, 1e-12).
    sf, f = 0.0687, 0.1
    sf_hot = wa.spare_fraction_of_raw_without_static(sf, 1 - f)
    assert sf_hot == pytest.approx(sf / (sf + f * (1 - sf)), rel=1e-12)
    assert wa.wa_greedy_hotcold(sf, 128, 1.0, f) == pytest.approx(wa.wa_greedy(sf_hot, 128), rel=1e-12)
    # `arrayplan ftl --spare-factor 0.0687 --pages-per-block 128 --policy greedy
    # --workload hotcold:1.0,0.1` measures 1.41; the FIFO class formula said 8.36.
    assert wa.write_amplification(spare_fraction_of_raw=sf, pages_per_block=128, policy="greedy",
                                  hot_write_fraction=1.0, hot_space_fraction=f) == pytest.approx(1.41, rel=0.02)
    # r = 0 is the mirror image: the hot set is static.
    assert wa.wa_greedy_hotcold(0.1, 64, 0.0, 0.2) == pytest.approx(wa.wa_greedy(wa.spare_fraction_of_raw_without_static(0.1, 0.2), 64))


def test_greedy_hotcold_lies_between_its_bounds() -> None:
    # segregated (uniform greedy) < lineage < model < mixed (LRW class formula).
    for r, f, sf in ((0.9, 0.05, 0.1), (0.7, 0.2, 0.3), (0.5, 0.1, 0.05), (0.99, 0.1, 0.1)):
        segregated = wa.wa_greedy(sf, 64)
        lineage = wa.wa_greedy_hotcold_lineage(sf, 64, r, f)
        mixed = wa.wa_hotcold_lrw(wa.greedy_spare_fraction_of_raw(sf, 64), r, f)
        assert segregated < lineage < wa.wa_greedy_hotcold(sf, 64, r, f) < mixed
    # The labels are arbitrary: 80 % of writes on 20 % of the space is 20 % on 80 % (1e-12).
    assert wa.wa_greedy_hotcold(0.1, 64, 0.2, 0.8) == pytest.approx(wa.wa_greedy_hotcold(0.1, 64, 0.8, 0.2), rel=1e-12)
    # Lineage model with r -> f is uniform traffic: the LRW fixed point at k alpha (1e-6, bisection).
    assert wa.wa_greedy_hotcold_lineage(0.1, 64, 0.4, 0.4 + 1e-9) == pytest.approx(wa.wa_greedy(0.1, 64), rel=1e-6)
    assert wa.wa_greedy_hotcold(0.1, 64, 0.3, 0.3) == pytest.approx(wa.wa_greedy(0.1, 64), rel=1e-12)  # r = f: uniform


# Corners and middle of the range: hot share r 0.5-1.0, hot space f 0.05-0.3, spare
# (fraction of raw) 0.05-0.3, 64-256 pages per block.
_GRID = [(r, f, sf, np_) for r in (0.5, 0.9, 1.0) for f in (0.05, 0.3) for sf in (0.05, 0.3) for np_ in (64, 256)] + [
    (0.7, 0.1, 0.1, 128), (0.7, 0.2, 0.2, 128), (0.8, 0.1, 0.2, 64), (0.6, 0.2, 0.1, 256), (1.0, 0.1, 0.1, 128),
    (1.0, 0.2, 0.2, 128), (0.95, 0.05, 0.2, 128),
]


def test_greedy_hotcold_model_matches_the_ftl_simulation() -> None:
    """Greedy hot/cold write amplification: model vs the FTL simulation (ftl.py), 10%.

    Model (wa.py ``wa_greedy_hotcold``; derivation in docs/ssd-model.md "Greedy hot/cold"): a
    region that is never written (r = 1) holds no spare and is never cleaned, so the hot region
    runs Desnoyers' greedy formula (SYSTOR 2012 / ACM TOS 2014: LRW at alpha' = (1 + 1/(2 Np))
    alpha) at sf_hot = sf / (sf + f (1 - sf)); for 0 < r < 1 greedy cleans every block at one
    victim valid fraction u, and the model is the geometric mean of the lineage model (each
    relocated block keeps its victim's hot/cold mix; sum_g u^g a_g = k alpha) and the mixed bound
    (Desnoyers' LRW class formula), both greedy-corrected. Measured over this grid: within 6.5%
    (r = 1: 2.5%).

    Each run keeps ~1024 blocks (the 2 reserved free blocks then cost < 1% of the spare; scale
    independence: tests/engine/test_ftl.py) so the 30 runs take a few seconds.
    """
    from arrayplan_engine import ftl

    for r, f, sf, np_ in _GRID:
        cfg = ftl.FtlConfig(user_pages=int(1024 * np_ * (1 - sf)), pages_per_block=np_, spare_fraction_of_raw=sf, policy="greedy")
        res = ftl.simulate(cfg, ftl.FtlWorkload(kind="hotcold", hot_write_fraction=r, hot_space_fraction=f), seed=1)
        assert res.steady, (r, f, sf, np_)
        model = wa.wa_greedy_hotcold(cfg.effective_spare_fraction_of_raw, np_, r, f)
        assert res.wa_model == pytest.approx(wa.wa_greedy_hotcold(sf, np_, r, f), rel=1e-12)
        assert abs(model - res.wa_measured) / res.wa_measured <= 0.10, (r, f, sf, np_, res.wa_measured, model)
