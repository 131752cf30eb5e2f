"""The whole plan in-process: validate the request, enumerate and prune the candidates, simulate
those that decide the answer (``search.search``: in the order of their objective's bound, or every
one with ``exhaustive``), rank. The services layer runs the same stages with each wave of the
search fanned out as Ray tasks (``arrayplan_services.plan.planner``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .candidates import Candidate, enumerate_candidates, prune_report
from .catalog import Catalog
from .evaluation import Evaluation, evaluate_batch
from .plan_request import DEFAULT_CANDIDATE_LIMIT, PlanRequest, request_catalog, validate_request
from .ranking import PlanOutcome, rank
from .search import search


def plan(req: PlanRequest, catalog: Catalog | None = None, *, limit: int = DEFAULT_CANDIDATE_LIMIT,
         exhaustive: bool | None = None) -> PlanOutcome:
    """The whole plan in-process (the service fans each wave of the search out instead).
    ``exhaustive`` (default ``req.exhaustive``) simulates every kept candidate."""
    catalog = request_catalog(req, catalog)
    validate_request(req, catalog)
    candidates = enumerate_candidates(req, catalog, limit=limit)
    pruning = prune_report(req, candidates, catalog)

    def wave(cands: Sequence[Candidate], simulated_s: float) -> list[Evaluation]:
        return evaluate_batch(replace(req, simulated_seconds=simulated_s), list(cands), catalog)

    found = search(req, pruning.kept, wave, catalog, exhaustive=req.exhaustive if exhaustive is None else exhaustive)
    return rank(req, found.evaluations, candidates_total=len(candidates), candidates_pruned=pruning.pruned, catalog=catalog,
                pruning=pruning, exhaustive=found.exhaustive, candidates_not_simulated=found.not_simulated,
                search_note=found.note(req))
