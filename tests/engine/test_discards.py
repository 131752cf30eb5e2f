"""The array as built (docs/array-model.md, "The array as built"): how the members' free space is
kept sets the used state each year is simulated in. ``none``: no discards reach the members, so
once the array is initialised every LBA stays mapped (Linux md raid456 passes no discards unless
devices_handle_discard_safely is set, and then sets max_hw_discard_sectors to 0; a RAID 5 create
resyncs a whole member; hardware RAID initialisation writes every block) and every year runs at the
full-span steady state the vendors rate. ``passed``: fstrim through RAID 0/1/10 or a stack that
passes discards, the FTL holds only the data. ``auto`` (default): none for parity, passed for
RAID 0/1/10."""

from __future__ import annotations

import pytest

from arrayplan_engine import candidates, endurance, evaluation, plan_request, ranking, simulation
from arrayplan_engine.catalog import builtin_catalog
from arrayplan_engine.errors import InvalidInputError
from arrayplan_engine.layout import make_layout
from arrayplan_engine.units import TB, KiB
from arrayplan_engine.workload import Workload

P4320 = "intel-d5-p4320-7680gb"
OLTP = Workload(read_fraction=0.7, target_iops=20_000, daily_write_bytes=1.0 * TB, io_size_mix=((8 * KiB, 1.0),),
                growth_per_year=0.1)


def _req(layout: str, discards: str = "auto", width: int = 6) -> plan_request.PlanRequest:
    return plan_request.PlanRequest(
        workload=OLTP, service_life_years=2, discards=discards, simulated_seconds=0.5,
        constraints=plan_request.Constraints(usable_capacity_bytes=8 * TB),
        candidate_space=plan_request.CandidateSpace(drive_models=(P4320,), layouts=(layout,), group_widths=(width,),
                                                    min_drive_count=width, max_drive_count=width))


@pytest.mark.parametrize(("layout", "expected"), [("raid5", "none"), ("raid6", "none"), ("ec:4+2", "none"),
                                                  ("raid0", "passed"), ("raid1", "passed"), ("raid10", "passed")])
def test_auto_is_none_for_parity_and_passed_for_raid0_1_10(layout: str, expected: str) -> None:
    lay = make_layout(layout, 6 if layout != "raid1" else 2)
    assert endurance.effective_discards(lay) == expected
    assert endurance.effective_discards(lay, "none") == "none"
    assert endurance.effective_discards(lay, "passed") == "passed"


def test_without_discards_every_year_runs_with_the_span_mapped() -> None:
    """6 x P4320 in RAID 5 holding 8 TB of 38 TB usable (21 % full in year 1): with discards
    passed the year's FTL holds 21 % and its write amplification is near 1; without them every LBA
    is mapped and the year runs at the full-span write amplification, the figure the vendors'
    steady-state ratings are measured at, and the simulation's drives hold the whole span."""
    cand = candidates.enumerate_candidates(_req("raid5"))[0]
    d = builtin_catalog().get(P4320)
    full_wa = endurance._workload_wa(d, OLTP, fill_fraction=1.0, extra_spare_fraction=0.0)
    by = {}
    for disc in ("none", "passed"):
        req = _req("raid5", disc)
        wear = evaluation.service_life_wear_of(req, cand, d, evaluation.candidate_layout(cand))
        case = evaluation.candidate_year_case(req, cand, 1, wear=wear)
        by[disc] = (wear.years[0], case)
    none_y, none_case = by["none"]
    passed_y, passed_case = by["passed"]
    assert none_y.fill_fraction == passed_y.fill_fraction == pytest.approx(8 / (5 * 7.68), rel=1e-9)
    assert none_y.mapped_fraction == 1.0 and passed_y.mapped_fraction == passed_y.fill_fraction
    assert none_y.write_amplification == pytest.approx(full_wa, rel=1e-12)
    assert passed_y.write_amplification < 1.2 < none_y.write_amplification
    assert none_y.life_used_fraction > 2 * passed_y.life_used_fraction
    m_none, m_passed = none_case.spec.service_models[0], passed_case.spec.service_models[0]
    # (the service models are built at the fill rounded up to simulation.FILL_STEP: 0.21 -> 0.3)
    assert m_passed.span_pages == pytest.approx(simulation.fill_bucket_fraction(passed_y.fill_fraction) * m_none.span_pages,
                                                rel=1e-9)
    # auto is none for RAID 5: the same used state
    auto_wear = evaluation.service_life_wear_of(_req("raid5"), cand, d, evaluation.candidate_layout(cand))
    assert auto_wear.years[0].mapped_fraction == 1.0


def test_the_answer_says_which_applies_and_why() -> None:
    auto = " ".join(ranking.stated_assumptions(_req("raid5")))
    assert "discards auto" in auto and "devices_handle_discard_safely" in auto and "fstrim" in auto
    assert "discards none" in " ".join(ranking.stated_assumptions(_req("raid5", "none")))
    assert "discards passed" in " ".join(ranking.stated_assumptions(_req("raid10", "passed")))


def test_a_bad_value_is_refused_by_name() -> None:
    with pytest.raises(InvalidInputError) as exc:
        plan_request.validate_request(_req("raid5", "trim"))
    assert exc.value.violations[0].field == "discards"
    assert "auto, none, passed" in exc.value.violations[0].reason
