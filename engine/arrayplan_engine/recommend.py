"""The planner core: enumerate candidate arrays, prune by cheap bounds, evaluate, rank, explain.

Pure functions over frozen dataclasses; the services layer fans ``evaluate_batch`` out as Ray
tasks and calls ``rank`` on what comes back. The same request and seed give the same answer: the
candidate order is fixed, each candidate's random stream is
``SeedSequence(seed).spawn(candidate_count)[index]``, and ranking ties break on the candidate index.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np

from . import array, cost, endurance, performance, reliability
from . import evaluate as one_path
from .catalog import Catalog, Drive, builtin_catalog
from .errors import (
    COUNT,
    NON_NEGATIVE,
    InvalidInputError,
    Range,
    SearchSpaceTooLargeError,
    UnknownNameError,
    Violation,
    check,
    check_fields,
    check_range,
    require_range,
)
from .layout import MAX_STRIPE_WIDTH, Layout, LayoutKind, make_layout, usable_capacity_bytes
from .units import HOUR_S
from .workload import Workload

DEFAULT_LAYOUTS = ("raid10", "raid5", "raid6")
DEFAULT_GROUP_WIDTHS = {
    LayoutKind.RAID1: (2, 3),
    LayoutKind.RAID5: (4, 6, 8, 12),
    LayoutKind.RAID6: (6, 8, 10, 12, 16),
}
DEFAULT_MAX_DRIVE_COUNT = 48
# The default durability floor: P(losing the array over the service life) at most 1e-4 (assumed:
# one array in ten thousand lost over its life; overridable, 0 = none)
DEFAULT_MAX_ARRAY_LOSS_PROBABILITY = 1e-4
MAX_DRIVE_COUNT = 1_024
DEFAULT_CANDIDATE_LIMIT = 100_000


class Objective(StrEnum):
    TOTAL_COST_OF_OWNERSHIP = "total_cost_of_ownership"
    PURCHASE_COST = "purchase_cost"
    POWER = "power"
    HEADROOM = "headroom"


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """What a recommendation must satisfy; 0 means "no constraint" except capacity."""

    usable_capacity_bytes: float
    min_iops: float = 0.0
    latency_percentile: float = 99.0
    latency_target_s: float = 0.0
    worst_second_latency_target_s: float = 0.0
    endurance_margin_fraction: float = 0.1  # default reserve of rated endurance (assumed, see planner.proto)
    max_purchase_cost_usd: float = 0.0
    max_drive_count: int = 0
    max_power_w: float = 0.0
    max_data_loss_probability: float = 0.0
    # Highest P(losing the array over the service life) (more failures than the layout tolerates;
    # not unreadable sectors after a rebuild). The default is a floor a storage engineer would not
    # go below (assumed, stated in every answer); 0 = none.
    max_array_loss_probability: float = DEFAULT_MAX_ARRAY_LOSS_PROBABILITY
    # Hold the latency target with fail-slow drives at The Tail at Store's field rates
    # (fail_slow.FIELD_RATES): each year is simulated again with a member 2x slower.
    fail_slow_field_rates: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateSpace:
    drive_models: tuple[str, ...] = ()
    layouts: tuple[str, ...] = ()
    group_widths: tuple[int, ...] = ()
    min_drive_count: int = 1
    max_drive_count: int = DEFAULT_MAX_DRIVE_COUNT
    # Short-stroke over-provisioning fractions to try (share of each drive left unused).
    over_provisioning_fractions: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRequest:
    workload: Workload
    constraints: Constraints
    service_life_years: int = 5
    objective: Objective = Objective.TOTAL_COST_OF_OWNERSHIP
    candidate_space: CandidateSpace = field(default_factory=CandidateSpace)
    seed: int = 0
    max_recommendations: int = 10
    electricity_usd_per_kwh: float = 0.12
    # Time to replace a failed drive and rebuild it, for durability (hot spare: rebuild only).
    rebuild_rate_fraction_of_seq_write: float = 0.5
    # Hot spares bought with the array: one per this many drives (rounded up); 0 = none. Assumed
    # practice (a spare per shelf of 24), not from the seeds.
    drives_per_hot_spare: int = 24
    # The hard disk the winner is compared with; "" = the catalog's disk that fits the question
    # (``fitting_hdd``: the cheapest by the capacity and IOPS bounds).
    hdd_model: str = ""
    # Seconds of array simulation per candidate and year (cut to ``evaluate.MAX_SIMULATED_HOST_IOS``).
    simulated_seconds: float = one_path.DEFAULT_SIMULATED_S
    # Drives the request brings (PlanSpec.custom_drives), searched with the catalog's; their
    # names may be used in candidate_space.drive_models and may not shadow a catalog name.
    custom_drives: tuple[Drive, ...] = ()

    def required_iops(self) -> float:
        return self.constraints.min_iops or self.workload.target_iops

    def growth_factor_final_year(self) -> float:
        return (1.0 + self.workload.growth_per_year) ** (self.service_life_years - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One array to evaluate. ``index`` is its position in the enumeration (its seed stream)."""

    index: int
    drive_model: str
    layout: str
    group_width: int
    drive_count: int
    over_provisioning_fraction: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class YearPerformance:
    """One year of a candidate's service life."""

    year: int
    fill_fraction: float
    required_iops: float
    write_amplification: float
    life_used_fraction: float
    cumulative_life_used_fraction: float
    predicted_iops: float
    latency_at_percentile_s: float
    latency_at_percentile_fail_slow_s: float = math.nan  # with fail-slow drives at the field rates


@dataclass(frozen=True, slots=True, kw_only=True)
class ConstraintCheck:
    constraint: str
    required: float
    predicted: float
    unit: str
    headroom_fraction: float
    met: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """A candidate's predicted figures and constraint checks (a flat record: one table row)."""

    candidate: Candidate
    drive_display_name: str
    usable_capacity_bytes: float
    predicted_iops: float
    member_ios_per_host_io: float
    latency_p50_s: float
    latency_at_percentile_s: float
    worst_second_latency_s: float
    endurance_years: float
    life_used_fraction: float
    purchase_cost_usd: float
    power_cost_usd: float
    replacement_cost_usd: float
    total_cost_usd: float
    power_w: float
    data_loss_probability: float  # either below: more failures than tolerated, or a URE in a rebuild counted as loss
    checks: tuple[ConstraintCheck, ...]
    meets_constraints: bool
    binding_constraint: str
    headroom_fraction: float
    performance_model: str
    years: tuple[YearPerformance, ...] = ()
    # the latency at the percentile over time with fail-slow drives at the field rates, in the
    # year it is highest (constraints.fail_slow_field_rates; NaN otherwise)
    latency_at_percentile_fail_slow_s: float = math.nan
    # P(losing the array over the service life): more failed drives than the layout tolerates
    array_loss_probability: float = 0.0
    # P(some data unreadable after a rebuild): an unrecoverable read error while a group has no
    # redundancy left (what data_loss_probability adds to array_loss_probability)
    unreadable_after_rebuild_probability: float = 0.0
    wear_out_year: int | None = None
    replacement_drive_count: float = 0.0
    hot_spare_count: int = 0
    mttdl_hours: float = math.inf
    rebuild_s: float = 0.0
    cost_per_usable_tb_usd: float = 0.0
    cost_per_iops_usd: float = 0.0
    pareto_optimal: bool = False

    def latency_headroom_fraction(self) -> float:
        for k in self.checks:
            if k.constraint == "latency":
                return k.headroom_fraction
        return math.inf

    def objective_value(self, objective: Objective) -> float:
        return {
            Objective.TOTAL_COST_OF_OWNERSHIP: self.total_cost_usd,
            Objective.PURCHASE_COST: self.purchase_cost_usd,
            Objective.POWER: self.power_w,
            Objective.HEADROOM: -self.headroom_fraction,
        }[objective]


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    rank: int
    evaluation: Evaluation
    explanation: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HddEquivalence:
    hdd_model: str
    drive_count: int
    layout: str
    purchase_cost_usd: float
    power_w: float
    explanation: str


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


# -- validation ---------------------------------------------------------------------------------


def request_catalog(req: PlanRequest, catalog: Catalog | None = None) -> Catalog:
    """The catalog a request searches: ``catalog`` (default the built-in one) plus the request's
    custom drives (already validated, no shadowing: ``catalog.with_user_drives``)."""
    catalog = catalog or builtin_catalog()
    extra = [d for d in req.custom_drives if d.name not in catalog]
    return catalog.with_drives(extra) if extra else catalog


_CONSTRAINT_RANGES = {
    "usable_capacity_bytes": Range(lo=0, lo_open=True, note="(required)"),
    "latency_percentile": Range(lo=0, hi=100, lo_open=True, hi_open=True),
    **dict.fromkeys(("min_iops", "latency_target_s", "worst_second_latency_target_s", "max_purchase_cost_usd", "max_power_w"),
                    NON_NEGATIVE),
    "endurance_margin_fraction": Range(lo=0, hi=1, hi_open=True),
    "max_data_loss_probability": Range(lo=0, hi=1, hi_open=True),
    "max_array_loss_probability": Range(lo=0, hi=1, hi_open=True),
    "max_drive_count": NON_NEGATIVE,
}
_REQUEST_RANGES = {
    "service_life_years": Range(lo=1, hi=15),
    "max_recommendations": Range(lo=1, hi=100),
    "electricity_usd_per_kwh": Range(lo=0, hi=10),
    "seed": COUNT,
    "drives_per_hot_spare": Range(lo=0, hi=MAX_DRIVE_COUNT),
}


def validate_request(req: PlanRequest, catalog: Catalog | None = None) -> None:
    """Raise ``InvalidInputError`` naming every bad field of the request."""
    catalog = request_catalog(req, catalog)
    v: list[Violation] = []
    c = req.constraints
    v.extend(check_fields(c, _CONSTRAINT_RANGES, "constraints"))
    v.extend(check_fields(req, _REQUEST_RANGES))
    s = req.candidate_space
    for i, name in enumerate(s.drive_models):
        try:
            catalog.get(name)
        except UnknownNameError as exc:
            v.append(Violation(field=f"candidate_space.drive_models[{i}]", reason=exc.violations[0].reason))
    for i, name in enumerate(s.layouts):
        try:
            _layouts_for(name, s.group_widths, f"candidate_space.layouts[{i}]")
        except InvalidInputError as exc:
            v.extend(exc.violations)
    for i, op in enumerate(s.over_provisioning_fractions):
        check_range(v, f"candidate_space.over_provisioning_fractions[{i}]", op, 0, 0.9, hi_open=True)
    for i, w in enumerate(s.group_widths):
        check_range(v, f"candidate_space.group_widths[{i}]", w, 1, 64)
    check_range(v, "candidate_space.min_drive_count", s.min_drive_count, 1, MAX_DRIVE_COUNT)
    if check_range(v, "candidate_space.max_drive_count", s.max_drive_count, 1, MAX_DRIVE_COUNT) and s.max_drive_count < s.min_drive_count:
        v.append(Violation(field="candidate_space.max_drive_count",
                           reason=f"must be >= min_drive_count ({s.min_drive_count}), got {s.max_drive_count}"))
    check(v)


# -- enumeration --------------------------------------------------------------------------------


def _layouts_for(name: str, widths: Sequence[int], field_path: str) -> list[Layout | None]:
    """Layouts of one family for the requested widths; ``None`` = width follows drive count."""
    key = name.strip().lower()
    if key.startswith("ec:"):
        return [make_layout(key, field=field_path)]
    if key in ("raid0", "raid10"):
        make_layout(key, 4, field=field_path)  # validates the name
        return [None]
    kind = make_layout(key, {"raid1": 2, "raid5": 3, "raid6": 4}.get(key, 4), field=field_path).kind
    chosen = [w for w in widths if w >= {LayoutKind.RAID1: 2, LayoutKind.RAID5: 3, LayoutKind.RAID6: 4}[kind]] if widths else list(DEFAULT_GROUP_WIDTHS[kind])
    return [make_layout(key, w, field=field_path) for w in chosen]


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
    for i, name in enumerate(s.layouts or DEFAULT_LAYOUTS):
        for layout in _layouts_for(name, s.group_widths, f"candidate_space.layouts[{i}]"):
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


def count_candidates(req: PlanRequest, catalog: Catalog | None = None) -> int:
    catalog = request_catalog(req, catalog)
    return len(_drive_names(req, catalog)) * len(_shapes(req)) * len(_ops(req))


def enumerate_candidates(req: PlanRequest, catalog: Catalog | None = None, *,
                         limit: int = DEFAULT_CANDIDATE_LIMIT) -> list[Candidate]:
    """Every (drive, layout, group width, drive count) in the request's space, in a fixed order.

    Raises ``SearchSpaceTooLargeError`` before building anything when over ``limit``.
    """
    catalog = request_catalog(req, catalog)
    names = _drive_names(req, catalog)
    shapes = _shapes(req)
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
            for layout_name, width, count in shapes:
                out.append(Candidate(index=len(out), drive_model=drive_name, layout=layout_name, group_width=width,
                                     drive_count=count, over_provisioning_fraction=op))
    return out


def candidate_layout(c: Candidate) -> Layout:
    if c.layout.startswith("ec:"):
        return make_layout(c.layout)
    if c.layout == "raid1":
        return make_layout("raid1", c.group_width)
    return make_layout(c.layout, c.group_width)


# -- pruning ------------------------------------------------------------------------------------


def required_capacity_bytes(req: PlanRequest) -> float:
    """Capacity needed in the final year: year-1 capacity grown by the workload's growth rate."""
    return req.constraints.usable_capacity_bytes * req.growth_factor_final_year()


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
            return _headroom_at_most(self.required, self.bound_value)
        return _headroom_at_least(self.required, self.bound_value)

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
    way: capacity and the drives' purchase cost (hot spares left out) are exact, idle power is a
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
        out.append(BoundCheck(bound="budget", required=c.max_purchase_cost_usd, bound_value=(drive.price_usd or 0.0) * cand.drive_count,
                              unit="usd", at_most=True))
    if c.max_power_w:
        out.append(BoundCheck(bound="power", required=c.max_power_w, bound_value=(drive.idle_power_w or 0.0) * cand.drive_count,
                              unit="w", at_most=True))
    iops_needed = max(_required_iops(req, y) for y in range(1, req.service_life_years + 1))
    if iops_needed > 0 and usable > 0:
        # The screen: an upper bound on what the simulation can reach (fresh drives, the fewest
        # member IOs the layout allows) with a margin, checked against the simulation in
        # tests/engine/test_one_path.py, so a pruned candidate would miss the IOPS check.
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
    extra = len(_shapes(req, drive_slots=False)) - len(_shapes(req))
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


# -- evaluation ---------------------------------------------------------------------------------


def _headroom_at_least(required: float, predicted: float) -> float:
    return (predicted - required) / required if required > 0 else math.inf


def _headroom_at_most(limit: float, predicted: float) -> float:
    return (limit - predicted) / limit if limit > 0 else math.inf


def _check(constraint: str, required: float, predicted: float, unit: str, *, at_most: bool) -> ConstraintCheck:
    h = _headroom_at_most(required, predicted) if at_most else _headroom_at_least(required, predicted)
    return ConstraintCheck(constraint=constraint, required=required, predicted=predicted, unit=unit,
                           headroom_fraction=h, met=h >= 0)


def _required_iops(req: PlanRequest, year: int) -> float:
    """The IOPS required in ``year`` (1-based): year 1's grown by the workload's growth rate."""
    return req.required_iops() * (1.0 + req.workload.growth_per_year) ** (year - 1)


def _service_life_wear(req: PlanRequest, cand: Candidate, drive: Drive, layout: Layout) -> endurance.ServiceLifeWear:
    op = cand.over_provisioning_fraction
    usable = usable_capacity_bytes(layout, cand.drive_count, drive.capacity_bytes * (1.0 - op))
    return endurance.service_life_wear(drive, layout, cand.drive_count, req.workload, years=req.service_life_years,
                                       data_bytes_year1=req.constraints.usable_capacity_bytes * req.workload.working_set_fraction,
                                       usable_capacity_bytes=usable, extra_spare_fraction=op)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class CandidateYear:
    """What the simulation of one candidate in one year of its service life is made of: the one
    factory (``candidate_year_case``) the planner, the report and the tests share."""

    drive: Drive
    layout: Layout
    drive_count: int
    year: int
    workload: Workload  # grown to the year, offered at the year's required IOPS (0 = closed loop)
    fill_fraction: float
    extra_spare_fraction: float
    seed: int
    spec: array.ArraySpec
    upper_bound_iops: float


def candidate_year_case(req: PlanRequest, cand: Candidate, year: int, catalog: Catalog | None = None, *,
                        seed: np.random.SeedSequence | None = None,
                        wear: endurance.ServiceLifeWear | None = None) -> CandidateYear:
    """(request, candidate, year) -> the array spec and member service models the answer's
    figures are simulated from (``evaluate.array_spec``): the year's grown workload offered at
    the year's required IOPS, the drives at that year's fill, the candidate's seed stream child
    ``year``, ``req.simulated_seconds`` cut to ``evaluate.MAX_SIMULATED_HOST_IOS``."""
    catalog = request_catalog(req, catalog)
    require_range("year", year, 1, req.service_life_years, hi_name="service_life_years")
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    wear = wear or _service_life_wear(req, cand, drive, layout)
    fill = wear.years[year - 1].fill_fraction
    seed = seed if seed is not None else candidate_seed(req, cand)
    seed_y = one_path.seed_int(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, year)))
    required = _required_iops(req, year)
    wl = replace(req.workload.grown(year - 1), target_iops=float(required))
    bound = performance.iops_upper_bound(drive, layout, cand.drive_count, wl)
    duration = one_path.capped_duration_s(req.simulated_seconds, required if required > 0 else bound)
    spec = one_path.array_spec(drive, layout, cand.drive_count, wl, fill_fraction=max(fill, 1e-6),
                               extra_spare_fraction=cand.over_provisioning_fraction, duration_s=duration, seed=seed_y)
    return CandidateYear(drive=drive, layout=layout, drive_count=cand.drive_count, year=year, workload=wl,
                         fill_fraction=fill, extra_spare_fraction=cand.over_provisioning_fraction, seed=seed_y, spec=spec,
                         upper_bound_iops=bound)


def simulate_candidate_year(req: PlanRequest, case: CandidateYear) -> one_path.SimulatedFigures:
    """The figures of one candidate-year: its offered-load and saturation simulations."""
    return one_path.simulate_figures(case.spec, latency_percentile=req.constraints.latency_percentile,
                                     simulated_s=req.simulated_seconds, upper_bound_iops=case.upper_bound_iops,
                                     fail_slow_field_rates=req.constraints.fail_slow_field_rates)


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


def evaluate(req: PlanRequest, cand: Candidate, catalog: Catalog | None = None, *,
             seed: np.random.SeedSequence | None = None) -> Evaluation:
    """Simulate one candidate year by year (``candidate_year_case``) and check every constraint
    in its worst year. Every performance figure comes from the array simulation."""
    catalog = request_catalog(req, catalog)
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    c = req.constraints
    years = req.service_life_years
    op = cand.over_provisioning_fraction
    usable = usable_capacity_bytes(layout, cand.drive_count, drive.capacity_bytes * (1.0 - op))
    seed = seed if seed is not None else candidate_seed(req, cand)

    wear = _service_life_wear(req, cand, drive, layout)
    year_figures: list[YearPerformance] = []
    perfs: list[one_path.SimulatedFigures] = []
    required: list[float] = []
    for y, yw in zip(range(1, years + 1), wear.years, strict=True):
        case = candidate_year_case(req, cand, y, catalog, seed=seed, wear=wear)
        perf_y = simulate_candidate_year(req, case)
        required_y = case.workload.target_iops
        perfs.append(perf_y)
        required.append(required_y)
        year_figures.append(YearPerformance(
            year=y, fill_fraction=yw.fill_fraction, required_iops=required_y, write_amplification=yw.write_amplification,
            life_used_fraction=yw.life_used_fraction, cumulative_life_used_fraction=yw.cumulative_life_used_fraction,
            predicted_iops=perf_y.max_iops, latency_at_percentile_s=perf_y.latency_at_percentile_s,
            latency_at_percentile_fail_slow_s=perf_y.latency_at_percentile_fail_slow_s))
    # The year that binds: the least IOPS headroom, then the highest latency.
    worst = min(range(years), key=lambda i: ((perfs[i].max_iops - required[i]) / required[i] if required[i] > 0 else math.inf,
                                             -perfs[i].latency_at_percentile_s))
    latency_worst = max(range(years), key=lambda i: perfs[i].latency_at_percentile_s)
    perf = perfs[worst]
    life_used = wear.life_used_fraction

    price = drive.price_usd or 0.0
    spares = cost.hot_spare_count(cand.drive_count, drives_per_spare=req.drives_per_hot_spare)
    purchase = cost.purchase_cost_usd(price, cand.drive_count + spares)
    power = cost.average_power_w(idle_power_w=drive.idle_power_w or 0.0, active_power_w=drive.active_power_w or 0.0,
                                 drive_count=cand.drive_count, utilization=perfs[-1].utilization) \
        + spares * (drive.idle_power_w or 0.0)
    power_cost = cost.energy_cost_usd(power, years=years, usd_per_kwh=req.electricity_usd_per_kwh)
    afr = drive.annual_failure_rate or 0.0
    replacements = wear.wear_out_replacements \
        + cost.expected_failure_replacements(cand.drive_count, annual_failure_rate=afr, service_life_years=years)
    replacement_cost = replacements * price
    total_cost = purchase + power_cost + replacement_cost

    loss_p, mttdl_h = 0.0, math.inf
    array_loss_p = unreadable_p = 0.0
    rebuild_rate = (drive.seq_write_bytes_per_s or 50e6) * req.rebuild_rate_fraction_of_seq_write
    repair_h = reliability.rebuild_hours(drive_capacity_bytes=drive.capacity_bytes * (1.0 - op), rebuild_rate_bytes_per_second=rebuild_rate)
    if afr > 0:
        durability = reliability.array_reliability(
            layout, cand.drive_count, annual_failure_rate=afr, repair_hours=repair_h, service_life_years=years,
            uber=drive.uber or 0.0, drive_capacity_bytes=drive.capacity_bytes * (1.0 - op))
        loss_p, mttdl_h = durability.service_life_loss_probability, durability.mttdl_hours
        # the same chain without unrecoverable read errors: only more failed drives than the
        # layout tolerates lose the array; what the URE term adds is data unreadable after a
        # rebuild (Linux md marks the sector bad and finishes; some controllers abort the rebuild)
        array_loss_p = loss_p
        if drive.uber:
            array_loss_p = reliability.array_reliability(
                layout, cand.drive_count, annual_failure_rate=afr, repair_hours=repair_h, service_life_years=years,
                uber=0.0, drive_capacity_bytes=drive.capacity_bytes * (1.0 - op)).service_life_loss_probability
        unreadable_p = max(0.0, loss_p - array_loss_p)

    checks = [_check("usable_capacity", required_capacity_bytes(req), usable, "bytes", at_most=False)]
    if required[worst] > 0:
        checks.append(_check("iops", required[worst], perf.max_iops, "iops", at_most=False))
    slow_worst = max(p.latency_at_percentile_fail_slow_s for p in perfs) if c.fail_slow_field_rates else math.nan
    if c.latency_target_s > 0:
        # with fail-slow drives asked for, the target holds over time with them
        at_p = slow_worst if c.fail_slow_field_rates else perfs[latency_worst].latency_at_percentile_s
        checks.append(_check("latency", c.latency_target_s, at_p, "s", at_most=True))
    if c.worst_second_latency_target_s > 0:
        worst_second = max(p.worst_second_latency_s for p in perfs)
        checks.append(_check("worst_second_latency", c.worst_second_latency_target_s, worst_second, "s", at_most=True))
    checks.append(_check("endurance", 1.0 - c.endurance_margin_fraction, life_used, "fraction", at_most=True))
    if c.max_purchase_cost_usd > 0:
        checks.append(_check("purchase_cost", c.max_purchase_cost_usd, purchase, "usd", at_most=True))
    if c.max_drive_count > 0:
        checks.append(_check("drive_count", c.max_drive_count, cand.drive_count, "drives", at_most=True))
    if c.max_power_w > 0:
        checks.append(_check("power", c.max_power_w, power, "w", at_most=True))
    if c.max_data_loss_probability > 0:
        checks.append(_check("durability", c.max_data_loss_probability, loss_p, "fraction", at_most=True))
    if c.max_array_loss_probability > 0:
        checks.append(_check("array_loss", c.max_array_loss_probability, array_loss_p, "fraction", at_most=True))
    binding = min(checks, key=lambda k: k.headroom_fraction)
    sustained = min(p.max_iops for p in perfs)
    return Evaluation(
        candidate=cand, drive_display_name=drive.display_name, usable_capacity_bytes=usable,
        predicted_iops=sustained, member_ios_per_host_io=perf.member_ios_per_host_io,
        latency_p50_s=perfs[latency_worst].latency_p50_s, latency_at_percentile_s=perfs[latency_worst].latency_at_percentile_s,
        worst_second_latency_s=max(p.worst_second_latency_s for p in perfs), endurance_years=wear.endurance_years,
        life_used_fraction=life_used, purchase_cost_usd=purchase, power_cost_usd=power_cost,
        replacement_cost_usd=replacement_cost, total_cost_usd=total_cost,
        power_w=power, data_loss_probability=loss_p, array_loss_probability=array_loss_p,
        unreadable_after_rebuild_probability=unreadable_p, checks=tuple(checks),
        meets_constraints=all(k.met for k in checks), binding_constraint=binding.constraint,
        headroom_fraction=binding.headroom_fraction, performance_model=perf.model,
        years=tuple(year_figures), latency_at_percentile_fail_slow_s=slow_worst,
        wear_out_year=wear.wear_out_year, replacement_drive_count=replacements, hot_spare_count=spares,
        mttdl_hours=mttdl_h, rebuild_s=repair_h * HOUR_S, cost_per_usable_tb_usd=total_cost / (usable / 1e12) if usable else math.inf,
        cost_per_iops_usd=total_cost / sustained if sustained > 0 else math.inf,
    )


def candidate_seed(req: PlanRequest, cand: Candidate) -> np.random.SeedSequence:
    """The candidate's own random stream: child ``index`` of ``SeedSequence(req.seed)``, the
    same stream ``SeedSequence(req.seed).spawn(n)[index]`` gives, without spawning n."""
    return np.random.SeedSequence(req.seed, spawn_key=(cand.index,))


def evaluate_batch(req: PlanRequest, candidates: Sequence[Candidate], catalog: Catalog | None = None) -> list[Evaluation]:
    """Evaluate candidates; each gets the seed stream of its enumeration index."""
    return [evaluate(req, cand, catalog, seed=candidate_seed(req, cand)) for cand in candidates]


def estimated_cost_s(req: PlanRequest, cand: Candidate) -> float:
    """Rough CPU seconds to evaluate a candidate (batch sizing), from the performance model."""
    return req.service_life_years * one_path.estimated_cost_s(cand.drive_count, req.workload)


# -- ranking ------------------------------------------------------------------------------------

_UNITS_TEXT = {
    "usable_capacity": "usable capacity", "iops": "IOPS", "latency": "latency", "worst_second_latency": "worst-second latency",
    "endurance": "endurance", "purchase_cost": "budget", "drive_count": "drive slots", "power": "power", "durability": "durability",
    "array_loss": "array loss",
}


def _fmt_check(k: ConstraintCheck) -> str:
    if k.unit == "bytes":
        return f"{k.predicted / 1e12:.2f} TB of {k.required / 1e12:.2f} TB"
    if k.unit == "s":
        return f"{k.predicted * 1e3:.3g} ms against {k.required * 1e3:.3g} ms"
    if k.unit == "fraction" and k.constraint == "endurance":
        return f"{k.predicted * 100:.0f}% life used (limit {k.required * 100:.0f}%)"
    if k.unit == "usd":
        return f"${k.predicted:,.0f} of ${k.required:,.0f}"
    return f"{k.predicted:,.4g} against {k.required:,.4g} {k.unit}"


def explain(req: PlanRequest, e: Evaluation, rank_: int, objective: Objective) -> str:
    c = e.candidate
    what = f"{c.layout.upper()} of {c.drive_count} x {e.drive_display_name}"
    if c.layout not in ("raid0", "raid10") and not c.layout.startswith("ec:"):
        what += f" (groups of {c.group_width})"
    binding = next(k for k in e.checks if k.constraint == e.binding_constraint)
    if e.meets_constraints:
        why = {
            Objective.TOTAL_COST_OF_OWNERSHIP: f"lowest {req.service_life_years}-year cost of ownership (${e.total_cost_usd:,.0f})",
            Objective.PURCHASE_COST: f"lowest purchase cost (${e.purchase_cost_usd:,.0f})",
            Objective.POWER: f"lowest power ({e.power_w:.0f} W)",
            Objective.HEADROOM: f"largest headroom ({e.headroom_fraction:+.0%})",
        }[objective]
        lead = "best: " if rank_ == 1 else f"#{rank_}: "
        return (f"{what}: {lead}{why} among arrays that meet every constraint through year {req.service_life_years}; "
                f"{_UNITS_TEXT[binding.constraint]} binds first at {_fmt_check(binding)} ({binding.headroom_fraction:+.0%} headroom).")
    failed = [k for k in e.checks if not k.met]
    worst = min(failed, key=lambda k: k.headroom_fraction)
    return f"{what}: misses {_UNITS_TEXT[worst.constraint]} ({_fmt_check(worst)}); {len(failed)} constraint(s) unmet."


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


def hdd_equivalence(req: PlanRequest, best: Evaluation, catalog: Catalog | None = None, *,
                    max_drives: int = one_path.MAX_EQUIVALENT_DRIVES) -> HddEquivalence | None:
    """How many disks of ``req.hdd_model``, in the best candidate's layout family, carry the same
    workload (its final-year IOPS, or the winner's sustained IOPS when none is required, at the
    latency target) with the same capacity: ``evaluate.equivalent_drive_count``, the one search
    (simulation through the same factory, one cap ``max_drives``) ``arrayplan simulate
    --compare-hdd`` uses too. ``drive_count`` is 0 when no array up to the cap meets every target;
    the explanation says "no number holds" only when even a nearly idle group misses the latency
    target."""
    catalog = request_catalog(req, catalog)
    if req.hdd_model:
        return _hdd_equivalence_of(req, best, catalog, catalog.get(req.hdd_model, "hdd_model"), max_drives)
    # the catalog's disk that fits the question: the disks whose bound-sized arrays cost within
    # FITTING_HDD_MARGIN of the cheapest are sized by the simulation, and the cheapest wins
    fits = fitting_hdds(req, catalog)
    tried = [e for e in (_hdd_equivalence_of(req, best, catalog, d, max_drives) for d in fits) if e is not None]
    if not tried:
        return None
    sized = [e for e in tried if e.drive_count > 0]
    out = min(sized, key=lambda e: (e.purchase_cost_usd, e.hdd_model)) if sized else tried[0]
    priced = len([d for d in catalog if d.kind == "hdd" and d.price_usd])
    return replace(out, explanation=out.explanation + (
        f" It is the catalog's disk that fits the question: of its {priced} priced disks, "
        f"{', '.join(d.name for d in fits)} came within {FITTING_HDD_MARGIN - 1:.0%} of the cheapest by the capacity and "
        f"IOPS bounds and were sized by the simulation; this one costs least."))


def _hdd_equivalence_of(req: PlanRequest, best: Evaluation, catalog: Catalog, hdd: Drive,
                        max_drives: int) -> HddEquivalence | None:
    c = req.constraints
    cand = best.candidate
    base = candidate_layout(cand)
    stripes_all = base.kind in (LayoutKind.RAID0, LayoutKind.RAID10)
    w = req.workload.grown(req.service_life_years - 1)
    iops = _required_iops(req, req.service_life_years) or best.predicted_iops
    if not (iops > 0 and math.isfinite(iops)):
        return None
    step = 2 if base.kind is LayoutKind.RAID10 else (1 if stripes_all else cand.group_width)
    cap = min(max_drives, MAX_STRIPE_WIDTH) if stripes_all else max_drives

    def layout_for(n: int) -> Layout:
        if stripes_all:
            return candidate_layout(Candidate(index=0, drive_model=hdd.name, layout=cand.layout, group_width=max(n, 4 if base.kind is LayoutKind.RAID10 else 1),
                                              drive_count=n))
        return base

    need = required_capacity_bytes(req)
    seed = one_path.seed_int(np.random.SeedSequence(req.seed, spawn_key=(2**32 - 1,)))
    search: dict[str, Any] = {"duration_s": req.simulated_seconds, "warmup_s": 0.25, "seed": seed, "max_drive_count": cap,
              "required_capacity_bytes": need, "group_width": step, "min_drive_count": 4 if base.kind is LayoutKind.RAID10 else 1}
    q = c.latency_percentile / 100.0
    eq = one_path.equivalent_drive_count(hdd, layout_for if stripes_all else base, w, target_iops=iops, latency_quantile=q,
                                         latency_target_s=c.latency_target_s, **search)
    pct = f"p{c.latency_percentile:g}"
    target = f" at {pct} <= {c.latency_target_s * 1e3:g} ms" if c.latency_target_s > 0 else ""
    what = f"{iops:,.0f} IOPS{target} with {need / 1e12:.1f} TB"
    n = eq.drive_count
    if n:
        r = eq.result
        assert r is not None
        lat = r.latency_percentile_s(q)
        smaller = [t for t in eq.tried if t[0] < n]
        if n == eq.capacity_drive_count:
            binding = "capacity"
        elif smaller:
            prev = max(smaller, key=lambda t: t[0])
            binding = "IOPS" if prev[1] < (1.0 - one_path.KEEP_UP_TOLERANCE) * iops else f"{pct} latency"
        else:
            binding = "IOPS"
        util = float(np.mean(r.drive_utilisation)) if len(r.drive_utilisation) else 1.0
        explanation = (f"{n:,} x {hdd.display_name} in {cand.layout.upper()} carry {what} (simulated {pct} "
                       f"{lat * 1e3:.3g} ms); fewer would miss on {binding}.")
    else:
        util = 1.0
        priced = 0  # the disks the cost and power below are for
        if eq.no_number_holds_latency:
            explanation = (f"No number of {hdd.display_name} in {cand.layout.upper()} carries {what}: even nearly idle, one "
                           f"group's {pct} is {eq.unloaded_latency_s * 1e3:.3g} ms (seek + rotation).")
            loose = one_path.equivalent_drive_count(hdd, layout_for if stripes_all else base, w, target_iops=iops,
                                                    latency_quantile=q, latency_target_s=0.0, **search)
            if loose.drive_count and loose.result is not None:
                priced = loose.drive_count
                util = float(np.mean(loose.result.drive_utilisation)) if len(loose.result.drive_utilisation) else 1.0
                explanation += (f" Without the latency target, {loose.drive_count:,} of them carry the IOPS and capacity "
                                f"(simulated {pct} {loose.result.latency_percentile_s(q) * 1e3:.3g} ms); the cost and power "
                                f"are theirs.")
        else:
            explanation = (f"No array of {hdd.display_name} in {cand.layout.upper()} up to {cap:,} disks carries {what} "
                           f"in the simulation (the search's cap).")
    counted = n if n else (priced if eq.no_number_holds_latency else 0)
    power = cost.average_power_w(idle_power_w=hdd.idle_power_w or 0.0, active_power_w=hdd.active_power_w or 0.0,
                                 drive_count=counted, utilization=util)
    return HddEquivalence(hdd_model=hdd.name, drive_count=n, layout=cand.layout, purchase_cost_usd=(hdd.price_usd or 0.0) * counted,
                          power_w=power, explanation=explanation)


def fitting_hdds(req: PlanRequest, catalog: Catalog) -> list[Drive]:
    """The catalog's hard disks that may fit the question: each priced disk's bound-sized array
    (drives for the required capacity, and for the final year's IOPS at one disk's random-IO bound,
    ``performance.iops_upper_bound``, whichever is more) is priced, and the disks within
    ``FITTING_HDD_MARGIN`` of the cheapest (at most ``FITTING_HDD_MAX``) are returned, cheapest
    first, for the simulation to size. Empty when the catalog has no priced disk."""
    need = required_capacity_bytes(req)
    w = req.workload.grown(req.service_life_years - 1)
    iops = _required_iops(req, req.service_life_years)
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


# Disks sized by the simulation for the comparison: those within 30 % of the cheapest bound-sized
# array (the bounds ignore queueing and latency, which favour fast disks), at most three.
FITTING_HDD_MARGIN = 1.3
FITTING_HDD_MAX = 3


def explain_pareto(e: Evaluation) -> str:
    c = e.candidate
    latency = e.latency_headroom_fraction()
    lat = f", latency headroom {latency:+.0%}" if math.isfinite(latency) else ""
    return (f"{c.layout.upper()} of {c.drive_count} x {e.drive_display_name}: ${e.total_cost_usd:,.0f}{lat}, "
            f"P(data loss) {e.data_loss_probability:.2g}; no other candidate is better on all three.")


def rank(req: PlanRequest, evaluations: Iterable[Evaluation], *, candidates_total: int, candidates_pruned: int,
         catalog: Catalog | None = None, pruning: PruneReport | None = None) -> PlanOutcome:
    """Order by the objective: constraint-meeting candidates first, then the nearest misses.
    ``pruning`` (from ``prune_report``) puts what each cheap bound removed into the outcome."""
    catalog = request_catalog(req, catalog)
    evals = list(evaluations)
    removed = pruning.removed_by_bound if pruning is not None else ()
    removed_note = f" Candidates removed by each bound: {removal_text(removed)}." if removed else ""
    objective = req.objective
    front_ids = {e.candidate.index for e in pareto_front([e for e in evals if e.meets_constraints])}
    evals = [replace(e, pareto_optimal=e.candidate.index in front_ids) for e in evals]
    meeting = sorted((e for e in evals if e.meets_constraints), key=lambda e: (e.objective_value(objective), e.candidate.index))
    missing = sorted((e for e in evals if not e.meets_constraints), key=lambda e: (-e.headroom_fraction, e.objective_value(objective), e.candidate.index))
    chosen = (meeting or missing)[: req.max_recommendations]
    recs = tuple(Recommendation(rank=i + 1, evaluation=e, explanation=explain(req, e, i + 1, objective)) for i, e in enumerate(chosen))
    models = tuple(sorted({e.performance_model for e in evals})) + ("endurance:rated-host-writes", "reliability:closed-form-mttdl", "cost:tco-v1")
    if meeting:
        best = recs[0]
        summary = (f"{len(meeting)} of {candidates_total} candidate arrays meet every constraint "
                   f"({candidates_pruned} pruned by bounds, {len(evals)} evaluated). {best.explanation}")
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
    front = tuple(Recommendation(rank=ranks.get(e.candidate.index, 0), evaluation=e, explanation=explain_pareto(e))
                  for e in sorted((e for e in meeting if e.pareto_optimal), key=lambda e: (e.total_cost_usd, e.candidate.index)))
    hdd = hdd_equivalence(req, recs[0].evaluation, catalog) if meeting else None
    return PlanOutcome(recommendations=recs, constraints_met=bool(meeting), summary=summary, candidates_total=candidates_total,
                       candidates_pruned=candidates_pruned, candidates_evaluated=len(evals), models=models,
                       pareto_front=front, hdd_equivalence=hdd, removed_by_bound=removed,
                       nearest_misses=pruning.nearest_misses if pruning is not None else (),
                       assumptions=stated_assumptions(req))


def stated_assumptions(req: PlanRequest) -> tuple[str, ...]:
    """What the answer rests on that the request did not say, in words a storage engineer checks:
    a derived daily write volume, the layouts and drive counts searched by default, the endurance
    margin, growth, the simulated window per candidate-year, the HDD compared, fail-slow drives."""
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
                   f"{req.growth_factor_final_year():.2f}x year 1 ({required_capacity_bytes(req) / 1e12:,.1f} TB).")
    cs = req.candidate_space
    if not cs.layouts:
        out.append(f"Layouts searched: {', '.join(DEFAULT_LAYOUTS)} (the default; name candidate_space.layouts for erasure codes "
                   "such as ec:8+3).")
    if not cs.drive_models:
        out.append("Drives searched: every catalog drive (SSDs and hard disks) and the plan's custom drives.")
    out.append(f"Drive counts searched: {cs.min_drive_count} to {cs.max_drive_count}.")
    out.append(f"Endurance margin: {req.constraints.endurance_margin_fraction:.0%} of rated endurance kept in reserve.")
    floor = req.constraints.max_array_loss_probability
    out.append(f"Durability floor: P(losing the array over the service life) at most {floor:.2g} (unreadable sectors after a "
               "rebuild are reported beside it, not held to it)." if floor > 0 else "No durability floor (max_array_loss_probability 0).")
    out.append(f"Performance: each candidate-year simulated for {req.simulated_seconds:g} s of array time (at most "
               f"{one_path.MAX_SIMULATED_HOST_IOS:,} host IOs); the latency percentile is read from that window.")
    if req.constraints.fail_slow_field_rates:
        out.append("Latency with fail-slow drives at The Tail at Store's field rates (a group holds a >2x slower drive 2.2 % (SSD) "
                   "/ 1.5 % (disk) of the time; each year simulated again with one member 2x slower).")
    else:
        out.append("No fail-slow drives in the latency figures (set constraints.fail_slow_field_rates for the field rates).")
    if not req.hdd_model:
        out.append("Hard-disk comparison: the catalog's disk that fits the question (cheapest by capacity and IOPS bounds, sized "
                   "by the simulation).")
    return tuple(out)


def plan(req: PlanRequest, catalog: Catalog | None = None, *, limit: int = DEFAULT_CANDIDATE_LIMIT) -> PlanOutcome:
    """The whole plan in-process (the service fans ``evaluate_batch`` out instead)."""
    catalog = request_catalog(req, catalog)
    validate_request(req, catalog)
    candidates = enumerate_candidates(req, catalog, limit=limit)
    pruning = prune_report(req, candidates, catalog)
    return rank(req, evaluate_batch(req, list(pruning.kept), catalog), candidates_total=len(candidates),
                candidates_pruned=pruning.pruned, catalog=catalog, pruning=pruning)
