"""One candidate evaluated: each year of its service life simulated (``candidate_year_case`` ->
``simulation.simulate_figures``), its wear, durability and cost computed, and every constraint
checked in its worst year (``evaluate``). ``evaluate_batch`` is the unit the services layer fans
out as a Ray task.

The same request and seed give the same figures, and common random numbers run across the
candidates of a year: the seed of a candidate-year comes from (request seed, the year's workload
state) (``state_seed``), never from the candidate's place in the enumeration, so the same array
gets the same figures wherever it sits, two arrays of one year are compared under the same random
streams, and years in the same state are simulated once.

Decisions have a margin: a simulated figure's check is met only when the pessimistic end of its
``simulation.CONFIDENCE_LEVEL`` interval meets the constraint (the low end of the sustained IOPS,
the high end of a latency); ``ConstraintCheck.confidence_level`` says how sure the verdict is.

Screen with a short run, decide with long ones: a full evaluation first runs its most demanding
year (the highest required IOPS, the latest of equals) once, at ``simulation.SCREENING``. An array
that sustains less than ``1 - SCREEN_MARGIN`` of that year's required IOPS there cannot pass (its
full interval's low end would have to lie above the required rate, over 25 % above one run's
estimate, while one run's relative error is a few per cent), so it is reported from screening runs
(one replication per year, ``simulation_precision`` "screening") instead of the full
replications. The screen depends only on the candidate and the request, so a search and
``plan --exhaustive`` give every candidate the same evaluation. Whole-catalog questions spend most
of their simulation on such arrays (the analytic IOPS bound is optimistic for disks): 198 of the
286 arrays the archive-budget example simulates miss by more than the margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import array, cost, endurance, performance, reliability, simulation
from .candidates import Candidate, candidate_layout, headroom_at_least, headroom_at_most
from .catalog import Catalog, Drive
from .errors import require_range
from .interval import NOT_ESTIMATED, Interval
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
    # simulated figures with their simulation.CONFIDENCE_LEVEL intervals (NaN ends: not estimated)
    predicted_iops: Interval
    latency_at_percentile_s: Interval
    # share of each member's LBAs the FTL holds mapped (``PlanRequest.discards``; the used state simulated)
    mapped_fraction: float = math.nan
    latency_at_percentile_fail_slow_s: Interval = NOT_ESTIMATED  # with fail-slow drives at the field rates
    replications: int = 1
    converged: bool = False
    stop_reason: str = "screening"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConstraintCheck:
    constraint: str
    required: float
    # the predicted figure and its interval (analytic figures: low = high = value); the level
    # the interval is at: simulation.CONFIDENCE_LEVEL for a simulated figure with an interval,
    # 1.0 for an analytic one (no simulation noise), 0.0 for a simulated point estimate without
    # an interval (a screening run). met is judged at the pessimistic end.
    predicted: Interval
    unit: str
    headroom_fraction: float  # of the point estimate
    met: bool
    confidence_level: float = 1.0
    pessimistic_headroom_fraction: float = math.nan
    at_most: bool = False

    @property
    def optimistic_headroom_fraction(self) -> float:
        """The headroom at the interval's favourable end."""
        best = self.predicted.low if self.at_most else self.predicted.high
        if not math.isfinite(best):
            return self.headroom_fraction
        return headroom_at_most(self.required, best) if self.at_most else headroom_at_least(self.required, best)


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """A candidate's predicted figures and constraint checks (a flat record: one table row)."""

    candidate: Candidate
    drive_display_name: str
    usable_capacity_bytes: float
    # The simulated figures, each with its simulation.CONFIDENCE_LEVEL interval (``Interval``: in
    # the same year as the figure; NaN ends when not estimated: a screening run).
    predicted_iops: Interval
    member_ios_per_host_io: float
    latency_p50_s: Interval
    latency_at_percentile_s: Interval
    worst_second_latency_s: Interval
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
    # year it is highest (constraints.fail_slow_field_rates; NaN otherwise); its interval is the
    # year's whose high end is highest (NaN ends: not asked for, or a screening run)
    latency_at_percentile_fail_slow_s: Interval = NOT_ESTIMATED
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
    # power and the cost of ownership with the ends of the simulated utilisation's interval (the
    # last year's, as power_w; NaN ends when not estimated). The point figures stay floats beside
    # them (power_w, total_cost_usd): the objective reads points alike from an evaluation and from
    # the search's bounds (``candidates.ObjectiveBounds``).
    power_interval_w: Interval = NOT_ESTIMATED
    total_cost_interval_usd: Interval = NOT_ESTIMATED
    worst_second_horizon_s: float = simulation.DEFAULT_HORIZON_S
    # every year's intervals reached their targets (simulation.THROUGHPUT_REL_HALF_WIDTH,
    # PERCENTILE_REL_HALF_WIDTH); replications summed over the years; the precision run
    simulation_converged: bool = False
    simulation_replications: int = 0
    simulation_precision: str = simulation.FULL.name
    # the request's coordinated reads applied to this candidate (a parity layout): its simulated
    # figures are with the policy; the latency at the percentile without it (the same year as
    # latency_at_percentile_s, the same random streams) with its interval, and the share of host
    # reads read around a busy member in that year. NaN when not applied.
    coordinated_reads: bool = False
    latency_at_percentile_without_coordinated_reads_s: Interval = NOT_ESTIMATED
    reconstructed_read_fraction: float = math.nan

    def latency_headroom_fraction(self) -> float:
        for k in self.checks:
            if k.constraint == "latency":
                return k.headroom_fraction
        return math.inf

    def objective_interval(self, objective: Objective) -> tuple[float, float]:
        """The objective's value at the ends of the intervals it depends on (low, high): power and
        the cost of ownership follow the simulated utilisation's interval (a point without one),
        the purchase cost is exact, headroom follows the binding check's interval."""
        v = self.objective_value(objective)
        if objective is Objective.TOTAL_COST_OF_OWNERSHIP and math.isfinite(self.total_cost_interval_usd.low):
            return (self.total_cost_interval_usd.low, self.total_cost_interval_usd.high)
        if objective is Objective.POWER and math.isfinite(self.power_interval_w.low):
            return (self.power_interval_w.low, self.power_interval_w.high)
        if objective is not Objective.HEADROOM:
            return (v, v)
        k = next((c for c in self.checks if c.constraint == self.binding_constraint), None)
        if k is None:
            return (v, v)
        pess = k.pessimistic_headroom_fraction if math.isfinite(k.pessimistic_headroom_fraction) else k.headroom_fraction
        return (-k.optimistic_headroom_fraction, -pess)

    def objective_value(self, objective: Objective) -> float:
        return objective.value_of(self)


def _check(constraint: str, required: float, predicted: float, unit: str, *, at_most: bool,
           low: float | None = None, high: float | None = None) -> ConstraintCheck:
    """A check; ``low``/``high`` given: a simulated figure, judged at its pessimistic end (the
    high end of an at-most constraint, the low end of an at-least one) when the interval is known."""
    def headroom(x: float) -> float:
        return headroom_at_most(required, x) if at_most else headroom_at_least(required, x)

    h = headroom(predicted)
    if low is None or high is None:
        return ConstraintCheck(constraint=constraint, required=required, unit=unit, headroom_fraction=h,
                               met=h >= 0, predicted=Interval(value=predicted, low=predicted, high=predicted), confidence_level=1.0,
                               pessimistic_headroom_fraction=h, at_most=at_most)
    known = math.isfinite(low) and math.isfinite(high) or (math.isinf(predicted) and math.isinf(high if at_most else low))
    pess = headroom(high if at_most else low) if known else h
    return ConstraintCheck(constraint=constraint, required=required, unit=unit, headroom_fraction=h,
                           met=pess >= 0 and h >= 0, predicted=Interval(value=predicted, low=low, high=high),
                           confidence_level=simulation.CONFIDENCE_LEVEL if known else 0.0,
                           pessimistic_headroom_fraction=pess, at_most=at_most)


def service_life_wear_of(req: PlanRequest, cand: Candidate, drive: Drive, layout: Layout) -> endurance.ServiceLifeWear:
    op = cand.over_provisioning_fraction
    usable = usable_capacity_bytes(layout, cand.drive_count, drive.capacity_bytes * (1.0 - op))
    return endurance.service_life_wear(drive, layout, cand.drive_count, req.workload, years=req.service_life_years,
                                       data_bytes_year1=req.constraints.usable_capacity_bytes * req.workload.working_set_fraction,
                                       usable_capacity_bytes=usable, extra_spare_fraction=op, discards=req.discards)


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
    # share of each member's LBAs its FTL holds mapped (``PlanRequest.discards``): the drives are
    # simulated in that used state
    mapped_fraction: float = 1.0


def candidate_year_case(req: PlanRequest, cand: Candidate, year: int, catalog: Catalog | None = None, *,
                        seed: np.random.SeedSequence | None = None,
                        wear: endurance.ServiceLifeWear | None = None) -> CandidateYear:
    """(request, candidate, year) -> the array spec and member service models the answer's
    figures are simulated from (``simulation.array_spec``): the year's grown workload offered at
    the year's required IOPS, the drives at that year's fill, the year's common-random-numbers
    seed (``state_seed``: request seed and workload state; ``seed`` replaces the request's
    seed stream), ``req.simulated_seconds`` cut to ``simulation.MAX_SIMULATED_HOST_IOS``."""
    catalog = request_catalog(req, catalog)
    require_range("year", year, 1, req.service_life_years, hi_name="service_life_years")
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    wear = wear or service_life_wear_of(req, cand, drive, layout)
    fill = wear.years[year - 1].fill_fraction
    mapped = wear.years[year - 1].mapped_fraction
    required = required_iops_in_year(req, year)
    wl = replace(req.workload.grown(year - 1), target_iops=float(required))
    seed_y = state_seed(req, wl, seed)
    bound = performance.iops_upper_bound(drive, layout, cand.drive_count, wl)
    duration = simulation.capped_duration_s(req.simulated_seconds, required if required > 0 else bound)
    spec = simulation.array_spec(drive, layout, cand.drive_count, wl, fill_fraction=max(mapped, 1e-6),
                               extra_spare_fraction=cand.over_provisioning_fraction, duration_s=duration, seed=seed_y)
    if req.coordinated_reads and simulation.coordinated_reads_apply(layout):
        spec = replace(spec, coordinated_reads=True)
    return CandidateYear(drive=drive, layout=layout, drive_count=cand.drive_count, year=year, workload=wl,
                         fill_fraction=fill, extra_spare_fraction=cand.over_provisioning_fraction, seed=seed_y, spec=spec,
                         upper_bound_iops=bound, mapped_fraction=mapped)


def _workload_state(wl: Workload) -> list[int]:
    """The fields of a year's workload the simulation reads (not its name, source or notes), as
    entropy words for a seed: the bytes of their repr (floats repr exactly)."""
    state = (wl.read_fraction, wl.random_fraction, wl.io_size_mix, wl.queue_depth, wl.target_iops,
             wl.hot_write_fraction, wl.hot_space_fraction, wl.working_set_fraction)
    return list(repr(state).encode())


def state_seed(req: PlanRequest, workload: Workload, seed: np.random.SeedSequence | None = None) -> int:
    """The simulation seed of every candidate under ``workload`` (a year's grown workload at its
    required IOPS): ``SeedSequence([request seed, *workload state])``. Common random numbers: it
    depends on neither the candidate nor the year, so an array's figures do not depend on where it
    sits in the enumeration, the arrays of one year see the same streams, and the years of one
    array in the same state (fill bucket, workload) are the same simulation, run once
    (``evaluate``). ``seed`` (a stream a caller passes) replaces ``SeedSequence(req.seed)``."""
    base = seed if seed is not None else candidate_seed(req)
    entropy = base.entropy if isinstance(base.entropy, int) else 0
    return simulation.seed_int(np.random.SeedSequence([int(entropy), *_workload_state(workload)], spawn_key=base.spawn_key))


def simulate_candidate_year(req: PlanRequest, case: CandidateYear,
                            precision: str | simulation.Precision = simulation.FULL, *,
                            seed: np.random.SeedSequence | None = None,
                            saturation_runs: dict[Any, Any] | None = None,
                            first_runs: dict[Any, Any] | None = None) -> simulation.SimulatedFigures:
    """The figures of one candidate-year: its offered-load and saturation simulations, replicated
    to ``precision`` (``simulation.simulate_figures``), the worst second over
    ``req.constraints.worst_second_horizon_s``. The saturation runs are seeded by the year's
    workload without its offered rate (``state_seed`` of it at rate 0; ``seed`` as there): the
    closed-loop run ignores the rate, so the years of a growing workload at one fill share it
    (``saturation_runs``, kept by ``evaluate`` per candidate) instead of simulating it each year."""
    sat_seed = state_seed(req, replace(case.workload, target_iops=0.0), seed)
    return simulation.simulate_figures(case.spec, latency_percentile=req.constraints.latency_percentile,
                                     simulated_s=req.simulated_seconds, upper_bound_iops=case.upper_bound_iops,
                                     fail_slow_field_rates=req.constraints.fail_slow_field_rates, precision=precision,
                                     horizon_s=req.constraints.worst_second_horizon_s, saturation_seed=sat_seed,
                                     saturation_runs=saturation_runs, first_runs=first_runs)


def evaluate(req: PlanRequest, cand: Candidate, catalog: Catalog | None = None, *,
             seed: np.random.SeedSequence | None = None,
             precision: str | simulation.Precision = simulation.FULL) -> Evaluation:
    """Simulate one candidate year by year (``candidate_year_case``) and check every constraint
    in its worst year. Every performance figure comes from the array simulation, with its
    interval; a simulated figure's check is met at its interval's pessimistic end.
    ``precision``: ``simulation.FULL`` (the decision run, adaptive) or ``simulation.SCREENING``
    (one replication per year, point estimates: checks are met on the point estimate and say
    ``confidence_level`` 0).

    Four named stages: the years' performance (``simulate_years``), the cost (``cost_of``), the
    durability (``durability_of``) and the checks (``checks_of``); ``evaluate`` joins them into
    one record."""
    catalog = request_catalog(req, catalog)
    drive = catalog.get(cand.drive_model)
    layout = candidate_layout(cand)
    usable = usable_capacity_bytes(layout, cand.drive_count, drive.capacity_bytes * (1.0 - cand.over_provisioning_fraction))
    wear = service_life_wear_of(req, cand, drive, layout)
    years = simulate_years(req, cand, catalog, wear, seed=seed, precision=precision)
    costs = cost_of(req, cand, drive, years, wear)
    durability = durability_of(req, cand, drive, layout)
    checks = checks_of(req, cand, usable, years, wear, costs, durability)
    # the binding constraint: the least headroom, unmet checks first (a check can fail at its
    # pessimistic end with a positive point headroom)
    binding = min(checks, key=lambda k: (k.met, k.headroom_fraction))
    perf, lat_p, ws, sp = years.iops_worst, years.latency_worst, years.worst_second_worst, years.sustained_worst
    sustained = sp.max_iops.value
    return Evaluation(
        candidate=cand, drive_display_name=drive.display_name, usable_capacity_bytes=usable,
        predicted_iops=sp.max_iops, member_ios_per_host_io=perf.member_ios_per_host_io,
        latency_p50_s=lat_p.latency_p50_s, latency_at_percentile_s=lat_p.latency_at_percentile_s,
        worst_second_latency_s=ws.worst_second_latency_s, worst_second_horizon_s=ws.horizon_s,
        simulation_converged=all(p.converged for p in years.perfs),
        simulation_replications=sum(p.replications for p in years.perfs), simulation_precision=years.precision.name,
        endurance_years=wear.endurance_years, life_used_fraction=wear.life_used_fraction,
        purchase_cost_usd=costs.purchase_usd, power_cost_usd=costs.power_cost_usd,
        replacement_cost_usd=costs.replacement_cost_usd, total_cost_usd=costs.total_usd,
        total_cost_interval_usd=costs.total_interval_usd, power_interval_w=costs.power_interval_w,
        power_w=costs.power_w, data_loss_probability=durability.loss_probability,
        array_loss_probability=durability.array_loss_probability,
        unreadable_after_rebuild_probability=durability.unreadable_probability, checks=tuple(checks),
        meets_constraints=all(k.met for k in checks), binding_constraint=binding.constraint,
        headroom_fraction=binding.headroom_fraction, performance_model=perf.model,
        years=years.figures, latency_at_percentile_fail_slow_s=years.fail_slow_worst(req),
        wear_out_year=wear.wear_out_year, replacement_drive_count=costs.replacements, hot_spare_count=costs.spares,
        mttdl_hours=durability.mttdl_hours, rebuild_s=durability.repair_hours * HOUR_S,
        cost_per_usable_tb_usd=costs.total_usd / (usable / 1e12) if usable else math.inf,
        cost_per_iops_usd=costs.total_usd / sustained if sustained > 0 else math.inf,
        coordinated_reads=req.coordinated_reads and simulation.coordinated_reads_apply(layout),
        latency_at_percentile_without_coordinated_reads_s=lat_p.latency_at_percentile_without_coordinated_reads_s,
        reconstructed_read_fraction=lat_p.reconstructed_read_fraction,
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SimulatedYears:
    """Every year of a candidate's service life simulated (``simulate_years``), and the years each
    figure reports: a figure is read in the year it is worst, at its pessimistic end."""

    perfs: tuple[simulation.SimulatedFigures, ...]  # one per year, in order
    required_iops: tuple[float, ...]  # each year's required IOPS (0: closed loop)
    figures: tuple[YearPerformance, ...]
    precision: simulation.Precision  # the precision run (SCREENING when the screen failed)

    @property
    def iops_worst_index(self) -> int:
        """The year that binds: the least IOPS headroom at the interval's low end, then the
        highest latency at its high end."""
        perfs, required = self.perfs, self.required_iops

        def pessimistic_iops(p: simulation.SimulatedFigures) -> float:
            return p.max_iops.low if math.isfinite(p.max_iops.low) else p.max_iops.value

        return min(range(len(perfs)), key=lambda i: ((pessimistic_iops(perfs[i]) - required[i]) / required[i]
                                                     if required[i] > 0 else math.inf,
                                                     -perfs[i].latency_at_percentile_s.high_or_value))

    @property
    def iops_worst(self) -> simulation.SimulatedFigures:
        return self.perfs[self.iops_worst_index]

    @property
    def latency_worst(self) -> simulation.SimulatedFigures:
        """The year of the highest latency at the percentile (its interval's high end, then the point)."""
        return max(self.perfs, key=lambda p: (p.latency_at_percentile_s.high_or_value, p.latency_at_percentile_s.value))

    @property
    def worst_second_worst(self) -> simulation.SimulatedFigures:
        """The year of the highest worst second (its interval's high end)."""
        return max(self.perfs, key=lambda p: p.worst_second_latency_s.high_or_value)

    @property
    def sustained_worst(self) -> simulation.SimulatedFigures:
        """The year of the least sustained IOPS."""
        return min(self.perfs, key=lambda p: p.max_iops.value)

    def fail_slow_worst(self, req: PlanRequest) -> Interval:
        """The latency with fail-slow drives at the field rates in the year it is highest, with the
        interval of the year whose high end is highest (the pessimistic end the check reads);
        NaN when the request does not ask for it."""
        if not req.constraints.fail_slow_field_rates:
            return NOT_ESTIMATED
        worst = max(p.latency_at_percentile_fail_slow_s.value for p in self.perfs)
        slow_p = max(self.perfs, key=lambda p: (p.latency_at_percentile_fail_slow_s.high_or_value,
                                                p.latency_at_percentile_fail_slow_s.value))
        return Interval(value=worst, low=slow_p.latency_at_percentile_fail_slow_s.low,
                        high=slow_p.latency_at_percentile_fail_slow_s.high)


def simulate_years(req: PlanRequest, cand: Candidate, catalog: Catalog, wear: endurance.ServiceLifeWear, *,
                   seed: np.random.SeedSequence | None = None,
                   precision: str | simulation.Precision = simulation.FULL) -> SimulatedYears:
    """Stage 1, the yearly performance: each year of the service life simulated at the year's
    fill, workload and required IOPS (``candidate_year_case``), years in the state of an earlier
    one simulated once (``_year_state``), after the screen (``_screened_precision``)."""
    prec = simulation.precision_of(precision)
    perfs: list[simulation.SimulatedFigures] = []
    required: list[float] = []
    figures: list[YearPerformance] = []
    simulated: dict[tuple[Any, ...], simulation.SimulatedFigures] = {}
    saturation_runs: dict[Any, Any] = {}
    # The screening run of the most demanding year is that year's first offered-load run: the
    # year's case is built once and its run kept (``first_runs``), not simulated again.
    cases: dict[int, CandidateYear] = {}
    first_runs: dict[Any, Any] = {}

    def case_of(y: int) -> CandidateYear:
        if y not in cases:
            cases[y] = candidate_year_case(req, cand, y, catalog, seed=seed, wear=wear)
        return cases[y]

    if prec.max_replications > 1:
        prec = _screened_precision(req, case_of, seed, prec, simulated, saturation_runs, first_runs)
    for y, yw in zip(range(1, req.service_life_years + 1), wear.years, strict=True):
        case = case_of(y)
        state = _year_state(case)
        perf_y = simulated.get(state) or simulate_candidate_year(req, case, prec, seed=seed, saturation_runs=saturation_runs,
                                                                 first_runs=first_runs)
        simulated[state] = perf_y
        perfs.append(perf_y)
        required.append(case.workload.target_iops)
        figures.append(YearPerformance(
            year=y, fill_fraction=yw.fill_fraction, mapped_fraction=yw.mapped_fraction, required_iops=case.workload.target_iops,
            write_amplification=yw.write_amplification,
            life_used_fraction=yw.life_used_fraction, cumulative_life_used_fraction=yw.cumulative_life_used_fraction,
            predicted_iops=perf_y.max_iops, latency_at_percentile_s=perf_y.latency_at_percentile_s,
            latency_at_percentile_fail_slow_s=perf_y.latency_at_percentile_fail_slow_s, replications=perf_y.replications,
            converged=perf_y.converged, stop_reason=perf_y.stop_reason))
    return SimulatedYears(perfs=tuple(perfs), required_iops=tuple(required), figures=tuple(figures), precision=prec)


@dataclass(frozen=True, slots=True, kw_only=True)
class Costs:
    """What a candidate costs over its service life (``cost_of``)."""

    spares: int  # hot spares bought with it
    purchase_usd: float  # drives and spares, each in its paid bay
    power_w: float  # at the last year's simulated utilisation
    power_interval_w: Interval  # its ends at the utilisation interval's ends (NaN ends: not estimated)
    power_cost_usd: float
    replacements: float  # expected drives replaced: wear-out and failures
    replacement_cost_usd: float
    total_usd: float
    total_interval_usd: Interval


def cost_of(req: PlanRequest, cand: Candidate, drive: Drive, years: SimulatedYears, wear: endurance.ServiceLifeWear) -> Costs:
    """Stage 2, the cost: purchase (every drive and spare sits in a bay paid and powered with its
    enclosure, cost.py), power at the last year's simulated utilisation, energy over the service
    life, and replacements (wear-out from the wear model, failures from the AFR). The simulated
    utilisation's interval carries into power and the cost of ownership (NaN ends: a screening
    run, one replication, or none simulated)."""
    n_years = req.service_life_years
    price = drive.price_usd or 0.0
    spares = cost.hot_spare_count(cand.drive_count, drives_per_spare=req.drives_per_hot_spare)
    bays = cand.drive_count + spares
    purchase = cost.purchase_cost_usd(price, bays, usd_per_bay=req.candidate_space.bay_cost_usd)

    def power_at(utilization: float) -> float:
        return cost.average_power_w(idle_power_w=drive.idle_power_w or 0.0, active_power_w=drive.active_power_w or 0.0,
                                    drive_count=cand.drive_count, utilization=utilization) + spares * (drive.idle_power_w or 0.0) \
            + cost.bay_power_w(bays, w_per_bay=req.candidate_space.bay_power_w)

    util = years.perfs[-1].utilization
    power = power_at(util.value)
    power_low, power_high = (power_at(util.low), power_at(util.high)) \
        if math.isfinite(util.low) and math.isfinite(util.high) else (math.nan, math.nan)
    power_cost = cost.energy_cost_usd(power, years=n_years, usd_per_kwh=req.electricity_usd_per_kwh)
    afr = drive.annual_failure_rate or 0.0
    replacements = wear.wear_out_replacements \
        + cost.expected_failure_replacements(cand.drive_count, annual_failure_rate=afr, service_life_years=n_years)
    replacement_cost = replacements * price
    total_cost = purchase + power_cost + replacement_cost
    total_cost_low, total_cost_high = (
        purchase + cost.energy_cost_usd(p, years=n_years, usd_per_kwh=req.electricity_usd_per_kwh) + replacement_cost
        for p in (power_low, power_high)) if math.isfinite(power_low) else (math.nan, math.nan)
    return Costs(spares=spares, purchase_usd=purchase, power_w=power,
                 power_interval_w=Interval(value=power, low=power_low, high=power_high), power_cost_usd=power_cost,
                 replacements=replacements, replacement_cost_usd=replacement_cost, total_usd=total_cost,
                 total_interval_usd=Interval(value=total_cost, low=total_cost_low, high=total_cost_high))


@dataclass(frozen=True, slots=True, kw_only=True)
class Durability:
    """A candidate's durability over its service life (``durability_of``)."""

    loss_probability: float = 0.0  # P(data loss): more failures than tolerated, or a URE in a rebuild
    array_loss_probability: float = 0.0  # more failed drives than the layout tolerates
    unreadable_probability: float = 0.0  # what the URE term adds: data unreadable after a rebuild
    mttdl_hours: float = math.inf
    repair_hours: float = 0.0  # a whole drive rebuilt at the request's share of its sequential write rate


def durability_of(req: PlanRequest, cand: Candidate, drive: Drive, layout: Layout) -> Durability:
    """Stage 3, the durability: the reliability model's chain over the service life with the
    drive's AFR and a rebuild at ``req.rebuild_rate_fraction_of_seq_write`` of its sequential
    write rate, once with unrecoverable read errors and once without (only more failed drives than
    the layout tolerates lose the array; what the URE term adds is data unreadable after a
    rebuild: Linux md marks the sector bad and finishes, some controllers abort the rebuild). A
    drive without failures modelled (AFR 0) loses nothing."""
    op = cand.over_provisioning_fraction
    years = req.service_life_years
    afr = drive.annual_failure_rate or 0.0
    rebuild_rate = (drive.seq_write_bytes_per_s or 50e6) * req.rebuild_rate_fraction_of_seq_write
    repair_h = reliability.rebuild_hours(drive_capacity_bytes=drive.capacity_bytes * (1.0 - op), rebuild_rate_bytes_per_second=rebuild_rate)
    if not afr > 0:
        return Durability(repair_hours=repair_h)
    chain = reliability.array_reliability(
        layout, cand.drive_count, annual_failure_rate=afr, repair_hours=repair_h, service_life_years=years,
        uber=drive.uber or 0.0, drive_capacity_bytes=drive.capacity_bytes * (1.0 - op))
    loss_p = chain.service_life_loss_probability
    array_loss_p = loss_p
    if drive.uber:
        array_loss_p = reliability.array_reliability(
            layout, cand.drive_count, annual_failure_rate=afr, repair_hours=repair_h, service_life_years=years,
            uber=0.0, drive_capacity_bytes=drive.capacity_bytes * (1.0 - op)).service_life_loss_probability
    return Durability(loss_probability=loss_p, array_loss_probability=array_loss_p,
                      unreadable_probability=max(0.0, loss_p - array_loss_p), mttdl_hours=chain.mttdl_hours, repair_hours=repair_h)


def _check_figure(constraint: str, required: float, figure: Interval, unit: str, *, at_most: bool) -> ConstraintCheck:
    """A simulated figure's check, judged at its interval's pessimistic end (``_check``)."""
    return _check(constraint, required, figure.value, unit, at_most=at_most, low=figure.low, high=figure.high)


def checks_of(req: PlanRequest, cand: Candidate, usable: float, years: SimulatedYears, wear: endurance.ServiceLifeWear,
              costs: Costs, durability: Durability) -> list[ConstraintCheck]:
    """Stage 4, the checks: every constraint the request sets, each in the year it binds; a
    simulated figure at its interval's pessimistic end, an analytic one exactly. Capacity and
    endurance are always checked, the rest when set (0 = no constraint)."""
    c = req.constraints
    checks = [_check("usable_capacity", required_capacity_bytes(req), usable, "bytes", at_most=False)]
    worst = years.iops_worst_index
    if years.required_iops[worst] > 0:
        checks.append(_check_figure("iops", years.required_iops[worst], years.perfs[worst].max_iops, "iops", at_most=False))
    if c.latency_target_s > 0:
        if c.fail_slow_field_rates:
            # with fail-slow drives asked for, the target holds over time with them, at the high
            # end of the mixture's interval over the replications (the year it is highest)
            slow = years.fail_slow_worst(req)
            checks.append(_check("latency", c.latency_target_s, slow.value, "s", at_most=True,
                                 low=min(slow.low, slow.value), high=max(slow.high, slow.value)))
        else:
            checks.append(_check_figure("latency", c.latency_target_s, years.latency_worst.latency_at_percentile_s, "s",
                                        at_most=True))
    if c.worst_second_latency_target_s > 0:
        checks.append(_check_figure("worst_second_latency", c.worst_second_latency_target_s,
                                    years.worst_second_worst.worst_second_latency_s, "s", at_most=True))
    checks.append(_check("endurance", 1.0 - c.endurance_margin_fraction, wear.life_used_fraction, "fraction", at_most=True))
    analytic = (("purchase_cost", c.max_purchase_cost_usd, costs.purchase_usd, "usd"),
                ("drive_count", c.max_drive_count, cand.drive_count, "drives"),
                ("power", c.max_power_w, costs.power_w, "w"),
                ("durability", c.max_data_loss_probability, durability.loss_probability, "fraction"),
                ("array_loss", c.max_array_loss_probability, durability.array_loss_probability, "fraction"))
    checks.extend(_check(name, limit, value, unit, at_most=True) for name, limit, value, unit in analytic if limit > 0)
    return checks


#: A full evaluation is replaced by screening runs when the screening run of its most demanding
#: year sustains less than (1 - SCREEN_MARGIN) x that year's required IOPS (module docstring).
SCREEN_MARGIN = 0.2


def _year_state(case: CandidateYear) -> tuple[Any, ...]:
    """What makes a candidate-year's simulation: a year in the state of an earlier one (the same
    fill bucket, workload and so seed: no growth) is the same simulation, run once (``evaluate``)."""
    return (simulation.fill_bucket_fraction(case.mapped_fraction), case.workload, case.spec.duration_s, case.seed)


def _screened_precision(req: PlanRequest, case_of: Callable[[int], CandidateYear], seed: np.random.SeedSequence | None,
                        prec: simulation.Precision, simulated: dict[tuple[Any, ...], simulation.SimulatedFigures],
                        saturation_runs: dict[Any, Any] | None = None,
                        first_runs: dict[Any, Any] | None = None) -> simulation.Precision:
    """``prec``, or ``simulation.SCREENING`` when the screening run of the candidate's most
    demanding year (kept in ``simulated`` for the years that follow) misses its required IOPS
    by more than ``SCREEN_MARGIN``."""
    needs = [required_iops_in_year(req, y) for y in range(1, req.service_life_years + 1)]
    top = max(needs)
    if top <= 0:
        return prec  # closed loop: nothing to miss
    year = max(y for y, need in enumerate(needs, start=1) if need == top)
    case = case_of(year)
    screen = simulate_candidate_year(req, case, simulation.SCREENING, seed=seed, saturation_runs=saturation_runs,
                                     first_runs=first_runs)
    if screen.max_iops.value < (1.0 - SCREEN_MARGIN) * case.workload.target_iops:
        simulated[_year_state(case)] = screen
        return simulation.SCREENING
    return prec


def candidate_seed(req: PlanRequest, cand: Candidate | None = None) -> np.random.SeedSequence:
    """The plan's random stream, ``SeedSequence(req.seed)``: the same for every candidate
    (common random numbers; each year's seed is ``state_seed``). ``cand`` is accepted and
    ignored: a candidate's place in the enumeration never changes its figures."""
    del cand
    return np.random.SeedSequence(req.seed)


def evaluate_batch(req: PlanRequest, candidates: Sequence[Candidate], catalog: Catalog | None = None, *,
                   precision: str | simulation.Precision = simulation.FULL) -> list[Evaluation]:
    """Evaluate candidates at ``precision`` under the plan's common random numbers."""
    return [evaluate(req, cand, catalog, seed=candidate_seed(req, cand), precision=precision) for cand in candidates]


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
