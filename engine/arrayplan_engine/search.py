"""Which candidates to simulate: the search between pruning and ranking.

Every kept candidate has analytic bounds (``candidates.objective_bounds``): a lower bound on its
objective value (purchase and replacements exact, power at idle), an upper bound on its headroom
and latency headroom, its exact durability. The search simulates in waves, in the order of the
objective's lower bound (ties on the candidate index), and stops once ``max_recommendations``
candidates that meet every constraint are established and the next candidate's bound is above
their ``reach`` (``ranking.indifference_order``: the highest interval end the ranking compared the
top picks with). "Beat" means what it means in the ranking: a candidate changes the top only if
its objective interval reaches one of those compared (and then its seed-independent tie key may
place it), and every candidate left has its interval's low end, like its true value, at least
its bound (the ranking raises a low end below the bound to it), so none of them can. The top
recommendations are those a simulation of every candidate gives (``exhaustive``), bit for bit
(each candidate's figures come from its own seed stream).

A candidate whose exact checks (capacity, endurance, budget, drive slots, durability) or whose
IOPS and latency bounds already fail is not simulated while any candidate meets every
constraint: the ranking shows only constraint-meeting arrays then. When none does, every kept
candidate is simulated, so the nearest misses are those of the exhaustive search.

The Pareto front (cost, latency headroom, P(data loss)) is then completed from dominance bounds:
a candidate whose bounds (cost from below, latency headroom from above, durability exact) are
dominated by a simulated front member cannot be on the front and is not simulated; the others
are, wave by wave, until every candidate left is dominated or ``pareto_limit`` more simulations
are spent (the report then counts those left, and the answer says so).

``evaluate_wave(candidates, simulated_seconds)`` is the caller's: ``recommend.plan`` evaluates
in-process, the service fans each wave out as Ray batches. ``simulated_seconds`` is the one
precision argument a wave is simulated at (``evaluation.evaluate`` reads it from the request).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import candidates as cands_mod
from .candidates import Candidate, ObjectiveBounds
from .catalog import Catalog
from .evaluation import Evaluation
from .plan_request import PlanRequest, request_catalog
from .ranking import indifference_order, pareto_front

EvaluateWave = Callable[[Sequence[Candidate], float], list[Evaluation]]

#: Candidates per wave at least (a wave is one fan-out: fewer would leave workers idle).
MIN_WAVE = 4


#: A wave is sized for the meeting candidates still needed at the pass rate seen so far, at most this.
MAX_WAVE = 64


#: Simulations the Pareto front may add after the top recommendations, per recommendation asked.
PARETO_SIMULATIONS_PER_RECOMMENDATION = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchReport:
    """What the search simulated and why it stopped."""

    evaluations: tuple[Evaluation, ...]  # by candidate index
    exhaustive: bool
    not_simulated: int = 0  # kept candidates never simulated
    beyond_bound: int = 0  # of those: past the last recommendation's value, their bounds dominated by the front
    certain_misses: int = 0  # of those: an exact check or a bound already fails
    pareto_unresolved: int = 0  # of those: not dominated, left by the Pareto budget
    waves: int = 0

    def note(self, req: PlanRequest) -> str:
        """One sentence on what was not simulated and why (empty for an exhaustive search)."""
        if self.exhaustive or not self.not_simulated:
            return ""
        objective = {"total_cost_of_ownership": "cost", "purchase_cost": "purchase cost", "power": "power",
                     "headroom": "headroom"}[req.objective.value]
        parts = []
        if self.beyond_bound:
            nth = _ordinal(req.max_recommendations)
            parts.append(f"{self.beyond_bound:,} because their {objective} bound is "
                         f"{'below' if objective == 'headroom' else 'above'} the {nth} recommendation's and a Pareto "
                         "front member dominates their bounds")
        if self.certain_misses:
            parts.append(f"{self.certain_misses:,} because an exact check or a bound already fails")
        if self.pareto_unresolved:
            parts.append(f"{self.pareto_unresolved:,} whose bounds no front member dominates, left by the Pareto budget "
                         "(the front is of the simulated candidates; plan --exhaustive for the whole one)")
        return f"{self.not_simulated:,} candidates not simulated: " + "; ".join(parts) + "."


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _dominated(b: ObjectiveBounds, front: Sequence[Evaluation]) -> bool:
    """Some front member is at least as good as the best ``b`` allows on all three axes."""
    return any(f.total_cost_usd <= b.total_cost_usd and f.latency_headroom_fraction() >= b.latency_headroom_fraction
               and f.data_loss_probability <= b.data_loss_probability for f in front)


def search(req: PlanRequest, kept: Sequence[Candidate], evaluate_wave: EvaluateWave, catalog: Catalog | None = None, *,
           exhaustive: bool = False, known: Mapping[int, Evaluation] | None = None,
           pareto_limit: int | None = None, on_wave: Callable[[int, int], None] | None = None,
           on_top: Callable[[Sequence[Evaluation]], None] | None = None) -> SearchReport:
    """Simulate the candidates that decide the answer (see the module text). ``known``: candidates
    already evaluated (a resumed run's checkpoints); ``on_wave(simulated, planned)`` is called
    before each wave with the simulations so far and the wave's size; ``on_top(meeting)`` once the
    top recommendations are established, before the Pareto phase, with the constraint-meeting
    evaluations so far (the Pareto phase adds only candidates whose bounds are past the top's
    reach, so the ranking's top picks are already these: the pipeline starts the hard-disk
    comparison of the winner then, beside the Pareto phase's simulations)."""
    s = _Search(req, kept, evaluate_wave, request_catalog(req, catalog), known, on_wave)
    if exhaustive:
        s.run(list(kept))
        return s.report(exhaustive=True)
    s.top_phase()
    meeting = s.meeting()
    if not meeting:
        # nothing meets: the answer is the nearest misses, which only simulating all of them orders
        s.run([c for c in kept if c.index not in s.evaluated])
        return s.report()
    if on_top is not None:
        on_top(meeting)
    budget = PARETO_SIMULATIONS_PER_RECOMMENDATION * req.max_recommendations if pareto_limit is None else pareto_limit
    unresolved = s.pareto_phase(budget)
    not_simulated = len(kept) - len(s.evaluated)
    misses = len(s.certain_miss - set(s.evaluated))
    return s.report(not_simulated=not_simulated, certain_misses=misses, pareto_unresolved=unresolved,
                    beyond_bound=not_simulated - misses - unresolved)


class _Search:
    """One search's state: what is evaluated, the candidates' bounds (cheap ones for all, full
    ones with durability as needed) and their order, and its two phases."""

    def __init__(self, req: PlanRequest, kept: Sequence[Candidate], evaluate_wave: EvaluateWave, catalog: Catalog,
                 known: Mapping[int, Evaluation] | None, on_wave: Callable[[int, int], None] | None) -> None:
        self.req, self.kept, self.evaluate_wave, self.catalog, self.on_wave = req, kept, evaluate_wave, catalog, on_wave
        by_index = {c.index: c for c in kept}
        # Known evaluations are a cache, not a head start: the search takes the same waves as a run
        # without them (so a resumed run answers bit for bit as the undisturbed one) and simulates
        # only what they lack.
        self.cache: dict[int, Evaluation] = {i: e for i, e in (known or {}).items() if i in by_index and e.candidate == by_index[i]}
        self.evaluated: dict[int, Evaluation] = {}
        self.waves = 0
        self.certain_miss: set[int] = set()
        self._cheap: dict[int, ObjectiveBounds] | None = None
        self._full: dict[int, ObjectiveBounds] = {}

    def run(self, wave: list[Candidate]) -> None:
        todo = [c for c in wave if c.index not in self.cache]
        for c in wave:
            if c.index in self.cache:
                self.evaluated[c.index] = self.cache[c.index]
        if not todo:
            return
        if self.on_wave is not None:
            self.on_wave(len(self.evaluated), len(todo))
        self.waves += 1
        for e in self.evaluate_wave(todo, self.req.simulated_seconds):
            self.evaluated[e.candidate.index] = e

    def report(self, *, exhaustive: bool = False, **counts: int) -> SearchReport:
        return SearchReport(evaluations=tuple(self.evaluated[i] for i in sorted(self.evaluated)), exhaustive=exhaustive,
                            waves=self.waves, **counts)

    def meeting(self) -> list[Evaluation]:
        return [e for e in self.evaluated.values() if e.meets_constraints]

    @property
    def cheap(self) -> dict[int, ObjectiveBounds]:
        if self._cheap is None:
            self._cheap = {c.index: cands_mod.objective_bounds(self.req, c, self.catalog, with_durability=False)
                           for c in self.kept}
        return self._cheap

    def bounds(self, c: Candidate) -> ObjectiveBounds:
        b = self._full.get(c.index)
        if b is None:
            b = self._full[c.index] = cands_mod.objective_bounds(self.req, c, self.catalog)
        return b

    def bound_of(self, c: Candidate) -> float:
        return self.cheap[c.index].objective_lower_bound(self.req.objective)

    def order(self) -> list[Candidate]:
        """The kept candidates by the objective's bound, ties on the index."""
        return sorted(self.kept, key=lambda c: (self.bound_of(c), c.index))

    def reach(self) -> float | None:
        """How far the top ``k`` of the simulated candidates are decided (``ranking.indifference_order``):
        a candidate whose bound is above it changes none of them; None while fewer than ``k`` meet."""
        meeting = self.meeting()
        k = self.req.max_recommendations
        if len(meeting) < k:
            return None
        return indifference_order(meeting, self.req.objective, self.bound_of, k).reach

    def top_phase(self) -> None:
        """1. the top recommendations, in the order of the objective's bound, in waves sized for
        the meeting candidates still needed at the pass rate seen so far."""
        k = self.req.max_recommendations
        order = self.order()
        pos = 0
        wave_size = max(MIN_WAVE, k)
        while pos < len(order):
            limit = self.reach()
            wave: list[Candidate] = []
            while pos < len(order) and len(wave) < wave_size:
                c = order[pos]
                if limit is not None and self.bound_of(c) > limit:
                    break
                pos += 1
                if c.index in self.evaluated:
                    continue
                if self.bounds(c).headroom_fraction < 0:
                    self.certain_miss.add(c.index)
                    continue
                wave.append(c)
            if not wave:
                break
            self.run(wave)
            simulated = [e for e in self.evaluated.values() if e.candidate.index not in self.certain_miss]
            met = sum(e.meets_constraints for e in simulated)
            needed = k - met
            rate = max(met / len(simulated), 1.0 / MAX_WAVE) if simulated else 1.0
            wave_size = MIN_WAVE if needed <= 0 else min(MAX_WAVE, max(MIN_WAVE, math.ceil(needed / rate)))

    def pareto_phase(self, budget: int) -> int:
        """2. the Pareto front: simulate what a front member's figures do not dominate (every
        candidate left is past the stop point, or a certain miss), at most ``budget``; returns
        how many the budget left undominated."""
        order = self.order()
        spent = 0
        while True:
            front = pareto_front(self.meeting())
            open_: list[Candidate] = []
            for c in order:
                if c.index in self.evaluated:
                    continue
                b = self.bounds(c)
                if b.headroom_fraction < 0:
                    self.certain_miss.add(c.index)
                elif not _dominated(b, front):
                    open_.append(c)
            if not open_ or spent >= budget:
                return len(open_)
            wave = open_[:max(1, min(budget - spent, MAX_WAVE))]
            spent += len(wave)
            self.run(wave)
