"""The ranking of a plan's evaluations as an executor task.

``ranking.rank`` simulates again a few of the candidates it reports (the array kernel), so
whichever process ranks loads numba's compiled kernels and LLVM: about 130 MiB of native memory
that Python cannot free. Ranked in a Ray worker (which already holds those kernels for the
simulations) the server's own memory stays where it was before the plan; with the in-process
executor it ranks in the server as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from arrayplan_engine import ranking
from arrayplan_engine.catalog import Catalog, Drive

if TYPE_CHECKING:  # the types only: at run time this module needs ranking.rank alone
    from arrayplan_engine.candidates import PruneReport
    from arrayplan_engine.evaluation import Evaluation
    from arrayplan_engine.plan_request import PlanRequest

    RankShared = tuple[PlanRequest, tuple[Drive, ...], int, int, PruneReport | None, bool, int, str]


def rank_evaluations(shared: RankShared, batch: Sequence[Evaluation], carrier: dict[str, str]) -> ranking.PlanOutcome:
    """``ranking.rank`` over one plan's evaluations (sorted by candidate index by the caller)."""
    del carrier  # the server's arrayplan.rank span covers the call
    request, drives, candidates_total, candidates_pruned, pruning, exhaustive, not_simulated, note = shared
    return ranking.rank(request, batch, candidates_total=candidates_total, candidates_pruned=candidates_pruned,
                        catalog=Catalog(drives), pruning=pruning, exhaustive=exhaustive,
                        candidates_not_simulated=not_simulated, search_note=note)
