"""The answer's order where the simulation cannot tell candidates apart (ranking.indifference_order):
candidates within each other's objective intervals are placed by a seed-independent key (the
analytic bound, then fewer drives, then the index), the rule is a selection that terminates with a
permutation even when "within each other's intervals" is not transitive, the placed candidate is
never one whose interval lies wholly above the best estimate's, and a candidate whose bound is
above the order's reach changes none of the first k places (the search's stop rule).

The evaluations are synthetic: the order reads only the candidate, the objective's point and its
interval, so the other figures are placeholders."""

from __future__ import annotations

import math

import numpy as np

from arrayplan_engine import ranking
from arrayplan_engine.candidates import Candidate
from arrayplan_engine.evaluation import Evaluation
from arrayplan_engine.interval import Interval
from arrayplan_engine.plan_request import Objective

TCO = Objective.TOTAL_COST_OF_OWNERSHIP


def _ev(index: int, point: float, low: float, high: float, drives: int = 24) -> Evaluation:
    cand = Candidate(index=index, drive_model="d", layout="raid6", group_width=8, drive_count=drives)
    return Evaluation(candidate=cand, drive_display_name="d", usable_capacity_bytes=1.0, predicted_iops=Interval(value=1.0),
                      member_ios_per_host_io=1.0, latency_p50_s=Interval(value=0.0), latency_at_percentile_s=Interval(value=0.0),
                      worst_second_latency_s=Interval(value=0.0),
                      endurance_years=1.0, life_used_fraction=0.0, purchase_cost_usd=0.0, power_cost_usd=0.0,
                      replacement_cost_usd=0.0, total_cost_usd=point, power_w=0.0, data_loss_probability=0.0, checks=(),
                      meets_constraints=True, binding_constraint="iops", headroom_fraction=0.0, performance_model="m",
                      total_cost_interval_usd=Interval(value=point, low=low, high=high))


def _order(evals: list[Evaluation], bounds: dict[int, float], k: int = 10) -> ranking.IndifferenceOrder:
    return ranking.indifference_order(evals, TCO, lambda c: bounds[c.index], k)


def _ids(o: ranking.IndifferenceOrder) -> list[int]:
    return [e.candidate.index for e in o.order]


def test_twins_within_each_others_intervals_come_out_in_the_key_order_whichever_estimate_is_lower() -> None:
    """The OLTP tie: two arrays of the same purchase, their cost intervals overlapping; the one with
    the lower key (bound, then drives, then index) is first whether the noise put its estimate
    above or below the other; a third whose interval lies wholly above stays third."""
    bounds = {0: 90.0, 1: 90.0, 2: 80.0}
    third = _ev(2, 200.0, 199.0, 201.0)
    for a, b in ((100.0, 101.0), (101.0, 100.0)):
        evals = [_ev(0, a, a - 5, a + 5), _ev(1, b, b - 5, b + 5), third]
        assert _ids(_order(evals, bounds)) == [0, 1, 2]
    # a lower bound wins over the index, fewer drives over the index at the same bound
    assert _ids(_order([_ev(0, 100.0, 95.0, 105.0), _ev(1, 101.0, 96.0, 106.0)], {0: 90.0, 1: 85.0})) == [1, 0]
    assert _ids(_order([_ev(0, 100.0, 95.0, 105.0), _ev(1, 101.0, 96.0, 106.0, drives=20)], {0: 90.0, 1: 90.0})) == [1, 0]
    # apart (the second interval starts above the first's high end): the point estimates decide
    assert _ids(_order([_ev(0, 110.0, 106.0, 114.0), _ev(1, 100.0, 95.0, 105.0)], {0: 50.0, 1: 90.0})) == [1, 0]


def test_a_low_end_below_the_bound_is_raised_to_it() -> None:
    """The true value is not below the analytic bound: a candidate whose raw interval reaches the
    best one's but whose bound lies above that interval is not a tie, so the estimates decide."""
    evals = [_ev(0, 100.0, 95.0, 105.0), _ev(1, 108.0, 99.0, 117.0)]
    assert _ids(_order(evals, {0: 90.0, 1: 80.0})) == [1, 0]  # bound 80 < 105: a tie, the lower bound first
    assert _ids(_order(evals, {0: 90.0, 1: 106.0})) == [0, 1]  # bound 106 > 105: apart


def test_a_chain_of_overlaps_is_not_transitive_and_the_selection_is_still_well_defined() -> None:
    """A reaches B, B reaches C, A does not reach C; the keys prefer C, then B, then A. A comparator
    "tie -> key, else estimate" would cycle (C < B < A < C); the selection places B (within A's
    interval, the lower key), then A (C does not reach it), then C."""
    evals = [_ev(0, 5.0, 0.0, 10.0), _ev(1, 13.0, 8.0, 18.0), _ev(2, 21.0, 16.0, 26.0)]
    bounds = {0: 0.0, 1: -10.0, 2: -20.0}
    assert _ids(_order(evals, bounds)) == [1, 0, 2]
    o = _order(evals, bounds, k=2)
    assert _ids(o) == [1, 0, 2] and o.reach == 10.0  # both picks were compared with A's interval
    assert math.isnan(_order(evals, bounds, k=4).reach)  # fewer evaluations than k: not decided


def test_random_intervals_place_a_permutation_each_pick_within_the_best_estimates_interval() -> None:
    """500 random sets of 2-12 overlapping intervals: the order is a permutation; each of the first
    k picks has an interval (low end raised to its bound) reaching the high end of the least
    estimate left; and adding a candidate whose bound is above the reach, with any interval above
    its bound, leaves the first k picks as they were (what makes the search's stop exact)."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        n = int(rng.integers(2, 13))
        k = int(rng.integers(1, n + 1))
        points = rng.uniform(0.0, 100.0, n)
        halves = rng.uniform(0.0, 15.0, n)
        bounds = {i: float(points[i] - rng.uniform(0.0, 30.0)) for i in range(n)}
        evals = [_ev(i, float(points[i]), float(points[i] - halves[i]), float(points[i] + halves[i]),
                     drives=int(rng.integers(4, 8))) for i in range(n)]
        o = _order(evals, bounds, k)
        assert sorted(_ids(o)) == list(range(n))
        left = list(evals)
        for pick in o.order[:k]:
            best = min(left, key=lambda e: (e.total_cost_usd, e.candidate.index))
            lo = max(pick.total_cost_interval_usd.low, bounds[pick.candidate.index])
            assert pick is best or lo <= best.total_cost_interval_usd.high
            left.remove(pick)
        late_bound = o.reach + float(rng.uniform(1e-6, 20.0))
        late_point = late_bound + float(rng.uniform(0.0, 20.0))
        late_half = float(rng.uniform(0.0, 40.0))
        late = _ev(n, late_point, late_point - late_half, late_point + late_half, drives=1)
        with_late = _order([*evals, late], {**bounds, n: late_bound}, k)
        assert _ids(with_late)[:k] == _ids(o)[:k]
