"""The plan's one stage sequence, run by ``arrayplan plan`` in-process and by the service alike:

1. **request**: the catalog with the plan's custom drives, the request validated
   (``plan_request``);
2. **candidates**: enumerated and pruned by cheap bounds (``candidates``);
3. **search**: the candidates that decide the answer simulated wave by wave (``search``, each wave
   ``evaluation.evaluate`` per candidate);
4. **hdd**: the hard-disk comparison of the winner (``hdd_comparison``, one sizing per disk),
   started as soon as the search has established the top recommendations, so it runs beside the
   search's Pareto phase;
5. **rank**: order, Pareto front, explanations, assumptions (``ranking.rank``: pure, nothing
   simulated).

Where the simulations run is the caller's (``PlanHooks``): in-process by default; the service
passes its executor's waves and sizings (Ray tasks), its checkpoints (``restore``), and a
``stage`` context that traces each stage and stores progress. Cancellation is the hooks' own:
a wave or sizing that raises ends the plan with that exception. Both callers give the same
answer for the same request, bit for bit: every candidate's figures come from its own seed
stream, every disk's from the request's seed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .candidates import Candidate, PruneReport, enumerate_candidates, prune_report
from .catalog import Catalog, Drive
from .evaluation import Evaluation, evaluate_batch
from .hdd_comparison import HddEquivalence, choose_hdd, hdd_disks, size_hdd
from .plan_request import DEFAULT_CANDIDATE_LIMIT, PlanRequest, request_catalog, validate_request
from .ranking import PlanOutcome, rank, winner
from .search import EvaluateWave, SearchReport, search

#: ``size_hdds(req, best, catalog, disks)`` starts sizing each disk for ``best`` and returns the
#: wait: a call that blocks until every disk is sized and returns them in ``disks``' order.
SizeHdds = Callable[[PlanRequest, Evaluation, Catalog, Sequence[Drive]], Callable[[], list[HddEquivalence | None]]]

#: ``stage(name)``: a context the stage runs in; the stage puts what it did into the dict it yields.
Stage = Callable[[str], contextlib.AbstractContextManager[dict[str, Any]]]

STAGES = ("request", "candidates", "search", "hdd", "rank")


@contextlib.contextmanager
def _quiet_stage(name: str) -> Iterator[dict[str, Any]]:
    del name
    yield {}


def size_hdds_here(req: PlanRequest, best: Evaluation, catalog: Catalog,
                   disks: Sequence[Drive]) -> Callable[[], list[HddEquivalence | None]]:
    """The in-process sizing: done when waited for (one process gains nothing by starting early)."""
    return lambda: [size_hdd(req, best, catalog, d) for d in disks]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanHooks:
    """Where the stages' simulations run and what the caller hears (every field optional)."""

    # One wave of the search: (candidates, simulated seconds) -> their evaluations. Default: in-process.
    evaluate_wave: EvaluateWave | None = None
    # The hard-disk comparison's sizings (``SizeHdds``). Default: in-process (``size_hdds_here``).
    size_hdds: SizeHdds | None = None
    # Evaluations a previous attempt already has, given the kept candidates (a resumed run's checkpoints).
    restore: Callable[[Sequence[Candidate]], Mapping[int, Evaluation]] | None = None
    # The context each stage runs in (``Stage``): spans, progress.
    stage: Stage | None = None


def plan(req: PlanRequest, catalog: Catalog | None = None, *, limit: int = DEFAULT_CANDIDATE_LIMIT,
         exhaustive: bool | None = None, hooks: PlanHooks | None = None) -> PlanOutcome:
    """The whole plan through the stage sequence (module text). ``exhaustive`` (default
    ``req.exhaustive``) simulates every kept candidate."""
    hooks = hooks or PlanHooks()
    stage = hooks.stage or _quiet_stage
    with stage("request"):
        catalog = request_catalog(req, catalog)
        validate_request(req, catalog)
    with stage("candidates") as out:
        cands = enumerate_candidates(req, catalog, limit=limit)
        pruning = prune_report(req, cands, catalog)
        out.update(candidates_total=len(cands), candidates_pruned=pruning.pruned, candidates_kept=len(pruning.kept))
    known = hooks.restore(pruning.kept) if hooks.restore is not None else None
    hdd = _HddStage(req, catalog, hooks.size_hdds or size_hdds_here)
    with stage("search") as out:
        found = search(req, pruning.kept, hooks.evaluate_wave or _in_process_wave(req, catalog), catalog,
                       exhaustive=req.exhaustive if exhaustive is None else exhaustive, known=known, on_top=hdd.start)
        out.update(simulated=len(found.evaluations), not_simulated=found.not_simulated, waves=found.waves,
                   exhaustive=found.exhaustive)
    with stage("hdd") as out:
        comparison = hdd.result(found.evaluations)
        out.update(hdd_model=comparison.hdd_model if comparison else "", drive_count=comparison.drive_count if comparison else 0,
                   started_early=hdd.started_early)
    with stage("rank") as out:
        outcome = _rank(req, catalog, cands, pruning, found, comparison)
        out.update(constraints_met=outcome.constraints_met)
    return outcome


def _in_process_wave(req: PlanRequest, catalog: Catalog) -> EvaluateWave:
    def wave(cands: Sequence[Candidate], simulated_s: float) -> list[Evaluation]:
        return evaluate_batch(replace(req, simulated_seconds=simulated_s), list(cands), catalog)
    return wave


def _rank(req: PlanRequest, catalog: Catalog, cands: Sequence[Candidate], pruning: PruneReport, found: SearchReport,
          comparison: HddEquivalence | None) -> PlanOutcome:
    return rank(req, found.evaluations, candidates_total=len(cands), candidates_pruned=pruning.pruned, catalog=catalog,
                pruning=pruning, exhaustive=found.exhaustive, candidates_not_simulated=found.not_simulated,
                search_note=found.note(req), hdd=comparison)


class _HddStage:
    """The hard-disk comparison: started for the winner once the search knows it (``start``, the
    search's ``on_top``), its result taken after the search (``result``). Should the final winner
    differ from the one it was started for (the search's stop rule says it cannot), it is sized
    again for the final one: the answer never depends on when the stage started."""

    def __init__(self, req: PlanRequest, catalog: Catalog, size_hdds: SizeHdds) -> None:
        self.req, self.catalog, self.size_hdds = req, catalog, size_hdds
        self.disks = hdd_disks(req, catalog)
        self.best: Evaluation | None = None
        self.wait: Callable[[], list[HddEquivalence | None]] | None = None
        self.started_early = False

    def start(self, meeting: Sequence[Evaluation]) -> None:
        best = winner(self.req, meeting, self.catalog)
        if best is None or not self.disks:
            return
        self.best, self.wait = best, self.size_hdds(self.req, best, self.catalog, self.disks)
        self.started_early = True

    def result(self, evaluations: Sequence[Evaluation]) -> HddEquivalence | None:
        best = winner(self.req, evaluations, self.catalog)
        if self.wait is not None and (best is None or best is not self.best):
            self.wait()  # sized for another candidate: not the answer's (finished, so nothing is left running)
            self.wait, self.started_early = None, False
        if best is None or not self.disks:
            return None
        if self.wait is None:
            self.wait = self.size_hdds(self.req, best, self.catalog, self.disks)
        return choose_hdd(self.req, self.catalog, self.disks, self.wait())
