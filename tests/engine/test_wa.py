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
