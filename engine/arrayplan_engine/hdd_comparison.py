"""The plan's hard-disk comparison, a stage of its own: how many disks, in the winner's layout
family, carry the same job. It simulates (``simulation.equivalent_drive_count``), so it runs where
the evaluations run: one task per disk sized (``size_hdd``), through the same executor as the
search's waves (``recommend.PlanHooks.size_hdds``), then ``choose_hdd`` picks the answer's disk.

The stage needs only the winner (its layout and, when no IOPS are required, its sustained IOPS),
which the search knows once the top recommendations are established (``search``'s first phase):
the pipeline starts it then, beside the Pareto phase's simulations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import cost, performance, simulation
from .candidates import Candidate, candidate_layout
from .catalog import Catalog, Drive
from .evaluation import Evaluation
from .layout import MAX_STRIPE_WIDTH, Layout, LayoutKind
from .plan_request import PlanRequest, request_catalog, required_capacity_bytes, required_iops_in_year

# Disks sized by the simulation for the comparison: those within 30 % of the cheapest bound-sized
# array (the bounds ignore queueing and latency, which favour fast disks), at most three.
FITTING_HDD_MARGIN, FITTING_HDD_MAX = 1.3, 3


@dataclass(frozen=True, slots=True, kw_only=True)
class HddEquivalence:
    hdd_model: str
    drive_count: int
    layout: str
    purchase_cost_usd: float
    power_w: float
    explanation: str
    # The count's interval: drive_count is decided at the pessimistic end of each count's 95 %
    # intervals (as an SSD candidate's checks are), drive_count_low is the smallest count that
    # passes at their optimistic end (0 when no count is given).
    drive_count_low: int = 0


def hdd_disks(req: PlanRequest, catalog: Catalog | None = None) -> list[Drive]:
    """The disks the stage sizes: the request's ``hdd_model``, or the catalog's that fit the
    question (``fitting_hdds``)."""
    catalog = request_catalog(req, catalog)
    if req.hdd_model:
        return [catalog.get(req.hdd_model, "hdd_model")]
    return fitting_hdds(req, catalog)


def hdd_equivalence(req: PlanRequest, best: Evaluation, catalog: Catalog | None = None, *,
                    max_drives: int = simulation.MAX_EQUIVALENT_DRIVES) -> HddEquivalence | None:
    """The whole stage in this process: every disk of ``hdd_disks`` sized one after another
    (``size_hdd``), then ``choose_hdd``. The planner's pipeline runs the sizing through its
    executor instead (``recommend.plan``); both give the same answer."""
    catalog = request_catalog(req, catalog)
    disks = hdd_disks(req, catalog)
    return choose_hdd(req, catalog, disks, [size_hdd(req, best, catalog, d, max_drives) for d in disks])


def choose_hdd(req: PlanRequest, catalog: Catalog, disks: Sequence[Drive],
               sized: Sequence[HddEquivalence | None]) -> HddEquivalence | None:
    """The answer's disk from the sized ones (``sized[i]`` is ``disks[i]``'s): the request's own
    disk, or of the fitting ones the cheapest a count was found for (the first tried when none)."""
    tried = [e for e in sized if e is not None]
    if not tried:
        return None
    if req.hdd_model:
        return tried[0]
    found = [e for e in tried if e.drive_count > 0]
    out = min(found, key=lambda e: (e.purchase_cost_usd, e.hdd_model)) if found else tried[0]
    priced = len([d for d in catalog if d.kind == "hdd" and d.price_usd])
    return replace(out, explanation=out.explanation + (
        f" It is the catalog's disk that fits the question: of its {priced} priced disks, "
        f"{', '.join(d.name for d in disks)} came within {FITTING_HDD_MARGIN - 1:.0%} of the cheapest by the capacity and "
        f"IOPS bounds and were sized by the simulation; this one costs least."))


@dataclass(frozen=True, slots=True)
class _Question:
    """What one disk is sized for: the winner's layout family, the final year's workload and
    IOPS, the capacity, and the search's arguments (``simulation.equivalent_drive_count``)."""

    layout_for: Callable[[int], Layout] | Layout
    workload: Any
    iops: float
    need_bytes: float
    cap: int
    search: dict[str, Any]


def _question(req: PlanRequest, best: Evaluation, hdd: Drive, max_drives: int) -> _Question | None:
    cand = best.candidate
    base = candidate_layout(cand)
    stripes_all = base.kind in (LayoutKind.RAID0, LayoutKind.RAID10)
    iops = required_iops_in_year(req, req.service_life_years) or best.predicted_iops.value
    if not (iops > 0 and math.isfinite(iops)):
        return None
    step = 2 if base.kind is LayoutKind.RAID10 else (1 if stripes_all else cand.group_width)
    cap = min(max_drives, MAX_STRIPE_WIDTH) if stripes_all else max_drives
    min_count = 4 if base.kind is LayoutKind.RAID10 else 1

    def layout_for(n: int) -> Layout:
        return candidate_layout(Candidate(index=0, drive_model=hdd.name, layout=cand.layout, group_width=max(n, min_count),
                                          drive_count=n))

    need = required_capacity_bytes(req)
    seed = simulation.seed_int(np.random.SeedSequence(req.seed, spawn_key=(2**32 - 1,)))
    search = {"duration_s": req.simulated_seconds, "warmup_s": 0.25, "seed": seed, "max_drive_count": cap,
              "required_capacity_bytes": need, "group_width": step, "min_drive_count": min_count}
    return _Question(layout_for=layout_for if stripes_all else base, workload=req.workload.grown(req.service_life_years - 1),
                     iops=iops, need_bytes=need, cap=cap, search=search)


def size_hdd(req: PlanRequest, best: Evaluation, catalog: Catalog, hdd: Drive,
             max_drives: int = simulation.MAX_EQUIVALENT_DRIVES) -> HddEquivalence | None:
    """One disk sized for the winner's job (the stage's unit of work, one executor task): the
    smallest count of ``hdd`` in the winner's layout family that carries its final-year IOPS (or
    the winner's sustained IOPS when none is required) at the latency target with the required
    capacity, each count decided at the pessimistic end of its intervals (precision
    ``simulation.EQUIVALENCE``). ``drive_count`` is 0 when no array up to the cap meets every
    target; the explanation says "no number holds" only when even a nearly idle group misses the
    latency target. None when there is no IOPS figure to size for."""
    del catalog  # the disk is given; kept for the task's uniform signature
    q = _question(req, best, hdd, max_drives)
    if q is None:
        return None
    c = req.constraints
    eq = simulation.equivalent_drive_count(hdd, q.layout_for, q.workload, target_iops=q.iops,
                                           latency_quantile=c.latency_percentile / 100.0, latency_target_s=c.latency_target_s,
                                           precision=simulation.EQUIVALENCE, **q.search)
    if eq.drive_count:
        explanation, counted, util = _sized_text(req, best, hdd, q, eq), eq.drive_count, _utilization(eq)
    else:
        explanation, counted, util = _unsized(req, best, hdd, q, eq)
    power = cost.average_power_w(idle_power_w=hdd.idle_power_w or 0.0, active_power_w=hdd.active_power_w or 0.0,
                                 drive_count=counted, utilization=util) \
        + cost.bay_power_w(counted, w_per_bay=req.candidate_space.bay_power_w)  # the disks' bays, as the winner's
    return HddEquivalence(hdd_model=hdd.name, drive_count=eq.drive_count, layout=best.candidate.layout,
                          purchase_cost_usd=cost.purchase_cost_usd(hdd.price_usd or 0.0, counted,
                                                                   usd_per_bay=req.candidate_space.bay_cost_usd),
                          power_w=power, explanation=explanation, drive_count_low=eq.drive_count_low if eq.drive_count else 0)


def _utilization(eq: simulation.Equivalence) -> float:
    assert eq.figures is not None
    return eq.figures.utilization.value


def _what(req: PlanRequest, q: _Question) -> tuple[str, str]:
    c = req.constraints
    pct = f"p{c.latency_percentile:g}"
    target = f" at {pct} <= {c.latency_target_s * 1e3:g} ms" if c.latency_target_s > 0 else ""
    return pct, f"{q.iops:,.0f} IOPS{target} with {q.need_bytes / 1e12:.1f} TB"


def _sized_text(req: PlanRequest, best: Evaluation, hdd: Drive, q: _Question, eq: simulation.Equivalence) -> str:
    """The explanation of a count found: its simulated percentile and what binds one count below."""
    c = req.constraints
    pct, what = _what(req, q)
    n = eq.drive_count
    f = eq.figures
    assert f is not None
    smaller = [t for t in eq.tried if t[0] < n]
    if n == eq.capacity_drive_count:
        binding = "capacity"
    elif smaller:
        prev = max(smaller, key=lambda t: t[0])
        binding = ("IOPS" if prev[1] < q.iops else f"{pct} latency" if c.latency_target_s > 0 and prev[2] > c.latency_target_s
                   else f"IOPS or {pct} latency at the pessimistic end of its intervals")
    else:
        binding = "IOPS"
    level = f"{simulation.CONFIDENCE_LEVEL * 100:.0f} %"
    span = (f" The count at the intervals' optimistic end is {eq.drive_count_low:,}: {eq.drive_count_low:,}-{n:,} disks "
            f"at {level} confidence." if eq.drive_count_low and eq.drive_count_low < n else "")
    return (f"{n:,} x {hdd.display_name} in {best.candidate.layout.upper()} carry {what} at {level} confidence (simulated "
            f"{pct} {f.latency_at_percentile_s.value * 1e3:.3g} ms, {f.latency_at_percentile_s.low * 1e3:.3g}-"
            f"{f.latency_at_percentile_s.high * 1e3:.3g} ms); fewer would miss on {binding}.{span}")


def _unsized(req: PlanRequest, best: Evaluation, hdd: Drive, q: _Question,
             eq: simulation.Equivalence) -> tuple[str, int, float]:
    """No count passes: the explanation, and the disks the cost and power are for (when no number
    holds the latency target, the count that carries the IOPS and capacity without it: its count's
    optimistic end is not quoted, so not searched)."""
    c = req.constraints
    pct, what = _what(req, q)
    layout = best.candidate.layout.upper()
    if not eq.no_number_holds_latency:
        return (f"No array of {hdd.display_name} in {layout} up to {q.cap:,} disks carries {what} "
                f"in the simulation (the search's cap).", 0, 1.0)
    explanation = (f"No number of {hdd.display_name} in {layout} carries {what}: even nearly idle, one "
                   f"group's {pct} is {eq.unloaded_latency_s * 1e3:.3g} ms (seek + rotation).")
    loose = simulation.equivalent_drive_count(hdd, q.layout_for, q.workload, target_iops=q.iops,
                                              latency_quantile=c.latency_percentile / 100.0, latency_target_s=0.0,
                                              precision=simulation.EQUIVALENCE, with_count_low=False, **q.search)
    if not (loose.drive_count and loose.figures is not None):
        return explanation, 0, 1.0
    explanation += (f" Without the latency target, {loose.drive_count:,} of them carry the IOPS and capacity "
                    f"(simulated {pct} {loose.figures.latency_at_percentile_s.value * 1e3:.3g} ms); the cost and power "
                    f"are theirs.")
    return explanation, loose.drive_count, loose.figures.utilization.value


def fitting_hdds(req: PlanRequest, catalog: Catalog) -> list[Drive]:
    """The catalog's hard disks that may fit the question: each priced disk's bound-sized array
    (drives for the required capacity, and for the final year's IOPS at one disk's random-IO bound,
    ``performance.iops_upper_bound``, whichever is more) is priced, and the disks within
    ``FITTING_HDD_MARGIN`` of the cheapest (at most ``FITTING_HDD_MAX``) are returned, cheapest
    first, for the simulation to size. Empty when the catalog has no priced disk."""
    need = required_capacity_bytes(req)
    w = req.workload.grown(req.service_life_years - 1)
    iops = required_iops_in_year(req, req.service_life_years)
    priced: list[tuple[float, str, Drive]] = []
    for d in catalog:
        if d.kind != "hdd" or not d.price_usd or not d.capacity_bytes:
            continue
        per_disk = performance.iops_upper_bound(d, candidate_layout(Candidate(index=0, drive_model=d.name, layout="raid0",
                                                                              group_width=1, drive_count=1)), 1, w)
        count = max(math.ceil(need / d.capacity_bytes), math.ceil(iops / per_disk) if iops > 0 and per_disk > 0 else 1)
        priced.append((count * d.price_usd, d.name, d))
    if not priced:
        return []
    priced.sort(key=lambda x: x[:2])
    return [d for usd, _, d in priced if usd <= FITTING_HDD_MARGIN * priced[0][0]][:FITTING_HDD_MAX]
