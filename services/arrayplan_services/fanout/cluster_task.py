"""The cluster candidates of a plan as an executor task: ``cluster_plan.evaluate_clusters``
simulates one drive per candidate with the array kernel, so it runs where the box simulations do
(a Ray worker, or this process with the in-process executor)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arrayplan_engine import cluster_plan, plan_request
from arrayplan_engine.catalog import Catalog, Drive


def evaluate_cluster_candidates(shared: tuple[plan_request.PlanRequest, tuple[Drive, ...]], batch: Sequence[Any],
                                carrier: dict[str, str]) -> cluster_plan.ClusterPlanOutcome:
    del batch, carrier  # one call per plan; the server's arrayplan.clusters span covers it
    request, drives = shared
    return cluster_plan.evaluate_clusters(request, Catalog(drives), request.cluster)
