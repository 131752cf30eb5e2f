"""Array performance as the planner sees it: the spec-sheet bound and the predicted figures.

``spec_iops_bound`` is the cheap bound the planner prunes with: every member at its rated IOPS,
host IOs turned into member IOs by the layout. ``predict`` gives the figures a recommendation
rests on: the array's sustainable IOPS and the latency at the requested percentile at the
offered load.

The analytic model here (``model = "analytic-mm1-forkjoin"``) treats each member as an M/M/1
queue whose service rate is its rated IOPS for the workload's IO mix (steady-state random-write
IOPS where the spec gives them), so a member's response time is exponential with mean
``S / (1 - rho)`` (``S`` = the spec latency, or the time one IO holds one of the drive's
parallel units: channels / rated IOPS); a host IO that forks into ``k`` member IOs completes at the slowest, so
``P(L > t) = 1 - (1 - exp(-t / m))^k`` (the fork-join law for independent members). It has no
garbage-collection dips: the worst one-second latency needs the array simulation, and is NaN
here.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np

from . import array, hdd, ssd
from .catalog import Drive
from .layout import Layout, group_count
from .service import ServiceModel
from .workload import Workload

ANALYTIC_MODEL = "analytic-mm1-forkjoin"
SIMULATION_MODEL = "array-des"
# The planner's service models are built at fill levels rounded to this step and cached, so the
# candidates of one drive share them (each costs a short FTL run for its GC profile).
FILL_STEP = 0.1
PROFILE_S = 120.0
DEFAULT_SIMULATED_S = 1.0
# A simulation is cut short of ``simulated_s`` when the array would complete more host IOs than
# this in it (a fast array's percentiles are as well resolved by 250k IOs as by millions).
MAX_SIMULATED_HOST_IOS = 250_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Performance:
    """Predicted figures of one array under one workload."""

    max_iops: float
    member_ios_per_host_io: float
    latency_p50_s: float
    latency_at_percentile_s: float
    worst_second_latency_s: float
    utilization: float
    model: str


def _members(layout: Layout, drive_count: int) -> int:
    return group_count(layout, drive_count) * layout.group_width


def _drive_write_iops(drive: Drive, *, fresh: bool, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
                      hot_write_fraction: float = 1.0, hot_space_fraction: float = 1.0) -> float:
    """4 KiB random write IOPS of one drive: the fresh-out-of-box figure (an upper bound), or the
    steady state at a fill level. Steady state comes from the SSD model's write amplification at
    the effective spare factor; where the spec gives a steady-state figure (measured on a full
    drive, uniform random writes) it is scaled by the model's ratio between this fill/skew and a
    full drive, so the spec anchors the level and the model supplies the trend (drives slow down
    as they fill: the 003 seed's readers' "past ~80% full")."""
    if fresh or drive.kind != "ssd":
        return float(drive.random_write_iops or drive.random_read_iops or 1.0)
    at_fill = ssd.steady_state_random_write_iops(drive, fill_fraction=max(fill_fraction, 1e-3),
                                                 extra_spare_fraction=extra_spare_fraction,
                                                 hot_write_fraction=hot_write_fraction, hot_space_fraction=hot_space_fraction)
    if drive.steady_random_write_iops:
        full = ssd.steady_state_random_write_iops(drive, fill_fraction=1.0)
        return float(drive.steady_random_write_iops) * at_fill / full
    return at_fill


def _io_cost_s(iops: float, bytes_per_s: float | None, io_bytes: float) -> float:
    """Drive-seconds one member IO of ``io_bytes`` costs: the 4 KiB IOPS cost, plus the transfer
    time of the bytes beyond 4 KiB at the sequential rate."""
    extra = max(0.0, io_bytes - 4096.0)
    return 1.0 / iops + (extra / bytes_per_s if bytes_per_s else 0.0)


def host_io_costs(drive: Drive, layout: Layout, workload: Workload, *, fresh: bool, fill_fraction: float = 1.0,
                  extra_spare_fraction: float = 0.0) -> tuple[float, float, float, float, float]:
    """(read cost, write cost) in drive-seconds per host IO, member IOs per host read and per host
    write, and member IOs a host write waits for (fork width).

    Random writes below a stripe use the layout's small-write member IOs; sequential writes
    coalesce into full stripes (no reads, (k+m)/k bytes written per host byte).
    """
    r_iops = float(drive.random_read_iops or 1.0)
    w_iops = _drive_write_iops(drive, fresh=fresh, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction,
                               hot_write_fraction=workload.hot_write_fraction, hot_space_fraction=workload.hot_space_fraction)
    size = workload.mean_io_bytes
    unit = layout.stripe_unit_bytes
    units_per_io = max(1.0, size / unit)
    read_ios = units_per_io
    read_cost = read_ios * _io_cost_s(r_iops, drive.seq_read_bytes_per_s, min(size, unit))
    reads, writes = layout.small_write_member_ios()
    small_write_cost = reads * _io_cost_s(r_iops, drive.seq_read_bytes_per_s, min(size, unit)) \
        + writes * _io_cost_s(w_iops, drive.seq_write_bytes_per_s, min(size, unit))
    factor = layout.full_stripe_write_factor()
    seq_member_ios = units_per_io * factor
    seq_write_cost = seq_member_ios * _io_cost_s(w_iops, drive.seq_write_bytes_per_s, min(size, unit))
    rf = workload.random_fraction
    write_cost = rf * small_write_cost + (1 - rf) * seq_write_cost
    write_ios = rf * (reads + writes) * units_per_io + (1 - rf) * seq_member_ios
    return read_cost, write_cost, read_ios, write_ios, rf * (reads + writes) + (1 - rf) * seq_member_ios


def spec_iops_bound(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, fresh: bool = False,
                    fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0) -> float:
    """Host IOPS if every member runs at its rated IOPS (fresh-out-of-box with ``fresh``, else the
    steady state at ``fill_fraction``)."""
    members = _members(layout, drive_count)
    if members == 0:
        return 0.0
    read_cost, write_cost, *_ = host_io_costs(drive, layout, workload, fresh=fresh, fill_fraction=fill_fraction,
                                              extra_spare_fraction=extra_spare_fraction)
    r = workload.read_fraction
    return members / (r * read_cost + (1 - r) * write_cost)


def _fork_exceed(t: float, mean: float, k: float) -> float:
    """P(max of k iid exponentials of mean ``mean`` > t); k may be fractional (mixture)."""
    return 1.0 - (1.0 - math.exp(-t / mean)) ** max(k, 1.0)


def _percentile(p: float, parts: list[tuple[float, float, float]]) -> float:
    """Latency t with sum(weight * P(L > t)) = 1 - p, parts = (weight, member mean, fork width)."""
    target = 1.0 - p
    lo, hi = 0.0, max(m for _, m, _ in parts) * 60.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if sum(w * _fork_exceed(mid, m, k) for w, m, k in parts) > target:
            lo = mid
        else:
            hi = mid
    return hi


@functools.lru_cache(maxsize=512)
def _cached_service_model(drive: Drive, fill_bucket: int, extra_spare_fraction: float, write_fraction: float,
                          hot_write_fraction: float, hot_space_fraction: float, seed: int) -> ServiceModel:
    if drive.kind != "ssd":
        return hdd.service_model(drive)
    return ssd.service_model(drive, fill_fraction=min(1.0, max(FILL_STEP, fill_bucket * FILL_STEP)),
                             extra_spare_fraction=extra_spare_fraction, write_fraction=write_fraction,
                             hot_write_fraction=hot_write_fraction, hot_space_fraction=hot_space_fraction, seed=seed,
                             profile_s=PROFILE_S)


def service_model_for(drive: Drive, workload: Workload, *, fill_fraction: float, extra_spare_fraction: float = 0.0,
                      seed: int = 0) -> ServiceModel:
    """The drive's per-IO service model at a fill level (rounded up to ``FILL_STEP``), cached."""
    bucket = math.ceil(round(fill_fraction / FILL_STEP, 9))
    return _cached_service_model(drive, bucket, float(extra_spare_fraction), round(workload.write_fraction, 2),
                                 workload.hot_write_fraction, workload.hot_space_fraction, seed)


def predict(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, offered_iops: float,
            latency_percentile: float, fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
            seed: np.random.SeedSequence | None = None, simulate: bool = False,
            simulated_s: float = DEFAULT_SIMULATED_S) -> Performance:
    """Sustainable IOPS and latency at ``offered_iops`` (closed loop at the workload's queue depth
    when 0), with the drives in steady state at ``fill_fraction`` (and short-stroked by
    ``extra_spare_fraction``).

    With ``simulate`` the latency figures come from the array simulation (``array.py``): every
    member with its own garbage-collection phase from the FTL's steady-state profile, host IOs
    forked into member IOs by the layout, ``simulated_s`` seconds at the offered load, seeded
    from ``seed``; the worst second is the highest per-second p99. The sustainable IOPS stay the
    steady-state bound (the simulation at the offered load says whether it saturates)."""
    analytic, parts = _predict_analytic(drive, layout, drive_count, workload, offered_iops=offered_iops,
                                        fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction)
    if not simulate or group_count(layout, drive_count) == 0 or (offered_iops > 0 and offered_iops >= analytic.max_iops):
        # the analytic latency quantiles (a numerical inversion) only when they are the answer
        if not parts:
            return analytic
        return replace(analytic, latency_p50_s=_percentile(0.5, parts),
                       latency_at_percentile_s=_percentile(latency_percentile / 100.0, parts))
    seed_int = int((seed or np.random.SeedSequence(0)).generate_state(1)[0])
    model = service_model_for(drive, workload, fill_fraction=fill_fraction, extra_spare_fraction=extra_spare_fraction)
    wl = replace(workload, target_iops=float(offered_iops))
    rate = offered_iops if offered_iops > 0 else analytic.max_iops
    duration = min(simulated_s, max(0.05, MAX_SIMULATED_HOST_IOS / max(rate, 1.0)))
    spec = array.ArraySpec(layout=layout, drive_count=drive_count, service_models=(model,), workload=wl,
                           duration_s=duration, seed=seed_int)
    r = array.simulate(spec)
    if r.saturated:
        return replace(analytic, latency_p50_s=math.inf, latency_at_percentile_s=math.inf, worst_second_latency_s=math.inf,
                       utilization=1.0, model=SIMULATION_MODEL,
                       max_iops=min(analytic.max_iops, r.achieved_iops) if offered_iops <= 0 else analytic.max_iops)
    worst = r.worst_second_p99_latency_s
    return Performance(
        max_iops=analytic.max_iops if offered_iops > 0 else r.achieved_iops,
        member_ios_per_host_io=r.member_ios_per_host_io,
        latency_p50_s=float(r.latency_percentile_s(0.5)),
        latency_at_percentile_s=float(r.latency_percentile_s(latency_percentile / 100.0)),
        worst_second_latency_s=float(worst) if worst is not None and math.isfinite(worst) else float(r.latency_percentile_s(0.99)),
        utilization=float(np.mean(r.drive_utilisation)) if len(r.drive_utilisation) else analytic.utilization,
        model=SIMULATION_MODEL,
    )


def _predict_analytic(drive: Drive, layout: Layout, drive_count: int, workload: Workload, *, offered_iops: float,
                      fill_fraction: float = 1.0, extra_spare_fraction: float = 0.0,
                      ) -> tuple[Performance, list[tuple[float, float, float]]]:
    """The analytic model, its latency quantiles left NaN, and the (share, mean member latency,
    fork width) mixture they come from (``_percentile``); no mixture when saturated."""
    kw = {"fill_fraction": fill_fraction, "extra_spare_fraction": extra_spare_fraction}
    max_iops = spec_iops_bound(drive, layout, drive_count, workload, fresh=False, **kw)
    members = _members(layout, drive_count)
    read_cost, write_cost, read_ios, write_ios, write_fork = host_io_costs(drive, layout, workload, fresh=False, **kw)
    r = workload.read_fraction
    ios_per_host = r * read_ios + (1 - r) * write_ios
    if max_iops <= 0:
        return Performance(max_iops=0.0, member_ios_per_host_io=ios_per_host, latency_p50_s=math.inf,
                           latency_at_percentile_s=math.inf, worst_second_latency_s=math.nan, utilization=1.0,
                           model=ANALYTIC_MODEL), []
    if offered_iops > 0:
        rho = offered_iops / max_iops
    else:
        # Closed loop: the queue depth spread over the members keeps them this busy (M/M/1 with
        # L = rho / (1 - rho) outstanding per member).
        per_member = workload.queue_depth * ios_per_host / members
        rho = per_member / (1.0 + per_member)
    if rho >= 1.0:
        return Performance(max_iops=max_iops, member_ios_per_host_io=ios_per_host, latency_p50_s=math.inf,
                           latency_at_percentile_s=math.inf, worst_second_latency_s=math.nan, utilization=1.0,
                           model=ANALYTIC_MODEL), []
    # Member service time: the spec latency where given, else the time one IO occupies one of the
    # drive's parallel units (channels; the rated IOPS are reached with all of them busy).
    units = 1.0 if drive.kind == "hdd" else float(drive.channels or 8) * float(drive.controllers or 1)
    s_read = drive.read_latency_s or units * read_cost / max(read_ios, 1.0)
    s_write = drive.write_latency_s or units / _drive_write_iops(
        drive, fresh=False, hot_write_fraction=workload.hot_write_fraction, hot_space_fraction=workload.hot_space_fraction, **kw)
    m_read = s_read / (1.0 - rho)
    reads, _ = layout.small_write_member_ios()
    phases = 2.0 if reads and workload.random_fraction > 0 else 1.0
    m_write = phases * max(s_write, s_read) / (1.0 - rho)
    parts: list[tuple[float, float, float]] = []
    if r > 0:
        parts.append((r, m_read, read_ios))
    if r < 1:
        parts.append((1 - r, m_write, write_fork))
    return Performance(
        max_iops=max_iops, member_ios_per_host_io=ios_per_host,
        latency_p50_s=math.nan, latency_at_percentile_s=math.nan,
        worst_second_latency_s=math.nan, utilization=rho, model=ANALYTIC_MODEL,
    ), parts


def estimated_cost_s(drive_count: int, workload: Workload, *, simulate: bool = True) -> float:
    """CPU seconds one year of one candidate's evaluation takes (for sizing Ray batches): about
    30 ms for the simulation (measured on the 2-core reference machine, see make bench) and
    1 ms for the analytic model."""
    del drive_count, workload
    return 0.03 if simulate else 1e-3

