"""The answer: evaluations ordered by the objective (constraint-meeting first, then the nearest
misses), the Pareto front of cost, latency headroom and durability, each recommendation's
explanation, the assumptions the answer rests on. Pure and cheap: nothing here simulates. The
hard-disk comparison is a stage of its own (``hdd_comparison``, run where the simulations run);
``rank`` puts its result into the outcome."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from . import cost, durability_flags, simulation
from .candidates import (
    Candidate,
    NearMiss,
    PruneReport,
    objective_bounds,
    removal_text,
    searched_layouts,
    stripe_units,
)
from .catalog import Catalog
from .evaluation import ConstraintCheck, Evaluation
from .hdd_comparison import HddEquivalence
from .layout import DEFAULT_STRIPE_UNIT_BYTES
from .plan_request import Objective, PlanRequest, final_year_data_bytes, request_catalog, required_capacity_bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    rank: int
    evaluation: Evaluation
    explanation: str
    # What the answer flags beside its checks (``durability_flags.answer_warnings``); the
    # explanation ends with them.
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanOutcome:
    recommendations: tuple[Recommendation, ...]
    constraints_met: bool
    summary: str
    candidates_total: int
    candidates_pruned: int
    candidates_evaluated: int
    models: tuple[str, ...]
    pareto_front: tuple[Recommendation, ...] = ()
    hdd_equivalence: HddEquivalence | None = None
    # Candidates each cheap bound removed, every bound in BOUNDS order (a candidate failing two
    # bounds counts in both), and the removed candidates nearest to passing.
    removed_by_bound: tuple[tuple[str, int], ...] = ()
    nearest_misses: tuple[NearMiss, ...] = ()
    # What the answer rests on that the request did not say (``stated_assumptions``).
    assumptions: tuple[str, ...] = ()
    # Kept candidates the search did not simulate (``search.SearchReport``; 0 for --exhaustive),
    # and the sentence saying why.
    candidates_not_simulated: int = 0
    search_note: str = ""


_UNITS_TEXT = {
    "usable_capacity": "usable capacity", "iops": "IOPS", "latency": "latency", "worst_second_latency": "worst-second latency",
    "endurance": "endurance", "purchase_cost": "budget", "drive_count": "drive slots", "power": "power", "durability": "durability",
    "array_loss": "array loss",
}


def _fmt_check(k: ConstraintCheck, fill: float = 1.0) -> str:
    if k.unit == "bytes":
        held = f", {k.required * fill / 1e12:.2f} TB of final-year data at most {fill:.0%} full" if fill < 1 else ""
        return f"{k.predicted.value / 1e12:.2f} TB of {k.required / 1e12:.2f} TB{held}"
    if k.unit == "s":
        return f"{k.predicted.value * 1e3:.3g} ms against {k.required * 1e3:.3g} ms"
    if k.unit == "fraction" and k.constraint == "endurance":
        return f"{k.predicted.value * 100:.0f}% life used (limit {k.required * 100:.0f}%)"
    if k.unit == "usd":
        return f"${k.predicted.value:,.0f} of ${k.required:,.0f}"
    return f"{k.predicted.value:,.4g} against {k.required:,.4g} {k.unit}"


def explain(req: PlanRequest, e: Evaluation, rank_: int, objective: Objective) -> str:
    c = e.candidate
    what = f"{c.layout.upper()} of {c.drive_count} x {e.drive_display_name}"
    if c.layout not in ("raid0", "raid10") and not c.layout.startswith("ec:"):
        what += f" (groups of {c.group_width})"
    if c.stripe_unit_bytes != DEFAULT_STRIPE_UNIT_BYTES:
        what += f", {c.stripe_unit_bytes // 1024:,} KiB stripe unit"
    binding = next(k for k in e.checks if k.constraint == e.binding_constraint)
    fill = req.constraints.max_fill_fraction
    if e.meets_constraints:
        why = {
            Objective.TOTAL_COST_OF_OWNERSHIP: f"lowest {req.service_life_years}-year cost of ownership (${e.total_cost_usd:,.0f})",
            Objective.PURCHASE_COST: f"lowest purchase cost (${e.purchase_cost_usd:,.0f})",
            Objective.POWER: f"lowest power ({e.power_w:.0f} W)",
            Objective.HEADROOM: f"largest headroom ({e.headroom_fraction:+.0%})",
        }[objective]
        lead = "best: " if rank_ == 1 else f"#{rank_}: "
        return (f"{what}: {lead}{why} among arrays that meet every constraint through year {req.service_life_years}; "
                f"{_UNITS_TEXT[binding.constraint]} binds first at {_fmt_check(binding, fill)} ({binding.headroom_fraction:+.0%} headroom"
                f"{confidence_text(binding)}).")
    failed = [k for k in e.checks if not k.met]
    worst = min(failed, key=lambda k: k.headroom_fraction)
    return (f"{what}: misses {_UNITS_TEXT[worst.constraint]} ({_fmt_check(worst, fill)}{confidence_text(worst)}); "
            f"{len(failed)} constraint(s) unmet.")


def confidence_text(k: ConstraintCheck) -> str:
    """How sure a check's verdict is: "; meets at 95 % confidence (at least ...)" for a simulated
    figure judged at its interval's pessimistic end ("not met at 95 % confidence: the interval
    reaches ..." when that end misses), a point estimate's or an analytic figure's words."""
    verdict = "meets" if k.met else "misses"
    if k.confidence_level >= 1.0:
        return f"; {verdict} exactly (analytic)"
    if k.confidence_level <= 0.0:
        return f"; {verdict} on a point estimate (screening run, no interval)"
    end = k.predicted.high if k.at_most else k.predicted.low
    level = f"{k.confidence_level * 100:.0f} % confidence"
    if not k.met:
        return f"; not met at {level}: the interval reaches {_fmt_value(k, end)}"
    return f"; meets at {level} ({'at most' if k.at_most else 'at least'} {_fmt_value(k, end)})"


def _fmt_value(k: ConstraintCheck, x: float) -> str:
    if k.unit == "s":
        return f"{x * 1e3:.3g} ms"
    return f"{x:,.4g} {k.unit}"


def pareto_front(evaluations: Sequence[Evaluation]) -> list[Evaluation]:
    """Evaluations no other one dominates on (total cost: lower, latency headroom: higher,
    data-loss probability: lower); ties on all three keep the first by candidate index."""
    def key(e: Evaluation) -> tuple[float, float, float]:
        return (e.total_cost_usd, -e.latency_headroom_fraction(), e.data_loss_probability)

    ordered = sorted(evaluations, key=lambda e: (key(e), e.candidate.index))
    front: list[Evaluation] = []
    for e in ordered:
        k = key(e)
        if not any(all(a <= b for a, b in zip(key(f), k, strict=True)) for f in front):
            front.append(e)
    return front


def explain_pareto(e: Evaluation) -> str:
    c = e.candidate
    latency = e.latency_headroom_fraction()
    lat = f", latency headroom {latency:+.0%}" if math.isfinite(latency) else ""
    return (f"{c.layout.upper()} of {c.drive_count} x {e.drive_display_name}: ${e.total_cost_usd:,.0f}{lat}, "
            f"P(data loss) {e.data_loss_probability:.2g}; no other candidate is better on all three.")


def rank(req: PlanRequest, evaluations: Iterable[Evaluation], *, candidates_total: int, candidates_pruned: int,
         catalog: Catalog | None = None, pruning: PruneReport | None = None, exhaustive: bool | None = None,
         candidates_not_simulated: int = 0, search_note: str = "", hdd: HddEquivalence | None = None) -> PlanOutcome:
    """Order by the objective: constraint-meeting candidates first, then the nearest misses.
    ``hdd`` is the hard-disk comparison stage's answer for the winner (``hdd_comparison``; kept
    only when some candidate meets every constraint).
    ``pruning`` (from ``prune_report``) puts what each cheap bound removed into the outcome;
    ``exhaustive``, ``candidates_not_simulated`` and ``search_note`` (``search.SearchReport``;
    ranking does not import the search, which imports it) say what the search simulated."""
    catalog = request_catalog(req, catalog)
    evals = list(evaluations)
    removed = pruning.removed_by_bound if pruning is not None else ()
    removed_note = f" Candidates removed by each bound: {removal_text(removed)}." if removed else ""
    objective = req.objective
    front_ids = {e.candidate.index for e in pareto_front([e for e in evals if e.meets_constraints])}
    evals = [replace(e, pareto_optimal=e.candidate.index in front_ids) for e in evals]
    bound_of = analytic_bound_of(req, catalog)
    meeting = indifference_order([e for e in evals if e.meets_constraints], objective, bound_of,
                                 req.max_recommendations).order
    missing = sorted((e for e in evals if not e.meets_constraints), key=lambda e: (-e.headroom_fraction, e.objective_value(objective), e.candidate.index))
    chosen = (meeting or missing)[: req.max_recommendations]
    recs = tuple(_recommendation(req, i + 1, e, explain(req, e, i + 1, objective), catalog) for i, e in enumerate(chosen))
    models = tuple(sorted({e.performance_model for e in evals})) + ("endurance:rated-host-writes", "reliability:closed-form-mttdl", "cost:tco-v1")
    note = search_note
    if meeting and note:
        summary = (f"{len(meeting)} of the {len(evals)} simulated candidate arrays meet every constraint "
                   f"({candidates_total} in the space, {candidates_pruned} pruned by bounds). {note} {recs[0].explanation}"
                   f"{too_close_text(recs, objective)}")
    elif meeting:
        best = recs[0]
        summary = (f"{len(meeting)} of {candidates_total} candidate arrays meet every constraint "
                   f"({candidates_pruned} pruned by bounds, {len(evals)} evaluated). {best.explanation}{too_close_text(recs, objective)}")
    elif evals:
        summary = (f"No candidate meets every constraint ({candidates_total} in the space, {candidates_pruned} pruned, "
                   f"{len(evals)} evaluated).{removed_note} Nearest miss: {recs[0].explanation}")
    elif candidates_total == 0:
        summary = (f"No candidate meets every constraint: no drive in the search holds "
                   f"{required_capacity_bytes(req) / 1e12:,.1f} TB on {req.candidate_space.max_drive_count} drives "
                   "(candidate_space.max_drive_count); raise it or name larger drives.")
    else:
        misses = pruning.nearest_misses if pruning is not None else ()
        near = " Nearest misses: " + " | ".join(m.explanation() for m in misses) + "." if misses else ""
        summary = (f"No candidate meets every constraint: all {candidates_total} candidates failed the cheap bounds."
                   f"{removed_note}{near} Widen candidate_space or relax the bound that removed the most.")
    ranks = {r.evaluation.candidate.index: r.rank for r in recs}
    front = tuple(_recommendation(req, ranks.get(e.candidate.index, 0), e, explain_pareto(e), catalog)
                  for e in sorted((e for e in meeting if e.pareto_optimal), key=lambda e: (e.total_cost_usd, e.candidate.index)))
    hdd = hdd if meeting else None
    return PlanOutcome(recommendations=recs, constraints_met=bool(meeting), summary=summary, candidates_total=candidates_total,
                       candidates_pruned=candidates_pruned, candidates_evaluated=len(evals), models=models,
                       pareto_front=front, hdd_equivalence=hdd, removed_by_bound=removed,
                       nearest_misses=pruning.nearest_misses if pruning is not None else (),
                       assumptions=stated_assumptions(req, exhaustive),
                       candidates_not_simulated=candidates_not_simulated, search_note=note)


def winner(req: PlanRequest, evaluations: Iterable[Evaluation], catalog: Catalog | None = None) -> Evaluation | None:
    """The first recommendation ``rank`` gives when some evaluation meets every constraint (the
    one the hard-disk comparison is for), else None."""
    meeting = [e for e in evaluations if e.meets_constraints]
    if not meeting:
        return None
    catalog = request_catalog(req, catalog)
    return indifference_order(meeting, req.objective, analytic_bound_of(req, catalog), 1).order[0]


def _recommendation(req: PlanRequest, rank_: int, e: Evaluation, explanation: str, catalog: Catalog) -> Recommendation:
    warnings = durability_flags.answer_warnings(req, e, catalog)
    return Recommendation(rank=rank_, evaluation=e, explanation=" ".join((explanation, *warnings)), warnings=warnings)


@dataclass(frozen=True, slots=True)
class IndifferenceOrder:
    """Evaluations in the answer's order (``indifference_order``) and how far it is decided:
    ``reach`` is the highest objective value at the high end of an interval the first ``k`` picks
    were compared with (NaN with fewer than ``k`` evaluations). A candidate whose objective bound
    is above ``reach`` can change none of the first ``k`` picks (the search's stop rule)."""

    order: list[Evaluation]
    reach: float


def indifference_order(evals: Sequence[Evaluation], objective: Objective, bound_of: Callable[[Candidate], float],
                       k: int) -> IndifferenceOrder:
    """The answer's order, seed-independent where the simulation cannot tell candidates apart (an
    indifference-zone selection in the sense of Kim and Nelson, with the zone each pair's own 95 %
    intervals): the first ``k`` places are picked one at a time. At each pick, ``m`` is the
    remaining evaluation with the least objective point estimate (then the least candidate index);
    the candidates whose objective interval reaches ``m``'s (low end at most ``m``'s high end) are
    indistinguishable from it, and among them the one with the least seed-independent key
    ``tie_key`` is placed: its analytic objective bound (``bound_of``, the search's bound: the
    purchase, the replacements and power at idle), then fewer drives, then the candidate index.
    Which evaluation is ``m`` may change with the seed; whom it is compared with and the key do
    not, so two candidates within each other's intervals come out in the same order for any seed.
    The placed candidate is never one whose interval lies wholly above the best estimate's.

    Each interval's low end is raised to the candidate's bound (the true value is not below it),
    so a candidate whose bound is above ``reach`` reaches no ``m`` and is never one: the search
    stops on that. A selection, not a comparison sort (the pairwise relation "within each other's
    intervals" is not transitive, so it cannot be a sort key); places after ``k`` are by the point
    estimate. O(k n)."""
    point = sorted(evals, key=lambda e: (e.objective_value(objective), e.candidate.index))
    bounds: dict[int, float] = {}

    def bound(e: Evaluation) -> float:
        i = e.candidate.index
        if i not in bounds:
            bounds[i] = bound_of(e.candidate)
        return bounds[i]

    picked: list[Evaluation] = []
    remaining = point
    reach = -math.inf
    while remaining and len(picked) < k:
        m = remaining[0]
        hi = _objective_interval(m, objective)[1]
        reach = max(reach, hi)
        # the cheap test first: the bound only for those whose interval reaches m's
        close = [m] + [e for e in remaining[1:] if _objective_interval(e, objective)[0] <= hi and bound(e) <= hi]
        best = min(close, key=lambda e: tie_key(e.candidate, bound(e)))
        picked.append(best)
        remaining = [e for e in remaining if e is not best]
    return IndifferenceOrder(order=picked + remaining, reach=reach if len(picked) >= k else math.nan)


def _objective_interval(e: Evaluation, objective: Objective) -> tuple[float, float]:
    """The objective interval, holding the point estimate (a point where it is not estimated)."""
    v = e.objective_value(objective)
    lo, hi = e.objective_interval(objective)
    return (min(lo, v) if not math.isnan(lo) else v, max(hi, v) if not math.isnan(hi) else v)


def tie_key(cand: Candidate, bound: float) -> tuple[float, int, int]:
    """The seed-independent order of candidates the simulation cannot tell apart: the analytic
    objective bound, then fewer drives (fewer to fail and to buy again), then the candidate index."""
    return (bound, cand.drive_count, cand.index)


def analytic_bound_of(req: PlanRequest, catalog: Catalog) -> Callable[[Candidate], float]:
    """The objective's analytic lower bound of a candidate (``candidates.objective_bounds``, the
    search's ordering key), for ``indifference_order``."""
    def bound_of(c: Candidate) -> float:
        return objective_bounds(req, c, catalog, with_durability=False).objective_lower_bound(req.objective)
    return bound_of


def too_close_text(recs: Sequence[Recommendation], objective: Objective) -> str:
    """" The 95 % intervals of the top two overlap ..." when the second's objective interval
    reaches the first's (the two are then in ``tie_key`` order, ``indifference_order``), else empty (no apostrophe: the report's HTML
    escapes one, and the summary is checked there word for word)."""
    if len(recs) < 2 or not recs[1].evaluation.meets_constraints:
        return ""
    lo1, hi1 = recs[0].evaluation.objective_interval(objective)
    lo2, hi2 = recs[1].evaluation.objective_interval(objective)
    if lo2 > hi1 or lo1 > hi2:
        return ""
    return (f" The {simulation.CONFIDENCE_LEVEL * 100:.0f} % intervals of the top two overlap on the objective: "
            "the simulation cannot tell them apart, so they are ordered by their analytic bound (purchase, replacements, "
            "power at idle), then fewer drives, the same for any seed.")


_DISCARDS_SOURCES = ("Linux md raid456 passes no discards unless its devices_handle_discard_safely parameter is set (default "
                     "false: the array then sets max_hw_discard_sectors to 0); a RAID 5/6 create resyncs every member and "
                     "hardware RAID's full or background initialisation writes every block")
_DISCARDS_ASSUMPTION = {
    "auto": "Free space on the members (discards auto): parity arrays (RAID 5, RAID 6, ec) are simulated with every LBA of "
            "each member mapped, the full-span steady state the vendors rate, whatever the fill (" + _DISCARDS_SOURCES + "); "
            "RAID 0/1/10 with only the data mapped, each year at its fill (fstrim passes through them; set discards: none "
            "if nothing trims).",
    "none": "Free space on the members (discards none): every LBA of each member mapped once the array is initialised, so each "
            "year runs at the full-span steady state the vendors rate, whatever the fill (" + _DISCARDS_SOURCES + ").",
    "passed": "Free space on the members (discards passed): discards reach the members (fstrim through RAID 0/1/10, or a "
              "stack that passes them), so each member's FTL holds only the data and each year runs at its fill's used state; "
              "for parity arrays this needs a stack that passes discards (" + _DISCARDS_SOURCES + ").",
}


def stated_assumptions(req: PlanRequest, exhaustive: bool | None = None) -> tuple[str, ...]:
    """What the answer rests on that the request did not say, in words a storage engineer checks:
    a derived daily write volume, the layouts, stripe units and drive counts searched, how the
    search chose what to simulate, the endurance margin, growth, the simulated window per
    candidate-year, the HDD compared, fail-slow drives."""
    out: list[str] = []
    w = req.workload
    if w.daily_write_bytes <= 0 and w.target_iops > 0:
        per_day = w.daily_write_bytes_effective()
        out.append(f"Daily write volume derived from the target rate: {w.target_iops:,.0f} IOPS x {w.write_fraction:.0%} writes x "
                   f"{w.mean_io_bytes / 1024:,.1f} KiB x 86,400 s = {per_day / 1e12:,.2f} TB/day, kept up every day of every year "
                   "(set workload.daily_write_bytes for the real volume).")
    elif w.daily_write_bytes > 0:
        out.append(f"Daily write volume as stated: {w.daily_write_bytes / 1e12:,.2f} TB/day.")
    if w.growth_per_year:
        out.append(f"Workload and data grow {w.growth_per_year:.0%} a year: year {req.service_life_years} needs "
                   f"{req.growth_factor_final_year():.2f}x year 1 ({final_year_data_bytes(req) / 1e12:,.1f} TB of data).")
    fill = req.constraints.max_fill_fraction
    out.append(f"Fill target: the array holds the {final_year_data_bytes(req) / 1e12:,.1f} TB of final-year data at most {fill:.0%} full, "
               f"so it needs {required_capacity_bytes(req) / 1e12:,.1f} TB usable (constraints.max_fill_fraction; 80 % by default, "
               "where file systems, object stores and SSD garbage collection keep room to work).")
    out.append(_DISCARDS_ASSUMPTION[req.discards])
    cs = req.candidate_space
    if not cs.layouts:
        out.append(f"Layouts searched: {', '.join(searched_layouts(req))} (the default: RAID 10, RAID 5 and 6 in groups of "
                   "4-16, erasure codes where the drive count holds a whole stripe; name candidate_space.layouts for others).")
    units = stripe_units(req)
    if len(units) > 1:
        out.append(f"Stripe units searched: {', '.join(f'{u // 1024:,} KiB' for u in units)} (the mean IO of "
                   f"{req.workload.mean_io_bytes / 1024:,.0f} KiB spans several units of the default 64 KiB).")
    else:
        out.append(f"Stripe unit: {units[0] // 1024:,} KiB (the default; larger units are searched when the mean IO is "
                   "256 KiB or more).")
    if exhaustive is not None:
        out.append("Search: every kept candidate simulated (--exhaustive)." if exhaustive else
                   "Search: candidates simulated in the order of their objective's analytic bound (purchase, replacements, "
                   "power at idle) until the top recommendations are established and no candidate left can beat them; "
                   "the Pareto front completed from dominance bounds (plan --exhaustive simulates every kept candidate).")
    if not cs.drive_models:
        out.append("Drives searched: every catalog drive (SSDs and hard disks) and the plan's custom drives.")
    out.append(f"Drive counts searched: {cs.min_drive_count} to {cs.max_drive_count}.")
    if cs.bay_cost_usd == cost.ENCLOSURE_USD_PER_BAY and cs.bay_power_w == cost.ENCLOSURE_POWER_W_PER_BAY:
        out.append(f"Drive bays: {cost.ENCLOSURE_ASSUMPTION[0].upper()}{cost.ENCLOSURE_ASSUMPTION[1:]}; every drive and hot spare pays "
                   "its bay in the purchase, power and cost of ownership.")
    else:
        out.append(f"Drive bays: each drive bay costs {cs.bay_cost_usd:,.2f} USD and draws {cs.bay_power_w:.2f} W with its "
                   "enclosure (as stated in candidate_space.bay_cost_usd / bay_power_w); every drive and hot spare pays its bay "
                   "in the purchase, power and cost of ownership.")
    out.append(f"Endurance margin: {req.constraints.endurance_margin_fraction:.0%} of rated endurance kept in reserve.")
    floor = req.constraints.max_array_loss_probability
    out.append(f"Durability floor: P(losing the array over the service life) at most {floor:.2g} (unreadable sectors after a "
               "rebuild are reported beside it, not held to it)." if floor > 0 else "No durability floor (max_array_loss_probability 0).")
    out.append(f"Performance: each candidate-year simulated in independent replications of {req.simulated_seconds:g} s of array "
               f"time (each at most {simulation.MAX_SIMULATED_HOST_IOS:,} host IOs), {simulation.FULL.initial_replications} to "
               f"{simulation.FULL.max_replications}, until the {simulation.CONFIDENCE_LEVEL:.0%} interval is within "
               f"{simulation.THROUGHPUT_REL_HALF_WIDTH:.0%} on IOPS and {simulation.PERCENTILE_REL_HALF_WIDTH:.0%} on the latency "
               "percentile; a simulated constraint is met only at its interval's pessimistic end; the worst second is the "
               f"per-second p99 one second in {req.constraints.worst_second_horizon_s:,.0f} exceeds.")
    if req.constraints.fail_slow_field_rates:
        out.append("Latency with fail-slow drives at The Tail at Store's field rates (a group holds a >2x slower drive 2.2 % (SSD) "
                   "/ 1.5 % (disk) of the time; every replication of each year simulated again with one member 2x slower, the "
                   "latency check judged at the high end of the 95 % interval over those replications).")
    else:
        out.append("No fail-slow drives in the latency figures (set constraints.fail_slow_field_rates for the field rates).")
    if not req.hdd_model:
        out.append("Hard-disk comparison: the catalog's disk that fits the question (cheapest by capacity and IOPS bounds, sized "
                   "by the simulation).")
    return tuple(out)
