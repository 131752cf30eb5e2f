"""One candidate evaluated: each year of its service life simulated (``candidate_year_case`` ->
``simulation.simulate_figures``), its wear, durability and cost computed, and every constraint
checked in its worst year (``evaluate``). ``evaluate_batch`` is the unit the services layer fans
out as a Ray task.

The same request and seed give the same figures: each candidate's random stream is
``SeedSequence(seed).spawn(candidate_count)[index]`` and each year takes child ``year`` of it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from . import array, cost, endurance, performance, reliability, simulation
from .candidates import Candidate, candidate_layout, headroom_at_least, headroom_at_most
from .catalog import Catalog, Drive
from .errors import require_range
from .layout import Layout, usable_capacity_bytes
from .plan_request import Objective, PlanRequest, request_catalog, required_capacity_bytes, required_iops_in_year
from .units import HOUR_S
from .workload import Workload


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


def _check(constraint: str, required: float, predicted: float, unit: str, *, at_most: bool) -> ConstraintCheck:
    h = headroom_at_most(required, predicted) if at_most else headroom_at_least(required, predicted)
    return ConstraintCheck(constraint=constraint, required=required, predicted=predicted, unit=unit,
                           headroom_fraction=h, met=h >= 0)


def service_life_wear_of(req: PlanRequest, cand: Candidate, drive: Drive, layout: Layout) -> endurance.ServiceLifeWear:
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
    figures are simulated from (``simulation.array_spec``): the year's grown workload offered at
    the year's required IOPS, the drives at that year's fill, the candidate's seed stream child
    ``year``, ``req.simulated_seconds`` cut to ``simulation.MAX_SIMULATED_HOST_IOS``."""
    catalog = request_catalog(req, catalog)
    require_range("year", year, 1, req.service_life_years, hi_name="service_life_years")
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    wear = wear or service_life_wear_of(req, cand, drive, layout)
    fill = wear.years[year - 1].fill_fraction
    seed = seed if seed is not None else candidate_seed(req, cand)
    seed_y = simulation.seed_int(np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, year)))
    required = required_iops_in_year(req, year)
    wl = replace(req.workload.grown(year - 1), target_iops=float(required))
    bound = performance.iops_upper_bound(drive, layout, cand.drive_count, wl)
    duration = simulation.capped_duration_s(req.simulated_seconds, required if required > 0 else bound)
    spec = simulation.array_spec(drive, layout, cand.drive_count, wl, fill_fraction=max(fill, 1e-6),
                               extra_spare_fraction=cand.over_provisioning_fraction, duration_s=duration, seed=seed_y)
    return CandidateYear(drive=drive, layout=layout, drive_count=cand.drive_count, year=year, workload=wl,
                         fill_fraction=fill, extra_spare_fraction=cand.over_provisioning_fraction, seed=seed_y, spec=spec,
                         upper_bound_iops=bound)


def simulate_candidate_year(req: PlanRequest, case: CandidateYear) -> simulation.SimulatedFigures:
    """The figures of one candidate-year: its offered-load and saturation simulations."""
    return simulation.simulate_figures(case.spec, latency_percentile=req.constraints.latency_percentile,
                                     simulated_s=req.simulated_seconds, upper_bound_iops=case.upper_bound_iops,
                                     fail_slow_field_rates=req.constraints.fail_slow_field_rates)


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

    wear = service_life_wear_of(req, cand, drive, layout)
    year_figures: list[YearPerformance] = []
    perfs: list[simulation.SimulatedFigures] = []
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


# The cost model's coefficients (``estimated_cost_s``), fitted to measured evaluations.
COST_PER_YEAR_S = 5.6e-3
COST_PER_SSD_DRIVE_YEAR_S = 1.17e-3
COST_PER_HOST_IO_S = 2.28e-7


def estimated_cost_s(req: PlanRequest, cand: Candidate, catalog: Catalog | None = None) -> float:
    """CPU seconds ``evaluate`` takes for this candidate (for sizing Ray batches):

    ``COST_PER_YEAR_S x years + COST_PER_SSD_DRIVE_YEAR_S x SSD drives x years
    + COST_PER_HOST_IO_S x simulated host IOs``,

    the host IOs being, over the years, the offered-load window (the year's required IOPS x
    ``req.simulated_seconds``, capped as ``candidate_year_case`` caps it) plus the saturation run
    (the year's ``performance.iops_upper_bound`` x its window, as ``simulation.saturation_spec``
    sizes it). An SSD member carries its own free-space state through the run, a disk does not:
    hence the per-SSD-drive term.

    Fitted (least squares on relative error) to 36 evaluations measured on the 2-core machine
    with warm kernels: 12 kept candidates each of the OLTP (25K IOPS, 8 TB, 8 KiB), archive
    (100 TB, 300 IOPS of 1 MiB) and 200K-IOPS (50 TB) questions, 5 years each, 4-48 drives,
    RAID 10/5/6, SSDs and disks; measured 0.05-2.1 s per candidate. The fit's median error is
    22 % and its 90th percentile 52 % (it under-predicts SSDs under 1 MiB IOs, whose host IOs
    split into many member IOs) - enough to size batches, not a benchmark."""
    catalog = request_catalog(req, catalog)
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    years = req.service_life_years
    host_ios = 0.0
    for y in range(1, years + 1):
        required = required_iops_in_year(req, y)
        wl = replace(req.workload.grown(y - 1), target_iops=float(required))
        bound = performance.iops_upper_bound(drive, layout, cand.drive_count, wl)
        rate = required if required > 0 else bound
        host_ios += rate * simulation.capped_duration_s(req.simulated_seconds, rate)
        if math.isfinite(bound):
            sat_s = min(max(req.simulated_seconds, simulation.SATURATION_MAX_S),
                        max(0.05, simulation.SATURATION_HOST_IOS / max(bound, 1.0)))
            host_ios += bound * sat_s
    ssd_drives = cand.drive_count if drive.kind == "ssd" else 0
    return COST_PER_YEAR_S * years + COST_PER_SSD_DRIVE_YEAR_S * ssd_drives * years + COST_PER_HOST_IO_S * host_ios
