"""The fill target joins the capacity check: the array must hold the final year's data at no more
than ``constraints.max_fill_fraction`` of its usable capacity (default 0.8), the bound and the
evaluation apply it, the answer states it, and a bad value is refused naming the field and range."""

from __future__ import annotations

import math

import pytest

from arrayplan_engine import candidates, evaluation, plan_request, ranking
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.units import TB, KiB
from arrayplan_engine.workload import Workload

OLTP = Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1.0 * TB, io_size_mix=((8 * KiB, 1.0),),
                growth_per_year=0.1)


def _req(drive_count: int = 22, years: int = 1, **c: float) -> plan_request.PlanRequest:
    return plan_request.PlanRequest(
        workload=OLTP, service_life_years=years,
        constraints=plan_request.Constraints(usable_capacity_bytes=8 * TB, **c),
        candidate_space=plan_request.CandidateSpace(drive_models=("intel-dc-s3700-800gb",), layouts=("raid10",),
                                                    min_drive_count=drive_count, max_drive_count=drive_count))


def test_the_required_capacity_is_the_final_years_data_at_the_fill_target() -> None:
    """8 TB grown 10 %/year over 5 years is 8 x 1.1^4 = 11.71 TB of data; at the default 80 % fill
    the array needs 11.71 / 0.8 = 14.64 TB usable; at 100 % it needs the data alone."""
    req = _req(years=5)
    data = 8 * TB * 1.1**4
    assert plan_request.final_year_data_bytes(req) == pytest.approx(data, rel=1e-12)
    assert req.constraints.max_fill_fraction == plan_request.DEFAULT_MAX_FILL_FRACTION == 0.8
    assert plan_request.required_capacity_bytes(req) == pytest.approx(data / 0.8, rel=1e-12)
    assert plan_request.required_capacity_bytes(_req(years=5, max_fill_fraction=1.0)) == pytest.approx(data, rel=1e-12)
    assert plan_request.required_capacity_bytes(_req(years=5, max_fill_fraction=0.5)) == pytest.approx(2 * data, rel=1e-12)


def test_the_capacity_bound_and_check_apply_the_fill_target() -> None:
    """RAID 10 of 22 x 800 GB holds 8.8 TB: the 8 TB of data at 91 % full. With the default 80 %
    target it misses capacity (needs 10 TB) in the cheap bound and in the full evaluation, and the
    explanation says why in numbers; with a 95 % target it meets it."""
    tight = _req()
    cand = candidates.enumerate_candidates(tight)[0]
    assert cand.drive_count == 22
    bound = next(b for b in candidates.bound_checks(tight, cand) if b.bound == "capacity")
    assert bound.required == pytest.approx(10 * TB, rel=1e-12) and bound.bound_value == pytest.approx(8.8 * TB, rel=1e-3)
    e = evaluation.evaluate(tight, cand)
    check = next(k for k in e.checks if k.constraint == "usable_capacity")
    assert check.required == pytest.approx(10 * TB, rel=1e-12) and not check.met
    text = ranking.explain(tight, e, 1, tight.objective)
    assert "misses usable capacity (8.80 TB of 10.00 TB, 8.00 TB of final-year data at most 80% full; misses exactly (analytic))" in text

    loose = _req(max_fill_fraction=0.95)
    e_loose = evaluation.evaluate(loose, cand)
    check_loose = next(k for k in e_loose.checks if k.constraint == "usable_capacity")
    assert check_loose.required == pytest.approx(8 * TB / 0.95, rel=1e-12) and check_loose.met


def test_the_answer_states_the_fill_target() -> None:
    said = " ".join(ranking.stated_assumptions(_req(years=5)))
    assert "Fill target: the array holds the 11.7 TB of final-year data at most 80% full, so it needs 14.6 TB usable" in said
    assert "at most 90% full" in " ".join(ranking.stated_assumptions(_req(years=5, max_fill_fraction=0.9)))


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.01, math.nan, math.inf])
def test_a_fill_target_outside_zero_to_one_is_refused_by_name(bad: float) -> None:
    with pytest.raises(InvalidInputError) as exc:
        plan_request.validate_request(_req(max_fill_fraction=bad))
    (v,) = [v for v in exc.value.violations if v.field == "constraints.max_fill_fraction"]
    assert "(0, 1]" in v.reason


def test_a_fill_target_of_one_is_allowed() -> None:
    """1.0 (the array may be planned full) is inside (0, 1]: accepted, and the array needs the
    data alone (8 TB, one year, no growth)."""
    req = _req(max_fill_fraction=1.0)
    plan_request.validate_request(req)
    assert plan_request.required_capacity_bytes(req) == pytest.approx(8 * TB, rel=1e-12)
