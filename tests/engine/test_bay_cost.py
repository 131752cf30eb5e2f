"""A drive bay is never free: a box's drives and hot spares pay their bays' enclosure in purchase,
power and cost of ownership (cost.py holds the one definition, with its sources)."""

from __future__ import annotations

import pytest

from arrayplan_engine import candidates, cost, evaluation, plan_request, recommend
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.units import TB, YEAR_HOURS, MiB
from arrayplan_engine.workload import Workload

HDDS = ("hdd-7k2-nearline-8tb", "wd-ultrastar-hc570-22tb", "wd-ultrastar-hc670-26tb")


def _archive(**space: float) -> plan_request.PlanRequest:
    """160 TB of archive (200 TB usable at the default 80 % fill), capacity-bound: large sequential
    writes at 100 IOPS (which the host-managed SMR 26 TB disk takes; a random write would rule it
    out), RAID 6 in groups of 4-16."""
    return plan_request.PlanRequest(
        workload=Workload(read_fraction=0.05, random_fraction=0.0, io_size_mix=((1 * MiB, 1.0),), queue_depth=8, target_iops=100),
        constraints=plan_request.Constraints(usable_capacity_bytes=160 * TB),
        objective=plan_request.Objective.PURCHASE_COST,
        candidate_space=plan_request.CandidateSpace(drive_models=HDDS, layouts=("raid6",), max_drive_count=48,
                                                    **space),
        service_life_years=1, max_recommendations=3, seed=3)


def test_the_default_bay_is_the_sourced_enclosure_share() -> None:
    # 5,950 USD for a bare 60-bay Storage Pod 6.0; (158 W - 12 x 8 W) / 12 bays of IBM's 4657-12G
    assert cost.ENCLOSURE_USD_PER_BAY == pytest.approx(99.1667, abs=1e-4)
    assert cost.ENCLOSURE_POWER_W_PER_BAY == pytest.approx(5.1667, abs=1e-4)
    assert cost.purchase_cost_usd(109.0, 30, usd_per_bay=100.0) == pytest.approx(30 * 209.0, abs=1e-9)
    assert cost.purchase_cost_usd(109.0, 30) == pytest.approx(30 * 109.0, abs=1e-9)  # the drives alone


def test_a_box_pays_a_bay_for_every_drive_and_spare() -> None:
    """Purchase, power and TCO of one candidate grow by exactly (drives + spares) bays, at the
    stated per-bay cost and power, over the same candidate with free bays."""
    free = _archive(bay_cost_usd=0.0, bay_power_w=0.0)
    paid = _archive(bay_cost_usd=150.0, bay_power_w=6.0)
    cand = next(c for c in candidates.enumerate_candidates(free) if c.drive_model == HDDS[0] and c.drive_count == 30)
    a, b = evaluation.evaluate(free, cand), evaluation.evaluate(paid, cand)
    bays = 30 + cost.hot_spare_count(30, drives_per_spare=free.drives_per_hot_spare)  # 30 drives + 2 spares
    assert bays == 32
    assert b.purchase_cost_usd - a.purchase_cost_usd == pytest.approx(bays * 150.0, rel=1e-12)
    assert b.power_w - a.power_w == pytest.approx(bays * 6.0, rel=1e-12)
    energy = bays * 6.0 / 1000 * YEAR_HOURS * 1 * free.electricity_usd_per_kwh
    assert b.total_cost_usd - a.total_cost_usd == pytest.approx(bays * 150.0 + energy, rel=1e-9)
    # the search's exact purchase bound carries the bays too
    assert candidates.objective_bounds(paid, cand).purchase_cost_usd == pytest.approx(b.purchase_cost_usd, rel=1e-12)


def test_a_paid_bay_moves_an_archive_to_fewer_larger_disks() -> None:
    """With free bays the 8 TB disk is the cheapest terabyte (109 USD / 8 TB = 13.6 USD/TB against
    450 / 22 = 20.5 and 480 / 26 = 18.5), so 200 TB usable takes 32 x 8 TB (two RAID 6 groups of
    16, 224 TB) for 32 + 2 spares x 109 = 3,706 USD. A 99.17 USD bay makes it (109 + 99.17) / 8 =
    26.0 USD/TB against (480 + 99.17) / 26 = 22.3: 10 x 26 TB (one RAID 6 group of 10, 208 TB),
    11 bays x 579.17 = 6,370.83 USD, beats 34 x 208.17 = 7,077.67 USD. (At 100 TB usable the
    8 TB disk stays: 16 of them in one group of 16 against 6 x 26 TB, whose parity and spare weigh
    more.)"""
    free = recommend.plan(_archive(bay_cost_usd=0.0, bay_power_w=0.0)).recommendations[0].evaluation
    paid = recommend.plan(_archive()).recommendations[0].evaluation
    assert free.candidate.drive_model == "hdd-7k2-nearline-8tb"
    assert paid.candidate.drive_model == "wd-ultrastar-hc670-26tb"
    assert (free.candidate.drive_count, paid.candidate.drive_count) == (32, 10)
    assert free.purchase_cost_usd == pytest.approx(34 * 109.0, rel=1e-12)
    assert paid.purchase_cost_usd == pytest.approx(11 * (480.0 + 5_950.0 / 60), rel=1e-12)
    assert paid.usable_capacity_bytes >= 200 * TB and free.usable_capacity_bytes >= 200 * TB


@pytest.mark.parametrize("field, value", [("bay_cost_usd", -1.0), ("bay_cost_usd", 1e6), ("bay_power_w", 5_000.0)])
def test_bad_bay_figures_name_the_field_and_range(field: str, value: float) -> None:
    with pytest.raises(InvalidInputError) as err:
        plan_request.validate_request(_archive(**{field: value}))
    v = next(v for v in err.value.violations if v.field == f"candidate_space.{field}")
    assert "[0, " in v.reason
