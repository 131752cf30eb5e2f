"""One path for every answer: an array (drive, layout, count, workload, fill, over-provisioning,
seed) -> its member service models and its ``array.ArraySpec`` -> the array simulation -> the
figures an answer quotes.

Every caller that puts a performance figure in front of a user goes through here: the planner
(``evaluation.evaluate``, per candidate and year through ``evaluation.candidate_year_case``), the
SimulateArray service and ``arrayplan simulate --local``, the report's latency CDFs and the HDD
equivalence (``equivalent_drive_count``, one search with one cap). The service models come from
the drive models' own builders (``ssd.service_model``, ``hdd.service_model``), so a change to a
drive model reaches every answer at once.

``simulate_figures`` runs two simulations of one array: at the offered load (open loop at the
required IOPS, or closed loop at the workload's queue depth when none is given), which gives the
latency percentiles, the worst second, the member IOs per host IO and the drives' utilisation;
and, when that run kept up, at saturation (closed loop at ``SATURATION_QUEUE_PER_UNIT``
outstanding host IOs per parallel unit of the simulated members), which gives the IOPS the array
sustains (an overloaded array sustains what it completed at the offered load). No analytic
queueing model contributes a figure; ``performance.iops_upper_bound`` is only the planner's
pruning screen.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from . import array, catalog, fail_slow, hdd, ssd
from .catalog import Drive
from .errors import InvalidInputError, Violation, check, check_range, require_range
from .layout import Layout, group_count, usable_capacity_bytes
from .service_time import ServiceModel
from .workload import Workload

SIMULATION_MODEL = "array-des"
# Service models are built at fill levels rounded up to this step and cached, so the candidates
# of one drive share them (an SSD's costs a short FTL run). Every path rounds the same way.
FILL_STEP = 0.1
# Seconds of the SSD's steady-state FTL run behind its service model (``ssd.service_model``).
PROFILE_S = 120.0
DEFAULT_SIMULATED_S = 1.0
# A planner simulation is cut short of its simulated seconds when the array would complete more
# host IOs than this (a fast array's percentiles are as well resolved by 250k IOs as by millions).
MAX_SIMULATED_HOST_IOS = 250_000
# The saturation run: host IOs to simulate (at the screen's upper bound) and outstanding host IOs
# per parallel unit of the simulated members (a closed network of N stations at Q per station
# reaches about Q / (Q + 1) of its capacity).
SATURATION_HOST_IOS = 50_000
SATURATION_QUEUE_PER_UNIT = 4
SATURATION_MAX_S = 10.0
# Below this share of the host IOs that arrived in the window completing in it, the offered-load
# run did not keep up (IOs still in flight at the window's end are well under 2 % of a window).
KEEP_UP_TOLERANCE = 0.02
MAX_EQUIVALENT_DRIVES = 4_096


def fill_bucket_fraction(fill_fraction: float) -> float:
    """The fill level the service model is built at: ``fill_fraction`` rounded up to ``FILL_STEP``."""
    bucket = math.ceil(round(fill_fraction / FILL_STEP, 9))
    return min(1.0, max(FILL_STEP, bucket * FILL_STEP))


@functools.lru_cache(maxsize=512)
def _cached_models(drive: Drive, fill_fraction: float, extra_spare_fraction: float, write_fraction: float,
                   hot_write_fraction: float, hot_space_fraction: float) -> tuple[ServiceModel, ...]:
    if drive.kind != "ssd":
        return (hdd.service_model(drive),)
    return (ssd.service_model(drive, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction,
                              write_fraction=write_fraction, hot_write_fraction=hot_write_fraction,
                              hot_space_fraction=hot_space_fraction, seed=0, profile_s=PROFILE_S),)


def member_service_models(drive: Drive, workload: Workload, *, fill_fraction: float = 1.0,
                          extra_spare_fraction: float = 0.0) -> tuple[ServiceModel, ...]:
    """The members' service models (one, shared; each member still gets its own cleaning phase in
    the simulation) for the drive at ``fill_fraction`` (rounded up to ``FILL_STEP``), short-stroked
    by ``extra_spare_fraction``, under the workload's write share and skew. Cached."""
    require_range("fill_fraction", fill_fraction, 0, 1, lo_open=True)
    return _cached_models(drive, fill_bucket_fraction(fill_fraction), float(extra_spare_fraction),
                          round(workload.write_fraction, 2), workload.hot_write_fraction, workload.hot_space_fraction)


def array_service_models(drive: Any, count: int = 1, *, workload: Workload | None = None,
                         fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0, seed: int = 0,
                         distinct: bool = False) -> tuple[ServiceModel, ...]:
    """Service models for ``count`` members of a catalog drive (a ``catalog.Drive`` or its name),
    built fresh (uncached, any fill, seed and random share; ``member_service_models`` is the cached
    form the planner uses).

    SSDs come from ``ssd.service_model`` (cleaning as work, set for the workload's skew and
    random share, each member preconditioned to its used state); HDDs from ``hdd.service_model``.
    By default one model is shared (each member still starts from its own cleaning state in the
    simulation); ``distinct=True`` builds one per member with seeds from
    ``SeedSequence(seed).spawn(count)``.
    """
    if isinstance(drive, str):
        drive = catalog.get_drive(drive)
    if not isinstance(count, int) or count < 1:
        raise InvalidInputError.one("count", f"must be an integer >= 1, got {count!r}")
    if not getattr(drive, "is_ssd", True) or getattr(drive, "rpm", None):
        return (hdd.service_model(drive),)
    kwargs: dict[str, Any] = {"fill_fraction": fill_fraction, "extra_spare_fraction": extra_spare_fraction}
    if workload is not None:
        kwargs.update(write_fraction=workload.write_fraction, hot_write_fraction=workload.hot_write_fraction,
                      hot_space_fraction=workload.hot_space_fraction, random_fraction=workload.random_fraction)
    if not distinct:
        return (ssd.service_model(drive, seed=seed, **kwargs),)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(count)]
    return tuple(ssd.service_model(drive, seed=s, **kwargs) for s in seeds)


def array_spec(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, fill_fraction: float = 1.0,
               extra_spare_fraction: float = 0.0, duration_s: float = DEFAULT_SIMULATED_S, seed: int = 0,
               warmup_s: float = 0.25, failed_drives: int = 0, rebuild_rate_bytes_per_s: float = 0.0,
               reorder_window: int = 1) -> array.ArraySpec:
    """The array simulation's input for one array: the one place an ``ArraySpec`` is built from a
    catalog drive (members' service models from ``member_service_models``)."""
    models = member_service_models(drive, workload, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction)
    return array.ArraySpec(layout=layout, drive_count=drive_count, service_models=models, workload=workload,
                           duration_s=duration_s, warmup_s=warmup_s, seed=seed, failed_drives=failed_drives,
                           rebuild_rate_bytes_per_s=rebuild_rate_bytes_per_s,
                           drive_capacity_bytes=float(drive.capacity_bytes) * (1.0 - extra_spare_fraction),
                           reorder_window=reorder_window)


def capped_duration_s(simulated_s: float, rate_iops: float, host_ios: int = MAX_SIMULATED_HOST_IOS) -> float:
    """``simulated_s``, cut to about ``host_ios`` host IOs at ``rate_iops`` (at least 50 ms)."""
    return min(simulated_s, max(0.05, host_ios / max(rate_iops, 1.0)))


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedFigures:
    """The figures of one array under one workload, every one from the array simulation."""

    max_iops: float  # sustained: the saturation run (or the offered load's completions, when higher or overloaded)
    achieved_iops: float  # at the offered load
    member_ios_per_host_io: float
    latency_p50_s: float
    latency_at_percentile_s: float
    worst_second_latency_s: float
    utilization: float
    kept_up: bool
    model: str = SIMULATION_MODEL
    # the latency at the percentile over time with fail-slow drives at the field rates
    # (``fail_slow``); NaN when not asked for
    latency_at_percentile_fail_slow_s: float = math.nan


def saturation_spec(spec: array.ArraySpec, *, simulated_s: float, upper_bound_iops: float) -> array.ArraySpec:
    """The closed-loop run at saturation of the array of ``spec`` (same drives, seed and layout)."""
    units = sum(int(m.parallel_units) for m in spec.service_models)
    if len(spec.service_models) == 1:
        units *= spec.simulated_drive_count
    queue = int(min(65_536, max(spec.workload.queue_depth, SATURATION_QUEUE_PER_UNIT * units)))
    # about SATURATION_HOST_IOS host IOs at the bound, and never fewer simulated seconds than the
    # offered-load run, up to SATURATION_MAX_S (a slow array of large IOs needs the seconds: a
    # few hundred IOs of a size mix are a noisy throughput)
    duration = min(max(simulated_s, SATURATION_MAX_S), max(0.05, SATURATION_HOST_IOS / max(upper_bound_iops, 1.0)))
    wl = replace(spec.workload, target_iops=0.0, queue_depth=queue)
    return replace(spec, workload=wl, duration_s=duration, warmup_s=min(spec.warmup_s, 0.25 * duration))


def simulate_figures(spec: array.ArraySpec, *, latency_percentile: float, simulated_s: float,
                     upper_bound_iops: float, fail_slow_field_rates: bool = False) -> SimulatedFigures:
    """Simulate ``spec`` (the offered load) and its saturation run; see the module docstring.
    ``fail_slow_field_rates``: also the offered load with the first member of group 0 at
    ``fail_slow.FIELD_SLOWDOWN``, for the percentile over time at the field rates."""
    r = array.simulate(spec)
    offered = spec.workload.target_iops
    # kept up: the host IOs that arrived in the window completed in it (arrivals, not the nominal
    # rate, so Poisson noise in a short window does not count as falling behind)
    kept_up = not r.saturated and (offered <= 0 or r.completions_in_window >= (1.0 - KEEP_UP_TOLERANCE) * r.host_ios)
    if kept_up:
        sat = array.simulate(saturation_spec(spec, simulated_s=simulated_s, upper_bound_iops=upper_bound_iops))
        max_iops = max(0.0 if sat.saturated else float(sat.achieved_iops), float(r.achieved_iops))
    else:
        # overloaded at the offered rate: it sustains the share of the arrivals it completed, never
        # the offered rate itself (in a short window Poisson arrivals above the rate can make its
        # completions exceed the target while its queue grows: it does not keep up, so it fails)
        max_iops = min(float(r.achieved_iops), offered * r.completions_in_window / max(r.host_ios, 1))
    util = float(np.mean(r.drive_utilisation)) if len(r.drive_utilisation) else 1.0
    if r.saturated or not r.latency_count():
        return SimulatedFigures(max_iops=max_iops, achieved_iops=float(r.achieved_iops),
                                member_ios_per_host_io=float(r.member_ios_per_host_io), latency_p50_s=math.inf,
                                latency_at_percentile_s=math.inf, worst_second_latency_s=math.inf, utilization=1.0,
                                kept_up=False)
    worst = r.worst_second_p99_latency_s
    at_p = float(r.latency_percentile_s(latency_percentile / 100.0))
    at_p_slow = math.nan
    if fail_slow_field_rates:
        slow = array.simulate(fail_slow.with_slow_members(spec, {0: fail_slow.FIELD_SLOWDOWN}))
        kind = "hdd" if spec.service_models[0].mechanical else "ssd"
        share = fail_slow.slow_time_fraction(kind, max(1, group_count(spec.layout, spec.drive_count)))
        at_p_slow = fail_slow.mixture_percentile_s(r, slow, share, latency_percentile / 100.0) \
            if kept_up and not slow.saturated else math.inf
    return SimulatedFigures(
        latency_at_percentile_fail_slow_s=at_p_slow,
        max_iops=max_iops, achieved_iops=float(r.achieved_iops), member_ios_per_host_io=float(r.member_ios_per_host_io),
        latency_p50_s=float(r.latency_percentile_s(0.5)), latency_at_percentile_s=at_p if kept_up else math.inf,
        worst_second_latency_s=(float(worst) if worst is not None and math.isfinite(worst) else float(r.latency_percentile_s(0.99)))
        if kept_up else math.inf,
        utilization=util, kept_up=kept_up,
    )


def seed_int(seed: np.random.SeedSequence) -> int:
    """The array simulation's integer seed from a seed stream."""
    return int(seed.generate_state(1)[0])


def estimated_cost_s(drive_count: int, workload: Workload) -> float:
    """CPU seconds one year of one candidate's evaluation takes (for sizing Ray batches): about
    30 ms for the two simulations (measured on the 2-core reference machine, see make bench)."""
    del drive_count, workload
    return 0.03


# -- HDD equivalence: one search, one cap --------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Equivalence:
    """How many disks match a target: the smallest array found and the runs that bracket it."""

    drive_name: str
    layout_name: str
    target_iops: float
    latency_quantile: float
    latency_target_s: float  # 0 = no latency target
    drive_count: int  # 0 when no array up to max_drive_count meets every target
    result: array.ArrayResult | None  # the run of the smallest passing array
    tried: tuple[tuple[int, float, float, bool], ...]  # (drives, achieved IOPS, latency at q, passed)
    max_drive_count: int = MAX_EQUIVALENT_DRIVES
    # The latency at the quantile of one group nearly idle (1 % of one disk's rate): no number of
    # disks gets below it. NaN when not measured (the search found an array).
    unloaded_latency_s: float = math.nan
    capacity_drive_count: int = 0  # fewest drives (whole groups) with the required capacity

    @property
    def no_number_holds_latency(self) -> bool:
        """True only when it is: even nearly idle the array misses the latency target."""
        return bool(self.drive_count == 0 and self.latency_target_s > 0 and math.isfinite(self.unloaded_latency_s)
                    and self.unloaded_latency_s > self.latency_target_s)

    def summary(self) -> dict[str, object]:
        return {
            "drive_name": self.drive_name,
            "layout": self.layout_name,
            "target_iops": self.target_iops,
            "latency_quantile": self.latency_quantile,
            "latency_target_s": self.latency_target_s,
            "drive_count": self.drive_count,
            "max_drive_count": self.max_drive_count,
            "no_number_holds_latency": self.no_number_holds_latency,
            "unloaded_latency_s": None if not math.isfinite(self.unloaded_latency_s) else float(self.unloaded_latency_s),
            "tried": [{"drive_count": int(n), "achieved_iops": float(a), "latency_s": float(lat), "passed": bool(ok)}
                      for n, a, lat, ok in self.tried],
        }


def equivalent_drive_count(drive: Drive | ServiceModel, layout_for: Callable[[int], Layout] | Layout, workload: Workload, *,
                           target_iops: float, latency_quantile: float, latency_target_s: float = 0.0,
                           required_capacity_bytes: float = 0.0, group_width: int | None = None,
                           min_drive_count: int = 1, drive_capacity_bytes: float = 0.0,
                           duration_s: float = 5.0, warmup_s: float = 1.0, seed: int = 0, reorder_window: int = 1,
                           max_drive_count: int = MAX_EQUIVALENT_DRIVES, iops_tolerance: float = KEEP_UP_TOLERANCE,
                           max_host_ios: int = MAX_SIMULATED_HOST_IOS) -> Equivalence:
    """Smallest number of ``drive``s, in whole groups of the layout, with ``required_capacity_bytes``
    that carry ``workload`` offered open loop at ``target_iops`` (achieved IOPS within
    ``iops_tolerance``) with the ``latency_quantile`` latency at or under ``latency_target_s``
    (0 = no latency target), up to ``max_drive_count``: the one search every HDD equivalence uses.

    ``drive`` is a catalog drive (its members' models from ``member_service_models``) or one
    service model (a disk from a datasheet, ``drive_capacity_bytes`` its capacity).
    ``layout_for(n)`` gives the layout of an ``n``-drive array (a ``Layout`` = its groups repeated;
    a callable lets RAID 0/10 stripe across all ``n``, widths in steps of ``group_width``, from ``min_drive_count`` drives). Each
    step is one simulation through ``array_spec`` (doubling from half the utilisation bound, then
    bisection); the duration is cut to ``max_host_ios`` host IOs. When no array passes and a
    latency target is set, one group nearly idle is simulated: if even it misses the target, no
    number of disks holds it (``no_number_holds_latency``).
    """
    v: list[Violation] = []
    check_range(v, "target_iops", target_iops, 0, 1e8, lo_open=True)
    check_range(v, "latency_quantile", latency_quantile, 0, 1, lo_open=True)
    check_range(v, "latency_target_s", latency_target_s, 0, 3600, unit="s", note="(0 = none)")
    check_range(v, "max_drive_count", max_drive_count, 1, MAX_EQUIVALENT_DRIVES, integer=True)
    check(v)
    layout_of: Callable[[int], Layout]
    if isinstance(layout_for, Layout):
        fixed = layout_for
        step = fixed.group_width

        def fixed_layout(n: int) -> Layout:
            del n
            return fixed
        layout_of = fixed_layout
    else:
        layout_of = layout_for
        step = group_width or 1
    wl = replace(workload, target_iops=float(target_iops))
    tried: list[tuple[int, float, float, bool]] = []
    results: dict[int, array.ArrayResult] = {}
    q = float(latency_quantile)
    max_groups = max_drive_count // step
    if max_groups < 1:
        raise InvalidInputError.one("max_drive_count", f"must hold at least one group of {step} drives, got {max_drive_count}")

    if isinstance(drive, ServiceModel):
        model: ServiceModel | None = drive
        name, capacity = drive.drive_name, float(drive_capacity_bytes)
    else:
        model = None
        name, capacity = drive.name, float(drive.capacity_bytes)

    def spec_for(n: int, wl_n: Workload, duration: float, warmup: float) -> array.ArraySpec:
        if model is None:
            assert isinstance(drive, Drive)
            return array_spec(drive, layout_of(n), n, wl_n, duration_s=duration, warmup_s=warmup, seed=seed,
                              reorder_window=reorder_window)
        return array.ArraySpec(layout=layout_of(n), drive_count=n, service_models=(model,), workload=wl_n, duration_s=duration,
                               warmup_s=warmup, seed=seed, drive_capacity_bytes=capacity, reorder_window=reorder_window)

    def members_model() -> ServiceModel:
        return model if model is not None else member_service_models(drive, wl)[0]  # type: ignore[arg-type]

    def usable(n: int) -> float:
        return usable_capacity_bytes(layout_of(n), n, capacity)

    min_groups = max(1, -(-int(min_drive_count) // step))  # the layout's smallest array (RAID 10: 4 drives)
    while min_groups <= max_groups and usable(min_groups * step) < required_capacity_bytes:
        min_groups += 1
    capacity_count = min_groups * step if min_groups <= max_groups else 0

    def run(groups: int) -> bool:
        n = groups * step
        duration = capped_duration_s(duration_s, target_iops, max_host_ios)
        r = array.simulate(spec_for(n, wl, duration, min(warmup_s, duration)))
        lat = r.latency_percentile_s(q) if r.latency_count() else math.inf
        ok = (not r.saturated and r.achieved_iops >= (1.0 - iops_tolerance) * target_iops
              and (latency_target_s <= 0 or (math.isfinite(lat) and lat <= latency_target_s)))
        tried.append((n, float(r.achieved_iops), float(lat), bool(ok)))
        if ok:
            results[groups] = r
        return ok

    def out(count: int, unloaded: float = math.nan) -> Equivalence:
        return Equivalence(drive_name=name, layout_name=layout_of(max(count, step)).name, target_iops=float(target_iops),
                           latency_quantile=q, latency_target_s=float(latency_target_s), drive_count=count,
                           result=results.get(count // step) if count else None, tried=tuple(tried),
                           max_drive_count=max_drive_count, unloaded_latency_s=unloaded, capacity_drive_count=capacity_count)

    def unloaded_latency() -> float:
        n = min_groups * step
        mo = members_model()
        rate = 0.01 * (hdd.random_iops(mo) if mo.mechanical else target_iops)
        r = array.simulate(spec_for(n, replace(wl, target_iops=rate), min(max(duration_s, 5000.0 / max(rate, 1e-9)), 3600.0), 0.0))
        return float(r.latency_percentile_s(q)) if r.latency_count() else math.inf

    if min_groups > max_groups:
        return out(0)
    if latency_target_s > 0:
        floor = unloaded_latency()
        if floor > latency_target_s:
            return out(0, floor)
    # start the doubling at half the utilisation bound (every member busy 100 % at its unloaded
    # random rate), and never below the capacity
    if members_model().mechanical:
        per_drive = hdd.random_iops(members_model(), int(wl.mean_io_bytes))
        lay1 = layout_of(step)
        member_ios = wl.read_fraction + wl.write_fraction * lay1.small_write_penalty()
        g = int(0.5 * target_iops * member_ios / per_drive / step)
    else:
        g = 1
    g = max(min_groups, min(max_groups, g))
    lo, hi = min_groups - 1, 0
    while True:
        if run(g):
            hi = g
            break
        lo = g
        if g >= max_groups:
            break
        g = min(2 * g, max_groups)
    if hi == 0:
        return out(0, floor if latency_target_s > 0 else math.nan)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if run(mid):
            hi = mid
        else:
            lo = mid
    return out(hi * step)
