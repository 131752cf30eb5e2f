"""``CandidateSpace.servers`` -> ``cluster_plan.ClusterSpace``, and cluster recommendations ->
``Recommendation`` messages merged into a plan's result (docs/clusters.md).

A cluster is one more kind of candidate: its recommendation carries the box fields (drive model,
drive count = servers x drives per server, layout = the pool, usable capacity, cost, power, IOPS,
latency with intervals, checks, binding constraint, headroom) and ``cluster`` (ClusterFigures).
"""

from __future__ import annotations

from typing import Any

from arrayplan.v1 import planner_pb2 as pb
from arrayplan_engine import cost
from arrayplan_engine.cluster import EC_ENCODE_BYTES_PER_S, ServerSpec
from arrayplan_engine.cluster_plan import DEFAULT_POOLS, ClusterPlanOutcome, ClusterRecommendation, ClusterSpace
from arrayplan_engine.cluster_search import PoolChoice
from arrayplan_engine.errors import InvalidInputError, is_finite

from .figures import add_checks, set_interval_durations
from .figures import finite as _f

MAX_POOLS = 16
MAX_DRIVES_PER_SERVER_OPTIONS = 1000


def cluster_space_from_proto(cs: pb.CandidateSpace, prefix: str) -> ClusterSpace | None:
    """The plan's cluster space, or None when it asks for single boxes only. Bad fields raise
    ``InvalidInputError`` naming ``{prefix}.candidate_space.servers.FIELD`` and the allowed range."""
    if not cs.HasField("servers"):
        return None
    s = cs.servers
    at = f"{prefix}.candidate_space.servers"
    if len(s.pools) > MAX_POOLS:
        raise InvalidInputError.one(f"{at}.pools", f"must list at most {MAX_POOLS} pools, got {len(s.pools)}")
    if len(s.drives_per_server) > MAX_DRIVES_PER_SERVER_OPTIONS:
        raise InvalidInputError.one(f"{at}.drives_per_server", f"must list at most {MAX_DRIVES_PER_SERVER_OPTIONS} counts, "
                                                                f"got {len(s.drives_per_server)}")
    # a server without a stated price pays for its bays at the box's per-bay enclosure cost and power
    # (one definition, cost.py; candidate_space.bay_cost_usd / bay_power_w override both)
    bays = s.bay_count or 12
    usd_per_bay = cs.bay_cost_usd if cs.HasField("bay_cost_usd") else cost.ENCLOSURE_USD_PER_BAY
    w_per_bay = cs.bay_power_w if cs.HasField("bay_power_w") else cost.ENCLOSURE_POWER_W_PER_BAY
    server = ServerSpec(bay_count=bays, nic_bytes_per_s=s.nic_bytes_per_s or 25e9 / 8,
                        nic_hop_latency_s=(s.nic_hop_latency.seconds + s.nic_hop_latency.nanos * 1e-9)
                        if s.HasField("nic_hop_latency") else 50e-6,
                        cost_usd=s.server_cost_usd or cost.bay_cost_usd(bays, usd_per_bay=usd_per_bay),
                        power_w=s.server_power_w or cost.bay_power_w(bays, w_per_bay=w_per_bay),
                        ec_encode_bytes_per_s=s.ec_encode_bytes_per_s if s.HasField("ec_encode_bytes_per_s")
                        else EC_ENCODE_BYTES_PER_S)
    pools = tuple(PoolChoice(scheme=p.scheme, failure_domain=p.failure_domain or "host", min_size=p.min_size) for p in s.pools)
    space = ClusterSpace(server=server, min_server_count=s.min_server_count or 1, max_server_count=s.max_server_count or 64,
                         drives_per_server=tuple(s.drives_per_server), rack_count=s.rack_count, pools=pools or DEFAULT_POOLS,
                         host_annual_loss_rate=s.host_annual_loss_rate if s.HasField("host_annual_loss_rate") else 0.01,
                         recovery_fraction=s.recovery_fraction if s.HasField("recovery_fraction") else 0.5,
                         metadata_overhead_fraction=s.metadata_overhead_fraction)
    v = space.validate(at)
    if v:
        raise InvalidInputError(v)
    return space


def _dur(msg: Any, name: str, seconds: float) -> None:
    if is_finite(seconds) and seconds >= 0:
        getattr(msg, name).FromNanoseconds(int(round(seconds * 1e9)))


def cluster_recommendation_to_proto(r: ClusterRecommendation) -> pb.Recommendation:
    c = r.candidate
    msg = pb.Recommendation(
        drive_model=c.drive, drive_display_name=r.drive_display_name, drive_count=r.drive_count, layout=r.layout,
        group_width=c.drives_per_server, usable_capacity_bytes=int(r.usable_bytes), predicted_iops=_f(r.predicted_iops.value),
        purchase_cost_usd=r.purchase_cost_usd, power_cost_usd=r.power_cost_usd, replacement_cost_usd=r.replacement_cost_usd,
        total_cost_usd=r.total_cost_usd, power_w=r.power_w, meets_constraints=r.meets_constraints,
        binding_constraint=r.binding_constraint,
        headroom_fraction=_f(r.headroom_fraction), explanation=r.explanation, data_loss_probability=r.loss_probability,
        array_loss_probability=r.loss_probability, pareto_optimal=r.pareto_optimal,
        cost_per_usable_tb_usd=r.total_cost_usd / (r.usable_bytes / 1e12) if r.usable_bytes > 0 else 0.0,
        cost_per_iops_usd=_f(r.total_cost_usd / r.predicted_iops.value) if r.predicted_iops.value > 0 else 0.0,
        predicted_iops_low=_f(r.predicted_iops.low), predicted_iops_high=_f(r.predicted_iops.high),
        replacement_drive_count=0.0, simulation_replications=r.replications,
        simulation_precision="full" if r.replications else "", simulation_converged=False,
    )
    _dur(msg, "rebuild_duration", r.drive_rebuild.time_s)
    set_interval_durations(msg, "latency_p50", r.latency_p50_s)
    set_interval_durations(msg, "latency_at_percentile", r.latency_at_percentile_s)
    add_checks(msg, r.checks)
    f = msg.cluster
    f.server_count = c.server_count
    f.drives_per_server = c.drives_per_server
    f.bay_count = r.bay_count
    f.scheme = r.layout
    f.failure_domain = r.failure_domain
    f.shards_per_domain = r.shards_per_domain
    f.stripe_set_count = r.stripe_set_count
    _dur(f, "drive_rebuild_duration", r.drive_rebuild.time_s)
    f.drive_rebuild_limit = r.drive_rebuild.binding
    _dur(f, "host_rebuild_duration", r.host_rebuild.time_s)
    f.host_rebuild_limit = r.host_rebuild.binding
    f.data_loss_probability = r.loss_probability
    f.raw_capacity_bytes = int(r.raw_bytes)
    f.usable_capacity_bytes = int(r.usable_bytes)
    f.fill_ceiling_fraction = r.fill_ceiling_fraction
    f.fill_ceiling_limit = r.fill_ceiling_limit
    f.server_cost_usd = r.server_cost_usd
    f.nic_utilization = _f(r.nic_utilization)
    f.nic_max_iops = _f(r.nic_max_iops)
    f.shard_iops_per_drive = _f(r.shard_iops_per_drive)
    f.notes.extend(r.notes)
    return msg


def _copy(m: pb.Recommendation) -> pb.Recommendation:
    out = pb.Recommendation()
    out.CopyFrom(m)
    return out


def _objective_value(m: pb.Recommendation, objective: str) -> float:
    if objective == "purchase_cost":
        return m.purchase_cost_usd
    if objective == "power":
        return m.power_w
    if objective == "headroom":
        return -m.headroom_fraction
    return m.total_cost_usd


def merge_clusters(result: pb.PlanResult, outcome: ClusterPlanOutcome, *, max_recommendations: int, objective: str) -> None:
    """Rank the cluster recommendations with the boxes in ``result`` (meeting every constraint
    first, then the objective; ranks renumbered, at most max_recommendations), add the meeting
    clusters to the Pareto front on (total cost, headroom, data loss) and the assumptions."""
    n = max_recommendations
    clusters = [cluster_recommendation_to_proto(r) for r in outcome.recommendations]
    merged = [_copy(m) for m in result.recommendations] + clusters
    merged.sort(key=lambda m: (not m.meets_constraints, _objective_value(m, objective), m.data_loss_probability))
    meeting = [m for m in merged if m.meets_constraints]
    if meeting:  # the box ranking lists near misses only when nothing meets: so do we
        merged = meeting
    merged = merged[:n]

    def dominated(a: pb.Recommendation, pool: list[pb.Recommendation]) -> bool:
        return any(b is not a and b.total_cost_usd <= a.total_cost_usd and b.headroom_fraction >= a.headroom_fraction
                   and b.data_loss_probability <= a.data_loss_probability
                   and (b.total_cost_usd, -b.headroom_fraction, b.data_loss_probability)
                   != (a.total_cost_usd, -a.headroom_fraction, a.data_loss_probability) for b in pool)

    front_pool = [_copy(m) for m in result.pareto_front] + [m for m in clusters if m.meets_constraints]
    front = sorted((m for m in front_pool if not dominated(m, front_pool)), key=lambda m: m.total_cost_usd)
    keys = {(m.drive_model, m.drive_count, m.layout, m.group_width, m.cluster.server_count) for m in front}
    for m in merged:
        m.pareto_optimal = (m.drive_model, m.drive_count, m.layout, m.group_width, m.cluster.server_count) in keys
    for m in front:
        m.pareto_optimal = True
    del result.recommendations[:]
    for i, m in enumerate(merged, 1):
        m.rank = i
        result.recommendations.append(m)
    del result.pareto_front[:]
    result.pareto_front.extend(front[:50])
    result.constraints_met = bool(meeting)
    result.assumptions.extend(outcome.assumptions)
    result.assumptions.append(f"clusters: {outcome.evaluated:,} cluster configurations walked, {outcome.feasible:,} hold the data "
                              f"within the loss bound; the {len(outcome.recommendations)} cheapest and the (cost, loss) Pareto "
                              "front were checked against every constraint.")
    result.models.append("arrayplan_engine.cluster_plan (cluster search, Copysets-style loss, declustered rebuild, "
                         "kernel drive x event-simulated per-host NIC and CPU queues)")
    best = result.recommendations[0] if result.recommendations else None
    head = (f"Best: {best.explanation}" if best is not None and best.HasField("cluster") and best.meets_constraints
            else f"Clusters: {len(outcome.recommendations)} checked, {sum(r.meets_constraints for r in outcome.recommendations)} "
                 "meet every constraint.")
    result.summary = f"{head} Single boxes: {result.summary}"
