"""The whole plan in-process: validate the request, enumerate and prune the candidates, evaluate
every one kept, rank. The services layer runs the same stages with the evaluation fanned out as
Ray tasks (``arrayplan_services.plan.planner``)."""

from __future__ import annotations

from .candidates import enumerate_candidates, prune_report
from .catalog import Catalog
from .evaluation import evaluate_batch
from .plan_request import DEFAULT_CANDIDATE_LIMIT, PlanRequest, request_catalog, validate_request
from .ranking import PlanOutcome, rank


def plan(req: PlanRequest, catalog: Catalog | None = None, *, limit: int = DEFAULT_CANDIDATE_LIMIT) -> PlanOutcome:
    """The whole plan in-process (the service fans ``evaluate_batch`` out instead)."""
    catalog = request_catalog(req, catalog)
    validate_request(req, catalog)
    candidates = enumerate_candidates(req, catalog, limit=limit)
    pruning = prune_report(req, candidates, catalog)
    return rank(req, evaluate_batch(req, list(pruning.kept), catalog), candidates_total=len(candidates),
                candidates_pruned=pruning.pruned, catalog=catalog, pruning=pruning)
