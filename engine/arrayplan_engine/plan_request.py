"""What a plan asks: the workload, the constraints, the candidate space and the objective, with
their defaults and the validation that names every bad field (``validate_request``).

The first stage of the planner's flow: ``plan_request`` (the question) -> ``candidates`` (enumerate,
bound, prune) -> ``evaluation`` (simulate each candidate year by year, check each constraint) ->
``ranking`` (order, Pareto front, explanations, the hard-disk comparison); ``recommend.plan`` runs
them in-process and the services layer fans the evaluation out as Ray tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from . import cost, simulation
from .catalog import Catalog, Drive, builtin_catalog
from .errors import (
    COUNT,
    NON_NEGATIVE,
    InvalidInputError,
    Range,
    UnknownNameError,
    Violation,
    check,
    check_fields,
    check_range,
)
from .layout import Layout, LayoutKind, make_layout
from .workload import Workload

DEFAULT_LAYOUTS = ("raid10", "raid5", "raid6", "ec:4+2", "ec:8+3", "ec:10+4")


DEFAULT_GROUP_WIDTHS = {
    LayoutKind.RAID1: (2, 3),
    LayoutKind.RAID5: (4, 6, 8, 12),
    LayoutKind.RAID6: (6, 8, 10, 12, 16),
}


DEFAULT_MAX_DRIVE_COUNT = 48


# The default durability floor: P(losing the array over the service life) at most 1e-4 (assumed:
# one array in ten thousand lost over its life; overridable, 0 = none)
DEFAULT_MAX_ARRAY_LOSS_PROBABILITY = 1e-4


# The default fill target: the array holds the final year's data at most 80 % full (assumed: object
# stores and file systems plan to stop at 80-85 % full, where free-space search, rebalancing and SSD
# garbage collection still have room; overridable, 1 = fill to the brim)
DEFAULT_MAX_FILL_FRACTION = 0.8


MAX_DRIVE_COUNT = 1_024


DEFAULT_CANDIDATE_LIMIT = 100_000


class Objective(StrEnum):
    TOTAL_COST_OF_OWNERSHIP = "total_cost_of_ownership"
    PURCHASE_COST = "purchase_cost"
    POWER = "power"
    HEADROOM = "headroom"

    def value_of(self, figures: Any) -> float:
        """The figure this objective minimises, read from a record with ``total_cost_usd``,
        ``purchase_cost_usd``, ``power_w`` and ``headroom_fraction`` (an evaluation, or the
        search's bounds on one): headroom is maximised, so its negative."""
        if self is Objective.HEADROOM:
            return -float(figures.headroom_fraction)
        return float({Objective.TOTAL_COST_OF_OWNERSHIP: figures.total_cost_usd, Objective.PURCHASE_COST: figures.purchase_cost_usd,
                      Objective.POWER: figures.power_w}[self])


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """What a recommendation must satisfy; 0 means "no constraint" except capacity."""

    usable_capacity_bytes: float
    min_iops: float = 0.0
    latency_percentile: float = 99.0
    latency_target_s: float = 0.0
    worst_second_latency_target_s: float = 0.0
    # The horizon the worst second is the worst of: seconds of array time in the binding year
    # (simulation.horizon_worst_second); default a simulated hour.
    worst_second_horizon_s: float = simulation.DEFAULT_HORIZON_S
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
    # Highest share of the usable capacity the final year's data may fill, in (0, 1]: the capacity
    # check asks for the final year's data / this. The default is a target a storage engineer plans
    # to (assumed, stated in every answer).
    max_fill_fraction: float = DEFAULT_MAX_FILL_FRACTION


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateSpace:
    drive_models: tuple[str, ...] = ()
    layouts: tuple[str, ...] = ()
    group_widths: tuple[int, ...] = ()
    min_drive_count: int = 1
    max_drive_count: int = DEFAULT_MAX_DRIVE_COUNT
    # Short-stroke over-provisioning fractions to try (share of each drive left unused).
    over_provisioning_fractions: tuple[float, ...] = ()
    # What each drive bay costs and draws with its enclosure (drives not included), paid for every
    # drive and hot spare of a box; defaults sourced in cost.py (ENCLOSURE_ASSUMPTION).
    bay_cost_usd: float = cost.ENCLOSURE_USD_PER_BAY
    bay_power_w: float = cost.ENCLOSURE_POWER_W_PER_BAY


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
    # Seconds of array simulation per candidate and year (cut to ``simulation.MAX_SIMULATED_HOST_IOS``).
    simulated_seconds: float = simulation.DEFAULT_SIMULATED_S
    # Drives the request brings (PlanSpec.custom_drives), searched with the catalog's; their
    # names may be used in candidate_space.drive_models and may not shadow a catalog name.
    custom_drives: tuple[Drive, ...] = ()
    # Simulate every kept candidate (``plan --exhaustive``) instead of the bound-ordered search
    # (``search.search``), to check the search against it.
    exhaustive: bool = False
    # Coordinated reads (``array.ArraySpec.coordinated_reads``) on the candidates with parity
    # (RAID 5, RAID 6, ec:K+M; ``simulation.coordinated_reads_apply``); RAID 0 and mirrors are
    # simulated without (nothing to read around). Each candidate it applies to also reports its
    # tail without the policy (``evaluation.Evaluation.latency_at_percentile_without_coordinated_reads_s``).
    coordinated_reads: bool = False
    # Arrays that span servers (``cluster_plan.ClusterSpace``; CandidateSpace.servers): cluster
    # candidates ranked with the boxes. None = single boxes only.
    cluster: Any = None
    # How the members' free space is kept (``endurance.DISCARDS``): ``auto`` (none for parity
    # layouts, passed for RAID 0/1/10), ``none`` (every LBA mapped once the array is initialised)
    # or ``passed`` (discards reach the members: the FTL holds only the data).
    discards: str = "auto"

    def required_iops(self) -> float:
        return self.constraints.min_iops or self.workload.target_iops

    def growth_factor_final_year(self) -> float:
        return (1.0 + self.workload.growth_per_year) ** (self.service_life_years - 1)


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
    "worst_second_horizon_s": Range(lo=2, hi=simulation.MAX_HORIZON_S, unit="s"),
    "endurance_margin_fraction": Range(lo=0, hi=1, hi_open=True),
    "max_data_loss_probability": Range(lo=0, hi=1, hi_open=True),
    "max_array_loss_probability": Range(lo=0, hi=1, hi_open=True),
    "max_fill_fraction": Range(lo=0, hi=1, lo_open=True),
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
    if req.discards not in ("auto", "none", "passed"):
        v.append(Violation(field="discards", reason=f"must be one of auto, none, passed; got {req.discards!r}"))
    if not isinstance(req.coordinated_reads, bool):
        v.append(Violation(field="coordinated_reads", reason=f"must be true or false, got {req.coordinated_reads!r}"))
    s = req.candidate_space
    for i, name in enumerate(s.drive_models):
        try:
            catalog.get(name)
        except UnknownNameError as exc:
            v.append(exc.violations[0].at(f"candidate_space.drive_models[{i}]"))
    for i, name in enumerate(s.layouts):
        try:
            layouts_for(name, s.group_widths, f"candidate_space.layouts[{i}]")
        except InvalidInputError as exc:
            v.extend(exc.violations)
    for i, op in enumerate(s.over_provisioning_fractions):
        check_range(v, f"candidate_space.over_provisioning_fractions[{i}]", op, 0, 0.9, hi_open=True)
    for i, w in enumerate(s.group_widths):
        check_range(v, f"candidate_space.group_widths[{i}]", w, 1, 64)
    check_range(v, "candidate_space.bay_cost_usd", s.bay_cost_usd, 0, cost.MAX_BAY_COST_USD, unit="USD")
    check_range(v, "candidate_space.bay_power_w", s.bay_power_w, 0, cost.MAX_BAY_POWER_W, unit="W")
    check_range(v, "candidate_space.min_drive_count", s.min_drive_count, 1, MAX_DRIVE_COUNT)
    if check_range(v, "candidate_space.max_drive_count", s.max_drive_count, 1, MAX_DRIVE_COUNT) and s.max_drive_count < s.min_drive_count:
        v.append(Violation(field="candidate_space.max_drive_count",
                           reason=f"must be >= min_drive_count ({s.min_drive_count}), got {s.max_drive_count}"))
    check(v)


def layouts_for(name: str, widths: Sequence[int], field_path: str) -> list[Layout | None]:
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


def final_year_data_bytes(req: PlanRequest) -> float:
    """Data held in the final year: year-1 capacity grown by the workload's growth rate."""
    return req.constraints.usable_capacity_bytes * req.growth_factor_final_year()


def required_capacity_bytes(req: PlanRequest) -> float:
    """Usable capacity needed: the final year's data at no more than the fill target
    (``constraints.max_fill_fraction``), i.e. ``final_year_data_bytes / max_fill_fraction``."""
    return final_year_data_bytes(req) / req.constraints.max_fill_fraction


def required_iops_in_year(req: PlanRequest, year: int) -> float:
    """The IOPS required in ``year`` (1-based): year 1's grown by the workload's growth rate."""
    return req.required_iops() * (1.0 + req.workload.growth_per_year) ** (year - 1)
