"""Cluster candidates for a plan: the same question, answered by servers instead of one box.

A plan whose candidate space names servers (``ClusterSpace``) gets cluster candidates beside the
single boxes. ``cluster_search`` finds, for each drive x pool x drives-per-server column, the
fewest servers that hold the final year's data at the fill ceiling (Ceph's full ratios, room for
a failed host) and lose data over the service life with at most the plan's allowed probability.
The cheapest columns are then checked like a box:

* capacity, durability (the plan's ``max_data_loss_probability`` or ``max_array_loss_probability``),
  purchase cost and power, analytically;
* IOPS: the lowest of the client rate at which the busier NIC direction saturates (``nic_load``),
  the rate at which the primaries' CPUs saturate encoding EC writes (hosts x
  ``ec_encode_bytes_per_s`` / bytes written per op) and the rate at which the drives do: the
  kernel's closed-loop saturation run of one drive under the shard mix, times the drives, over the
  shard IOs per client operation (with its interval);
* latency at the plan's percentile, with a 95 % interval: the array kernel simulates ONE drive of
  the candidate at its per-drive share of the shard reads and writes (``shard_iops_per_drive``,
  shard-sized IOs, the cluster's fill), in independent replications. Each replication's latency
  histogram gives the drive times of ``cluster_sim``'s event simulation of the cluster's IO
  stream (per-host NIC TX/RX and CPU queues; each client operation waits for the slowest of its
  shards' paths); the percentile is read from the pooled operations and its interval from the
  replications' own (sectioning). The same stream with one host fail-slow (2x, its drives, NIC
  and CPU) gives ``latency_slow_host_s``.

Binding constraint, headroom and checks follow ``evaluation``'s rules (the pessimistic end of an
interval decides ``met``). Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from . import array as arr
from . import fail_slow, performance, simulation
from .catalog import Catalog, Drive
from .cluster import ClusterTopology, Placement, SchemeKind, ServerSpec, cluster_capacity, cluster_cost, place
from .cluster_durability import FailureModel, RebuildTime, RecoveryLimits, cluster_loss_probability, rebuild_time
from .cluster_network import ClusterWorkload, drive_latency_samples, nic_load, shard_iops_per_drive
from .cluster_search import ClusterCandidate, ClusterQuestion, PoolChoice, pool_for, search_clusters
from .cluster_sim import simulate_cluster_ops
from .errors import InvalidInputError, Violation, check_range
from .evaluation import ConstraintCheck
from .evaluation import _check as check
from .interval import Interval
from .layout import make_layout
from .plan_request import PlanRequest, final_year_data_bytes
from .units import YEAR_HOURS
from .workload import Workload

__all__ = ["DEFAULT_POOLS", "ClusterPlanOutcome", "ClusterRecommendation", "ClusterSpace", "evaluate_clusters"]

DEFAULT_POOLS: Final = (PoolChoice(scheme="rep:3"), PoolChoice(scheme="ec:4+2"), PoolChoice(scheme="ec:8+3"))
DEFAULT_ARRAY_LOSS = 1e-4  # plan_request's default max_array_loss_probability
REPLICATIONS: Final = 5  # kernel replications per cluster candidate (the latency interval)
OPS_PER_REPLICATION: Final = 20_000  # client operations sampled per replication
MAX_SIMULATED_S: Final = 10.0  # kernel seconds per replication, cut to MAX_SIMULATED_HOST_IOS
MIN_SHARD_BYTES: Final = 4096
MAX_CONFIGURATIONS_PER_DRIVE: Final = 50_000  # ~1 CPU s per 60,000 (docs/clusters.md): the whole catalog in under a minute
MIN_DRIVE_IOS: Final = 5_000  # shard IOs per replication at the least


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterSpace:
    """``CandidateSpace.servers``: the servers and pools a plan's clusters are built of."""

    server: ServerSpec = field(default_factory=ServerSpec)
    min_server_count: int = 1
    max_server_count: int = 64
    drives_per_server: tuple[int, ...] = ()
    rack_count: int = 0
    pools: tuple[PoolChoice, ...] = DEFAULT_POOLS
    host_annual_loss_rate: float = 0.01
    recovery_fraction: float = 0.5
    metadata_overhead_fraction: float = 0.0

    def validate(self, prefix: str = "candidate_space.servers") -> list[Violation]:
        v: list[Violation] = []
        s = self.server
        check_range(v, f"{prefix}.bay_count", s.bay_count, 1, 1000, integer=True)
        check_range(v, f"{prefix}.nic_bytes_per_s", s.nic_bytes_per_s, 0, 1e12, lo_open=True, unit="bytes/s")
        check_range(v, f"{prefix}.nic_hop_latency", s.nic_hop_latency_s, 0, 1, unit="s")
        check_range(v, f"{prefix}.server_cost_usd", s.cost_usd, 0, 1e7, unit="USD")
        check_range(v, f"{prefix}.server_power_w", s.power_w, 0, 1e5, unit="W")
        check_range(v, f"{prefix}.ec_encode_bytes_per_s", s.ec_encode_bytes_per_s, 0, 1e13, unit="bytes/s", note="(0 = free)")
        q = self.question(1.0, 5.0, 1e-6)
        names = {"pools": "pools", "min_server_count": "min_server_count", "max_server_count": "max_server_count",
                 "drives_per_server": "drives_per_server", "host_annual_loss_rate": "host_annual_loss_rate",
                 "recovery_fraction": "recovery_fraction", "metadata_overhead_fraction": "metadata_overhead_fraction",
                 "rack_count": "rack_count"}
        if not v:
            for x in q.validate():
                head = x.field.split("[")[0].split(".")[0]
                if head in names:
                    v.append(Violation(field=f"{prefix}.{x.field}", reason=x.reason.replace("server.bay_count", "bay_count")))
        if not v:
            per_drive = (len(self.drives_per_server) or s.bay_count) * len(self.pools) \
                * max(1, self.max_server_count - self.min_server_count + 1)
            if per_drive > MAX_CONFIGURATIONS_PER_DRIVE:
                v.append(Violation(field=f"{prefix}.max_server_count", reason=(
                    f"the cluster search would walk up to {per_drive:,} configurations per drive model (drives per server x "
                    f"pools x server counts); at most {MAX_CONFIGURATIONS_PER_DRIVE:,}: narrow the server count range, "
                    f"drives_per_server or pools")))
        if self.rack_count and self.rack_count > self.max_server_count:
            v.append(Violation(field=f"{prefix}.rack_count", reason=f"must be <= max_server_count ({self.max_server_count}), "
                                                                    f"got {self.rack_count}"))
        return v

    def question(self, usable_bytes: float, service_life_years: float, max_loss_probability: float,
                 energy_usd_per_kwh: float = 0.0) -> ClusterQuestion:
        return ClusterQuestion(usable_bytes=usable_bytes, service_life_years=service_life_years,
                               max_loss_probability=max_loss_probability, server=self.server,
                               min_server_count=self.min_server_count, max_server_count=self.max_server_count,
                               drives_per_server=self.drives_per_server, pools=self.pools,
                               host_annual_loss_rate=self.host_annual_loss_rate, recovery_fraction=self.recovery_fraction,
                               energy_usd_per_kwh=energy_usd_per_kwh,
                               metadata_overhead_fraction=self.metadata_overhead_fraction, rack_count=self.rack_count)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterRecommendation:
    candidate: ClusterCandidate
    drive_display_name: str
    drive_count: int
    bay_count: int
    layout: str  # the pool's label
    failure_domain: str
    shards_per_domain: int
    stripe_set_count: int
    drive_rebuild: RebuildTime
    host_rebuild: RebuildTime
    raw_bytes: float
    usable_bytes: float
    fill_ceiling_fraction: float
    fill_ceiling_limit: str
    server_cost_usd: float
    purchase_cost_usd: float
    power_cost_usd: float
    replacement_cost_usd: float
    total_cost_usd: float
    power_w: float
    loss_probability: float
    nic_utilization: float
    nic_max_iops: float
    shard_iops_per_drive: float
    predicted_iops: Interval  # ends NaN when no latency was simulated; equal to it when the hosts' analytic bound binds
    latency_p50_s: Interval
    latency_at_percentile_s: Interval
    replications: int
    checks: tuple[ConstraintCheck, ...]
    meets_constraints: bool
    binding_constraint: str
    headroom_fraction: float
    notes: tuple[str, ...]
    explanation: str
    pareto_optimal: bool = False
    latency_slow_host_s: float = math.nan  # the percentile while one host is fail-slow (2x)
    cpu_max_iops: float = math.inf  # the client rate at which the primaries' EC encoding saturates


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterPlanOutcome:
    recommendations: tuple[ClusterRecommendation, ...]  # checked, best first (meeting every constraint first)
    evaluated: int  # configurations the cluster search walked
    feasible: int  # passing capacity and durability
    rejected: dict[str, int]
    assumptions: tuple[str, ...]


def _loss_limit(req: PlanRequest) -> float:
    c = req.constraints
    limits = [x for x in (c.max_data_loss_probability, c.max_array_loss_probability) if x > 0]
    return min(limits) if limits else 1.0


def _latency(req: PlanRequest, drive: Drive, placement: Placement, fill: float, required_iops: float,
             seed: int) -> tuple[Interval, Interval, float, float, Interval, list[str],
                                 Interval]:
    """(p50, percentile) of client operations with intervals, the drives' achieved share of their
    offered shard rate, the shard IOs per drive, the client rate at which the drives saturate
    (each replication's closed-loop saturation run of the drive, scaled by the shard IOs per client
    operation), notes, and the percentile while one host is fail-slow."""
    w = req.workload
    topo, scheme = placement.topology, placement.pool.scheme
    io = float(w.mean_io_bytes)
    cw = ClusterWorkload(iops=required_iops, read_fraction=w.read_fraction, io_bytes=io)
    reads, writes = shard_iops_per_drive(topo, scheme, cw)
    unit = io if scheme.kind is SchemeKind.REPLICATED else io / scheme.data_shards
    shard = int(max(MIN_SHARD_BYTES, round(unit / 512) * 512))
    rate = reads + writes
    dwl = Workload(name="cluster shard IOs", read_fraction=reads / rate if rate > 0 else w.read_fraction,
                   random_fraction=w.random_fraction, io_size_mix=((shard, 1.0),), queue_depth=w.queue_depth,
                   target_iops=max(rate, 1e-3))
    # at least MIN_DRIVE_IOS shard IOs per replication (a slow drive's tail needs them), at most the kernel's cap
    duration = simulation.capped_duration_s(max(req.simulated_seconds, min(MAX_SIMULATED_S * 50, MIN_DRIVE_IOS / max(rate, 1e-3))),
                                            max(rate, 1.0))
    q = req.constraints.latency_percentile / 100.0
    p50s, pcts, pooled = [], [], []
    slow_pcts: list[float] = []
    slow_pooled: list[np.ndarray] = []
    saturated = slow_saturated = False
    busiest = cpu_busiest = slow_offered = 0.0
    achieved: list[float] = []
    saturation: list[float] = []
    layout = make_layout("raid0", 1)
    bound = performance.iops_upper_bound(drive, layout, 1, dwl)
    rng = np.random.default_rng(np.random.SeedSequence([req.seed, seed]))
    for r in range(REPLICATIONS):
        spec = simulation.array_spec(drive, layout, 1, dwl, fill_fraction=fill, duration_s=duration,
                                     seed=req.seed * 1000 + seed * REPLICATIONS + r)
        result = arr.simulate(spec)
        achieved.append(result.achieved_iops / max(rate, 1e-9))
        sat = arr.simulate(simulation.saturation_spec(spec, simulated_s=duration, upper_bound_iops=bound))
        saturation.append(0.0 if sat.saturated else float(sat.achieved_iops))
        have_r = reads > 0 and result.latency_count("read") > 0
        have_w = writes > 0 and result.latency_count("write") > 0
        all_s = drive_latency_samples(result, kind="all", samples=OPS_PER_REPLICATION, rng=rng)
        dr = drive_latency_samples(result, kind="read", samples=OPS_PER_REPLICATION, rng=rng) if have_r else all_s
        dw = drive_latency_samples(result, kind="write", samples=OPS_PER_REPLICATION, rng=rng) if have_w else all_s
        # the cluster's IO stream, event by event: per-host NIC and CPU queues, these drive draws
        kw = dict(iops=required_iops, read_fraction=w.read_fraction, io_bytes=io, io_size_mix=tuple(w.io_size_mix),
                  drive_read_s=dr, drive_write_s=dw,
                  ops=OPS_PER_REPLICATION + OPS_PER_REPLICATION // 10, warmup_ops=OPS_PER_REPLICATION // 10,
                  seed=req.seed * 1000 + seed * REPLICATIONS + r)
        sim = simulate_cluster_ops(topo, scheme, **kw)  # type: ignore[arg-type]
        ops = sim.latency_s
        pooled.append(ops)
        p50s.append(float(np.quantile(ops, 0.5)))
        pcts.append(float(np.quantile(ops, q)))
        saturated = saturated or sim.saturated
        busiest = max(busiest, float(np.max(sim.tx_utilization)), float(np.max(sim.rx_utilization)))
        cpu_busiest = max(cpu_busiest, float(np.max(sim.cpu_utilization)))
        # the same stream while one host is fail-slow (the field's 2x: fail_slow.FIELD_SLOWDOWN)
        slow = simulate_cluster_ops(topo, scheme, slow_host_count=1, slow_factor=fail_slow.FIELD_SLOWDOWN, **kw)  # type: ignore[arg-type]
        slow_saturated = slow_saturated or slow.saturated
        slow_offered = slow.offered_utilization
        slow_pooled.append(slow.latency_s)
        slow_pcts.append(float(np.quantile(slow.latency_s, q)))
    allops = np.concatenate(pooled)
    p50 = simulation.sectioning_interval(float(np.quantile(allops, 0.5)), p50s)
    pct = simulation.sectioning_interval(float(np.quantile(allops, q)), pcts)
    slow_pct = simulation.sectioning_interval(float(np.quantile(np.concatenate(slow_pooled), q)), slow_pcts)
    hop_us = topo.server.nic_hop_latency_s * 1e6
    notes = [f"latency: the array kernel simulated one {drive.name} at its share of the shard IOs "
             f"({reads:,.1f} reads + {writes:,.1f} writes/s of {shard:,} B, {fill:.0%} full) in {REPLICATIONS} "
             f"replications of {duration:.3g} s; the cluster's IO stream was then simulated event by event "
             f"({OPS_PER_REPLICATION:,} client operations per replication at {required_iops:,.0f}/s, sizes from the "
             f"workload's mix): each shard IO "
             f"draws its drive time from that drive's latencies and queues at the hosts' NIC TX and RX "
             f"({topo.server.nic_bytes_per_s * 8 / 1e9:g} Gb/s each way, {hop_us:g} us a hop)"
             + (f" and, for EC writes, at the primary's CPU ({topo.server.ec_encode_bytes_per_s / 1e9:g} GB/s encode)"
                if scheme.kind is SchemeKind.EC and topo.server.ec_encode_bytes_per_s > 0 else "")
             + f"; busiest NIC direction {busiest:.0%}"
             + (f", busiest CPU {cpu_busiest:.0%}" if cpu_busiest > 0 else "")
             + "; interval by sectioning over the replications",
             f"fail-slow host: with one host {fail_slow.FIELD_SLOWDOWN:g}x slow (its drives, NIC and CPU; the field's "
             f"threshold, Hao et al. FAST'16) "
             + (f"that host's busiest queue is offered {slow_offered:.0%} of its capacity and grows without bound: "
                f"the p{req.constraints.latency_percentile:g} is unbounded, against {pct.value * 1e3:.4g} ms"
                if slow_saturated else
                f"the p{req.constraints.latency_percentile:g} is {slow_pct.value * 1e3:.4g} ms "
                f"({slow_pct.low * 1e3:.4g}-{slow_pct.high * 1e3:.4g}), against {pct.value * 1e3:.4g} ms")]
    if slow_saturated:
        slow_pct = Interval(value=math.inf, low=math.inf, high=math.inf)
    if saturated:
        notes.append("the simulated cluster's queues grew without bound at the required rate")
    per_op = rate / required_iops  # shard IOs per drive per client op/s
    sat_i = simulation.mean_interval(saturation)
    drive_bound = Interval(value=sat_i.value / per_op, low=sat_i.low / per_op, high=sat_i.high / per_op)
    notes.append(f"drive bound: the drive saturates at {sat_i.value:,.0f} shard IOs/s (closed loop, {REPLICATIONS} "
                 f"replications), that is {drive_bound.value:,.0f} client ops/s over the cluster's drives")
    return p50, pct, float(np.mean(achieved)), rate, drive_bound, notes, slow_pct


def _recommend(req: PlanRequest, c: ClusterCandidate, drive: Drive, space: ClusterSpace, index: int) -> ClusterRecommendation:
    cons = req.constraints
    topo = ClusterTopology(server_count=c.server_count, drives_per_server=c.drives_per_server, server=space.server,
                           rack_count=space.rack_count)
    placement = place(topo, pool_for(space.pools[c.pool_index], c.server_count, c.drives_per_server))
    cap = cluster_capacity(placement, float(drive.capacity_bytes), metadata_overhead_fraction=space.metadata_overhead_fraction)
    limits = RecoveryLimits(drive_bytes_per_s=float(drive.seq_write_bytes_per_s or 0.0), recovery_fraction=space.recovery_fraction)
    fill = cap.fill_ceiling_fraction
    rd = rebuild_time(placement, drive_capacity_bytes=float(drive.capacity_bytes), fill_fraction=fill, limits=limits, failed="drive")
    rh = rebuild_time(placement, drive_capacity_bytes=float(drive.capacity_bytes), fill_fraction=fill, limits=limits, failed="host")
    loss = cluster_loss_probability(placement, FailureModel(drive_annual_failure_rate=float(drive.annual_failure_rate or 0.0),
                                                            host_annual_loss_rate=space.host_annual_loss_rate),
                                    drive_down_s=rd.time_s, host_down_s=rh.time_s, service_life_years=req.service_life_years)
    cost = cluster_cost(topo, drive_price_usd=float(drive.price_usd or 0.0), drive_power_w=float(drive.active_power_w or 0.0))
    hours = req.service_life_years * YEAR_HOURS
    power_cost = cost.power_w / 1000.0 * hours * req.electricity_usd_per_kwh
    drives = topo.drive_count
    replacement = drives * float(drive.annual_failure_rate or 0.0) * req.service_life_years * float(drive.price_usd or 0.0)
    required_iops = req.required_iops()
    io = float(req.workload.mean_io_bytes)
    load = nic_load(topo, placement.pool.scheme, ClusterWorkload(iops=max(required_iops, 1e-9),
                                                                 read_fraction=req.workload.read_fraction, io_bytes=io))
    nic_util = max(load.tx_utilization, load.rx_utilization)
    notes = list(placement.notes)
    checks: list[ConstraintCheck] = []
    required_bytes = final_year_data_bytes(req)
    checks.append(check("usable_capacity", required_bytes, cap.usable_bytes, "bytes", at_most=False))
    p50 = pct = slow_pct = Interval(value=math.nan)
    # the primaries' EC encoding: every EC write's bytes pass one host's CPU at ec_encode_bytes_per_s
    enc = space.server.ec_encode_bytes_per_s
    write_share = 1.0 - req.workload.read_fraction
    cpu_iops = (topo.server_count * enc / (io * write_share)
                if placement.pool.scheme.kind is SchemeKind.EC and enc > 0 and write_share > 0 else math.inf)
    host_iops = min(load.max_iops, cpu_iops)
    host_limit = f"hosts' {load.binding}" if load.max_iops <= cpu_iops else "primaries' EC encoding (CPU)"
    predicted_iops = host_iops
    iops_low = iops_high = math.nan
    shard_rate = 0.0
    replications = 0
    if required_iops > 0 and required_iops >= host_iops:
        notes.append(f"the {host_limit} saturates at {host_iops:,.0f} client ops/s, below the required "
                     f"{required_iops:,.0f}: latency not simulated")
    elif required_iops > 0:
        p50, pct, achieved_share, shard_rate, drive_bound, lat_notes, slow_pct = _latency(req, drive, placement, fill,
                                                                                         required_iops, index)
        replications = REPLICATIONS
        notes.extend(lat_notes)
        if drive_bound.value < host_iops:
            predicted_iops, iops_low, iops_high = drive_bound.value, drive_bound.low, drive_bound.high
            notes.append(f"IOPS: the drives bind ({drive_bound.value:,.0f} client ops/s) before the {host_limit} "
                         f"({host_iops:,.0f})")
        else:
            iops_low = iops_high = host_iops  # analytic
            notes.append(f"IOPS: the {host_limit} binds ({host_iops:,.0f} client ops/s) before the drives "
                         f"({drive_bound.value:,.0f})")
        if achieved_share < 0.95:
            notes.append(f"the drives complete {achieved_share:.0%} of their offered shard IOs at the required rate")
    if required_iops > 0:
        if iops_low == iops_low:
            checks.append(check("iops", required_iops, predicted_iops, "iops", at_most=False, low=iops_low, high=iops_high))
        else:
            checks.append(check("iops", required_iops, predicted_iops, "iops", at_most=False))
    if cons.latency_target_s > 0:
        if pct.value == pct.value:
            checks.append(check("latency", cons.latency_target_s, pct.value, "s", at_most=True, low=pct.low, high=pct.high))
        else:
            checks.append(check("latency", cons.latency_target_s, math.inf, "s", at_most=True))
    if cons.max_purchase_cost_usd > 0:
        checks.append(check("purchase_cost", cons.max_purchase_cost_usd, cost.capex_usd, "usd", at_most=True))
    if cons.max_power_w > 0:
        checks.append(check("power", cons.max_power_w, cost.power_w, "w", at_most=True))
    limit = _loss_limit(req)
    if limit < 1.0:
        checks.append(check("durability", limit, loss.loss_probability, "fraction", at_most=True))
    meets = all(k.met for k in checks)
    binding = min(checks, key=lambda k: (k.met, k.headroom_fraction))
    label = placement.pool.label or c.pool
    total = cost.capex_usd + power_cost + replacement
    explanation = (f"{c.server_count} servers x {c.drives_per_server} {drive.name} ({label}, failure domain "
                   f"{placement.pool.failure_domain}): {cap.usable_bytes / 1e12:,.1f} TB usable at the "
                   f"{cap.fill_ceiling_fraction:.3g} fill ceiling, P(loss in {req.service_life_years} y) "
                   f"{loss.loss_probability:.2g}, a drive re-protected in {rd.time_s / 3600:.2g} h ({rd.binding}), a host in "
                   f"{rh.time_s / 3600:.3g} h ({rh.binding}); binding: {binding.constraint}"
                   f"{'' if binding.met else ' (violated)'}, headroom {binding.headroom_fraction:.0%}.")
    return ClusterRecommendation(
        candidate=c, drive_display_name=drive.display_name or drive.name, drive_count=drives, bay_count=space.server.bay_count,
        layout=label, failure_domain=str(placement.pool.failure_domain), shards_per_domain=placement.shards_per_domain,
        stripe_set_count=int(loss.stripe_set_count),
        drive_rebuild=rd, host_rebuild=rh, raw_bytes=cap.raw_bytes, usable_bytes=cap.usable_bytes,
        fill_ceiling_fraction=cap.fill_ceiling_fraction, fill_ceiling_limit=cap.binding,
        server_cost_usd=topo.server_count * space.server.cost_usd, purchase_cost_usd=cost.capex_usd, power_cost_usd=power_cost,
        replacement_cost_usd=replacement, total_cost_usd=total, power_w=cost.power_w, loss_probability=loss.loss_probability,
        nic_utilization=nic_util, nic_max_iops=load.max_iops, shard_iops_per_drive=shard_rate,
        predicted_iops=Interval(value=predicted_iops, low=iops_low, high=iops_high), latency_p50_s=p50, latency_at_percentile_s=pct,
        replications=replications, latency_slow_host_s=slow_pct.value, cpu_max_iops=cpu_iops,
        checks=tuple(checks), meets_constraints=meets, binding_constraint=binding.constraint,
        headroom_fraction=binding.headroom_fraction, notes=tuple(notes), explanation=explanation)


def evaluate_clusters(req: PlanRequest, catalog: Catalog, space: ClusterSpace, *, limit: int = 0) -> ClusterPlanOutcome:
    """The plan's cluster candidates: the cluster search's cheapest columns (and its Pareto front),
    each checked against the plan's constraints. ``limit``: columns checked (0 = max_recommendations)."""
    v = space.validate()
    if v:
        raise InvalidInputError(v)
    models = req.candidate_space.drive_models
    drives: Sequence[Drive] = [catalog.get(n) for n in models] if models else list(catalog)
    usable = [d for d in drives if all(isinstance(getattr(d, a, None), (int, float)) and getattr(d, a) > 0
                                       for a in ("capacity_bytes", "seq_write_bytes_per_s", "price_usd", "annual_failure_rate"))]
    limit_p = _loss_limit(req)
    q = space.question(final_year_data_bytes(req), float(req.service_life_years), min(limit_p, 1.0 - 1e-12),
                       req.electricity_usd_per_kwh)
    found = search_clusters(q, usable) if usable else None
    cands: list[ClusterCandidate] = []
    if found is not None:
        n = limit or req.max_recommendations
        for c in list(found.candidates[:n]) + list(found.pareto):
            if c not in cands:
                cands.append(c)
    by_name = {d.name: d for d in usable}
    recs = [_recommend(req, c, by_name[c.drive], space, i) for i, c in enumerate(cands)]
    key = _objective_key(req)
    recs.sort(key=lambda r: (not r.meets_constraints, key(r), r.loss_probability, r.candidate.drive, r.layout))
    assumptions = [
        f"clusters: servers of {space.server.bay_count} bays at {space.server.cost_usd:,.0f} USD and {space.server.power_w:g} W "
        f"each (drives extra), every bay paid for; NIC {space.server.nic_bytes_per_s * 8 / 1e9:g} Gb/s each way; pools "
        f"{', '.join(p.label for p in space.pools)}; {space.min_server_count}-{space.max_server_count} servers. Single-box "
        f"candidates pay {req.candidate_space.bay_cost_usd:,.2f} USD and {req.candidate_space.bay_power_w:.2f} W for each "
        "drive's bay (candidate_space.bay_cost_usd, bay_power_w).",
        f"clusters: capacity is the final year's data ({final_year_data_bytes(req) / 1e12:,.1f} TB) at the fill ceiling "
        "(Ceph's nearfull 0.85, or backfillfull 0.90 with room to re-protect a failed host's data), in place of "
        "constraints.max_fill_fraction; metadata overhead "
        f"{space.metadata_overhead_fraction:g} of raw (assumed).",
        f"clusters: durability counts drive failures at each drive's AFR and whole hosts lost at "
        f"{space.host_annual_loss_rate:g} a host-year (assumed), declustered rebuilds at a recovery throttle of "
        f"{space.recovery_fraction:g} of each drive's and NIC's bandwidth (assumed), against P(loss) <= {limit_p:g}.",
        "clusters: latency is one drive's kernel simulation at its share of the shard IOs, whose latencies are the drive "
        "times of an event simulation of the cluster's IO stream with a FIFO queue per host NIC direction and, for EC "
        f"writes, per primary CPU ({space.server.ec_encode_bytes_per_s / 1e9:g} GB/s encode, one core, assumed; "
        "docs/clusters.md); no switch oversubscription or incast; the tail with one host 2x fail-slow is in each "
        "cluster's notes; replacements at AFR x drives x years x drive price.",
    ]
    if usable != list(drives):
        assumptions.append(f"clusters: {len(drives) - len(usable)} drive model(s) lack a price, AFR or sequential write "
                           "rate and are not placed in clusters.")
    return ClusterPlanOutcome(recommendations=tuple(recs), evaluated=found.evaluated if found else 0,
                              feasible=len(found.candidates) if found else 0,
                              rejected=dict(found.rejected) if found else {}, assumptions=tuple(assumptions))


def _objective_key(req: PlanRequest):  # type: ignore[no-untyped-def]
    from .plan_request import Objective

    o = req.objective
    if o == Objective.PURCHASE_COST:
        return lambda r: r.purchase_cost_usd
    if o == Objective.POWER:
        return lambda r: r.power_w
    if o == Objective.HEADROOM:
        return lambda r: -r.headroom_fraction
    return lambda r: r.total_cost_usd
