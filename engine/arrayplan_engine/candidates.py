"""The candidate arrays of a plan: every (drive, layout, group width, drive count, over-provisioning)
in the request's space in a fixed order (``enumerate_candidates``), and the cheap bounds that drop
those the full evaluation would fail the same way (``bound_checks``, ``prune_report``).

A candidate's ``index`` is its place in that order; ties in the ranking break on it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from . import cost, endurance, performance, reliability
from .catalog import Catalog, Drive
from .errors import InvalidInputError, SearchSpaceTooLargeError
from .layout import DEFAULT_STRIPE_UNIT_BYTES, Layout, LayoutKind, make_layout, usable_capacity_bytes
from .plan_request import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_LAYOUTS,
    Objective,
    PlanRequest,
    layouts_for,
    request_catalog,
    required_capacity_bytes,
    required_iops_in_year,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One array to evaluate. ``index`` is its position in the enumeration (its seed stream)."""

    index: int
    drive_model: str
    layout: str
    group_width: int
    drive_count: int
    over_provisioning_fraction: float = 0.0
    stripe_unit_bytes: int = DEFAULT_STRIPE_UNIT_BYTES


KiB = 1024

#: Stripe units searched when the workload's mean IO is at least ``LARGE_IO_BYTES``: a large IO
#: then spans many units of the default 64 KiB (17 member IOs per 1 MiB host IO), so the unit
#: changes what the members do. Smaller IOs keep the default unit only.
LARGE_IO_STRIPE_UNITS = (64 * KiB, 256 * KiB, 1024 * KiB)


LARGE_IO_BYTES = 256 * KiB


def stripe_units(req: PlanRequest) -> tuple[int, ...]:
    """The stripe units the search tries: ``LARGE_IO_STRIPE_UNITS`` for large IOs (mean IO >=
    ``LARGE_IO_BYTES``), else the layouts' default unit alone."""
    if req.workload.mean_io_bytes >= LARGE_IO_BYTES:
        return LARGE_IO_STRIPE_UNITS
    return (DEFAULT_STRIPE_UNIT_BYTES,)


def searched_layouts(req: PlanRequest) -> tuple[str, ...]:
    """``candidate_space.layouts``, or by default ``DEFAULT_LAYOUTS`` (RAID 10, 5, 6 and the
    erasure codes ec:4+2, ec:8+3, ec:10+4; a code wider than the drive counts is not enumerated)."""
    return tuple(req.candidate_space.layouts) or DEFAULT_LAYOUTS


def _drive_names(req: PlanRequest, catalog: Catalog) -> list[str]:
    """The drives to search: ``candidate_space.drive_models``, or by default every drive in the
    catalog, SSDs and hard disks (the request's custom drives included). The arrays of a drive
    too small to hold the data fall to the capacity bound, which counts them."""
    catalog = request_catalog(req, catalog)
    if req.candidate_space.drive_models:
        names = [catalog.get(n).name for n in req.candidate_space.drive_models]
        return list(dict.fromkeys(names))
    return [d.name for d in catalog]


def _shapes(req: PlanRequest, *, drive_slots: bool = True) -> list[tuple[str, int, int]]:
    """(layout name, group width, drive count) triples, in a fixed order; with ``drive_slots``
    only those within ``constraints.max_drive_count``."""
    s = req.candidate_space
    out: list[tuple[str, int, int]] = []
    max_count = min(s.max_drive_count, req.constraints.max_drive_count or s.max_drive_count) if drive_slots else s.max_drive_count
    for i, name in enumerate(searched_layouts(req)):
        for layout in layouts_for(name, s.group_widths, f"candidate_space.layouts[{i}]"):
            if layout is None:
                minimum = 4 if name.strip().lower() == "raid10" else 1
                step = 2 if name.strip().lower() == "raid10" else 1
                for n in range(max(minimum, s.min_drive_count), max_count + 1):
                    if n % step == 0:
                        out.append((name.strip().lower(), n, n))
                continue
            w = layout.group_width
            first = max(w, math.ceil(s.min_drive_count / w) * w)
            for n in range(first, max_count + 1, w):
                # the family name candidate_layout parses back (a layout's display name, such as
                # raid1x2 or raid6(8), is not a layout name)
                out.append((layout.name if layout.kind is LayoutKind.EC else layout.kind.value, w, n))
    return list(dict.fromkeys(out))


def _ops(req: PlanRequest) -> tuple[float, ...]:
    return tuple(dict.fromkeys(req.candidate_space.over_provisioning_fractions)) or (0.0,)


def _shape_units(req: PlanRequest, shapes: list[tuple[str, int, int]]) -> list[tuple[str, int, int, int]]:
    """(layout, width, count, stripe unit): each shape at every searched stripe unit, except
    plain mirrors (RAID 1 stripes nothing)."""
    units = stripe_units(req)
    return [(name, w, n, u) for name, w, n in shapes for u in (units if name != "raid1" else (DEFAULT_STRIPE_UNIT_BYTES,))]


def count_candidates(req: PlanRequest, catalog: Catalog | None = None) -> int:
    catalog = request_catalog(req, catalog)
    return len(_drive_names(req, catalog)) * len(_shape_units(req, _shapes(req))) * len(_ops(req))


def enumerate_candidates(req: PlanRequest, catalog: Catalog | None = None, *,
                         limit: int = DEFAULT_CANDIDATE_LIMIT) -> list[Candidate]:
    """Every (drive, layout, group width, drive count) in the request's space, in a fixed order.

    Raises ``SearchSpaceTooLargeError`` before building anything when over ``limit``.
    """
    catalog = request_catalog(req, catalog)
    names = _drive_names(req, catalog)
    shapes = _shape_units(req, _shapes(req))
    ops = _ops(req)
    total = len(names) * len(shapes) * len(ops)
    if total > limit:
        raise SearchSpaceTooLargeError(total, limit)
    out: list[Candidate] = []
    for drive_name in names:
        is_ssd = catalog.get(drive_name).kind == "ssd"
        for op in ops:
            if op > 0 and not is_ssd:
                continue  # short-stroking an HDD is not over-provisioning
            for layout_name, width, count, unit in shapes:
                out.append(Candidate(index=len(out), drive_model=drive_name, layout=layout_name, group_width=width,
                                     drive_count=count, over_provisioning_fraction=op, stripe_unit_bytes=unit))
    return out


def candidate_layout(c: Candidate) -> Layout:
    if c.layout.startswith("ec:"):
        return make_layout(c.layout, stripe_unit_bytes=c.stripe_unit_bytes)
    return make_layout(c.layout, c.group_width, stripe_unit_bytes=c.stripe_unit_bytes)


#: The cheap bounds, in the order the summary names them.
BOUNDS = ("capacity", "budget", "power", "iops", "drive_slots", "latency")


_BOUND_TEXT = {"capacity": "capacity", "budget": "budget", "power": "power", "iops": "IOPS", "drive_slots": "drive slots",
               "latency": "latency"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundCheck:
    """One cheap bound on one candidate: the bound's figure against the requirement.
    ``margin_fraction`` > 0 passes (how far inside), < 0 fails (how far short)."""

    bound: str
    required: float
    bound_value: float
    unit: str
    at_most: bool

    @property
    def margin_fraction(self) -> float:
        if self.at_most:
            return headroom_at_most(self.required, self.bound_value)
        return headroom_at_least(self.required, self.bound_value)

    @property
    def passed(self) -> bool:
        return self.margin_fraction >= 0


@dataclass(frozen=True, slots=True, kw_only=True)
class NearMiss:
    """A candidate the cheap bounds removed, with the bounds it failed (nearest misses first)."""

    candidate: Candidate
    drive_display_name: str
    failed: tuple[BoundCheck, ...]

    def explanation(self) -> str:
        c = self.candidate
        parts = []
        for k in self.failed:
            fmt: Callable[[float], str] = _UNIT_FMT.get(k.unit, lambda x: f"{x:,.3g}")
            rel = "over" if k.at_most else "short of"
            parts.append(f"{_BOUND_TEXT[k.bound]} {fmt(k.bound_value)} {rel} {fmt(k.required)} ({-k.margin_fraction:.0%})")
        width = f"({c.group_width})" if c.layout in ("raid5", "raid6", "raid1") else ""
        return f"{c.drive_count} x {self.drive_display_name} in {c.layout.upper()}{width}: " + "; ".join(parts)


_UNIT_FMT: dict[str, Callable[[float], str]] = {
    "bytes": lambda x: f"{x / 1e12:,.1f} TB",
    "usd": lambda x: f"${x:,.0f}",
    "w": lambda x: f"{x:,.0f} W",
    "iops": lambda x: f"{x:,.0f} IOPS",
    "s": lambda x: f"{x * 1e3:.2f} ms",
    "drives": lambda x: f"{x:,.0f} drives",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneReport:
    """What the cheap bounds did: the candidates kept, how many each bound removed (``BOUNDS``
    order; a candidate failing two bounds counts in both; ``drive_slots`` counts the arrays over
    ``constraints.max_drive_count``, which are not enumerated) and the nearest misses."""

    kept: tuple[Candidate, ...]
    pruned: int
    removed_by_bound: tuple[tuple[str, int], ...]
    nearest_misses: tuple[NearMiss, ...]


def _latency_floor_s(req: PlanRequest, drive: Drive) -> float:
    """A lower bound on the request's latency percentile for a hard disk: random reads wait for
    the platter, uniform over one revolution (hdd.py), so with random reads a share ``r`` of the
    IOs, the p-th percentile is at least ``T (p - (1 - r)) / r`` of a revolution ``T`` (every
    other IO taken as instant). Zero for an SSD or when the bound says nothing."""
    if drive.kind != "hdd" or not drive.rpm:
        return 0.0
    w = req.workload
    r = w.read_fraction * w.random_fraction
    p = req.constraints.latency_percentile / 100.0
    if r <= 0 or p <= 1.0 - r:
        return 0.0
    return 60.0 / drive.rpm * (p - (1.0 - r)) / r


def bound_checks(req: PlanRequest, cand: Candidate, catalog: Catalog | None = None) -> list[BoundCheck]:
    """Every cheap bound on one candidate. Each is one the full evaluation would fail the same
    way: capacity and the drives' purchase cost with their bays (hot spares left out) are exact, idle power (and the bays') is a
    lower bound on power, ``performance.iops_upper_bound`` (plus ``SCREEN_MARGIN``) is an upper
    bound on the sustained IOPS the simulation finds in the busiest year, and a disk's rotational delay bounds its read latency. A
    host-managed SMR disk (``recording``) takes no random writes, so its IOPS bound is zero for a
    workload that has any."""
    catalog = request_catalog(req, catalog)
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    c = req.constraints
    need = required_capacity_bytes(req)
    usable = usable_capacity_bytes(layout, cand.drive_count, drive.capacity_bytes * (1.0 - cand.over_provisioning_fraction))
    out = [BoundCheck(bound="capacity", required=need, bound_value=usable, unit="bytes", at_most=False)]
    if c.max_purchase_cost_usd:
        out.append(BoundCheck(bound="budget", required=c.max_purchase_cost_usd, bound_value=cost.purchase_cost_usd(drive.price_usd or 0.0, cand.drive_count,
                                                                          usd_per_bay=req.candidate_space.bay_cost_usd),
                              unit="usd", at_most=True))
    if c.max_power_w:
        out.append(BoundCheck(bound="power", required=c.max_power_w, bound_value=(drive.idle_power_w or 0.0) * cand.drive_count
                              + cost.bay_power_w(cand.drive_count, w_per_bay=req.candidate_space.bay_power_w),
                              unit="w", at_most=True))
    iops_needed = max(required_iops_in_year(req, y) for y in range(1, req.service_life_years + 1))
    if iops_needed > 0 and usable > 0:
        # The screen: an upper bound on what the simulation can reach (fresh drives, the fewest
        # member IOs the layout allows) with a margin, checked against the simulation in
        # tests/engine/test_simulation.py, so a pruned candidate would miss the IOPS check.
        bound = performance.iops_upper_bound(drive, layout, cand.drive_count, req.workload.grown(req.service_life_years - 1))
        bound *= 1.0 + performance.SCREEN_MARGIN
        w = req.workload
        if drive.recording == "smr-host-managed" and w.read_fraction < 1.0 and w.random_fraction > 0.0:
            bound = 0.0  # a host-managed SMR zone takes only sequential writes: no random-write IOPS at all
        out.append(BoundCheck(bound="iops", required=iops_needed, bound_value=bound, unit="iops", at_most=False))
    if c.latency_target_s > 0:
        floor = _latency_floor_s(req, drive)
        if floor > 0:
            out.append(BoundCheck(bound="latency", required=c.latency_target_s, bound_value=floor, unit="s", at_most=True))
    return out


def _drive_slot_removals(req: PlanRequest, catalog: Catalog) -> int:
    """Arrays of the candidate space over ``constraints.max_drive_count`` (not enumerated)."""
    if not req.constraints.max_drive_count:
        return 0
    extra = len(_shape_units(req, _shapes(req, drive_slots=False))) - len(_shape_units(req, _shapes(req)))
    if extra <= 0:
        return 0
    ops = _ops(req)
    per_drive = [len(ops) if catalog.get(n).kind == "ssd" else sum(1 for op in ops if op == 0) for n in _drive_names(req, catalog)]
    return extra * sum(per_drive)


def prune_report(req: PlanRequest, candidates: Iterable[Candidate], catalog: Catalog | None = None, *,
                 nearest: int = 3) -> PruneReport:
    """Drop candidates that fail a cheap bound (``bound_checks``); count what each bound removed
    and keep the ``nearest`` misses (fewest failed bounds, then the smallest shortfall, then
    the objective's order: cheapest first)."""
    catalog = request_catalog(req, catalog)
    counts = dict.fromkeys(BOUNDS, 0)
    kept: list[Candidate] = []
    misses: list[tuple[tuple[int, float, float, int], NearMiss]] = []
    for cand in candidates:
        failed = [k for k in bound_checks(req, cand, catalog) if not k.passed]
        if not failed:
            kept.append(cand)
            continue
        for k in failed:
            counts[k.bound] += 1
        drive = catalog.get(cand.drive_model)
        key = (len(failed), max(-k.margin_fraction for k in failed), (drive.price_usd or 0.0) * cand.drive_count, cand.index)
        misses.append((key, NearMiss(candidate=cand, drive_display_name=drive.display_name, failed=tuple(failed))))
    counts["drive_slots"] = _drive_slot_removals(req, catalog)
    misses.sort(key=lambda m: m[0])
    chosen: list[NearMiss] = []
    seen: set[str] = set()
    for _, m in misses:  # one per drive model, so the misses show the choices
        if m.candidate.drive_model in seen:
            continue
        seen.add(m.candidate.drive_model)
        chosen.append(m)
        if len(chosen) == nearest:
            break
    pruned = len(misses)
    return PruneReport(kept=tuple(kept), pruned=pruned, removed_by_bound=tuple(counts.items()), nearest_misses=tuple(chosen))


def prune(req: PlanRequest, candidates: Iterable[Candidate], catalog: Catalog | None = None) -> tuple[list[Candidate], int]:
    """Drop candidates that fail a cheap bound (capacity, budget, power at idle, IOPS, latency);
    (kept, how many were dropped). ``prune_report`` says which bound dropped them."""
    report = prune_report(req, candidates, catalog)
    return list(report.kept), report.pruned


def removal_text(removed_by_bound: Iterable[tuple[str, int]]) -> str:
    """``capacity 1,200, budget 300, ...`` for the summary (every bound, zero included)."""
    return ", ".join(f"{_BOUND_TEXT[b]} {n:,}" for b, n in removed_by_bound)


def headroom_at_least(required: float, predicted: float) -> float:
    return (predicted - required) / required if required > 0 else math.inf


def headroom_at_most(limit: float, predicted: float) -> float:
    return (limit - predicted) / limit if limit > 0 else math.inf


def find_candidate(req: PlanRequest, *, drive_model: str, layout: str, group_width: int, drive_count: int,
                   over_provisioning_fraction: float = 0.0, catalog: Catalog | None = None,
                   limit: int = 10 * DEFAULT_CANDIDATE_LIMIT) -> Candidate:
    """The enumerated candidate with these fields (its index is its seed stream), for paths that
    hold a recommendation's fields but not its index (the report)."""
    for c in enumerate_candidates(req, catalog, limit=limit):
        if (c.drive_model, c.layout, c.group_width, c.drive_count) == (drive_model, layout, group_width, drive_count) \
                and math.isclose(c.over_provisioning_fraction, over_provisioning_fraction, abs_tol=1e-12):
            return c
    raise InvalidInputError.one("candidate", f"{drive_count} x {drive_model} in {layout} (width {group_width}) is not in the request's space")


# -- bounds on the objective: what the search orders and stops by ---------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ObjectiveBounds:
    """What a candidate's evaluation can find at best, from the parts that need no simulation.

    Exact: the purchase (drives and hot spares), the expected replacements (wear-out from the FTL's
    write amplification, failures from the AFR), the wear, the durability (the same Markov chains
    ``evaluation.evaluate`` runs). Bounded: power (every drive and spare at idle, the least the
    simulated utilisation can give), hence the cost of ownership from below; the sustained IOPS
    from above (``performance.iops_upper_bound`` plus ``SCREEN_MARGIN``, the screen's bound); the
    latency percentile from below (``latency_floor_s``). ``tests/engine/test_search.py`` checks
    each against the full evaluation of every candidate of several questions."""

    candidate: Candidate
    purchase_cost_usd: float
    power_w: float  # lower bound
    total_cost_usd: float  # lower bound
    headroom_fraction: float  # upper bound on the binding constraint's headroom
    latency_headroom_fraction: float  # upper bound (inf when the request has no latency target)
    data_loss_probability: float  # exact
    array_loss_probability: float  # exact

    def objective_lower_bound(self, objective: Objective) -> float:
        """A lower bound on ``Evaluation.objective_value(objective)``."""
        return objective.value_of(self)


def latency_floor_s(req: PlanRequest, drive: Drive) -> float:
    """A lower bound on the request's latency percentile on ``drive``: a disk's rotational delay
    (``_latency_floor_s``); for an SSD, when reads are more than ``1 - p`` of the IOs, the fresh
    read command's fixed cost, at least its die's array read tR (every read waits at least that
    long; writes are taken as instant)."""
    floor = _latency_floor_s(req, drive)
    if drive.kind == "ssd":
        p = req.constraints.latency_percentile / 100.0
        if req.workload.read_fraction > 1.0 - p:
            m = performance.fresh_service_model(drive)
            floor = max(floor, m.read_fixed_s, m.read_array_s)
    return floor


def objective_bounds(req: PlanRequest, cand: Candidate, catalog: Catalog | None = None, *,
                     with_durability: bool = True) -> ObjectiveBounds:
    """The analytic bounds of one candidate (see ``ObjectiveBounds``). The exact parts repeat
    ``evaluation.evaluate``'s arithmetic (same functions, same arguments). Without
    ``with_durability`` the loss probabilities are NaN and the headroom leaves the durability
    checks out (the Markov chains are most of the bounds' cost; the search asks for them only
    for the candidates it reaches)."""
    catalog = request_catalog(req, catalog)
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    c = req.constraints
    years = req.service_life_years
    op = cand.over_provisioning_fraction
    per_drive = drive.capacity_bytes * (1.0 - op)
    usable = usable_capacity_bytes(layout, cand.drive_count, per_drive)
    wear = endurance.service_life_wear(drive, layout, cand.drive_count, req.workload, years=years,
                                       data_bytes_year1=c.usable_capacity_bytes * req.workload.working_set_fraction,
                                       usable_capacity_bytes=usable, extra_spare_fraction=op, discards=req.discards)
    price = drive.price_usd or 0.0
    spares = cost.hot_spare_count(cand.drive_count, drives_per_spare=req.drives_per_hot_spare)
    bays = cand.drive_count + spares
    purchase = cost.purchase_cost_usd(price, bays, usd_per_bay=req.candidate_space.bay_cost_usd)
    idle = drive.idle_power_w or 0.0
    power = cand.drive_count * min(idle, drive.active_power_w or 0.0) + spares * idle \
        + cost.bay_power_w(bays, w_per_bay=req.candidate_space.bay_power_w)
    afr = drive.annual_failure_rate or 0.0
    replacements = wear.wear_out_replacements \
        + cost.expected_failure_replacements(cand.drive_count, annual_failure_rate=afr, service_life_years=years)
    total = purchase + cost.energy_cost_usd(power, years=years, usd_per_kwh=req.electricity_usd_per_kwh) + replacements * price
    loss_p, array_loss_p = (_durability(req, drive, layout, cand.drive_count, per_drive) if with_durability
                            else (math.nan, math.nan))
    # the headroom of each check evaluate makes, at its best
    heads = [headroom_at_least(required_capacity_bytes(req), usable),
             headroom_at_most(1.0 - c.endurance_margin_fraction, wear.life_used_fraction)]
    final = req.service_life_years
    iops_needed = required_iops_in_year(req, final)
    if iops_needed > 0:
        ub = performance.iops_upper_bound(drive, layout, cand.drive_count, req.workload.grown(final - 1))
        heads.append(headroom_at_least(iops_needed, ub * (1.0 + performance.SCREEN_MARGIN)))
    latency_head = math.inf
    if c.latency_target_s > 0:
        latency_head = headroom_at_most(c.latency_target_s, latency_floor_s(req, drive))
        heads.append(latency_head)
    if c.worst_second_latency_target_s > 0:
        heads.append(1.0)
    if c.max_purchase_cost_usd > 0:
        heads.append(headroom_at_most(c.max_purchase_cost_usd, purchase))
    if c.max_drive_count > 0:
        heads.append(headroom_at_most(c.max_drive_count, cand.drive_count))
    if c.max_power_w > 0:
        heads.append(headroom_at_most(c.max_power_w, power))
    if c.max_data_loss_probability > 0 and with_durability:
        heads.append(headroom_at_most(c.max_data_loss_probability, loss_p))
    if c.max_array_loss_probability > 0 and with_durability:
        heads.append(headroom_at_most(c.max_array_loss_probability, array_loss_p))
    return ObjectiveBounds(candidate=cand, purchase_cost_usd=purchase, power_w=power, total_cost_usd=total,
                           headroom_fraction=min(heads), latency_headroom_fraction=latency_head,
                           data_loss_probability=loss_p, array_loss_probability=array_loss_p)


def _durability(req: PlanRequest, drive: Drive, layout: Layout, drive_count: int, per_drive_bytes: float) -> tuple[float, float]:
    """(P(data loss), P(array loss)) over the service life, as ``evaluation.evaluate`` computes
    them; the stripe unit does not enter, so candidates differing only in it share one result."""
    afr = drive.annual_failure_rate or 0.0
    if afr <= 0:
        return 0.0, 0.0
    rebuild_rate = (drive.seq_write_bytes_per_s or 50e6) * req.rebuild_rate_fraction_of_seq_write
    repair_h = reliability.rebuild_hours(drive_capacity_bytes=per_drive_bytes, rebuild_rate_bytes_per_second=rebuild_rate)
    return _durability_cached(replace(layout, stripe_unit_bytes=DEFAULT_STRIPE_UNIT_BYTES), drive_count, afr, repair_h,
                              req.service_life_years, drive.uber or 0.0, per_drive_bytes)


@functools.lru_cache(maxsize=65_536)
def _durability_cached(layout: Layout, drive_count: int, afr: float, repair_h: float, years: int, uber: float,
                       per_drive_bytes: float) -> tuple[float, float]:
    loss_p = reliability.array_reliability(layout, drive_count, annual_failure_rate=afr, repair_hours=repair_h,
                                           service_life_years=years, uber=uber,
                                           drive_capacity_bytes=per_drive_bytes).service_life_loss_probability
    if not uber:
        return loss_p, loss_p
    array_loss_p = reliability.array_reliability(layout, drive_count, annual_failure_rate=afr, repair_hours=repair_h,
                                                 service_life_years=years, uber=0.0,
                                                 drive_capacity_bytes=per_drive_bytes).service_life_loss_probability
    return loss_p, array_loss_p
