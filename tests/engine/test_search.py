"""The search (search.py): it simulates fewer candidates than --exhaustive and gives the same top
recommendations; every analytic bound it orders and stops by holds against the full evaluation;
the default space holds erasure codes, and stripe units for large IOs; the cost model behind the
Ray batches grows with the work it models.

The questions are the issue's three (an OLTP database, a 100 TB archive of 1 MiB IOs, a 200K-IOPS
database) over a shortlist of drives and a short simulated window, so both searches run in
seconds; make bench compares them over a shortlist of drives per question with the default layouts and counts
(bench/plan.py, plan_agreement_shortlist)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from arrayplan_engine import candidates, evaluation, ranking, recommend, search
from arrayplan_engine.layout import DEFAULT_STRIPE_UNIT_BYTES
from arrayplan_engine.plan_request import CandidateSpace, Constraints, Objective, PlanRequest
from arrayplan_engine.units import TB, KiB, MiB
from arrayplan_engine.workload import Workload

REL = 1e-9  # bounds computed by the same arithmetic as the evaluation: equal up to rounding


def _oltp(**kw: object) -> PlanRequest:
    return PlanRequest(workload=Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=((8 * KiB, 1.0),), queue_depth=32,
                                         target_iops=25_000),
                       constraints=Constraints(usable_capacity_bytes=8 * TB, latency_percentile=99.9, latency_target_s=0.005),
                       candidate_space=CandidateSpace(drive_models=("intel-dc-s3500-800gb", "intel-dc-s3700-800gb",
                                                                    "intel-d7-p5600-6400gb", "micron-7400-pro-7680gb"),
                                                      max_drive_count=24),
                       service_life_years=2, seed=1, max_recommendations=3, simulated_seconds=0.1, **kw)  # type: ignore[arg-type]


def _archive(**kw: object) -> PlanRequest:
    return PlanRequest(workload=Workload(read_fraction=0.05, random_fraction=0.05, io_size_mix=((1 * MiB, 1.0),), queue_depth=8,
                                         target_iops=300),
                       constraints=Constraints(usable_capacity_bytes=100 * TB),
                       candidate_space=CandidateSpace(drive_models=("hdd-7k2-nearline-8tb", "wd-ultrastar-hc570-22tb",
                                                                    "kioxia-cm6-r-30720gb"), max_drive_count=24),
                       service_life_years=2, seed=1, max_recommendations=3, simulated_seconds=0.5, **kw)  # type: ignore[arg-type]


def _db200k(**kw: object) -> PlanRequest:
    return PlanRequest(workload=Workload(read_fraction=0.7, random_fraction=1.0, io_size_mix=((8 * KiB, 1.0),), queue_depth=64,
                                         target_iops=200_000),
                       constraints=Constraints(usable_capacity_bytes=50 * TB, latency_percentile=99.0, latency_target_s=0.002),
                       candidate_space=CandidateSpace(drive_models=("intel-d7-p5600-6400gb", "micron-7400-pro-7680gb",
                                                                    "kioxia-cm6-r-30720gb"), max_drive_count=16),
                       service_life_years=2, seed=1, max_recommendations=3, simulated_seconds=0.05, **kw)  # type: ignore[arg-type]


QUESTIONS = {"oltp": _oltp, "archive": _archive, "db200k": _db200k}
_EXHAUSTIVE: dict[str, tuple[ranking.PlanOutcome, dict[int, evaluation.Evaluation]]] = {}


def _exhaustive_run(name: str) -> tuple[ranking.PlanOutcome, dict[int, evaluation.Evaluation]]:
    """recommend.plan(req, exhaustive=True)'s stages, keeping every evaluation for the bounds."""
    if name not in _EXHAUSTIVE:
        req = QUESTIONS[name]()
        cands = candidates.enumerate_candidates(req)
        pruning = candidates.prune_report(req, cands)
        found = search.search(req, pruning.kept, lambda cs, s: evaluation.evaluate_batch(req, list(cs)), exhaustive=True)
        out = ranking.rank(req, found.evaluations, candidates_total=len(cands), candidates_pruned=pruning.pruned,
                           pruning=pruning, exhaustive=True)
        _EXHAUSTIVE[name] = (out, {e.candidate.index: e for e in found.evaluations})
    return _EXHAUSTIVE[name]


def _exhaustive(name: str) -> ranking.PlanOutcome:
    return _exhaustive_run(name)[0]


def _top(out: ranking.PlanOutcome) -> list[tuple[candidates.Candidate, float]]:
    return [(r.evaluation.candidate, r.evaluation.total_cost_usd) for r in out.recommendations]


@pytest.mark.parametrize("name", list(QUESTIONS))
def test_fast_search_gives_exhaustive_top_recommendations_with_fewer_simulations(name: str) -> None:
    full = _exhaustive(name)
    fast = recommend.plan(QUESTIONS[name]())
    assert full.constraints_met, full.summary  # a question with an answer, so the search has something to stop on
    assert _top(fast) == _top(full)  # same candidates (index: same seed stream), same figures
    assert fast.candidates_evaluated < full.candidates_evaluated
    assert fast.candidates_not_simulated == full.candidates_evaluated - fast.candidates_evaluated
    assert recommend.plan(QUESTIONS[name](exhaustive=True)).candidates_evaluated == full.candidates_evaluated
    assert full.candidates_not_simulated == 0 and full.search_note == ""
    assert f"{fast.candidates_not_simulated:,} candidates not simulated" in fast.summary


@pytest.mark.parametrize("name", list(QUESTIONS))
def test_pareto_front_from_dominance_bounds_is_the_exhaustive_front(name: str) -> None:
    """Without the Pareto budget, the front of what the search simulated is the exhaustive front
    (the evaluations are the exhaustive run's: a candidate's figures depend on it alone)."""
    full, evals = _exhaustive_run(name)
    out, found = _search_from(name, QUESTIONS[name](), pareto_limit=10**9)
    assert found.pareto_unresolved == 0
    assert [r.evaluation.candidate.index for r in out.pareto_front] == [r.evaluation.candidate.index for r in full.pareto_front]
    assert _top(out) == _top(full)
    if name == "archive":  # no latency target: cost and durability bounds decide most of the front
        assert len(found.evaluations) < len(evals)


@pytest.mark.parametrize("name", list(QUESTIONS))
def test_bounds_hold_against_every_full_evaluation(name: str) -> None:
    req = QUESTIONS[name]()
    full, evals = _exhaustive_run(name)
    kept = candidates.prune_report(req, candidates.enumerate_candidates(req)).kept
    assert len(evals) == len(kept) and full.candidates_evaluated == len(kept)
    for c in kept:
        b, e = candidates.objective_bounds(req, c), evals[c.index]
        assert b.purchase_cost_usd == pytest.approx(e.purchase_cost_usd, rel=REL)
        assert b.total_cost_usd <= e.total_cost_usd * (1 + REL), c
        assert b.power_w <= e.power_w * (1 + REL), c
        assert b.headroom_fraction >= e.headroom_fraction - REL, (c, b.headroom_fraction, e.headroom_fraction)
        assert b.latency_headroom_fraction >= e.latency_headroom_fraction() - REL, c
        assert b.data_loss_probability == pytest.approx(e.data_loss_probability, rel=1e-9, abs=1e-300)
        assert b.array_loss_probability == pytest.approx(e.array_loss_probability, rel=1e-9, abs=1e-300)
        for objective in Objective:
            assert b.objective_lower_bound(objective) <= e.objective_value(objective) + REL * abs(e.objective_value(objective)) + REL


def _search_from(name: str, req: PlanRequest, **kw: object) -> tuple[ranking.PlanOutcome, search.SearchReport]:
    """The search over question ``name``'s kept candidates, its waves answered from the exhaustive
    run's evaluations (they do not depend on the objective), ranked for ``req``."""
    evals = _exhaustive_run(name)[1]
    cands = candidates.enumerate_candidates(req)
    pruning = candidates.prune_report(req, cands)
    found = search.search(req, pruning.kept, lambda cs, s: [evals[c.index] for c in cs], **kw)  # type: ignore[arg-type]
    out = ranking.rank(req, found.evaluations, candidates_total=len(cands), candidates_pruned=pruning.pruned, pruning=pruning,
                       exhaustive=found.exhaustive, candidates_not_simulated=found.not_simulated, search_note=found.note(req))
    return out, found


@pytest.mark.parametrize("objective", [Objective.PURCHASE_COST, Objective.POWER, Objective.HEADROOM])
@pytest.mark.parametrize("name", list(QUESTIONS))
def test_each_objective_gives_exhaustive_top(name: str, objective: Objective) -> None:
    req = dataclasses.replace(QUESTIONS[name](), objective=objective)
    full, _ = _search_from(name, req, exhaustive=True)
    fast, found = _search_from(name, req)
    assert _top(fast) == _top(full), objective
    assert [r.evaluation.objective_value(objective) for r in fast.recommendations] == \
           [r.evaluation.objective_value(objective) for r in full.recommendations]
    assert len(found.evaluations) <= len(_exhaustive_run(name)[1])


def test_nothing_meets_simulates_every_kept_candidate_for_the_nearest_misses() -> None:
    base = _oltp()
    req = dataclasses.replace(base, constraints=dataclasses.replace(base.constraints, latency_target_s=1e-6),
                              candidate_space=dataclasses.replace(base.candidate_space, drive_models=("intel-d7-p5600-6400gb",),
                                                                  max_drive_count=12))
    full = recommend.plan(req, exhaustive=True)
    fast = recommend.plan(req)
    assert not full.constraints_met and not fast.constraints_met
    assert fast.candidates_evaluated == full.candidates_evaluated > 0 and fast.candidates_not_simulated == 0
    assert [r.evaluation for r in fast.recommendations] == [r.evaluation for r in full.recommendations]


def test_known_evaluations_are_not_simulated_again() -> None:
    req = _archive()
    kept = candidates.prune_report(req, candidates.enumerate_candidates(req)).kept
    first = search.search(req, kept, lambda cs, s: evaluation.evaluate_batch(req, list(cs)))
    asked: list[int] = []

    def wave(cs: object, s: float) -> list[evaluation.Evaluation]:
        asked.extend(c.index for c in cs)  # type: ignore[attr-defined]
        return evaluation.evaluate_batch(req, list(cs))  # type: ignore[arg-type]

    again = search.search(req, kept, wave, known={e.candidate.index: e for e in first.evaluations})
    assert asked == [] and again.evaluations == first.evaluations


def test_waves_are_simulated_at_the_requests_precision() -> None:
    req = _archive()
    kept = candidates.prune_report(req, candidates.enumerate_candidates(req)).kept
    seen: set[float] = set()

    def wave(cs: object, s: float) -> list[evaluation.Evaluation]:
        seen.add(s)
        return evaluation.evaluate_batch(dataclasses.replace(req, simulated_seconds=s), list(cs))  # type: ignore[arg-type]

    search.search(req, kept, wave)
    assert seen == {req.simulated_seconds}


def test_default_space_has_erasure_codes_where_the_count_holds_a_stripe() -> None:
    req = dataclasses.replace(_oltp(), candidate_space=CandidateSpace(drive_models=("intel-d7-p5600-6400gb",), max_drive_count=20))
    cands = candidates.enumerate_candidates(req)
    ec = {(c.layout, c.drive_count) for c in cands if c.layout.startswith("ec:")}
    assert ec == {("ec:4+2", 6), ("ec:4+2", 12), ("ec:4+2", 18), ("ec:8+3", 11), ("ec:10+4", 14)}
    text = " ".join(ranking.stated_assumptions(req))
    assert "ec:4+2, ec:8+3, ec:10+4" in text and "raid10, raid5, raid6" in text


def test_stripe_units_are_searched_for_large_ios_only() -> None:
    small = candidates.enumerate_candidates(_oltp())
    assert {c.stripe_unit_bytes for c in small} == {DEFAULT_STRIPE_UNIT_BYTES}
    large = candidates.enumerate_candidates(_archive())
    assert {c.stripe_unit_bytes for c in large} == {64 * KiB, 256 * KiB, 1 * MiB}
    assert len(large) == 3 * len([c for c in large if c.stripe_unit_bytes == DEFAULT_STRIPE_UNIT_BYTES])
    assert candidates.candidate_layout(next(c for c in large if c.stripe_unit_bytes == MiB)).stripe_unit_bytes == MiB
    assert "Stripe units searched: 64 KiB, 256 KiB, 1,024 KiB" in " ".join(ranking.stated_assumptions(_archive()))


def test_winner_states_its_stripe_unit() -> None:
    out = recommend.plan(_archive())
    best = out.recommendations[0]
    if best.evaluation.candidate.stripe_unit_bytes != DEFAULT_STRIPE_UNIT_BYTES:
        assert f"{best.evaluation.candidate.stripe_unit_bytes // KiB:,} KiB stripe unit" in best.explanation
    else:
        assert "stripe unit" not in best.explanation


def test_estimated_cost_grows_with_drives_years_and_ios() -> None:
    req = _oltp()
    base = candidates.Candidate(index=0, drive_model="intel-d7-p5600-6400gb", layout="raid10", group_width=8, drive_count=8)
    cost = evaluation.estimated_cost_s(req, base)
    assert cost > 0 and math.isfinite(cost)
    assert evaluation.estimated_cost_s(req, dataclasses.replace(base, group_width=32, drive_count=32)) > cost
    assert evaluation.estimated_cost_s(dataclasses.replace(req, service_life_years=5), base) > cost
    busier = dataclasses.replace(req, workload=dataclasses.replace(req.workload, target_iops=200_000))
    assert evaluation.estimated_cost_s(busier, base) > cost
    longer = dataclasses.replace(req, simulated_seconds=1.0)
    assert evaluation.estimated_cost_s(longer, base) > cost
